"""
The seam registry: what each seam adds to the common scenario fields.

Every scenario shares id, title, description, clauses, tags and seam; the
``request``, ``provider`` and ``expect`` sections mean different things on
each seam.  A seam registers a `SeamLoader` that checks those sections
beyond the JSON Schema and builds their typed values; the loader looks the
seam up here and never branches on its name.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from harness._scenario import Expectation, Request, Script

#: Report a problem at a path inside the scenario document.
Report = Callable[[tuple[str | int, ...], str], None]


@dataclass(frozen=True)
class Parts:
    """The seam-specific values of one scenario."""

    request: Request
    expect: Expectation
    script: Script | None = None
    by_target: tuple[tuple[str, Expectation], ...] = ()


class SeamLoader(Protocol):
    """Checks and builds the seam-specific sections of a scenario."""

    def check(self, doc: dict[str, Any], base: Path, report: Report) -> None: ...

    def parts(self, doc: dict[str, Any], base: Path) -> Parts: ...


def merge(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    """Deep-merge ``override`` into a copy of ``base`` (families, per-target expectations)."""
    merged = dict(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = merge(merged[key], value)
        else:
            merged[key] = value
    return merged


#: Seam name → its loader.  Seams without an entry are rejected by lint.
LOADERS: dict[str, SeamLoader] = {}


def register(name: str, loader: SeamLoader) -> None:
    if name in LOADERS:
        raise TypeError(f"seam {name!r} registered twice")
    LOADERS[name] = loader
