"""
Execution of one case: a scenario against a target, as a result value.

The scenario's seam does the work (`SeamKind.observe` sets up the fake,
drives the target and reads back what the fake recorded; `SeamKind.compare`
holds the outcome against the expectation).  This module adds what is the
same on every seam: a target that does not serve the seam is skipped, and
whatever the target does (raise, hang past its own timeout, return garbage,
be unreachable), the case ends as a `CaseResult` and the run goes on.
"""

from __future__ import annotations

from dataclasses import dataclass

from harness import seams
from harness.catalogue.scenario import Scenario
from harness.exceptions import ServiceFailed
from harness.seams import RunOptions, SeamOutcome
from harness.seams.compare import Mismatch
from harness.targets import Target
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

    @property
    def case_id(self) -> str:
        return f"{self.scenario}[{self.target}]"


#: What a run may do unless the user says more: nothing that runs a command.
DEFAULT_OPTIONS = RunOptions()


def execute(
    scenario: Scenario, target: Target, options: RunOptions = DEFAULT_OPTIONS
) -> CaseResult:
    """Run ``scenario`` on ``target``; never raises for a misbehaving target."""
    if scenario.seam not in target.seams:
        reason = f"{target.name} does not serve the {scenario.seam.value} seam"
        return CaseResult(scenario.id, target.name, "skipped", reason=reason, skipped_by="harness")
    seam = seams.require(scenario.seam.value)
    try:
        outcome = seam.observe(scenario, target, options)
    except Skipped as skip:
        return CaseResult(scenario.id, target.name, "skipped", reason=str(skip), skipped_by=skip.by)
    except (AdaptorFailed, ServiceFailed) as failure:
        return CaseResult(scenario.id, target.name, "errored", reason=str(failure))
    except Exception as error:  # noqa: BLE001  (a broken target is data, not a crash)
        return CaseResult(
            scenario.id, target.name, "errored", reason=f"{type(error).__name__}: {error}"
        )
    mismatches = seam.compare(scenario.expectation_for(target.kind), outcome)
    status = "failed" if mismatches else "passed"
    return CaseResult(scenario.id, target.name, status, outcome, mismatches)
