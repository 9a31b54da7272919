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


#: The page `inventory` renders; tests/test_coverage.py keeps the two equal.
INVENTORY = "docs/clauses.md"

_INTRO = """\
# Contract clauses

Every behaviour the harness can assert, with a stable ID that scenarios cite
in their `clauses` list. This page is rendered from the registry,
`harness/catalogue/clauses.yaml`: edit the registry, then write the page again
with

    .venv/bin/python -c 'from harness.catalogue.clauses import inventory
    print(inventory(), end="")' > docs/clauses.md

(`tests/test_coverage.py` fails while the two differ). An ID, once given, is
never reused or renumbered: baselines, reports and scenarios name it.

*Seam* is where a scenario can exercise the clause ([scenarios](scenarios.md),
[model API](model-api.md), [services](services.md)). *Source* is where the
behaviour was learnt: a seed document the project started from (000 Throng,
001 the Go adaptor SDK, 003 the T3 delegate_task proposal, 004 an analysis of
Claude Code), a research note of the same kind, or a capture of a real CLI,
kept in `tests/data/captures/`. Where a capture and a document disagree, the
capture (what the binary did) wins. Which scenarios cover each clause, and
which clauses no scenario covers yet, is in a run's `coverage.md`.
"""


def inventory() -> str:
    """
    The registry as a Markdown page (`INVENTORY`), family by family: the one
    list of clauses a reader gets, without a second copy to keep in step by hand.
    """
    parts = [_INTRO]
    by_family: dict[str, list[Clause]] = {}
    for clause in registry().values():
        by_family.setdefault(clause.family, []).append(clause)
    for prefix, title in families().items():
        parts.append(f"\n## {prefix}: {title}\n\n| ID | Seam | Source | Clause |\n")
        parts.append("|---|---|---|---|\n")
        for c in by_family.get(prefix, []):
            summary = c.summary.replace("|", "\\|")  # a pipe would end the cell
            parts.append(f"| {c.id} | {c.seam} | {c.source} | {summary} |\n")
    return "".join(parts)


@cache
def _raw() -> dict[str, Any]:
    text = resources.files("harness").joinpath("catalogue/clauses.yaml").read_text(encoding="utf-8")
    # The package's own file, read on every command: libyaml's safe loader
    # where PyYAML has it (ten times the pure-Python one's speed).
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    loaded: dict[str, Any] = yaml.load(text, Loader=loader)  # noqa: S506 - a safe loader
    return loaded
