"""
The glue between the catalogue and pytest, kept out of the plugin module.

pytest is the execution engine: scenarios × targets become one parametrized
test with stable ids (``scenario-id@target``), tags become markers, and each
case's result rides back to the controlling process in ``user_properties``
(so it survives pytest-xdist) to be rendered into the reports at the end.
"""

from __future__ import annotations

import itertools
import json
import re
import textwrap
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pytest

from harness import exitcodes, seams, shards, targets
from harness.baselines.verdicts import Baseline, Stale, judge, known, stale
from harness.baselines.verdicts import load as load_baseline
from harness.catalogue import loader, yamlpos
from harness.catalogue.scenario import Scenario
from harness.exceptions import Problem
from harness.reports import differential as disagreements
from harness.reports import drift, render
from harness.reports.drift import Drift
from harness.reports.versions import TargetInfo, cli_of
from harness.seams import RunOptions
from harness.seams.case import DEFAULT_OPTIONS, STATUSES, CaseResult, execute, not_run
from harness.seams.compare import Mismatch
from harness.systems import sandbox
from harness.targets.announce import About, about

RESULT_PROPERTY = "harness-result"
#: Each case also says what it saw of its target (`About`): the implementation
#: an adaptor announced, or why it could not be started.
TARGET_PROPERTY = "harness-target"
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
        if verdict == "stale" and self.baseline is not None:
            note = f"{shown_path(self.baseline.where(result.scenario))}: {note}"
        return replace(result, verdict=verdict, note=note or None)

    def about(self) -> str:
        """What this process has seen of the case's target, as JSON."""
        target = targets.shared(self.target)
        return json.dumps(about(target, target.name, target.kind).to_json())


def shown_path(path: str) -> str:
    """A path as the terminal shows it: relative to the current folder when inside it."""
    try:
        return Path(path).relative_to(Path.cwd()).as_posix()
    except ValueError:
        return path


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
            "context": result.context,
            "seconds": result.seconds,
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
        context=data.get("context", ""),
        seconds=float(data.get("seconds", 0.0)),
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
    #: Only the model-api scenarios of these CLIs run (``harness drift``); empty: all.
    clis: tuple[str, ...] = ()
    #: Print the current diff of each failure a baseline lists (quiet otherwise).
    show_known: bool = False
    #: A baseline entry naming a scenario or driver the run's catalogue lacks is
    #: a usage error, not one summary line.
    strict_baseline: bool = False
    loaded: loader.Loaded | None = None
    results: list[CaseResult] = field(default_factory=list)
    #: What the cases saw of each target, by name, merged over processes.
    abouts: dict[str, About] = field(default_factory=dict)
    checked: tuple[dict[str, Baseline | None], list[Problem]] | None = None
    expected: tuple[tuple[disagreements.Entry, ...], list[Problem]] | None = None
    #: This run's shard (K, N) of a run split across machines (`harness.shards`).
    shard: tuple[int, int] | None = None
    #: pytest's ``-k`` and ``-m`` of the run, which a shard's manifest records.
    keyword: str = ""
    markers: str = ""

    def catalogue(self) -> loader.Loaded:
        if self.loaded is None:
            self.loaded = loader.load(self.paths)
        return self.loaded

    def kinds(self) -> dict[str, str]:
        """Each target's name and kind (the differential pairs results by kind)."""
        return {t.name: t.kind for t in map(targets.shared, self.targets)}

    def versions(self) -> dict[str, dict[str, str]]:
        """Each target's name and the CLI versions it runs or models (none for most)."""
        return {t.name: targets.versions_of(t) for t in map(targets.shared, self.targets)}

    def info(self) -> list[TargetInfo]:
        """What the reports say about each target."""
        return [
            TargetInfo(t.name, t.kind, tuple(sorted(targets.versions_of(t).items())))
            for t in map(targets.shared, self.targets)
        ]

    def model_api(self) -> dict[str, str]:
        """Each model-api scenario of the catalogue, and the CLI it runs."""
        found = (cli_of(s) for s in self.catalogue().scenarios)
        return {s.id: cli for s, cli in zip(self.catalogue().scenarios, found, strict=True) if cli}

    def selected(self, scenario: Scenario) -> bool:
        """Whether the run takes ``scenario``: with ``clis``, model-api ones of those CLIs only."""
        return not self.clis or cli_of(scenario) in self.clis

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
            kinds & targets.REFERENCE_KINDS and kinds & targets.REAL_KINDS and self.model_api()
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
        rules = {s.id: s.by_version for s in self.catalogue().scenarios}
        found = disagreements.pairs(
            self.results, self.kinds(), self.model_api(), self.versions(), rules
        )
        return disagreements.judge(found, self.expectations()[0])

    def drift(self) -> Drift:
        """The results so far: the real CLIs from one version to the next."""
        return drift.build(self.results, self.kinds(), self.model_api(), self.versions())

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
        if self.problems() or self.not_started() or self.stale_entries():
            return True
        return bool(self.results) and self.differential().failing

    def not_started(self) -> list[About]:
        """The targets that could not be started, each one failure of the run."""
        return [a for _, a in sorted(self.abouts.items()) if a.not_started is not None]

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
            problems: list[Problem] = []
            baselines: dict[str, Baseline | None] = {}
            if self.baselines is not None:
                narrow = known(self.catalogue().scenarios)
                wide: dict[str, str | None] | None = None
                for name in names.values():
                    # The run's own scenarios first: loading the whole catalogue
                    # costs a short run most of its time, and only a baseline
                    # naming scenarios outside the run needs it.
                    baseline, found = baseline_for(self.baselines, name, narrow)
                    if baseline is not None and baseline.unmet:
                        wide = wide or known(self.whole_catalogue())
                        baseline, found = baseline_for(self.baselines, name, wide)
                    baselines[name] = baseline
                    problems += found
                    if baseline is not None and self.strict_baseline:
                        problems += baseline.unmet
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
            if self.strict_baseline:
                problems += [
                    Problem(str(path), 1, 1, "target", f"names {name!r}, a target not in this run")
                    for path, name in self._unclaimed_baselines()
                ]
            problems += self.expectations()[1]
            self.checked = (baselines, problems)
        return self.checked

    def whole_catalogue(self) -> list[Scenario]:
        """
        Every scenario of the catalogues this run draws on, so that
        a run over part of one (``scenarios/agent-cli/codex``) accepts a
        baseline written over the whole and still catches a misspelt entry;
        entries for scenarios outside the run are simply not judged.
        """
        found = {s.id: s for s in self.catalogue().scenarios}
        wider = set()
        for path in self.paths:
            folder = path if path.is_dir() else path.parent
            root = loader.catalogue_folder(folder)
            if root != folder:  # the path lies inside a catalogue's seam folders
                wider.add(root)
        if wider:
            found |= {s.id: s for s in loader.load(sorted(wider)).scenarios}
        return [found[k] for k in sorted(found)]

    def stale_entries(self) -> list[tuple[str, Baseline, Stale]]:
        """
        Each baseline entry this run's cases no longer bear out, by target:
        `baseline.stale`, the count ``harness baseline --prune`` removes.
        A target that did not start is judged by nothing.
        """
        down = {a.target for a in self.not_started()}
        found = []
        for target, baseline in sorted(self.baselines_and_problems()[0].items()):
            if baseline is None or target in down:
                continue
            mine = [r for r in self.results if r.target == target]
            found += [(target, baseline, s) for s in stale(baseline, mine)]
        return found

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
        for scenario in filter(self.selected, loaded.scenarios):
            if not shards.belongs(scenario.id, self.shard):
                continue
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
            elif name == TARGET_PROPERTY:
                seen = About.from_json(json.loads(str(value)))
                known = self.abouts.get(seen.target)
                self.abouts[seen.target] = seen if known is None else known.merged(seen)

    def summary_lines(self) -> list[str]:
        """
        One line per target with its counts (and the baseline file it was
        judged against), or why it did not start; the current diffs of known
        failures when asked; then the differential and any rejected files.
        """
        if not self.results and not self.problems():
            return []
        lines = self._unclaimed_line()  # first: what this run's verdicts did not use
        skips = render.skip_counts(self.results)
        baselines = self.baselines_and_problems()[0]
        stale_entries = self.stale_entries()
        for target in sorted({r.target for r in self.results}):
            mine = [r for r in self.results if r.target == target]
            about = self.abouts.get(target)
            if about is not None and about.not_started is not None:
                first, *more = about.not_started.splitlines()
                lines.append(f"harness: {target}: did not start: {first}")
                lines += [f"  {line}" for line in more]
                skipped = sum(r.reason == not_run(target) for r in mine)
                lines.append(f"harness: {target}: {skipped} case(s) not run")
                continue
            counts = Counter(r.status for r in mine)
            shown = ", ".join(f"{counts.get(status, 0)} {status}" for status in STATUSES)
            baseline = baselines.get(target)
            gone = [s for t, _, s in stale_entries if t == target]
            if baseline is not None:
                verdicts = Counter(r.verdict for r in mine)
                shown += (
                    f"; baseline {shown_path(baseline.path)}: {verdicts['expected']} expected, "
                    f"{verdicts['regression']} regressions, {len(gone)} stale"
                )
            lines.append(f"harness: {target}: {shown}")
            if baseline is not None:
                where = shown_path(baseline.path)
                lines += [
                    f"harness: {target}: stale baseline entry {where}:{s.entry.line}: "
                    f"{s.label}: {s.why}; remove it (harness baseline --prune)"
                    for s in gone
                ]
                if baseline.unmet and not self.strict_baseline:
                    lines.append(f"harness: {target}: baseline {where}: {baseline.unmet_summary()}")
            lines += [
                f"harness: {target}: {row['count']} skipped by "
                f"{render.SKIPPED_BY_WORDS.get(row['skipped_by'], row['skipped_by'])}: "
                f"{' '.join(row['reason'].split())}"
                for row in skips.get(target, ())
            ]
            if baseline is None and (counts["failed"] or counts["errored"]):
                lines.append(f"harness: {target}: {self._no_baseline(target)}")
        lines += self._failing_cases()
        if self.show_known:
            lines += self._known_diffs(baselines)
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
        moved = self.drift()
        for cli, order in moved.clis:
            total = sum(row.cli == cli for row in moved.rows)
            lines += [
                f"harness: drift: {cli} {before} → {after}: "
                f"{len(moved.changed(cli, before, after))} of {total} scenarios change"
                for before, after in itertools.pairwise(order)
            ]
        lines += [f"harness: rejected {problem}" for problem in self.problems()]
        return lines

    def _unclaimed_baselines(self) -> list[tuple[Path, str]]:
        """
        The baselines of the folder whose target is not in this run, each with
        the target it names: never read, so said (a target named otherwise than
        its baseline would go unjudged), and with ``--strict-baseline`` an error.
        """
        if self.baselines is None or not self.baselines.is_dir():
            return []
        names = {targets.shared(spec).name for spec in self.targets}
        unclaimed = []
        for path in sorted(self.baselines.glob("*.yaml")):
            if path.stem in names:
                continue
            try:
                document = yamlpos.read(path).value
            except yamlpos.YAMLProblem:
                continue  # not a baseline this run reads: its problems are not this run's
            if isinstance(document, dict) and isinstance(document.get("target"), str):
                unclaimed.append((path, document["target"]))
        return unclaimed

    def _unclaimed_line(self) -> list[str]:
        unclaimed = self._unclaimed_baselines()
        if not unclaimed or self.strict_baseline:  # strict: each is a rejected file
            return []
        shown = ", ".join(f"{shown_path(str(path))} ({name})" for path, name in unclaimed)
        return [
            f"harness: baselines: {len(unclaimed)} not read, their target not in this run: "
            f"{shown}; --strict-baseline makes this an error"
        ]

    def _no_baseline(self, target: str) -> str:
        """Why no baseline judged ``target``'s failures, and where one would be read."""
        if self.baselines is None:
            return "no baseline read (give --baselines DIR to read DIR/NAME.yaml)"
        path = baseline_path(self.baselines, target)
        if path is None:
            return "no baseline (name the target, NAME=SPEC, to read DIR/NAME.yaml)"
        where = shown_path(str(path))
        return f"no baseline at {where} (harness baseline --target {target}=... writes one)"

    def _failing_cases(self) -> list[str]:
        """
        A line per case that fails the run (stale entries are listed by entry),
        with its scenario's title and file: pytest's own short summary would
        name the harness's test module, an installed package's path.
        """
        scenarios = {s.id: s for s in self.catalogue().scenarios}
        lines = []
        for result in sorted(self.results, key=lambda r: (r.target, r.scenario)):
            failing = result.verdict == "regression" or (
                result.verdict is None and result.status in {"failed", "errored"}
            )
            scenario = scenarios.get(result.scenario)
            if not failing or scenario is None:
                continue
            where = f"{loader.shown(scenario.path, Path.cwd())}:{scenario.line}"
            lines.append(
                f"harness: {result.target}: {result.status.upper()} {result.scenario}: "
                f"{scenario.title} ({where})"
            )
        return lines

    def _known_diffs(self, baselines: Mapping[str, Baseline | None]) -> list[str]:
        """Each failure a baseline lists, with its baseline entry and what differs now."""
        lines = []
        for result in sorted(self.results, key=lambda r: (r.target, r.scenario)):
            baseline = baselines.get(result.target)
            if result.verdict != "expected" or baseline is None:
                continue
            where = shown_path(baseline.where(result.scenario))
            lines.append(f"harness: known failure {result.case_id} ({where}): {result.note}")
            now = [m.render() for m in result.mismatches] or [result.reason or result.status]
            lines += [f"  {line}" for text in now for line in text.splitlines()]
        return lines

    def _abouts(self) -> tuple[About, ...]:
        """Every target of the run, as the cases saw it (or by its kind, if no case ran)."""
        out = dict(self.abouts)
        for spec in self.targets:
            target = targets.shared(spec)
            out.setdefault(target.name, about(target, target.name, target.kind))
        return tuple(out[name] for name in sorted(out))

    def cause(self, status: int) -> str:
        """Why the run ends with ``status``: the end of the summary's last line."""
        if status == exitcodes.USAGE:
            problems = self.problems()
            if not problems:
                return "see the error message"
            more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
            return f"{problems[0]}{more}"
        if status == exitcodes.INTERRUPTED:
            if self.reports is None:
                return "the run was stopped"
            return f"the run was stopped; the reports in {self.reports} are as they were"
        if status == exitcodes.NOTHING:
            return "no case matched the selection (paths, -k, --tag, --shard)"
        verdicts = Counter(r.verdict for r in self.results)
        found = self.differential() if self.results else disagreements.Differential()
        counted = [
            (verdicts["regression"], "regression"),
            (len(self.stale_entries()), "stale baseline entry"),
            (len(found.unexplained), "unexplained disagreement"),
            (len(found.stale), "stale differential entry"),
            (len(self.not_started()), "target that could not start"),
        ]
        if status == exitcodes.FAILED:
            said = [f"{n} {_plural(what, n)}" for n, what in counted if n]
            return ", ".join(said) or "a case failed"
        if status == exitcodes.OK:
            statuses = Counter(r.status for r in self.results)
            known = verdicts["expected"]
            return (
                f"{statuses['passed']} passed, {known} known failure{'s' * (known != 1)}, "
                f"{statuses['skipped']} skipped"
            )
        return ""

    def finish(self) -> list[Path]:
        if self.reports is None:
            return []
        loaded = self.catalogue()
        commands = render.NO_COMMANDS
        if self.options.allow_exec:
            commands = f"allowed, confined ({sandbox.isolation()})"
        built = render.Report.build(
            filter(self.selected, loaded.scenarios),
            self.results,
            loaded.problems,
            self.root,
            self.differential(),
            commands=commands,
            info=self.info(),
            drift=self.drift(),
            abouts=self._abouts(),
        )
        extra = {}
        if self.shard is None:
            # A shard's manifest left by an earlier run would make these a shard's reports.
            (self.reports / shards.MANIFEST).unlink(missing_ok=True)
        else:
            encoded = tuple(map(result_to_json, self.results))
            seen = tuple(json.dumps(a.to_json()) for _, a in sorted(self.abouts.items()))
            manifest = shards.Manifest(self.shard, self.run(), encoded, seen)
            extra[shards.MANIFEST] = manifest.to_json()
        return render.write(built, self.reports, extra)

    def run(self) -> shards.Run:
        """
        What this run is, as its shards' manifests record it: the catalogue by
        its digest and where it lay, paths from the root as the user gave them.
        """
        baselines = None if self.baselines is None else self._from_root(self.baselines)
        where = tuple(str(p.resolve()) for p in self.paths)
        return shards.Run(
            paths=tuple(map(self._from_root, self.paths)),
            catalogue=shards.catalogue_digest(self.paths),
            where=where,
            bundled=where == (str(loader.bundled()),),
            targets=self.targets,
            baselines=baselines,
            baselines_at=None if self.baselines is None else str(self.baselines.resolve()),
            allow_exec=self.options.allow_exec,
            keyword=self.keyword,
            markers=self.markers,
            clis=self.clis,
            harness=shards.harness_digest(),
        )

    def _from_root(self, path: Path) -> str:
        try:
            return path.relative_to(self.root).as_posix()
        except ValueError:
            return str(path)

    def status(self) -> int:
        """The exit status the results give, as a whole run's (`harness merge`)."""
        if self.problems():
            return exitcodes.USAGE
        if not self.results:
            return exitcodes.NOTHING
        bad = any(r.verdict in {"regression", "stale"} for r in self.results)
        return exitcodes.FAILED if bad or self.failing() else exitcodes.OK


def introduce(scenario: Scenario | None) -> str:
    """
    What a failing case says of its scenario before the diff: its title, why
    it exists (its description), and where it is written, relative to the
    catalogue, with the command that shows it as written.
    """
    if scenario is None:
        return ""
    lines = [f"  {scenario.title}"] if scenario.title else []
    why = " ".join(scenario.description.split())
    if why:
        lines += textwrap.wrap(why, 88, initial_indent="  why: ", subsequent_indent="       ")
    where = f"{loader.shown(scenario.path, Path.cwd())}:{scenario.line}"
    lines.append(f"  scenario: {where} (harness show {scenario.id})")
    return "".join(f"\n{line}" for line in lines)


def verdict(result: CaseResult, scenario: Scenario | None = None) -> None:
    """
    Turn a case result (and its baseline verdict) into the pytest outcome of
    the test; a failing one says which scenario it is (`introduce`) first.
    """
    if result.verdict == "expected":
        pytest.xfail(f"known failure: {result.note}")
    intro = introduce(scenario)
    if result.verdict == "stale":
        pytest.fail(f"{result.case_id}: stale baseline entry: {result.note}{intro}", pytrace=False)
    if result.status == "skipped":
        if result.verdict == "regression":
            pytest.fail(
                f"{result.case_id}: skipped ({result.reason}), {result.note}{intro}",
                pytrace=False,
            )
        pytest.skip(result.reason or "skipped")
    shown = f"\n{result.context}" if result.context else ""
    if result.status == "errored":
        pytest.fail(f"errored: {result.reason}{intro}{shown}", pytrace=False)
    if result.status == "failed":
        diff = "\n".join(m.render() for m in result.mismatches)
        got = result.outcome
        summary = "" if got is None else f"\noutcome: {got.summary()}"
        pytest.fail(
            f"{result.case_id} does not meet its expectation{intro}\n{diff}{summary}{shown}",
            pytrace=False,
        )


def _plural(what: str, n: int) -> str:
    """``what`` for ``n`` of them ("target that could not start": its first word)."""
    if n == 1:
        return what
    if what.startswith("target "):
        return "targets" + what[len("target") :]
    return what[:-1] + "ies" if what.endswith("y") else what + "s"
