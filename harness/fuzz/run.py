"""
Generation, judging, shrinking and replay, on hypothesis's engine.

Generation feeds each case's own bytes (a hash of the seed and the case's
number) to the strategy through hypothesis's public fuzzing hook,
``fuzz_one_input``, so a seed gives the same cases on every run and
exactly as many as asked for (a repeated case is drawn again).  Every case
is judged on both targets; cases are grouped by how they fail.

Each class of disagreement is then shrunk by hypothesis's engine from its
smallest case: the case's bytes go into an example database kept per class
(``fuzz_one_input`` saves a failing input there), and a run of the same
property in the reuse and shrink phases replays and minimises it, keeping
to cases that fail in the same way.  The database outlives the run, so the
next run starting from the same class replays the minimal case at once.
Shrinking is bounded by a number of new runs of the targets per class; a
case already judged is never run twice.
"""

from __future__ import annotations

import contextlib
import hashlib
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol, cast

from hypothesis import HealthCheck, Phase, Verbosity, given, seed, settings
from hypothesis import strategies as st
from hypothesis.database import DirectoryBasedExampleDatabase

from harness.catalogue.scenario import Scenario
from harness.exceptions import HarnessError
from harness.fuzz import write
from harness.fuzz.verdict import AGREE, DISAGREE, ERRORED, RERUNS, Judgement
from harness.seams import RunOptions
from harness.seams.case import execute
from harness.targets import REAL_KINDS, Target

Json = Any
#: Bytes behind one generated case (hypothesis's own buffer size).
BUFFER = 8 * 1024
#: Draws of a seed that may come out invalid or repeated before generation gives up.
ATTEMPTS_PER_CASE = 20
#: The shrinker's own random seed: shrinking is deterministic too.
SHRINK_SEED = 20_240_601


class SeamFuzzer(write.Fuzzer, Protocol):
    """One seam's fuzzer: its cases, how two results compare, what a finding expects."""

    def cases(self) -> st.SearchStrategy[dict[str, Json]]: ...

    def classes(self, case: dict[str, Json]) -> tuple[str, ...]: ...

    def class_names(self) -> tuple[str, ...]: ...

    def judge(self, truth: Any, other: Any) -> Judgement: ...

    def clauses(self, case: dict[str, Json], judgement: Judgement) -> list[str]: ...

    def expectation(self, judgement: Judgement) -> dict[str, Json]: ...


@dataclass(frozen=True)
class Finding:
    """One class of disagreement: how many cases fell in it and its minimal case."""

    signature: str
    count: int
    case: dict[str, Json]
    judgement: Judgement
    #: New runs of the targets the shrinking took.
    runs: int
    path: Path | None = None
    #: Whether the written file, loaded and run again, fails the same way.
    reproduced: bool | None = None
    #: Why no scenario could be written for the class (its expectation does not lint).
    unwritten: str | None = None


@dataclass(frozen=True)
class Summary:
    cases: int
    agree: int
    disagree: int
    errored: int
    findings: tuple[Finding, ...] = ()
    #: Per class of the users' world: (name, cases that drew it, of those agreeing).
    drawn: tuple[tuple[str, int, int], ...] = ()
    #: Of the agreements, those with a rerun of a truth that raced.
    raced: int = 0

    @property
    def last_line(self) -> str:
        raced = f" ({self.raced} with a rerun of the truth)" if self.raced else ""
        return (
            f"fuzz: {self.cases} cases, {self.agree} agree{raced}, "
            f"{self.disagree} disagree, {self.errored} errored"
        )


@dataclass
class Judge:
    """Runs cases on the two targets, each case once, through its scenario file."""

    fuzzer: SeamFuzzer
    truth: Target
    other: Target
    scratch: Path
    #: Whether cases may make a system run commands (``--allow-exec``).
    options: RunOptions = field(default_factory=RunOptions)
    seen: dict[str, Judgement] = field(default_factory=dict)
    runs: int = 0

    def __call__(self, case: dict[str, Json]) -> Judgement:
        known = self.seen.get(write.key(case))
        if known is not None:
            return known
        doc = write.document(self.fuzzer, case)
        scenario = write.load(write.dump(doc), self.scratch / f"{doc['id']}.yaml")
        self.runs += 1
        judged = self.judge(scenario)
        self.seen[write.key(case)] = judged
        return judged

    def judge(self, scenario: Scenario) -> Judgement:
        """
        ``scenario`` on both targets, compared.  When the other disagrees with
        a real binary, the binary is run again (`RERUNS` times at most): an
        agreement with a rerun counts, marked ``raced``, for the binary itself
        does what the other did.  A truth that does not race gives the same
        outcome each time, so a real disagreement stays one.
        """
        truth = execute(scenario, self.truth, self.options)
        other = execute(scenario, self.other, self.options)
        judged = self.fuzzer.judge(truth, other)
        if judged.agreement != DISAGREE or self.truth.kind not in REAL_KINDS:
            return judged
        for _ in range(RERUNS):
            again = self.fuzzer.judge(execute(scenario, self.truth, self.options), other)
            if again.agreement == AGREE:
                return replace(again, raced=True)
        return judged


def _quiet(**extra: Any) -> settings:
    return settings(
        deadline=None,
        suppress_health_check=list(HealthCheck),
        verbosity=Verbosity.quiet,
        **extra,
    )


def generate(
    strategy: st.SearchStrategy[dict[str, Json]],
    count: int,
    seed_value: int,
    each: Callable[[dict[str, Json], bytes], None],
) -> None:
    """Call ``each`` with ``count`` distinct cases and the bytes that replay each one."""
    drawn: list[dict[str, Json]] = []

    @_quiet(database=None)
    @given(strategy)
    def probe(case: dict[str, Json]) -> None:
        drawn.append(case)

    seen: set[str] = set()
    attempt = 0
    while len(seen) < count and attempt < count * ATTEMPTS_PER_CASE:
        buffer = hashlib.shake_256(f"{seed_value}:{attempt}".encode()).digest(BUFFER)
        attempt += 1
        drawn.clear()
        replay = fuzz_one(probe, buffer)
        if replay is None or not drawn:
            continue
        case = drawn[-1]
        if write.key(case) in seen:
            continue
        seen.add(write.key(case))
        each(case, replay)


def fuzz_one(probe: Callable[..., None], buffer: bytes) -> bytes | None:
    """Run a hypothesis property once on ``buffer`` (its public fuzzing hook)."""
    hook: Callable[[bytes], bytes | None] = cast(Any, probe).hypothesis.fuzz_one_input
    return hook(buffer)


class _SameFailure(Exception):
    """The property's failure: a case that fails the way the class being shrunk does."""


def shrink(
    strategy: st.SearchStrategy[dict[str, Json]],
    start: bytes,
    signature: str,
    judge: Judge,
    *,
    database: Path,
    budget: int,
) -> tuple[dict[str, Json], Judgement, int]:
    """The smallest case hypothesis finds that fails like ``signature``; and the runs it took."""
    state: dict[str, Any] = {"runs": 0, "last": None, "smallest": None}

    @_quiet(
        database=DirectoryBasedExampleDatabase(str(database)),
        phases=[Phase.reuse, Phase.shrink],
        max_examples=10,
        report_multiple_bugs=False,
    )
    @seed(SHRINK_SEED)
    @given(strategy)
    def probe(case: dict[str, Json]) -> None:
        if write.key(case) not in judge.seen:
            if state["runs"] >= budget:
                return  # out of budget: no new runs, the shrinker keeps what it has
            state["runs"] += 1
        try:
            judged = judge(case)
        except HarnessError as error:  # the harness's own trouble: not a shrink
            state["error"] = error
            return
        if judged.signature != signature:
            return
        state["last"] = (case, judged)
        size = len(write.key(case))
        if state["smallest"] is None or size < state["smallest"][0]:
            state["smallest"] = (size, case, judged)
        raise _SameFailure

    with contextlib.suppress(_SameFailure):
        fuzz_one(probe, start)
    try:
        probe()
    except _SameFailure:
        case, judged = state["last"]  # hypothesis replays the minimal case last
        return case, judged, state["runs"]
    except Exception:  # noqa: BLE001, S110  (a flaky target: keep the smallest case seen)
        pass
    if "error" in state:
        raise state["error"]
    if state["smallest"] is None:
        raise AssertionError(f"the class {signature!r} did not fail again")
    _, case, judged = state["smallest"]
    return case, judged, state["runs"]


@dataclass
class Tally:
    """Cases as they are judged: counts, and per class its members' sizes and bytes."""

    counts: dict[str, int] = field(default_factory=lambda: {AGREE: 0, DISAGREE: 0, ERRORED: 0})
    #: Agreements with a rerun of a truth that raced (`Judgement.raced`).
    raced: int = 0
    classes: dict[str, list[tuple[int, dict[str, Json], bytes]]] = field(default_factory=dict)
    #: Per class of the users' world a case drew: [cases, agreeing cases].
    drawn: dict[str, list[int]] = field(default_factory=dict)

    def add(
        self, case: dict[str, Json], replay: bytes, judged: Judgement, drew: tuple[str, ...] = ()
    ) -> None:
        self.counts[judged.agreement] += 1
        self.raced += judged.raced
        for name in drew:
            tally = self.drawn.setdefault(name, [0, 0])
            tally[0] += 1
            tally[1] += judged.agreement == AGREE
        if judged.agreement != AGREE:
            members = self.classes.setdefault(judged.signature, [])
            members.append((len(write.key(case)), case, replay))

    @property
    def cases(self) -> int:
        return sum(self.counts.values())

    def per_class(self, names: tuple[str, ...]) -> tuple[tuple[str, int, int], ...]:
        """Each class named, in order: the cases that drew it and how many of them agreed."""
        return tuple(
            (name, self.drawn.get(name, [0, 0])[0], self.drawn.get(name, [0, 0])[1])
            for name in names
        )

    def line(self) -> str:
        c = self.counts
        raced = f" ({self.raced} with a rerun of the truth)" if self.raced else ""
        return (
            f"{self.cases} cases, {c[AGREE]} agree{raced}, "
            f"{c[DISAGREE]} disagree, {c[ERRORED]} errored"
        )


def scratch_dir() -> tempfile.TemporaryDirectory[str]:
    return tempfile.TemporaryDirectory(prefix="harness-fuzz-")
