"""
What an adaptor says about itself, and what the harness does with it.

A protocol adaptor names itself in its ``start`` reply (``implementation``:
name, version, language, the drivers it has and the features it supports);
a ``python:`` adaptor may say the same in a module-level ``IMPLEMENTATION``.
The harness uses it twice: a case the adaptor cannot serve (a driver it
does not have, a feature the request needs that it does not announce) is
skipped with that reason before anything is sent, rather than errored by an
adaptor that was never meant to handle it; and the reports show which
implementation, at which version, was under test.

The features the harness can hold a request to are declared in `FEATURES`,
one entry each; any other announced feature is shown, never checked.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from harness.catalogue import agents
from harness.catalogue.scenario import Request

#: The drivers an adaptor may announce: the registry's.
DRIVERS = frozenset(agents.DRIVERS)


@dataclass(frozen=True)
class Feature:
    """A feature some requests need: which ones, and what it is, for the skip reason."""

    needed_by: Callable[[Request], bool]
    what: str


#: Feature name → which requests need it.  A request that needs a feature its
#: adaptor does not announce is skipped.
FEATURES: dict[str, Feature] = {
    "schema_type": Feature(
        lambda request: request.schema_type is not None,
        "schemas derived from a type in the harness's own type language (request.schema_type)",
    ),
}


@dataclass(frozen=True)
class Implementation:
    """An adaptor's announcement (the protocol's ``implementation`` object)."""

    name: str
    version: str
    language: str = ""
    drivers: frozenset[str] = DRIVERS
    features: frozenset[str] = frozenset()
    homepage: str = ""

    @classmethod
    def from_json(cls, raw: object) -> Implementation:
        """Read an announcement; raise ValueError saying what is wrong with it."""
        if not isinstance(raw, dict):
            raise ValueError("implementation must be an object")
        for key in ("name", "version"):
            if not isinstance(raw.get(key), str) or not raw[key]:
                raise ValueError(f"implementation.{key} must be a non-empty string")
        for key in ("language", "homepage"):
            if not isinstance(raw.get(key, ""), str):
                raise ValueError(f"implementation.{key} must be a string")
        drivers = _names(raw, "drivers", required=True)
        unknown = sorted(drivers - DRIVERS)
        if unknown:
            known = ", ".join(sorted(DRIVERS))
            raise ValueError(f"implementation.drivers: unknown {unknown[0]!r} (known: {known})")
        return cls(
            name=raw["name"],
            version=raw["version"],
            language=raw.get("language", ""),
            drivers=drivers,
            features=_names(raw, "features", required=False),
            homepage=raw.get("homepage", ""),
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "version": self.version,
            "language": self.language,
            "drivers": sorted(self.drivers),
            "features": sorted(self.features),
        }

    def shown(self) -> str:
        """``my-adaptor 1.2.0 (go)``."""
        language = f" ({self.language})" if self.language else ""
        return f"{self.name} {self.version}{language}"

    def declines(self, request: Request) -> str | None:
        """Why this adaptor cannot serve ``request`` by its own account, or None."""
        if request.driver not in self.drivers:
            have = ", ".join(sorted(self.drivers)) or "none"
            return f"{self.name} does not announce the {request.driver} driver (drivers: {have})"
        for name, feature in FEATURES.items():
            if name not in self.features and feature.needed_by(request):
                return f"{self.name} does not announce the {name} feature: {feature.what}"
        return None


def _names(raw: dict[str, Any], key: str, *, required: bool) -> frozenset[str]:
    value = raw.get(key)
    if value is None and not required:
        return frozenset()
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"implementation.{key} must be a list of strings")
    return frozenset(value)


@runtime_checkable
class Announcing(Protocol):
    """A target that can say which implementation it is (once it has started)."""

    def announced(self) -> Implementation | None: ...


@dataclass(frozen=True)
class About:
    """
    One target as the reports show it: its kind, the implementation it
    announced (None if it announces none, or no case started it), and, for
    an adaptor that could not be started, why.
    """

    target: str
    kind: str
    implementation: Implementation | None = None
    not_started: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "target": self.target,
            "kind": self.kind,
            "implementation": None
            if self.implementation is None
            else self.implementation.to_json(),
            "not_started": self.not_started,
        }

    @classmethod
    def from_json(cls, raw: dict[str, Any]) -> About:
        implementation = raw["implementation"]
        return cls(
            raw["target"],
            raw["kind"],
            None if implementation is None else Implementation.from_json(implementation),
            raw["not_started"],
        )

    def merged(self, other: About) -> About:
        """What two processes (pytest-xdist workers) saw of the same target, together."""
        return About(
            self.target,
            self.kind,
            self.implementation or other.implementation,
            self.not_started or other.not_started,
        )


def about(target: object, name: str, kind: str) -> About:
    """What the reports say about ``target``."""
    implementation = target.announced() if isinstance(target, Announcing) else None
    not_started = getattr(target, "not_started", None)
    return About(name, kind, implementation, not_started if isinstance(not_started, str) else None)
