"""
Mutation testing of the agent-cli catalogue (``harness mutants``, ``make mutants``).

A catalogue is worth what it catches.  Each mutant (`harness.mutation.operators`)
changes one operator in one module of the reference pipeline; the agent-cli
catalogue then runs on the in-process reference, as the default contract
profile and then as each other one, stopping at the first case that no
longer passes.  A mutant that no case notices *survived*: either the
catalogue lacks a scenario, or the change is equivalent (behaviour is the
same), and then `baselines/mutants.yaml` says so with a reason, so that it
is not reported again.

Every mutant runs in a forked child: the parent has the catalogue loaded and
the harness imported once, the child installs its mutant, runs the cases and
reports one line back; a child that loops or grows is killed at a deadline.
Children get their own temporary folder, removed by the parent whatever
happened.  The score is killed / (mutants - listed equivalents).
"""

from __future__ import annotations

import contextlib
import json
import os
import resource
import select
import shutil
import signal
import sys
import tempfile
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness import targets
from harness.catalogue import contracts, loader, yamlfile
from harness.catalogue.scenario import Scenario, Seam
from harness.exceptions import HarnessError, InvalidScenarios, Problem
from harness.mutation.operators import Mutant, install, module_source, mutants
from harness.seams.case import execute

#: The modules ``make mutants`` mutates: the reference pipeline of seed 001.
MODULES = (
    "pipeline",
    "intake",
    "negotiate",
    "drivers",
    "claudelike",
    "codex",
    "derive",
    "validation",
)
_PACKAGE = "harness.adaptor"
#: Scopes the in-process catalogue cannot reach, so their mutants are not made.
OUT_OF_REACH = {
    ("pipeline", "Provider.to_json"): "serialised only for adaptors behind the JSON-lines "
    "protocol (tests/test_protocol.py), never in process",
    ("drivers", "register"): "runs once, at import, before any mutant is installed",
    ("validation", "bounded"): "stops a runaway validation by erroring the case, which no "
    "scenario can expect (tests/test_outcome.py holds it)",
}
_TARGET = "reference-inproc"
#: The reference as every contract profile: the code of each profile's rules
#: runs only under it, so a mutant of it is judged there (the default first).
_TARGETS = (
    _TARGET,
    *(f"{_TARGET}:contract={n}" for n in contracts.CONTRACTS if n != contracts.CURRENT.name),
)
#: A child's address space is capped so a mutant that allocates without end dies.
_MEMORY = 2 * 1024**3


@dataclass(frozen=True)
class Verdict:
    """How one mutant fared: killed (by which case), survived, or timed out."""

    mutant: Mutant
    status: str
    by: str | None = None


@dataclass(frozen=True)
class Equivalents:
    """The listed equivalent mutants: key → reason."""

    reasons: dict[str, str]


def load_equivalents(path: Path) -> tuple[Equivalents, list[Problem]]:
    """Read the equivalents file; problems point at file, line and field."""
    if not path.exists():
        return Equivalents({}), []
    checked = yamlfile.read(path, "mutants.schema.json", "equivalent mutants")
    if checked.doc is None:
        return Equivalents({}), checked.problems
    reasons: dict[str, str] = {}
    for i, entry in enumerate(checked.doc["equivalent"]):
        if entry["mutant"] in reasons:
            checked.problem(("equivalent", i, "mutant"), "listed twice")
        reasons[entry["mutant"]] = " ".join(entry["reason"].split())
    return Equivalents(reasons), checked.problems


def all_mutants(modules: Iterable[str]) -> list[tuple[Mutant, str]]:
    """Every mutant of the named modules of the pipeline, with its module's source."""
    out = []
    for name in modules:
        module = f"{_PACKAGE}.{name}"
        source, _ = module_source(module)
        path = f"harness/adaptor/{name}.py"
        out += [
            (m, source) for m in mutants(module, source, path) if not _out_of_reach(name, m.scope)
        ]
    return out


def _out_of_reach(module: str, scope: str) -> bool:
    """Whether a scope, or a function it defines (``bounded.expire``), is out of reach."""
    parts = scope.split(".")
    return any((module, ".".join(parts[:n])) in OUT_OF_REACH for n in range(1, len(parts) + 1))


def _run_cases(scenarios: Sequence[Scenario]) -> str | None:
    """The first case that does not pass on the reference as some contract profile, or None."""
    for spec in _TARGETS:
        target = targets.create(spec)
        for scenario in scenarios:
            if execute(scenario, target).status != "passed":
                return scenario.id
    return None


def _child(mutant: Mutant | None, source: str, scenarios: Sequence[Scenario], out: int) -> None:
    """In the forked child: install, run, report one JSON line, exit."""
    status = 0
    report: dict[str, Any]
    try:
        resource.setrlimit(resource.RLIMIT_AS, (_MEMORY, _MEMORY))
        if mutant is not None:
            install(mutant, source)
    except BaseException as error:  # noqa: BLE001  (reported: the tool, not the catalogue, failed)
        report = {"uninstallable": f"{type(error).__name__}: {error}"}
        status = 1
    else:
        try:
            report = {"by": _run_cases(scenarios)}
        except BaseException as error:  # noqa: BLE001  (a mutant that breaks the run is killed)
            report = {"by": f"<{type(error).__name__} while running>"}
            status = 1
    os.write(out, (json.dumps(report) + "\n").encode())
    os._exit(status)


@dataclass
class _Running:
    mutant: Mutant | None
    pid: int
    pipe: int
    started: float
    folder: str


class Runner:
    """Forks one child per mutant, at most ``jobs`` at a time, each under a deadline."""

    def __init__(self, scenarios: Sequence[Scenario], jobs: int, deadline: float) -> None:
        self.scenarios = list(scenarios)
        self.jobs = max(1, jobs)
        self.deadline = deadline
        self.root = tempfile.mkdtemp(prefix="harness-mutants-")

    def close(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)

    def _fork(self, mutant: Mutant | None, source: str) -> _Running:
        folder = tempfile.mkdtemp(dir=self.root)
        read, write = os.pipe()
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child's coverage is not collected
            os.close(read)
            os.setpgid(0, 0)
            tempfile.tempdir = folder
            _child(mutant, source, self.scenarios, write)
        os.close(write)
        return _Running(mutant, pid, read, time.monotonic(), folder)

    def _finish(self, job: _Running, timed_out: bool) -> dict[str, Any]:
        if timed_out:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(job.pid, signal.SIGKILL)
        os.waitpid(job.pid, 0)
        data = b""
        while chunk := os.read(job.pipe, 65536):
            data += chunk
        os.close(job.pipe)
        shutil.rmtree(job.folder, ignore_errors=True)
        if timed_out:
            return {"timeout": True}
        try:
            report: dict[str, Any] = json.loads(data.decode() or "{}")
        except json.JSONDecodeError:
            report = {}
        if "by" in report or "uninstallable" in report:
            return report
        return {"by": "<the child died without reporting>"}

    def control(self) -> str | None:
        """The catalogue on the unmutated pipeline: the first case that fails, if any."""
        report = self._finish(job := self._fork(None, ""), self._wait_for(job))
        return "<timed out>" if report.get("timeout") else report["by"]

    def _wait_for(self, job: _Running) -> bool:
        ready, _, _ = select.select([job.pipe], [], [], self.deadline)
        return not ready

    def run(self, work: Sequence[tuple[Mutant, str]], progress: Any = None) -> list[Verdict]:
        pending = list(work)
        running: list[_Running] = []
        verdicts: list[Verdict] = []
        while pending or running:
            while pending and len(running) < self.jobs:
                mutant, source = pending.pop(0)
                running.append(self._fork(mutant, source))
            ready, _, _ = select.select([j.pipe for j in running], [], [], 0.05)
            now = time.monotonic()
            for job in list(running):
                late = now - job.started > self.deadline
                if job.pipe not in ready and not late:
                    continue
                running.remove(job)
                report = self._finish(job, timed_out=job.pipe not in ready)
                assert job.mutant is not None
                verdicts.append(self._verdict(job.mutant, report))
                if progress is not None:
                    progress(len(verdicts), len(work))
        order = {id(m): i for i, (m, _) in enumerate(work)}
        return sorted(verdicts, key=lambda v: order[id(v.mutant)])

    def _verdict(self, mutant: Mutant, report: dict[str, Any]) -> Verdict:
        if report.get("timeout"):
            return Verdict(mutant, "timeout")
        if "uninstallable" in report:
            return Verdict(mutant, "uninstallable", report["uninstallable"])
        by = report["by"]
        if by is None:
            return Verdict(mutant, "survived")
        # Cases that catch mutants go first for the next ones: most die early.
        for i, scenario in enumerate(self.scenarios):
            if scenario.id == by:
                self.scenarios.insert(0, self.scenarios.pop(i))
                break
        return Verdict(mutant, "killed", by)


@dataclass(frozen=True)
class Score:
    """The figures of one run."""

    total: int
    killed: int
    equivalent: int
    survivors: tuple[Verdict, ...]
    stale: tuple[str, ...]
    #: Mutants the tool could not put in place: neither killed nor counted.
    uninstallable: tuple[Verdict, ...] = ()

    @property
    def counted(self) -> int:
        return self.total - self.equivalent - len(self.uninstallable)

    @property
    def percent(self) -> float:
        return 100.0 if self.counted == 0 else 100.0 * self.killed / self.counted


def score(verdicts: Sequence[Verdict], equivalents: Equivalents, complete: bool) -> Score:
    """Tally verdicts; survivors listed as equivalent do not count against the score."""
    keys = {v.mutant.key for v in verdicts}
    listed = [v for v in verdicts if v.status == "survived" and v.mutant.key in equivalents.reasons]
    killed = sum(v.status in {"killed", "timeout"} for v in verdicts)
    survivors = tuple(
        v for v in verdicts if v.status == "survived" and v.mutant.key not in equivalents.reasons
    )
    # An entry is stale when its mutant is now killed, or (known only from a run
    # over every module) when no such mutant exists any more.
    stale = [v.mutant.key for v in verdicts if v.status != "survived"]
    stale = [k for k in stale if k in equivalents.reasons]
    if complete:
        stale += [k for k in equivalents.reasons if k not in keys]
    broken = tuple(v for v in verdicts if v.status == "uninstallable")
    return Score(len(verdicts), killed, len(listed), survivors, tuple(sorted(set(stale))), broken)


def agent_cli(paths: Sequence[Path]) -> list[Scenario]:
    loaded = loader.load(paths)
    if loaded.problems:
        raise InvalidScenarios(tuple(loaded.problems))
    return [s for s in loaded.scenarios if s.seam is Seam.AGENT_CLI]


def main(
    paths: Sequence[Path],
    modules: Sequence[str],
    equivalents_file: Path,
    jobs: int,
    deadline: float,
) -> int:
    """
    Run every mutant of ``modules``; print the score and each survivor.

    Returns 0 when every mutant is killed or listed, 1 when one survived (or
    the catalogue fails with no mutant at all, which is a regression of its
    own); bad arguments and files raise HarnessError, a usage error.
    """
    equivalents, problems = load_equivalents(equivalents_file)
    if problems:
        raise InvalidScenarios(tuple(problems))
    unknown = sorted(set(modules) - set(MODULES))
    if unknown:
        known = ", ".join(MODULES)
        raise HarnessError(f"mutants: unknown module(s) {', '.join(unknown)}; known: {known}")
    if jobs < 1 or deadline <= 0:
        raise HarnessError("mutants: --jobs must be at least 1 and --deadline above 0")
    scenarios = agent_cli(paths)
    runner = Runner(scenarios, jobs, deadline)
    try:
        failing = runner.control()
        if failing is not None:
            print(
                f"harness: the catalogue fails without any mutant ({failing}); fix that first",
                file=sys.stderr,
            )
            return 1
        work = all_mutants(modules)
        started = time.monotonic()
        verdicts = runner.run(work)
        elapsed = time.monotonic() - started
    finally:
        runner.close()
    result = score(verdicts, equivalents, complete=set(modules) == set(MODULES))
    _print(result, modules, len(scenarios), elapsed)
    return 0 if not (result.survivors or result.stale or result.uninstallable) else 1


def _print(result: Score, modules: Sequence[str], cases: int, elapsed: float) -> None:
    for (module, scope), why in sorted(OUT_OF_REACH.items()):
        if module in modules:
            print(f"not mutated: harness/adaptor/{module}.py:{scope}: {why}")
    for verdict in result.survivors:
        print(f"survived: {verdict.mutant.describe()}")
        print(f"          key: {verdict.mutant.key}")
    for key in result.stale:
        print(f"stale equivalent entry (killed now, or no such mutant): {key}")
    for verdict in result.uninstallable:
        print(f"not installed: {verdict.mutant.describe()}: {verdict.by}")
    counted = result.counted
    print(
        f"mutants: {result.total} in {', '.join(modules)}; {result.equivalent} listed "
        f"equivalent; killed {result.killed} of {counted} ({result.percent:.1f}%); "
        f"{len(result.survivors)} survived; {cases} agent-cli cases; {elapsed:.0f}s"
    )
