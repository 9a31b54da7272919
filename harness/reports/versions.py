"""
Clauses by CLI version: whether each contract clause holds on each version a run tried.

A model-api scenario states a clause as the pinned binaries keep it; where a
range of versions behaves differently, its ``by_version`` rule says what they
do instead and which of the scenario's clauses that breaks (``breaks``).  So
after a run on the real binaries at several versions, a clause *holds* on a
version when every scenario citing it passed there with no rule breaking it,
*does not hold* when its scenarios passed but a rule in force there breaks it
(the old behaviour, as documented, was observed), and *fails* when a scenario
citing it failed or errored: the binary does something no expectation
foresaw.  The catalogue says the same statically, from the rules alone.
Everything here is a pure function of scenarios and results.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import cast

from harness.catalogue.scenario import Scenario, Seam
from harness.catalogue.versions import key
from harness.seams.case import CaseResult
from harness.seams.model_api.values import ModelApiRequest
from harness.targets import REAL_KINDS


@dataclass(frozen=True)
class TargetInfo:
    """What reports say about a target: its name, kind and the CLI versions it runs."""

    name: str
    kind: str
    versions: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Verdict:
    """One clause on one version of one CLI."""

    clause: str
    cli: str
    version: str
    #: ``holds``, ``does not hold``, ``fails`` or ``not run``.
    state: str
    #: The scenarios behind the verdict, with why where it is not ``holds``.
    detail: tuple[str, ...] = ()


def cli_of(scenario: Scenario) -> str | None:
    """The CLI a model-api scenario runs; None for the other seams."""
    if scenario.seam is not Seam.MODEL_API:
        return None
    return cast(ModelApiRequest, scenario.request).cli


def real_versions(info: Iterable[TargetInfo]) -> dict[str, dict[str, str]]:
    """Per CLI, each version real targets ran and the target standing for it (first by name)."""
    out: dict[str, dict[str, str]] = {}
    for target in sorted(info, key=lambda t: t.name):
        if target.kind in REAL_KINDS:
            for cli, version in target.versions:
                out.setdefault(cli, {}).setdefault(version, target.name)
    return out


def _verdict(
    clause: str, cli: str, version: str, cases: list[tuple[Scenario, CaseResult | None]]
) -> Verdict:
    failing = [s.id for s, r in cases if r is not None and r.status in {"failed", "errored"}]
    if failing:
        return Verdict(clause, cli, version, "fails", tuple(failing))
    broken = [
        f"{s.id}: {rule.because}"
        for s, r in cases
        if r is not None and r.status == "passed"
        for rule in s.rules_for({cli: version})
        if clause in rule.breaks
    ]
    if broken:
        return Verdict(clause, cli, version, "does not hold", tuple(broken))
    passing = [s.id for s, r in cases if r is not None and r.status == "passed"]
    if passing:
        return Verdict(clause, cli, version, "holds", tuple(passing))
    return Verdict(clause, cli, version, "not run")


def verdicts(
    scenarios: Iterable[Scenario], results: Iterable[CaseResult], info: Iterable[TargetInfo]
) -> tuple[Verdict, ...]:
    """Every clause cited by a model-api scenario, on every version real targets ran."""
    standing = real_versions(info)
    by_case = {(r.scenario, r.target): r for r in results}
    cited: dict[tuple[str, str], list[Scenario]] = {}
    for scenario in scenarios:
        cli = cli_of(scenario)
        if cli is not None:
            for clause in scenario.clauses:
                cited.setdefault((cli, clause), []).append(scenario)
    out = []
    for (cli, clause), mine in sorted(cited.items()):
        for version in sorted(standing.get(cli, {}), key=key):
            target = standing[cli][version]
            cases = [(s, by_case.get((s.id, target))) for s in mine]
            out.append(_verdict(clause, cli, version, cases))
    return tuple(out)


def to_json(found: Iterable[Verdict]) -> list[dict[str, object]]:
    return [
        {
            "clause": v.clause,
            "cli": v.cli,
            "version": v.version,
            "state": v.state,
            "detail": list(v.detail),
        }
        for v in found
    ]


def markdown(found: tuple[Verdict, ...]) -> list[str]:
    """The coverage report's section: per CLI, clauses × versions."""
    lines = ["## Clauses by CLI version", ""]
    if not found:
        lines += ["No real CLI ran in this run; no clause was checked on a version.", ""]
        return lines
    lines += [
        "Whether each clause holds on each version of the real CLIs this run ran: "
        "`holds` (every scenario citing it passed, no per-version rule breaks it), "
        "`does not hold` (its scenarios passed with a `by_version` rule that breaks it: "
        "the documented older behaviour was observed), `FAILS` (a scenario citing it failed "
        "or errored) or `not run`.",
        "",
    ]
    for cli in sorted({v.cli for v in found}):
        mine = [v for v in found if v.cli == cli]
        order = sorted({v.version for v in mine}, key=key)
        lines += [f"### {cli}", "", "| clause | " + " | ".join(order) + " |"]
        lines.append("|---|" + "---|" * len(order))
        cells = {(v.clause, v.version): v for v in mine}
        for clause in sorted({v.clause for v in mine}):
            row = [_state(cells[(clause, version)]) for version in order]
            lines.append(f"| {clause} | " + " | ".join(row) + " |")
        notes = [v for v in mine if v.state in {"does not hold", "fails"}]
        if notes:
            lines.append("")
        for v in notes:
            lines.append(f"- {v.clause} on {cli} {v.version}: {v.state}: " + "; ".join(v.detail))
        lines.append("")
    return lines


def _state(verdict: Verdict) -> str:
    return "FAILS" if verdict.state == "fails" else verdict.state


def static(scenarios: Iterable[Scenario]) -> list[str]:
    """The catalogue's section: every clause some version range breaks, and where."""
    broken: dict[str, list[str]] = {}
    for scenario in scenarios:
        for rule in scenario.by_version:
            for clause in rule.breaks:
                broken.setdefault(clause, []).append(
                    f"{rule.cli} {rule.range.text} ([{scenario.id}](#{scenario.id})): "
                    f"{rule.because}"
                )
    lines = ["", "## Clauses that do not hold on every version", ""]
    if not broken:
        return [*lines, "Every clause holds on every version the scenarios know of."]
    lines.append(
        "What the scenarios' `by_version` rules say: on these ranges of versions the "
        "clause does not hold (the scenario documents what those versions do instead)."
    )
    for clause in sorted(broken):
        lines += ["", f"- {clause}:"]
        lines += [f"  - {where}" for where in sorted(set(broken[clause]))]
    return lines
