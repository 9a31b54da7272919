"""
The glue between the catalogue and pytest, kept out of the plugin module.

pytest is the execution engine: scenarios × targets become one parametrized
test with stable ids (``scenario-id@target``), tags become markers, and each
case's result rides back to the controlling process in ``user_properties``
(so it survives pytest-xdist) to be rendered into the reports at the end.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pytest

from harness import seams, targets
from harness.catalogue import loader
from harness.catalogue.scenario import Scenario, Seam
from harness.exceptions import Problem
from harness.reports import differential as disagreements
from harness.reports import render
from harness.reports.baseline import Baseline, judge, known
from harness.reports.baseline import load as load_baseline
from harness.seams import RunOptions
from harness.seams.case import DEFAULT_OPTIONS, STATUSES, CaseResult, execute
from harness.seams.compare import Mismatch
from harness.systems import sandbox

RESULT_PROPERTY = "harness-result"
#: The model-api differential's expectations file, in the baselines folder.
DIFFERENTIAL_FILE = "differential.yaml"


@dataclass(frozen=True)
class Case:
    """One parameter of the catalogue test: a scenario on a target, or a bad file."""

    scenario: Scenario | None
    target: str
    problem: Problem | None = None
    baseline: Baseline | None = None
    options: RunOptions = DEFAULT_OPTIONS

    def run(self) -> CaseResult:
        assert self.scenario is not None
        result = execute(self.scenario, targets.shared(self.target), self.options)
        verdict, note = judge(result, self.baseline)
        return replace(result, verdict=verdict, note=note or None)


def baseline_path(folder: Path, target_name: str) -> Path | None:
    """Where the baseline of a target lives, if its name can be a file name."""
    if not re.fullmatch(r"[a-z][a-z0-9-]*", target_name):
        return None
    return folder / f"{target_name}.yaml"


def baseline_for(
    folder: Path, target_name: str, catalogue: Mapping[str, str | None]
) -> tuple[Baseline | None, list[Problem]]:
    """The target's baseline, if it has one, and any problems with it."""
    path = baseline_path(folder, target_name)
    if path is None or not path.exists():
        return None, []
    return load_baseline(path, catalogue)


def result_to_json(result: CaseResult) -> str:
    return json.dumps(
        {
            "scenario": result.scenario,
            "target": result.target,
            "status": result.status,
            "reason": result.reason,
            "verdict": result.verdict,
            "note": result.note,
            "skipped_by": result.skipped_by,
            "mismatches": [[m.field, m.expected, m.actual] for m in result.mismatches],
            "seam": None if result.outcome is None else result.outcome.seam,
            "outcome": None if result.outcome is None else result.outcome.to_json(),
        }
    )


def result_from_json(text: str) -> CaseResult:
    data: dict[str, Any] = json.loads(text)
    outcome = data["outcome"]
    return CaseResult(
        scenario=data["scenario"],
        target=data["target"],
        status=data["status"],
        outcome=None if outcome is None else seams.require(data["seam"]).outcome_from_json(outcome),
        mismatches=tuple(Mismatch(*m) for m in data["mismatches"]),
        reason=data["reason"],
        verdict=data.get("verdict"),
        note=data.get("note"),
        skipped_by=data.get("skipped_by"),
    )


@dataclass
class Session:
    """Per-pytest-session state: the catalogue once, results as they arrive."""

    paths: tuple[Path, ...]
    targets: tuple[str, ...]
    root: Path
    reports: Path | None
    baselines: Path | None = None
    options: RunOptions = DEFAULT_OPTIONS
    loaded: loader.Loaded | None = None
    results: list[CaseResult] = field(default_factory=list)
    checked: tuple[dict[str, Baseline | None], list[Problem]] | None = None
    expected: tuple[tuple[disagreements.Entry, ...], list[Problem]] | None = None

    def catalogue(self) -> loader.Loaded:
        if self.loaded is None:
            self.loaded = loader.load(self.paths)
        return self.loaded

    def kinds(self) -> dict[str, str]:
        """Each target's name and kind (the differential pairs results by kind)."""
        return {t.name: t.kind for t in map(targets.shared, self.targets)}

    def model_api(self) -> list[str]:
        return [s.id for s in self.catalogue().scenarios if s.seam is Seam.MODEL_API]

    def differential_expectations(self) -> tuple[tuple[disagreements.Entry, ...], list[Problem]]:
        """
        The known disagreements, read when this run can compare anything (a
        model-api scenario, a reference-kind and a real-kind target) and the
        baselines folder has the file; read in every process, since under
        pytest-xdist the controller, which judges the differential, never
        collects the cases.  Scenario ids are not checked here: a run over
        part of the catalogue does not load every scenario the file names
        (differential.md shows such entries as not compared, and the test
        suite checks the file against the whole catalogue).
        """
        kinds = set(self.kinds().values())
        comparing = bool(
            kinds & disagreements.REFERENCE_KINDS
            and kinds & disagreements.REAL_KINDS
            and self.model_api()
        )
        path = None if self.baselines is None else self.baselines / DIFFERENTIAL_FILE
        if not comparing or path is None or not path.exists():
            return (), []
        entries, problems = disagreements.load(path)
        return entries or (), problems

    def differential(self) -> disagreements.Differential:
        """The results so far, reference models against the real CLIs, judged."""
        if not self.results:
            return disagreements.Differential()
        found = disagreements.pairs(self.results, self.kinds(), self.model_api())
        return disagreements.judge(found, self.expectations()[0])

    def expectations(self) -> tuple[tuple[disagreements.Entry, ...], list[Problem]]:
        if self.expected is None:
            self.expected = self.differential_expectations()
        return self.expected

    def failing(self) -> bool:
        """
        Whether the run fails though every case it ran passed: a bad scenario,
        baseline or expectations file (whose own failing case ``-k`` may have
        deselected), an unexplained disagreement or a stale entry.
        """
        if self.problems():
            return True
        return bool(self.results) and self.differential().failing

    def baselines_and_problems(
        self,
    ) -> tuple[dict[str, Baseline | None], list[Problem]]:
        """
        Each target's baseline, and every problem with the baseline files and
        the differential expectations; read once, in whichever process asks
        (under pytest-xdist the controller never collects the cases).
        """
        if self.checked is None:
            names = {spec: targets.shared(spec).name for spec in self.targets}
            catalogue = known(self.catalogue().scenarios)
            problems: list[Problem] = []
            baselines: dict[str, Baseline | None] = {}
            if self.baselines is not None:
                for name in names.values():
                    baseline, found = baseline_for(self.baselines, name, catalogue)
                    baselines[name] = baseline
                    problems += found
                    if baseline is not None and baseline.target != name:
                        path = baseline_path(self.baselines, name)
                        problems.append(
                            Problem(
                                str(path),
                                1,
                                1,
                                "target",
                                f"names {baseline.target!r}, not {name!r}",
                            )
                        )
            problems += self.expectations()[1]
            self.checked = (baselines, problems)
        return self.checked

    @property
    def baseline_problems(self) -> list[Problem]:
        return self.baselines_and_problems()[1]

    def problems(self) -> list[Problem]:
        """Every bad file of this run: scenario files, baselines, the expectations."""
        return [*self.catalogue().problems, *self.baseline_problems]

    def params(self, config: pytest.Config) -> list[Any]:
        loaded = self.catalogue()
        tags = sorted({tag for s in loaded.scenarios for tag in s.tags})
        for tag in tags:
            config.addinivalue_line("markers", f"{tag}: scenarios tagged {tag}")
        names = {spec: targets.shared(spec).name for spec in self.targets}
        baselines, _ = self.baselines_and_problems()
        params = [
            pytest.param(
                Case(None, "", problem),
                id=f"invalid:{Path(problem.file).name}:{problem.line}",
            )
            for problem in self.problems()
        ]
        for scenario in loaded.scenarios:
            marks = [getattr(pytest.mark, tag) for tag in scenario.tags]
            params += [
                pytest.param(
                    Case(scenario, spec, baseline=baselines.get(name), options=self.options),
                    id=f"{scenario.id}@{name}",
                    marks=marks,
                )
                for spec, name in names.items()
            ]
        return params

    def record(self, report: pytest.TestReport) -> None:
        for name, value in report.user_properties:
            if name == RESULT_PROPERTY:
                self.results.append(result_from_json(str(value)))

    def summary_lines(self) -> list[str]:
        """One line per target with its counts, then any rejected scenario files."""
        if not self.results and not self.problems():
            return []
        lines = []
        skips = render.skip_counts(self.results)
        for target in sorted({r.target for r in self.results}):
            counts = Counter(r.status for r in self.results if r.target == target)
            shown = ", ".join(f"{counts.get(status, 0)} {status}" for status in STATUSES)
            verdicts = Counter(r.verdict for r in self.results if r.target == target)
            if verdicts.get("expected") or verdicts.get("stale") or verdicts.get("regression"):
                shown += (
                    f"; baseline: {verdicts['expected']} expected, "
                    f"{verdicts['regression']} regressions, {verdicts['stale']} stale"
                )
            lines.append(f"harness: {target}: {shown}")
            lines += [
                f"harness: {target}: {row['count']} skipped by "
                f"{render.SKIPPED_BY_WORDS.get(row['skipped_by'], row['skipped_by'])}: "
                f"{' '.join(row['reason'].split())}"
                for row in skips.get(target, ())
            ]
        found = self.differential()
        if found.pairs:
            lines.append(f"harness: differential: {found.summary()}")
        lines += [
            f"harness: differential: unexplained disagreement: {p.scenario} "
            f"({p.reference} against {p.real}) on {', '.join(p.fields)}"
            for p in found.unexplained
        ]
        lines += [
            f"harness: differential: stale entry for {s.entry.scenario}: {s.why}"
            for s in found.stale
        ]
        lines += [f"harness: rejected {problem}" for problem in self.problems()]
        return lines

    def finish(self) -> list[Path]:
        if self.reports is None:
            return []
        loaded = self.catalogue()
        commands = render.NO_COMMANDS
        if self.options.allow_exec:
            commands = f"allowed, confined ({sandbox.isolation()})"
        built = render.Report.build(
            loaded.scenarios,
            self.results,
            loaded.problems,
            self.root,
            self.differential(),
            commands=commands,
        )
        return render.write(built, self.reports)


def verdict(result: CaseResult) -> None:
    """Turn a case result (and its baseline verdict) into the pytest outcome of the test."""
    if result.verdict == "expected":
        pytest.xfail(f"known failure: {result.note}")
    if result.verdict == "stale":
        pytest.fail(f"{result.case_id}: stale baseline entry: {result.note}", pytrace=False)
    if result.status == "skipped":
        if result.verdict == "regression":
            pytest.fail(
                f"{result.case_id}: skipped ({result.reason}), {result.note}", pytrace=False
            )
        pytest.skip(result.reason or "skipped")
    if result.status == "errored":
        pytest.fail(f"errored: {result.reason}", pytrace=False)
    if result.status == "failed":
        diff = "\n".join(m.render() for m in result.mismatches)
        got = result.outcome
        summary = "" if got is None else f"\noutcome: {got.summary()}"
        pytest.fail(
            f"{result.case_id} does not meet its expectation\n{diff}{summary}", pytrace=False
        )
