"""
The bug zoo: the agent-cli catalogue judged by the adaptors people write.

Two adaptors written from docs/ alone (`tests/zoo/adaptor.py` in Python,
`tests/zoo/node/adaptor.mjs` in JavaScript) carry realistic single bugs,
each switched on by name (`ZOO_BUG=NAME`).  The zoo runs the catalogue on
each bug-free adaptor once, recording which scenarios reach the place of
each bug (`ZOO_TRACE`), then runs each bug on the scenarios that reached its
place and that the bug-free adaptor passes: a scenario that never reaches the
place cannot be changed by the bug, so it is not run.  A scenario *guards* a
bug when it passes without the bug and fails (or errors) with it.

Bugs run in forked children, ``jobs`` at a time; each child builds its own
target, so a protocol adaptor is a fresh process per bug.  The full zoo
(`make mutants`, ``python -m tests.zoo.zoo``) counts every guard of every bug
and fails when one has fewer than two; ``--write-guards`` pins the first two
guards of each bug in `GUARDS_FILE`, which the test suite checks cheaply
(`pinned`): the bug-free adaptor passes them, each bug fails both of its own.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from multiprocessing import get_context
from pathlib import Path

from harness import targets
from harness.catalogue import loader
from harness.catalogue.scenario import Scenario, Seam
from harness.seams.case import execute

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
#: Two guards per bug, per adaptor, as the last full run found them.
GUARDS_FILE = HERE / "guards.json"
#: How many guards a bug needs.
NEEDED = 2


@dataclass(frozen=True)
class Zoo:
    """One adaptor of the zoo: its target spec and the command that lists its bugs."""

    name: str
    spec: str
    lister: tuple[str, ...]

    def bugs(self) -> dict[str, str]:
        """The adaptor's own registry of bugs (name → what the user got wrong)."""
        listed = subprocess.run(
            [*self.lister, "--list-bugs"], capture_output=True, check=True, cwd=ROOT, timeout=60
        )
        bugs: dict[str, str] = json.loads(listed.stdout)
        return bugs


ZOOS = (
    Zoo(
        "zoo-py", "zoo-py=python:tests.zoo.adaptor:run", (sys.executable, str(HERE / "adaptor.py"))
    ),
    Zoo(
        "zoo-js",
        "zoo-js=cmd:node tests/zoo/node/adaptor.mjs",
        ("node", str(HERE / "node" / "adaptor.mjs")),
    ),
)


@dataclass(frozen=True)
class Clean:
    """The bug-free run: the scenarios passed, and where each bug's place is reached."""

    passed: frozenset[str]
    reached: dict[str, frozenset[str]]


@dataclass(frozen=True)
class Guarded:
    """One bug's verdict: the scenarios (among those tried) that catch it."""

    zoo: str
    bug: str
    tried: int
    guards: tuple[str, ...]


def agent_cli(paths: Sequence[Path] = (ROOT / "scenarios" / "agent-cli",)) -> list[Scenario]:
    loaded = loader.load(list(paths))
    assert not loaded.problems, loaded.problems
    return [s for s in loaded.scenarios if s.seam is Seam.AGENT_CLI]


_SCENARIOS: list[Scenario] = []


def _run(spec: str, bug: str, ids: Sequence[str], stop_after: int, trace: str) -> list[str]:
    """
    In a worker: run `ids` on `spec` with `bug` on.  With a bug, the ids that
    did not pass (its guards); with none (``bug == ""``), the ids that passed.
    """
    os.environ["ZOO_BUG"] = bug
    os.environ["ZOO_TRACE"] = trace
    os.chdir(ROOT)
    wanted = set(ids)
    target = targets.create(spec)
    caught: list[str] = []
    try:
        for scenario in _SCENARIOS:
            if scenario.id not in wanted:
                continue
            status = execute(scenario, target).status
            if (status == "passed") != (bug == ""):
                continue
            caught.append(scenario.id)
            if stop_after and len(caught) >= stop_after:
                break
    finally:
        close = getattr(target, "close", None)
        if close is not None:
            close()
    return caught


def clean(zoo: Zoo, scenarios: Sequence[Scenario]) -> Clean:
    """Run the bug-free adaptor once, tracing the places of its bugs."""
    _SCENARIOS[:] = scenarios
    with tempfile.TemporaryDirectory(prefix="zoo-") as folder:
        trace = os.path.join(folder, "trace")
        Path(trace).touch()
        ran = [s.id for s in scenarios]
        with _pool(1) as pool:
            passing = pool.submit(_run, zoo.spec, "", ran, 0, trace).result()
        reached: dict[str, set[str]] = {}
        for line in Path(trace).read_text(encoding="utf-8").splitlines():
            scenario, _, bug = line.partition("\t")
            reached.setdefault(bug, set()).add(scenario)
    return Clean(frozenset(passing), {b: frozenset(s) for b, s in reached.items()})


def _pool(jobs: int) -> ProcessPoolExecutor:
    return ProcessPoolExecutor(max_workers=jobs, mp_context=get_context("fork"))


def hunt(
    zoo: Zoo,
    scenarios: Sequence[Scenario],
    jobs: int = 2,
    stop_after: int = 0,
    only: Sequence[str] = (),
) -> tuple[Clean, list[Guarded]]:
    """Every bug of `zoo` (or those in `only`) against the scenarios that reach it."""
    base = clean(zoo, scenarios)
    bugs = [b for b in zoo.bugs() if not only or b in only]
    order = [s.id for s in scenarios]
    work = {
        b: [i for i in order if i in base.passed and i in base.reached.get(b, ())] for b in bugs
    }
    with _pool(jobs) as pool:
        futures = {
            b: pool.submit(_run, zoo.spec, b, ids, stop_after, "") for b, ids in work.items()
        }
        return base, [Guarded(zoo.name, b, len(work[b]), tuple(futures[b].result())) for b in bugs]


def pinned(
    zoo: Zoo, scenarios: Sequence[Scenario], guards: dict[str, list[str]], jobs: int = 2
) -> tuple[list[str], dict[str, list[str]]]:
    """
    The pinned guards of `zoo` on the bug-free adaptor and on each bug: the
    pinned scenarios the bug-free adaptor does not pass, and for each bug its
    pinned guards that still pass with the bug on.
    """
    _SCENARIOS[:] = scenarios
    union = sorted({s for ids in guards.values() for s in ids})
    with _pool(jobs) as pool:
        clean_run = pool.submit(_run, zoo.spec, "", union, 0, "")
        futures = {b: pool.submit(_run, zoo.spec, b, ids, 0, "") for b, ids in guards.items()}
        failing = sorted(set(union) - set(clean_run.result()))
        missed = {b: sorted(set(guards[b]) - set(f.result())) for b, f in futures.items()}
        # The timeout cases give a CLI half a second: on a loaded machine one may
        # miss its deadline.  What goes wrong once is run once more, alone.
        if failing:
            failing = sorted(
                set(failing) - set(pool.submit(_run, zoo.spec, "", failing, 0, "").result())
            )
        again = {b: pool.submit(_run, zoo.spec, b, ids, 0, "") for b, ids in missed.items() if ids}
        missed = {b: sorted(set(missed[b]) - set(f.result())) for b, f in again.items()}
    return failing, {b: ids for b, ids in missed.items() if ids}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="run the bug zoo against the agent-cli catalogue")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--verbose", action="store_true", help="name each bug's guards")
    parser.add_argument("--zoo", action="append", help="only this adaptor (zoo-py, zoo-js)")
    parser.add_argument(
        "--write-guards", action="store_true", help=f"pin two guards per bug in {GUARDS_FILE.name}"
    )
    args = parser.parse_args(argv)
    scenarios = agent_cli()
    started = time.monotonic()
    weak: list[Guarded] = []
    total = 0
    pins: dict[str, dict[str, list[str]]] = {}
    for zoo in [z for z in ZOOS if not args.zoo or z.name in args.zoo]:
        base, verdicts = hunt(zoo, scenarios, args.jobs)
        pins[zoo.name] = {v.bug: list(v.guards[:NEEDED]) for v in verdicts}
        print(f"zoo: {zoo.name}: bug-free passes {len(base.passed)} of {len(scenarios)} cases")
        for v in verdicts:
            total += 1
            shown = f": {', '.join(v.guards)}" if args.verbose or len(v.guards) < 2 else ""
            print(f"  {v.bug}: {len(v.guards)} guard(s) of {v.tried} reaching{shown}")
            if len(v.guards) < NEEDED:
                weak.append(v)
    caught = total - sum(1 for v in weak if not v.guards)
    twice = total - len(weak)
    # The figure `make mutants` prints beside the mutation score.
    print(
        f"zoo: {total} bugs in {len(ZOOS)} adaptors; caught {caught} of {total}; "
        f"guarded at least twice {twice} of {total}; {time.monotonic() - started:.0f}s"
    )
    if args.write_guards:
        if weak or args.zoo:
            print("zoo: guards not written: every bug of every adaptor needs two", file=sys.stderr)
            return 1
        GUARDS_FILE.write_text(json.dumps(pins, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return 0 if not weak else 1


if __name__ == "__main__":
    sys.exit(main())
