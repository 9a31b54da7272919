"""
Version profiles of the reference models: what differs between releases of a CLI, as data.

A reference model follows one release of its CLI, the pinned one, except where
a behaviour is known to differ between releases.  Each such behaviour is a
named row of a `Table`: for each range of versions, the value the model takes
there and the evidence (the probe or research note in docs/versions.md that
showed it).  A model asks its profile for the value at the decision point
(``profile.refusal_continues``), never compares version strings itself, so a
newly found difference is one row here and one hook where it is decided.

Every behaviour's ranges must cover every version exactly once (`Table.check`,
held by the test suite), so a profile exists for any published version, old or
new: a version past the newest row takes the newest behaviour.  `changes`
lists what a table says differs between two versions, which the drift report
shows beside what the binaries did.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from harness.catalogue.versions import VersionRange, common, key


@dataclass(frozen=True)
class Entry:
    """One behaviour's value on one range of versions, and what showed it."""

    behaviour: str
    versions: VersionRange
    value: Any
    evidence: str


def entry(behaviour: str, versions: str, value: Any, evidence: str) -> Entry:
    return Entry(behaviour, VersionRange.parse(versions), value, " ".join(evidence.split()))


@dataclass(frozen=True)
class Table:
    """A CLI's named behaviours per version range."""

    cli: str
    pinned: str
    entries: tuple[Entry, ...]

    @property
    def behaviours(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(e.behaviour for e in self.entries))

    def at(self, behaviour: str, version: str) -> Entry:
        """The row of ``behaviour`` whose range holds ``version``."""
        found = [e for e in self.entries if e.behaviour == behaviour and version in e.versions]
        if len(found) != 1:
            raise LookupError(f"{self.cli} {behaviour}: {len(found)} rows hold {version}")
        return found[0]

    def resolve(self, version: str) -> dict[str, Any]:
        """Every behaviour's value at ``version``."""
        return {name: self.at(name, version).value for name in self.behaviours}

    def check(self) -> list[str]:
        """
        Problems with the table: a behaviour whose ranges overlap, or leave a
        version no row holds (tried at 0.0.0 and at and right after every
        version a range names, which is exact for such ranges).
        """
        problems: list[str] = []
        named = {v for e in self.entries for v in e.versions.boundaries()}
        major_minor_patch = [key(v) for v in named]
        tried = {"0.0.0", *named}
        tried |= {f"{a}.{b}.{c + 1}" for a, b, c in major_minor_patch}
        for name in self.behaviours:
            rows = [e for e in self.entries if e.behaviour == name]
            for i, one in enumerate(rows):
                for other in rows[i + 1 :]:
                    shared = common(one.versions, other.versions)
                    if shared is not None:
                        problems.append(
                            f"{self.cli} {name}: {one.versions.text!r} and "
                            f"{other.versions.text!r} both hold {shared}"
                        )
            for version in sorted(tried, key=key):
                if not any(version in e.versions for e in rows):
                    problems.append(f"{self.cli} {name}: no row holds {version}")
        return problems

    def changes(self, before: str, after: str) -> list[str]:
        """What the table says differs from ``before`` to ``after``, one line per behaviour."""
        out = []
        for name in self.behaviours:
            old, new = self.at(name, before), self.at(name, after)
            if old.value != new.value:
                out.append(f"`{name}`: {show(old.value)} → {show(new.value)} ({new.evidence})")
        return out


def show(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


# -- Codex ------------------------------------------------------------------------------

#: Codex releases differ in nothing the model-api scenarios can see (0.169.0 and
#: 0.171.0: the same requests, ``text.format``, JSONL, retries and error texts;
#: 0.170.0 was never published), only in request headers.
CODEX = Table(
    "codex",
    "0.169.0",
    (
        entry(
            "accept_encoding",
            "<0.171.0",
            None,
            "docs/versions.md, Codex: the 0.169.0 happy-path request has no accept-encoding",
        ),
        entry(
            "accept_encoding",
            ">=0.171.0",
            "zstd,gzip",
            "docs/versions.md, Codex: 0.171.0 sends accept-encoding: zstd,gzip",
        ),
    ),
)


@dataclass(frozen=True)
class CodexProfile:
    """What the Codex model does differently at ``version`` (see `CODEX`)."""

    version: str
    accept_encoding: str | None

    @classmethod
    def of(cls, version: str | None = None) -> CodexProfile:
        chosen = version or CODEX.pinned
        return cls(chosen, **CODEX.resolve(chosen))

    @property
    def user_agent(self) -> str:
        """Codex names its own version in every request (``codex_exec/0.171.0 ...``)."""
        return f"codex_exec/{self.version}"


# -- CodeBuddy Code ---------------------------------------------------------------------

#: The StructuredOutput parameters CodeBuddy sends when it has no usable schema.
WRAPPED_PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "data": {
            "type": "object",
            "description": "The structured data object that matches the requested JSON schema.",
            "additionalProperties": True,
        }
    },
    "required": ["data"],
    "additionalProperties": False,
}

#: One release probed so far (2.117.0, the one @tencent-ai/agent-sdk@0.3.201
#: ships), so every row spans all versions; a release found to differ splits a row.
CODEBUDDY = Table(
    "codebuddy",
    "2.117.0",
    (
        entry(
            "schema_retry_limit",
            ">=0.0.0",
            None,
            """docs/versions.md, CodeBuddy: 2.117.0 asks a model that never satisfies the schema
            again without limit (500 requests in 180 s, no exhaustion record)""",
        ),
        entry(
            "structured_output_parameters",
            ">=0.0.0",
            {"valid_schema": "the schema", "invalid_schema": WRAPPED_PARAMETERS},
            """docs/versions.md, CodeBuddy: 2.117.0 sends the StructuredOutput function
            (strict false) with the --json-schema as its parameters, but with a
            {data: object} wrapper when the schema is not JSON Schema, and, racing its
            start-up, on some runs' first requests too""",
        ),
    ),
)


@dataclass(frozen=True)
class CodeBuddyProfile:
    """What the CodeBuddy Code model does differently at ``version`` (see `CODEBUDDY`)."""

    version: str
    schema_retry_limit: int | None
    structured_output_parameters: dict[str, Any]

    @classmethod
    def of(cls, version: str | None = None) -> CodeBuddyProfile:
        chosen = version or CODEBUDDY.pinned
        return cls(chosen, **CODEBUDDY.resolve(chosen))

    @property
    def user_agent(self) -> str:
        """CodeBuddy names its version twice in a request (``CLI/2.117.0 CodeBuddy/2.117.0``)."""
        return f"CLI/{self.version} CodeBuddy/{self.version}"
