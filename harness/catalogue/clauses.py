"""
The clause registry: every contract clause the harness can assert.

Scenarios cite clauses by ID; the loader rejects unknown IDs and the reports
show which clauses no scenario exercises yet.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

import yaml


@dataclass(frozen=True)
class Clause:
    """One assertable behaviour, with where it comes from."""

    id: str
    family: str
    seam: str
    source: str
    summary: str


@cache
def families() -> dict[str, str]:
    """Family prefix → title, in the order the registry lists them."""
    return dict(_raw()["families"])


@cache
def registry() -> dict[str, Clause]:
    """Clause ID → clause, in registry order."""
    out: dict[str, Clause] = {}
    for entry in _raw()["clauses"]:
        family = entry["id"].rsplit("-", 1)[0]
        out[entry["id"]] = Clause(
            entry["id"], family, entry["seam"], entry["source"], entry["summary"]
        )
    return out


@cache
def _raw() -> dict[str, Any]:
    text = resources.files("harness").joinpath("catalogue/clauses.yaml").read_text(encoding="utf-8")
    # The package's own file, read on every command: libyaml's safe loader
    # where PyYAML has it (ten times the pure-Python one's speed).
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    loaded: dict[str, Any] = yaml.load(text, Loader=loader)  # noqa: S506 - a safe loader
    return loaded
