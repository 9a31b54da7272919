"""
What judging one generated case on two targets gives: agree, disagree or errored.

The truth is the target the other is held to (the real binary on the
model-api seam, the reference on the agent-cli seam).  A disagreement lists
the compared fields that differ with both values; an errored case says
which side could not be compared and why (a target that hangs, dies or
answers garbage ends here, never as a traceback).  The *signature* groups
cases that fail the same way, so that one minimal scenario is written per
class, and shrinking keeps to that class.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from harness.seams.case import CaseResult

AGREE, DISAGREE, ERRORED = "agree", "disagree", "errored"
#: How many more times a real truth is run when the other disagrees with it: a
#: binary that races (a stream cut between its last two events, say) may do what
#: the other did on another run, and then the other is faithful to it.
RERUNS = 2


@dataclass(frozen=True)
class Difference:
    """One compared field on which the two targets differ."""

    #: The field as the projection names it (``final.result``, ``requests.model``).
    field: str
    #: Exactly where (``requests[1].model``).
    at: str
    truth: object
    other: object


@dataclass(frozen=True)
class Judgement:
    """How one generated case came out on the two targets."""

    agreement: str
    differences: tuple[Difference, ...] = ()
    #: For an errored case: which side, and its first line of explanation.
    reason: str | None = None
    truth: CaseResult | None = None
    other: CaseResult | None = None
    #: A seam's own name for the class, when the differing fields alone would split
    #: one cause into many (an adaptor's wrong verdict shows in whatever else differs).
    label: str | None = None
    #: An agreement with the truth run again: its first run came out otherwise, so the
    #: truth races on this case, and the other did what it also does (`RERUNS`).
    raced: bool = False

    @property
    def fields(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(d.field for d in self.differences))

    @property
    def signature(self) -> str:
        """The class of the case: the differing fields, or what errored."""
        if self.agreement == ERRORED:
            return f"errored: {_shape(self.reason or '')}"
        if self.label is not None:
            return self.label
        return ", ".join(self.fields) if self.differences else AGREE


def _shape(reason: str) -> str:
    """A reason with what varies from case to case (numbers, quoted text) taken out."""
    first = (reason.strip().splitlines() or [""])[0]
    first = re.sub(r"'[^']*'|\"[^\"]*\"", "'…'", first)
    first = re.sub(r"\d+(\.\d+)?", "N", first)
    return first[:90]


def errored(truth: CaseResult, other: CaseResult) -> Judgement | None:
    """The errored judgement when either side has no outcome to compare, else None."""
    missing = [
        f"{side} ({result.target}) {result.status}: {_first(result.reason)}"
        for side, result in (("truth", truth), ("other", other))
        if result.outcome is None or result.status in ("errored", "skipped")
    ]
    if not missing:
        return None
    return Judgement(ERRORED, reason="; ".join(missing), truth=truth, other=other)


def _first(reason: str | None) -> str:
    lines = (reason or "no outcome").strip().splitlines()
    return lines[0] if lines else "no outcome"
