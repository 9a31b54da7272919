"""
Reports: the conformance matrix, failures, coverage, catalogue, JSON, JUnit, HTML.

Every writer is a pure function of the scenarios, results and problems, with
no clocks or machine paths, so two runs of the same catalogue give
byte-identical files; the one exception is junit.xml's measured ``time`` of
each case (`harness.reports.junit`), which CI dashboards want real, unless
``SOURCE_DATE_EPOCH`` asks for reproducible reports (`write`).
`Report` is the one value they all render.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness import seams, signals
from harness.adaptor.environment import scrub
from harness.catalogue import loader
from harness.catalogue.clauses import families, registry
from harness.catalogue.scenario import Scenario
from harness.exceptions import Problem
from harness.reports import about, html, junit, staging, versions
from harness.reports import drift as drifts
from harness.reports.differential import Differential, Pair
from harness.reports.drift import Drift
from harness.reports.versions import TargetInfo
from harness.seams.case import SKIPPED_BY, STATUSES, CaseResult
from harness.targets.announce import About
from harness.targets.real import describe_versions

#: Bumped whenever the JSON report changes shape.  2: each case names its
#: seam, and a case's ``outcome`` has that seam's shape (service-api cases
#: carry the service's answers rather than the canonical adaptor outcome).
#: Additions that leave every existing key as it was (the ``differential``
#: section) keep the version, so readers of version 2 go on working.
REPORT_VERSION = 2

#: Clause families every one of whose clauses needs a scenario, per seam.
_REQUIRED_FAMILIES = (
    *("SCH", "NEG", "PV", "CDX", "CLA", "DEC", "POL", "CUR", "CBY"),
    *("THR", "T3", "LOOP"),
)
_GATED_SEAMS = ("agent-cli", "service-api", "model-api")
_SYMBOL = {"passed": "pass", "failed": "FAIL", "errored": "ERROR", "skipped": "skip"}
#: Verdicts against a target's baseline, counted beside the statuses.
VERDICTS = ("expected", "regression", "stale")
#: The `Report.commands` of a run without ``--allow-exec``.
NO_COMMANDS = "not allowed (cases that would run one are skipped)"
#: Who skipped a case, in words (`SKIPPED_BY`).
SKIPPED_BY_WORDS = {"harness": "the harness", "scenario": "the scenario", "target": "the target"}


def _symbol(result: CaseResult) -> str:
    if result.verdict == "expected":
        return "known" if result.status == "failed" else "known error"
    if result.verdict == "stale":
        return "STALE"
    return _SYMBOL[result.status]


@dataclass(frozen=True)
class Report:
    """Everything one run produced, in a deterministic order."""

    scenarios: tuple[Scenario, ...]
    results: tuple[CaseResult, ...]
    problems: tuple[Problem, ...]
    root: Path
    #: The model-api differential (reference models against the real CLIs).
    differential: Differential = field(default_factory=Differential)
    #: Whether scenarios could make systems run commands, and how they were confined.
    commands: str = NO_COMMANDS
    #: The targets of the run: kinds and the CLI versions they run.
    info: tuple[TargetInfo, ...] = ()
    #: The real CLIs from one version to the next, when a run has several.
    drift: Drift = field(default_factory=Drift)
    #: Each target: its kind, the implementation it announced, or why it did not start.
    abouts: tuple[About, ...] = ()

    @classmethod
    def build(
        cls,
        scenarios: Iterable[Scenario],
        results: Iterable[CaseResult],
        problems: Iterable[Problem],
        root: Path,
        differential: Differential | None = None,
        *,
        commands: str = NO_COMMANDS,
        info: Iterable[TargetInfo] = (),
        drift: Drift | None = None,
        abouts: Iterable[About] = (),
    ) -> Report:
        return cls(
            tuple(sorted(scenarios, key=lambda s: s.id)),
            tuple(sorted(results, key=lambda r: (r.scenario, r.target))),
            tuple(sorted(problems, key=lambda p: (p.file, p.line, p.column))),
            root,
            differential or Differential(),
            commands,
            tuple(sorted(info, key=lambda t: t.name)),
            drift or Drift(),
            tuple(sorted(abouts, key=lambda a: a.target)),
        )

    def by_version(self) -> tuple[versions.Verdict, ...]:
        """Each clause of the model-api scenarios on each version the real CLIs ran."""
        return versions.verdicts(self.scenarios, self.results, self.info)

    def not_started(self) -> dict[str, str]:
        """Each target that could not be started, with why."""
        return {a.target: a.not_started for a in self.abouts if a.not_started is not None}

    @property
    def targets(self) -> tuple[str, ...]:
        return tuple(sorted({r.target for r in self.results}))

    def summary(self) -> dict[str, dict[str, int]]:
        out: dict[str, dict[str, int]] = {}
        for target in self.targets:
            mine = [r for r in self.results if r.target == target]
            counts = Counter(r.status for r in mine)
            verdicts = Counter(r.verdict for r in mine)
            out[target] = {status: counts.get(status, 0) for status in STATUSES}
            out[target].update({v: verdicts.get(v, 0) for v in VERDICTS})
        return out

    def skips(self) -> dict[str, list[dict[str, Any]]]:
        """Per target, its skipped cases counted by who skipped them and why."""
        return skip_counts(self.results)

    def relative(self, path: Path) -> str:
        return loader.shown(path, self.root)

    def coverage(self) -> list[dict[str, Any]]:
        by_clause: dict[str, list[str]] = {}
        for scenario in self.scenarios:
            for cited in scenario.clauses:
                by_clause.setdefault(cited, []).append(scenario.id)
        rows = []
        for clause in registry().values():
            ids = by_clause.get(clause.id, [])
            passing = [
                r.scenario for r in self.results if r.scenario in ids and r.status == "passed"
            ]
            rows.append(
                {
                    "clause": clause.id,
                    "family": clause.family,
                    "seam": clause.seam,
                    "summary": clause.summary,
                    "scenarios": ids,
                    "passing_scenarios": sorted(set(passing)),
                    "status": "covered" if ids else "not yet covered",
                }
            )
        return rows

    def uncovered_required(self) -> list[str]:
        """Clauses of the gated families (on the seams built so far) that no scenario exercises."""
        return [
            row["clause"]
            for row in self.coverage()
            if row["family"] in _REQUIRED_FAMILIES
            and row["seam"] in _GATED_SEAMS
            and not row["scenarios"]
        ]


def skip_counts(results: Iterable[CaseResult]) -> dict[str, list[dict[str, Any]]]:
    """
    Per target, its skipped cases counted by who skipped them (`SKIPPED_BY`)
    and the reason given, in a stable order.
    """
    counted: Counter[tuple[str, str, str]] = Counter(
        (r.target, r.skipped_by or "target", r.reason or "")
        for r in results
        if r.status == "skipped"
    )
    out: dict[str, list[dict[str, Any]]] = {}
    order = {by: i for i, by in enumerate(SKIPPED_BY)}
    for target, by, reason in sorted(counted, key=lambda k: (k[0], order.get(k[1], 9), k[2])):
        out.setdefault(target, []).append(
            {"skipped_by": by, "reason": reason, "count": counted[(target, by, reason)]}
        )
    return out


def _case_json(result: CaseResult, seam: str | None) -> dict[str, Any]:
    return {
        "scenario": result.scenario,
        "target": result.target,
        "seam": seam,
        "status": result.status,
        "reason": result.reason,
        "verdict": result.verdict,
        "note": result.note,
        "skipped_by": result.skipped_by,
        "mismatches": [
            {"field": m.field, "expected": m.expected, "actual": m.actual}
            for m in result.mismatches
        ],
        "outcome": None if result.outcome is None else result.outcome.to_json(),
        "context": result.context,
    }


def to_json(report: Report) -> str:
    seam_of = {s.id: s.seam.value for s in report.scenarios}
    document = {
        "version": REPORT_VERSION,
        "targets": list(report.targets),
        "summary": report.summary(),
        "skips": report.skips(),
        "problems": [str(p) for p in report.problems],
        "cases": [_case_json(r, seam_of.get(r.scenario)) for r in report.results],
        "coverage": report.coverage(),
        "clauses_by_version": versions.to_json(report.by_version()),
        "differential": report.differential.to_json(),
        "drift": report.drift.to_json(),
        "commands": report.commands,
        "target_versions": {t.name: dict(t.versions) for t in report.info if t.versions},
        "about": [a.to_json() for a in report.abouts],
    }
    return json.dumps(document, ensure_ascii=False, sort_keys=True, indent=2) + "\n"


def _anchor(result: CaseResult) -> str:
    return f"{result.scenario}-{result.target}".replace(":", "-").replace("/", "-").lower()


def matrix(report: Report) -> str:
    targets = report.targets
    lines = ["# Conformance matrix", ""]
    columns = (*STATUSES, *VERDICTS)
    lines.append("| target | " + " | ".join(columns) + " |")
    lines.append("|---|" + "---|" * len(columns))
    for target, counts in report.summary().items():
        lines.append(f"| {target} | " + " | ".join(str(counts[c]) for c in columns) + " |")
    lines += [
        "",
        "`expected`, `regression` and `stale` count cases against the target's baseline of "
        "known failures and skips.",
        "",
        f"Commands a scenario makes a system run: {report.commands}.",
        "",
        "## Skips",
        "",
    ]
    skips = report.skips()
    if not skips:
        lines.append("No case was skipped.")
    else:
        lines += ["| target | skipped by | reason | cases |", "|---|---|---|---|"]
    for target, counted in skips.items():
        for each in counted:
            reason = _one_line(each["reason"]).replace("|", "\\|")
            lines.append(
                f"| {target} | {SKIPPED_BY_WORDS.get(each['skipped_by'], each['skipped_by'])} "
                f"| {reason} | {each['count']} |"
            )
    lines += about.table(report.abouts)
    shown = [t for t in report.info if t.versions and t.name in targets]
    if shown:
        lines += ["", "CLI versions (model-api):", ""]
        lines += [f"- `{t.name}` ({t.kind}): {describe_versions(t.versions)}" for t in shown]
    if report.problems:
        lines += ["", "## Scenario files rejected", ""]
        lines += [f"- `{p}`" for p in report.problems]
    lines += ["", "## Scenarios", ""]
    lines.append("| scenario | clauses | " + " | ".join(targets) + " |")
    lines.append("|---|---|" + "---|" * len(targets))
    cells = {(r.scenario, r.target): r for r in report.results}
    for scenario in report.scenarios:
        row = [f"[{scenario.id}](catalogue.md#{scenario.id})", ", ".join(scenario.clauses)]
        for target in targets:
            result = cells.get((scenario.id, target))
            if result is None:
                row.append("")
            elif result.status in {"failed", "errored"} or result.verdict == "stale":
                row.append(f"[{_symbol(result)}](failures.md#{_anchor(result)})")
            else:
                row.append(_symbol(result))
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines) + "\n"


def failures(report: Report) -> str:
    lines = ["# Failures", ""]
    bad = [r for r in report.results if r.status in {"failed", "errored"} or r.verdict == "stale"]
    if not bad:
        lines.append("No case failed or errored.")
    for result in bad:
        lines += [f'<a id="{_anchor(result)}"></a>', f"## {result.case_id}: {result.status}", ""]
        if result.verdict:
            lines += [f"Baseline: {result.verdict}: {result.note}", ""]
        if result.reason:
            lines += ["```text", *result.reason.splitlines(), "```", ""]
        if result.mismatches:
            lines.append("```diff")
            for m in result.mismatches:
                lines.append(f"@@ {m.field} @@")
                lines += [f"- {part}" for part in m.expected.splitlines()]
                lines += [f"+ {part}" for part in m.actual.splitlines()]
            lines += ["```", ""]
        if result.context:
            lines += ["What the provider printed:", "", "```text"]
            lines += [*result.context.splitlines(), "```", ""]
    return "\n".join(lines) + "\n"


def coverage(report: Report) -> str:
    lines = ["# Clause coverage", ""]
    rows = report.coverage()
    covered = sum(1 for r in rows if r["scenarios"])
    lines += [f"{covered} of {len(rows)} clauses have at least one scenario.", ""]
    titles = families()
    for family, title in titles.items():
        lines += [
            f"## {family}: {title}",
            "",
            "| clause | seam | scenarios | status |",
            "|---|---|---|---|",
        ]
        for row in rows:
            if row["family"] != family:
                continue
            ids = ", ".join(f"[{i}](catalogue.md#{i})" for i in row["scenarios"]) or "—"
            status = row["status"]
            if row["scenarios"]:
                status += f" ({len(row['passing_scenarios'])} passing)"
            lines.append(f"| {row['clause']} | {row['seam']} | {ids} | {status} |")
        lines.append("")
    lines += versions.markdown(report.by_version())
    return "\n".join(lines)


def catalogue(report: Report) -> str:
    lines = ["# Edge-case catalogue", ""]
    lines.append(
        "One section per scenario, grouped by seam and provider: what the edge case is, "
        "why it matters, the clauses it exercises and the behaviour a conforming "
        "implementation shows."
    )
    groups: dict[str, list[Scenario]] = {}
    for scenario in report.scenarios:
        group = report.relative(scenario.path.parent)
        groups.setdefault(group, []).append(scenario)
    for group in sorted(groups):
        lines += ["", f"## {group}"]
        for s in groups[group]:
            lines += ["", f'<a id="{s.id}"></a>', f"### {s.title}", ""]
            lines.append(f"`{s.id}` · {report.relative(s.path)} · clauses {', '.join(s.clauses)}")
            if s.capture:
                lines.append(f"· replays the real capture `{s.capture}`")
            lines += ["", s.description, ""]
            lines += [f"- {item}" for item in seams.require(s.seam.value).describe(s)]
    lines += versions.static(report.scenarios)
    return "\n".join(lines) + "\n"


def _pair_anchor(pair: Pair) -> str:
    name = f"{pair.scenario}-{pair.reference}-{pair.real}"
    return name.replace(":", "-").replace("/", "-").lower()


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _agreement(pair: Pair) -> str:
    if pair.not_comparable is not None:
        return f"not comparable ({_one_line(pair.not_comparable)})".replace("|", "\\|")
    if pair.agreement == "agree":
        return "agree"
    what = "expected" if pair.explained is not None else "DISAGREE"
    return f"[{what}](#{_pair_anchor(pair)}): {', '.join(pair.fields)}"


def differential(report: Report) -> str:
    """The model-api reference models side by side with the real CLIs."""
    found = report.differential
    lines = ["# Differential report: reference models against the real CLIs", ""]
    if not found.pairs:
        lines.append(
            "No model-api scenario ran on both a reference and a real target; nothing to compare."
        )
        return "\n".join(lines) + "\n"
    lines += [
        "Each model-api scenario's outcome on a reference model, compared with the real "
        "binary's against the same scripted fake: exit code, stderr, timeout, stdout line "
        "types, the final result's decisive fields and every request that reached the fake. "
        "Usage figures, costs, ids and the init line are not compared. Known disagreements "
        "are listed, with reasons, in `baselines/differential.yaml`.",
        "",
        f"{found.summary()}.",
        "",
        "| scenario | reference | real | agreement |",
        "|---|---|---|---|",
    ]
    for pair in found.pairs:
        lines.append(
            f"| {pair.scenario} | {pair.reference}: {pair.reference_status} "
            f"| {pair.real}: {pair.real_status} | {_agreement(pair)} |"
        )
    lines += ["", "## Disagreements", ""]
    disagreeing = [p for p in found.pairs if p.differences]
    if not disagreeing:
        lines.append("None: every pair compared agrees.")
    for i, pair in enumerate(disagreeing):
        lines += [""] if i else []
        lines += [
            f'<a id="{_pair_anchor(pair)}"></a>',
            f"### {pair.scenario}: {pair.reference} against {pair.real}",
            "",
            f"Expected: {_one_line(pair.explained)}"
            if pair.explained
            else "Not explained by any entry.",
            "",
            "```diff",
        ]
        for difference in pair.differences:
            for part in difference.parts():
                left, right = part.shown()
                lines += [f"@@ {part.at} @@", f"- {pair.reference}: {left}"]
                lines.append(f"+ {pair.real}: {right}")
            more = difference.parts_left_out()
            if more:
                lines.append(f"@@ {difference.at}: {more} more differing part(s) @@")
        lines.append("```")
    lines += ["", "## Expected disagreements", ""]
    if not found.entries:
        lines.append("None listed.")
    compared = {p.scenario for p in found.pairs if p.not_comparable is None}
    for entry in found.entries:
        note = "" if entry.scenario in compared else " (not compared in this run)"
        lines.append(
            f"- `{entry.scenario}` on {', '.join(entry.fields)}{note}: {_one_line(entry.reason)}"
        )
    lines += ["", "## Stale entries", ""]
    if not found.stale:
        lines.append("None.")
    lines += [f"- `{s.entry.scenario}` ({', '.join(s.entry.fields)}): {s.why}" for s in found.stale]
    return "\n".join(lines) + "\n"


WRITERS = {
    "matrix.md": matrix,
    "failures.md": failures,
    "coverage.md": coverage,
    "catalogue.md": catalogue,
    "differential.md": differential,
    "drift.md": lambda report: drifts.markdown(report.drift),
    "report.json": to_json,
    "junit.xml": junit.render,
    "index.html": html.render,
}


#: Set (to anything), the reports are byte-identical from run to run: junit.xml's
#: measured times are left out.  The reproducible-builds convention's name.
REPRODUCIBLE = "SOURCE_DATE_EPOCH"


def write(report: Report, folder: Path, extra: Mapping[str, str] | None = None) -> list[Path]:
    """
    Write every report into ``folder`` as one set; return the paths written.

    Every file is rendered and written beside its final name first, then all
    are renamed into place with SIGINT and SIGTERM held back, so an
    interrupted run leaves the previous set whole or the new one complete,
    never a mix, and nothing beside it; what a run killed outright (SIGKILL)
    left staged is removed by the next (`staging.clear_leftovers`).
    Credential values of the environment never reach a file
    (`harness.adaptor.environment.scrub`).  ``extra`` files (a shard's
    manifest) are written with the set.  With `REPRODUCIBLE` in the
    environment junit.xml carries no measured time.
    """
    folder.mkdir(parents=True, exist_ok=True)
    writers = dict(WRITERS)
    if REPRODUCIBLE in os.environ:
        writers["junit.xml"] = lambda report: junit.render(report, timed=False)
    texts = {name: scrub(writer(report)) for name, writer in writers.items()}
    texts.update({name: scrub(text) for name, text in (extra or {}).items()})
    staging.clear_leftovers(folder, texts)
    mode = 0o666 & ~staging.umask()  # what a plain open() would give the files
    staged: list[tuple[Path, Path]] = []
    try:
        for name, text in texts.items():
            # A stop signal between creating the file and noting it would leave it behind.
            with signals.held():
                descriptor, path = tempfile.mkstemp(
                    dir=folder,
                    prefix=f".{name}.{os.getpid()}.",  # whose it is, for `clear_leftovers`
                    suffix=staging.STAGED,
                )
                staged.append((Path(path), folder / name))
                handle = open(  # noqa: SIM115 (closed just below, outside the held block)
                    descriptor,
                    "w",
                    encoding="utf-8",
                    errors="backslashreplace",  # a lone surrogate, as JSON escapes it
                )
            with handle:
                handle.write(text)
            os.chmod(path, mode)
        with signals.held():
            for temporary, final in staged:
                os.replace(temporary, final)
            staged = []
    finally:
        for temporary, _ in staged:
            temporary.unlink(missing_ok=True)
    return [folder / name for name in texts]


def check_writable(folder: Path) -> str | None:
    """Why reports cannot be written into ``folder``, or None (`staging.check_writable`)."""
    return staging.check_writable(folder, WRITERS)
