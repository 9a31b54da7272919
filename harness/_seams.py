"""
The seam registry: everything that differs from one seam to the next.

Every scenario shares id, title, description, clauses, tags and seam; the
``request``, ``provider`` and ``expect`` sections mean different things on
each seam, and so do running a case, comparing what came back and telling a
reader what the scenario documents.  A seam registers one `SeamKind` that
owns all of that; the loader, the executor, the engine, the reports and the
CLI look the seam up here and never branch on its name.

The scenario JSON Schema dispatches on ``seam`` in the same way: each seam
names the ``$defs`` entry that describes its sections (`SeamKind.schema_def`),
and a test keeps the file's ``if``/``then`` blocks and this registry in step.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from importlib import import_module
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from harness._scenario import Script

if TYPE_CHECKING:
    from harness._compare import Mismatch
    from harness._scenario import Scenario
    from harness._targets import Target

#: Report a problem at a path inside the scenario document.
Report = Callable[[tuple[str | int, ...], str], None]

#: The modules that define the built-in seams; importing one registers it.
BUILTIN = ("harness._seam_agent_cli", "harness._seam_model_api", "harness._seam_service")


@dataclass(frozen=True)
class Parts:
    """The seam-specific values of one scenario, built once by its `SeamKind`."""

    #: The seam's typed request (agent-cli: `Request`).
    request: object
    #: The seam's typed expectation (agent-cli: `Expectation`).
    expect: object
    script: Script | None = None
    #: Scripts for the second and later launches of the fake, in order.
    later_scripts: tuple[Script, ...] = ()
    by_target: tuple[tuple[str, object], ...] = ()


class SeamOutcome(Protocol):
    """What one case observed on a seam; it travels between processes as JSON."""

    seam: ClassVar[str]

    def to_json(self) -> dict[str, Any]: ...

    def summary(self) -> str:
        """One line for a failing case: what the system under test did."""
        ...


class SeamKind(Protocol):
    """How scenarios of one seam are loaded, run, compared and documented."""

    #: The ``$defs`` entry of the scenario schema that describes this seam's sections.
    schema_def: str

    # -- loading -------------------------------------------------------------

    def merge_case(self, base: dict[str, Any], case: dict[str, Any]) -> dict[str, Any]:
        """A family case over the family's shared fields."""
        ...

    def check(self, doc: dict[str, Any], base: Path, report: Report) -> None:
        """What the JSON Schema cannot say; every problem goes to ``report``."""
        ...

    def parts(self, doc: dict[str, Any], base: Path) -> Parts:
        """The typed values of a document that passed `check`."""
        ...

    # -- running -------------------------------------------------------------

    def observe(self, scenario: Scenario, target: Target) -> SeamOutcome:
        """
        Run ``scenario`` on ``target`` and return what was observed.

        Raises when the target itself fails (it cannot be reached, it breaks
        its protocol); the executor records that as ``errored``.
        """
        ...

    def compare(self, expect: object, actual: SeamOutcome) -> tuple[Mismatch, ...]:
        """Every way ``actual`` fails to meet ``expect``."""
        ...

    def outcome_from_json(self, data: dict[str, Any]) -> SeamOutcome: ...

    # -- documenting ---------------------------------------------------------

    def describe(self, scenario: Scenario) -> list[str]:
        """The catalogue's bullet points: the behaviour a conforming SUT shows."""
        ...

    def show(self, scenario: Scenario) -> list[str]:
        """What ``harness show`` prints after the clauses: request, fake, expectation."""
        ...


def merge(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    """Deep-merge ``override`` into a copy of ``base`` (families, per-target expectations)."""
    merged = dict(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = merge(merged[key], value)
        else:
            merged[key] = value
    return merged


#: Seam name → its kind.  Seams without an entry are rejected by lint.
SEAMS: dict[str, SeamKind] = {}


def register(name: str, kind: SeamKind) -> None:
    if name in SEAMS:
        raise TypeError(f"seam {name!r} registered twice")
    SEAMS[name] = kind


@cache
def _builtin() -> None:
    for module in BUILTIN:
        import_module(module)


def get(name: str) -> SeamKind | None:
    """The registered seam called ``name``, if any (built-in seams load on first use)."""
    _builtin()
    return SEAMS.get(name)


def require(name: str) -> SeamKind:
    """The registered seam called ``name``; the scenario loaded, so it must exist."""
    found = get(name)
    if found is None:
        raise KeyError(f"seam {name!r} is not registered")
    return found
