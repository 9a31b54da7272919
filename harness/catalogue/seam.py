"""
The seam registry, as the catalogue sees it: how each seam's sections load.

Every scenario shares id, title, description, clauses, tags and seam; the
``request``, ``provider`` and ``expect`` sections mean different things on
each seam.  A seam registers one object that knows how to check and build
its sections and how to tell a reader what a scenario documents
(`SeamFormat`); running and comparing are the other half of the same object
(`harness.seams.SeamKind`).  The loader, the reports and the CLI look the
seam up here and never branch on its name.

The catalogue names the built-in seams by module (`BUILTIN`) and imports them
on first use, the way a plugin host loads its plugins, so nothing here
depends on the code that runs them.  The scenario JSON Schema dispatches on
``seam`` in the same way: each seam names the ``$defs`` entry that describes
its sections (`SeamFormat.schema_def`), and a test keeps the file's
``if``/``then`` blocks and this registry in step.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from importlib import import_module
from typing import TYPE_CHECKING, Any, Protocol

from harness.catalogue.files import Folder
from harness.catalogue.scenario import Script, VersionRule

if TYPE_CHECKING:
    from harness.catalogue.scenario import Scenario

#: Report a problem at a path inside the scenario document.
Report = Callable[[tuple[str | int, ...], str], None]

#: The modules that define the built-in seams; importing one registers it.
BUILTIN = ("harness.seams.agent_cli", "harness.seams.model_api.seam", "harness.seams.service.seam")


@dataclass(frozen=True)
class Parts:
    """The seam-specific values of one scenario, built once by its seam."""

    #: The seam's typed request (agent-cli: `Request`).
    request: object
    #: The seam's typed expectation (agent-cli: `Expectation`).
    expect: object
    script: Script | None = None
    #: Scripts for the second and later launches of the fake, in order.
    later_scripts: tuple[Script, ...] = ()
    by_target: tuple[tuple[str, object], ...] = ()
    by_version: tuple[VersionRule, ...] = ()
    by_contract: tuple[tuple[str, object], ...] = ()


class SeamFormat(Protocol):
    """How scenarios of one seam are loaded and documented."""

    #: The ``$defs`` entry of the scenario schema that describes this seam's sections.
    schema_def: str

    def merge_case(self, base: dict[str, Any], case: dict[str, Any]) -> dict[str, Any]:
        """A family case over the family's shared fields."""
        ...

    def check(self, doc: dict[str, Any], base: Folder, report: Report) -> None:
        """What the JSON Schema cannot say; every problem goes to ``report``."""
        ...

    def parts(self, doc: dict[str, Any], base: Folder) -> Parts:
        """The typed values of a document that passed `check`."""
        ...

    def describe(self, scenario: Scenario) -> list[str]:
        """The catalogue's bullet points: the behaviour a conforming SUT shows."""
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


#: Seam name → its format.  Seams without an entry are rejected by lint.
SEAMS: dict[str, SeamFormat] = {}


def register(name: str, kind: SeamFormat) -> None:
    if name in SEAMS:
        raise TypeError(f"seam {name!r} registered twice")
    SEAMS[name] = kind


@cache
def _builtin() -> None:
    for module in BUILTIN:
        import_module(module)


def get(name: str) -> SeamFormat | None:
    """The registered seam called ``name``, if any (built-in seams load on first use)."""
    _builtin()
    return SEAMS.get(name)


def require(name: str) -> SeamFormat:
    """The registered seam called ``name``; the scenario loaded, so it must exist."""
    found = get(name)
    if found is None:
        raise KeyError(f"seam {name!r} is not registered")
    return found
