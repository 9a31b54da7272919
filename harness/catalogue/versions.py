"""
Versions of the agent CLIs, and ranges of them, as scenarios and targets write them.

A version is ``MAJOR.MINOR.PATCH`` as npm publishes the CLIs (``2.1.235``); a
range is comparisons joined by commas, all of which must hold (``<2.1.300``,
``>=2.1.260,<2.1.290``, ``==2.1.235``), read with `packaging.specifiers`.
Only full three-part versions and the operators ``< <= > >= == !=`` are
taken: npm versions have no epochs or wildcards, and two ranges must be
comparable exactly (`common`), which a wildcard or ``~=`` would muddy.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property, lru_cache

from packaging.specifiers import InvalidSpecifier, Specifier, SpecifierSet
from packaging.version import Version

from harness.catalogue import agents

#: The CLIs that have versions: the ones with published releases (`agents.AgentCli.versioned`).
CLIS = agents.VERSIONED
_VERSION = re.compile(r"(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)")
_CLAUSE = re.compile(r"(<=|>=|==|!=|<|>)\s*(\S+)")


def check_version(text: str) -> str | None:
    """Why ``text`` is not a CLI version, or None when it is one."""
    if _VERSION.fullmatch(text):
        return None
    return f"{text!r} is not a version (MAJOR.MINOR.PATCH, e.g. 2.1.235)"


def key(version: str) -> tuple[int, int, int]:
    """A version's sort key (numeric, so 2.1.99 comes before 2.1.235)."""
    major, minor, patch = (int(part) for part in version.split("."))
    return major, minor, patch


@dataclass(frozen=True)
class VersionRange:
    """A range of versions, kept as written; build it with `parse`."""

    text: str

    @classmethod
    def parse(cls, text: str) -> VersionRange:
        """The range ``text`` stands for; raises ValueError saying what is wrong."""
        return _parsed(text)

    @classmethod
    def checked(cls, text: str) -> VersionRange:
        """`parse` without its memory."""
        parts = [part.strip() for part in text.split(",")]
        if not text.strip() or not all(parts):
            raise ValueError(
                f"{text!r} is not a version range (e.g. <2.1.300 or >=2.1.260,<2.1.290)"
            )
        for part in parts:
            found = _CLAUSE.fullmatch(part)
            if found is None:
                raise ValueError(f"{part!r}: a comparison is <, <=, >, >=, == or != and a version")
            why = check_version(found[2])
            if why is not None:
                raise ValueError(why)
        try:
            SpecifierSet(text)
        except InvalidSpecifier as error:  # pragma: no cover - the checks above come first
            raise ValueError(str(error)) from None
        return cls(text)

    @cached_property
    def _set(self) -> SpecifierSet:
        return SpecifierSet(self.text)

    def __contains__(self, version: object) -> bool:
        return isinstance(version, str) and self._set.contains(Version(version))

    @cached_property
    def _boundaries(self) -> tuple[str, ...]:
        return tuple(Specifier(part.strip()).version for part in self.text.split(","))

    def boundaries(self) -> tuple[str, ...]:
        """The versions the range's comparisons name."""
        return self._boundaries


@lru_cache(maxsize=1024)
def _parsed(text: str) -> VersionRange:
    """
    `VersionRange.parse`, once per text: a catalogue repeats a few dozen
    ranges hundreds of times, and a range is an immutable value (a text that
    does not parse raises each time, exceptions are not cached).
    """
    return VersionRange.checked(text)


def _after(version: str) -> str:
    """The version right after ``version`` (the next patch: nothing lies between)."""
    major, minor, patch = key(version)
    return f"{major}.{minor}.{patch + 1}"


@lru_cache(maxsize=1024)
def common(one: VersionRange, other: VersionRange) -> str | None:
    """
    A version both ranges hold, or None when they are disjoint.

    Both ranges are unions of intervals of (major, minor, patch) triples whose
    ends are the versions they name, so their intersection, when not empty,
    starts at 0.0.0, at a named version or right after one: trying those is
    exact.
    """
    named = {*one.boundaries(), *other.boundaries()}
    candidates = sorted({"0.0.0", *named, *map(_after, named)}, key=key)
    return next((v for v in candidates if v in one and v in other), None)
