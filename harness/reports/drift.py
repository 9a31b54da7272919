"""
The drift report: how a CLI's behaviour changes from one published version to the next.

Users ship against one release of Claude Code or Codex and ask, before each
upgrade, whether structured output still behaves as their adaptor expects.
When a run has the real binaries at several versions of one CLI (``--target
real:claude=2.1.235 --target real --target real:claude=2.1.332``), each
model-api scenario of that CLI is followed across the versions in order:
each version's status and outcome, and what changed between consecutive
versions, compared on the differential's projection
(`harness.reports.differential.project`), so a change here is exactly what a
faithful model of the older version would have to do differently.

The real binaries are what a drift is about; only in a run without any
real target do the reference targets at several versions
(``reference:claude=2.1.235`` beside ``reference``) stand in, and the report
says the drift is then the profiles' prediction.  When two targets run the
same version of the CLI (``real`` and ``real:codex=0.171.0`` both run claude
2.1.328), the first by name stands for it.  Everything here is a pure
function of results.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from harness.catalogue.versions import key
from harness.reports.differential import Difference, differences, project
from harness.seams.case import CaseResult
from harness.seams.model_api.values import ModelApiOutcome
from harness.systems.claude.profile import CLAUDE
from harness.systems.profiles import CODEBUDDY, CODEX, Table
from harness.targets import REAL_KINDS, REFERENCE_KINDS

#: Where a CLI's drift comes from: its real binaries, or (none ran at several
#: versions) the reference models' profiles, what they predict.
REAL, MODELLED = "real binaries", "reference models"

#: The reference models' version profiles, by CLI.
PROFILES: dict[str, Table] = {"claude": CLAUDE, "codex": CODEX, "codebuddy": CODEBUDDY}


@dataclass(frozen=True)
class Step:
    """One scenario on one version: how it fared and what it did."""

    version: str
    target: str
    status: str
    #: The outcome on the differential's projection; None when nothing was observed.
    projection: dict[str, Any] | None = None
    reason: str | None = None

    def summary(self) -> str:
        """A table cell: status, exit code, the final result, the requests."""
        if self.projection is None:
            return self.status
        shown = self.projection
        final = shown.get("final.subtype") or shown.get("final.type") or "no result"
        killed = ", killed" if shown["timed_out"] else ""
        count = len(shown["requests"])
        return f"{self.status}: exit {shown['exit_code']}{killed}, {final}, {count} req"


@dataclass(frozen=True)
class Change:
    """What differs between two consecutive versions of one scenario."""

    before: str
    after: str
    differences: tuple[Difference, ...] = ()
    #: Set when one side has no outcome to compare, with why.
    not_comparable: str | None = None


@dataclass(frozen=True)
class Row:
    """One scenario across the versions of its CLI."""

    scenario: str
    cli: str
    steps: tuple[Step, ...]
    changes: tuple[Change, ...]

    @property
    def changed(self) -> bool:
        return any(c.differences or c.not_comparable for c in self.changes)


@dataclass(frozen=True)
class Drift:
    """Every CLI that ran at several versions, and its scenarios across them."""

    #: Each such CLI and its versions, oldest first.
    clis: tuple[tuple[str, tuple[str, ...]], ...] = ()
    rows: tuple[Row, ...] = ()
    #: Per CLI, whose outcomes these are: `REAL` or `MODELLED`.
    sources: tuple[tuple[str, str], ...] = ()

    def changed(self, cli: str, before: str, after: str) -> tuple[Row, ...]:
        """The scenarios of ``cli`` whose outcome changes from ``before`` to ``after``."""
        return tuple(
            row
            for row in self.rows
            if row.cli == cli
            and any(
                c.before == before and c.after == after and (c.differences or c.not_comparable)
                for c in row.changes
            )
        )

    def to_json(self) -> dict[str, Any]:
        """The ``drift`` section of report.json (full values, not cut)."""
        return {
            "clis": {cli: list(versions) for cli, versions in self.clis},
            "sources": dict(self.sources),
            "profile_changes": [
                {"cli": cli, "from": before, "to": after, "rows": rows}
                for (cli, before, after), rows in modelled(self).items()
            ],
            "scenarios": [
                {
                    "scenario": row.scenario,
                    "cli": row.cli,
                    "versions": {
                        step.version: {
                            "target": step.target,
                            "status": step.status,
                            "reason": step.reason,
                            "outcome": step.projection,
                        }
                        for step in row.steps
                    },
                    "changes": [
                        {
                            "from": change.before,
                            "to": change.after,
                            "not_comparable": change.not_comparable,
                            "differences": [
                                {"field": d.at, "before": d.reference, "after": d.real}
                                for d in change.differences
                            ],
                        }
                        for change in row.changes
                    ],
                }
                for row in self.rows
            ],
        }


def _step(version: str, result: CaseResult) -> Step:
    outcome = result.outcome
    shown = project(outcome) if isinstance(outcome, ModelApiOutcome) else None
    reason = " ".join((result.reason or "").split()) or None
    return Step(version, result.target, result.status, shown, reason)


def _change(one: Step, other: Step) -> Change:
    if one.projection is None or other.projection is None:
        missing = [
            f"{step.version} {step.status}" + (f": {step.reason}" if step.reason else "")
            for step in (one, other)
            if step.projection is None
        ]
        return Change(one.version, other.version, (), "; ".join(missing))
    found = differences(one.projection, other.projection)
    if one.status != other.status:
        found = (Difference("status", "status", one.status, other.status), *found)
    return Change(one.version, other.version, found)


def build(
    results: Iterable[CaseResult],
    kinds: Mapping[str, str],
    model_api: Mapping[str, str],
    versions: Mapping[str, Mapping[str, str]],
) -> Drift:
    """
    The drift of every CLI that real targets ran at several versions;
    ``model_api`` maps each model-api scenario to its CLI, ``kinds`` and
    ``versions`` each target name to its kind and CLI versions.
    """
    standing: dict[str, dict[str, str]] = {}
    sources: dict[str, str] = {}
    real = sorted(n for n, k in kinds.items() if k in REAL_KINDS)
    # The profiles' prediction stands in only in a run without any real binary.
    models = sorted(n for n, k in kinds.items() if k in REFERENCE_KINDS)
    names, source = (real, REAL) if real else (models, MODELLED)
    for cli, by_version in _standing(names, versions).items():
        if len(by_version) > 1:
            standing[cli], sources[cli] = by_version, source
    clis = tuple((cli, tuple(sorted(standing[cli], key=key))) for cli in sorted(standing))
    wanted = {(standing[cli][version], cli): version for cli, order in clis for version in order}
    cells: dict[str, dict[str, Step]] = {}
    for result in results:
        at = wanted.get((result.target, model_api.get(result.scenario, "")))
        if at is not None:
            cells.setdefault(result.scenario, {})[at] = _step(at, result)
    order = dict(clis)
    rows = []
    for scenario in sorted(cells):
        cli = model_api[scenario]
        steps = tuple(cells[scenario][v] for v in order[cli] if v in cells[scenario])
        changes = tuple(_change(a, b) for a, b in itertools.pairwise(steps))
        rows.append(Row(scenario, cli, steps, changes))
    return Drift(clis, tuple(rows), tuple(sorted(sources.items())))


def _standing(
    names: list[str], versions: Mapping[str, Mapping[str, str]]
) -> dict[str, dict[str, str]]:
    """Per CLI, each version the named targets run and the one standing for it (first by name)."""
    out: dict[str, dict[str, str]] = {}
    for name in names:
        for cli, version in versions.get(name, {}).items():
            out.setdefault(cli, {}).setdefault(version, name)
    return out


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def modelled(found: Drift) -> dict[tuple[str, str, str], list[str]]:
    """Per (cli, before, after) of the drift, the profile rows that change there."""
    return {
        (cli, before, after): PROFILES[cli].changes(before, after)
        for cli, order in found.clis
        if cli in PROFILES
        for before, after in itertools.pairwise(order)
    }


def markdown(found: Drift) -> str:
    """
    drift.md: per CLI, the scenarios across its versions, then every change
    between consecutive versions with both values, after the rows of the
    reference model's profile that change there, so each measured change
    can be read against the modelled ones.
    """
    lines = ["# Drift report: the CLIs from one version to the next", ""]
    if not found.clis:
        lines.append("No CLI ran at several versions in this run; nothing to compare.")
        return "\n".join(lines) + "\n"
    lines += [
        "Each model-api scenario on the real binaries at several versions of its CLI, "
        "oldest first, and what changed between consecutive versions, on the "
        "differential's projection: exit code, stderr, timeout, stdout line types, the "
        "final result's decisive fields and every request that reached the fake.",
    ]
    for cli, order in found.clis:
        rows = [row for row in found.rows if row.cli == cli]
        source = dict(found.sources).get(cli, REAL)
        lines += ["", f"## {cli}: {' → '.join(order)} ({source})", ""]
        if source == MODELLED:
            lines += [
                "No real binary of this CLI ran at several versions: these are the reference "
                "model's profiles, what they predict the binaries do.",
                "",
            ]
        for before, after in itertools.pairwise(order):
            changed = found.changed(cli, before, after)
            lines.append(f"- {before} → {after}: {len(changed)} of {len(rows)} scenarios change")
        lines += ["", "| scenario | " + " | ".join(order) + " |"]
        lines.append("|---|" + "---|" * len(order))
        for row in rows:
            by_version = {step.version: step for step in row.steps}
            cells = [_cell(by_version[v].summary()) if v in by_version else "" for v in order]
            lines.append(f"| {row.scenario} | " + " | ".join(cells) + " |")
        for before, after in itertools.pairwise(order):
            lines += ["", f"### {cli} {before} → {after}", ""]
            entries = modelled(found).get((cli, before, after), [])
            if entries:
                lines.append("Profile entries of the reference model that change here:")
                lines += ["", *[f"- {entry}" for entry in entries], ""]
            changed = found.changed(cli, before, after)
            if not changed:
                lines.append("No scenario's outcome changes.")
            for row in changed:
                change = next(c for c in row.changes if (c.before, c.after) == (before, after))
                lines += ["", f"#### {row.scenario}", ""]
                if change.not_comparable is not None:
                    lines.append(f"Not comparable: {_cell(change.not_comparable)}")
                    continue
                lines.append("```diff")
                for difference in change.differences:
                    left, right = difference.shown()
                    lines += [
                        f"@@ {difference.at} @@",
                        f"- {before}: {left}",
                        f"+ {after}: {right}",
                    ]
                lines.append("```")
    return "\n".join(lines) + "\n"
