"""
Execution of one case: a scenario against a target, as a result value.

The scenario's seam does the work (`SeamKind.observe` sets up the fake,
drives the target and reads back what the fake recorded; `SeamKind.compare`
holds the outcome against the expectation).  This module adds what is the
same on every seam: a target that does not serve the seam is skipped, and
whatever the target does (raise, hang past its own timeout, return garbage,
be unreachable), the case ends as a `CaseResult` and the run goes on.  A
target that cannot be started at all is the exception to one result per
failure: its cases are skipped as not run, and the target's own failure is
reported once (`harness.targets.announce.About`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace

from harness import seams
from harness.catalogue.scenario import Scenario, Step
from harness.exceptions import ServiceFailed, TargetNotStarted
from harness.seams import RunOptions, SeamOutcome
from harness.seams.compare import Mismatch
from harness.targets import Target, contract_of, versions_of
from harness.targets.protocol import AdaptorFailed, Skipped

#: The four ways a case can end.
STATUSES = ("passed", "failed", "errored", "skipped")
#: Who decided that a case is skipped: the harness (the target's kind does not
#: serve the scenario's seam, or the run did not allow what the case needs); the
#: scenario, which says why a target of this kind cannot be put in its situation
#: (the real binaries offline); or the target itself, which declined the case.
#: Only the last is the target's choice, so only it needs a baseline entry.
SKIPPED_BY = ("harness", "scenario", "target")


@dataclass(frozen=True)
class CaseResult:
    """How one scenario fared on one target."""

    scenario: str
    target: str
    status: str
    #: What the seam observed (agent-cli: the canonical `Outcome`).
    outcome: SeamOutcome | None = None
    mismatches: tuple[Mismatch, ...] = ()
    reason: str | None = None
    #: Against the target's baseline: None, "expected", "regression" or "stale".
    verdict: str | None = None
    #: Why the verdict is what it is (the baseline's reason, or what is new).
    note: str | None = None
    #: For a skipped case, who decided it (one of `SKIPPED_BY`).
    skipped_by: str | None = None
    #: For a failed or errored case, what the provider printed (`context`).
    context: str = ""
    #: How long the case took: junit.xml shows it; no other report does,
    #: so they stay byte-identical from run to run.
    seconds: float = field(default=0.0, compare=False)

    @property
    def case_id(self) -> str:
        return f"{self.scenario}[{self.target}]"


def not_run(target: str) -> str:
    """The reason of every case of a target that could not be started."""
    return f"not run: {target} did not start"


#: What a run may do unless the user says more: nothing that runs a command.
DEFAULT_OPTIONS = RunOptions()


def execute(
    scenario: Scenario, target: Target, options: RunOptions = DEFAULT_OPTIONS
) -> CaseResult:
    """
    Run ``scenario`` on ``target``; never raises for a misbehaving target.
    A case that fails or errors carries what its provider printed.
    """
    start = time.perf_counter()
    result = _execute(scenario, target, options)
    seconds = time.perf_counter() - start
    shown = context(scenario) if result.status in {"failed", "errored"} else ""
    return replace(result, context=shown, seconds=seconds)


#: Bounds of a failure's context: scripted stdout lines shown, characters
#: of each line and of stderr.
CONTEXT_LINES = 5
CONTEXT_WIDTH = 200
CONTEXT_STDERR = 1000


def context(scenario: Scenario) -> str:
    """
    What the scenario's fake provider printed, bounded: its exit status or
    signal, the tail of its stderr and its last stdout lines.  The fakes are
    deterministic, so their script is what they printed; a seam without a
    fake (service-api) has no provider output to show.
    """
    script = scenario.script
    if script is None:
        return ""
    how = f", killed by {script.signal}" if script.signal else ""
    how += "" if script.exit is None else f", exit {script.exit}"
    lines = [f"provider: fake {script.cli}{how}"]
    stderr = "".join(str(s.arg.value) for s in script.steps if s.kind == "stderr" and s.arg)
    if stderr:
        tail = stderr[-CONTEXT_STDERR:]
        lines += ["stderr (tail):", *(_clip(line) for line in tail.splitlines())]
    printed = [s for s in script.steps if s.kind not in {"stderr", "sleep"}]
    if printed:
        skipped = len(printed) - CONTEXT_LINES
        more = f", the last {CONTEXT_LINES} of {len(printed)}" if skipped > 0 else ""
        lines.append(f"stdout (scripted events and lines{more}):")
        lines += [_clip(_step(s)) for s in printed[-CONTEXT_LINES:]]
    return "\n".join(lines)


def _step(step: Step) -> str:
    if step.arg is None:
        return step.kind
    if step.kind in {"line", "raw"}:
        return str(step.arg.value)
    return f"{step.kind} {step.arg.text}"


def _clip(line: str) -> str:
    return line if len(line) <= CONTEXT_WIDTH else line[: CONTEXT_WIDTH - 1] + "…"


def _execute(scenario: Scenario, target: Target, options: RunOptions) -> CaseResult:
    if scenario.seam not in target.seams:
        reason = f"{target.name} does not serve the {scenario.seam.value} seam"
        return CaseResult(scenario.id, target.name, "skipped", reason=reason, skipped_by="harness")
    seam = seams.require(scenario.seam.value)
    try:
        outcome = seam.observe(scenario, target, options)
    except Skipped as skip:
        return CaseResult(scenario.id, target.name, "skipped", reason=str(skip), skipped_by=skip.by)
    except TargetNotStarted:
        # One failure of the target, reported once (`announce.About`), not one per case.
        reason = not_run(target.name)
        return CaseResult(scenario.id, target.name, "skipped", reason=reason, skipped_by="harness")
    except (AdaptorFailed, ServiceFailed) as failure:
        return CaseResult(scenario.id, target.name, "errored", reason=str(failure))
    except Exception as error:  # noqa: BLE001  (a broken target is data, not a crash)
        return CaseResult(
            scenario.id, target.name, "errored", reason=f"{type(error).__name__}: {error}"
        )
    expectation = scenario.expectation_for(target.kind, versions_of(target), contract_of(target))
    mismatches = seam.compare(expectation, outcome)
    status = "failed" if mismatches else "passed"
    return CaseResult(scenario.id, target.name, status, outcome, mismatches)
