"""
CodeBuddy Code 2.117.0's structured-output loop as rules: what a model script makes it do.

Each rule was read off a capture of the real binary (tests/data/captures/codebuddy,
docs/codebuddy.md) and is checked against every capture by
tests/test_codebuddy_model.py.  `predict` walks a model script the way the CLI
does and says how the run ends, how many requests it makes, and what its
result holds.  It is the loop only: not yet a model-api target (the records
the CLI prints are `fake-codebuddy`'s business).

The rules:

- **C-01** an accepted StructuredOutput call does not end the turn: one more
  request follows, and its text is the result's ``result``; several accepted
  calls keep the last value;
- **C-02** a call that misses the schema gets the validation message back and
  the model is asked again, without limit (`CodeBuddyProfile.schema_retry_limit`);
- **C-03** prose is answered by a re-ask three times; the fourth prose answer
  ends the run as ``success`` without ``structured_output``;
- **C-04** a call to a tool the CLI does not have is answered "not found" and
  the turn goes on;
- **C-05** an HTTP error or a mid-stream error is shown and then waited on for
  minutes: the run does not end by itself (`Ending.WAITS`);
- **C-06** a stream cut before ``[DONE]`` is shown as ``aborted`` and asked
  again, and the run ends as ``error_during_execution`` (``errors:
  ["aborted"]``) whatever follows;
- **C-07** ``--max-turns N`` stops asking after N requests, prints ``Max turns
  (N) exceeded`` and then waits without a result (`Ending.WAITS`).

An adaptor bounds the runs that wait (a timeout, or stopping at the ``Max
turns`` text): `predict` says where they stop, not when.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass

from providers_fake.api.script import STRUCTURED_OUTPUT, HttpError, Script

#: How many times prose is answered with a re-ask before the run ends (C-03).
PROSE_REASKS = 3
#: Requests `predict` walks at most: the endless re-asking of C-02 stops here.
HORIZON = 1000


class Ending(enum.Enum):
    """How a run ends: with a result record, or waiting until something stops it."""

    RESULT = "result"
    WAITS = "waits"


@dataclass(frozen=True)
class Prediction:
    """What CodeBuddy Code does with a script."""

    ending: Ending
    requests: int
    subtype: str | None = None
    result: str | None = None
    #: The structured_output value, wrapped so that a JSON null stays distinguishable.
    structured_output: tuple[object] | None = None
    errors: tuple[str, ...] = ()
    #: The rule that decided the ending.
    rule: str = ""


def predict(
    script: Script, accepts: Callable[[object], bool], max_turns: int | None = None
) -> Prediction:
    """
    The run `script` makes, `accepts` judging each StructuredOutput input
    against the schema; `HORIZON` requests stand for "never ends" (C-02).
    """
    accepted: tuple[object] | None = None
    prose = 0
    aborted = False
    last_text = ""
    for index in range(HORIZON):
        if max_turns is not None and index >= max_turns:
            return Prediction(Ending.WAITS, index, rule="C-07")
        step = script.step_for(index)
        if step is None or isinstance(step, HttpError) or step.midstream_error:
            return Prediction(Ending.WAITS, index + 1, rule="C-05")
        if step.truncate_after is not None:
            aborted = True  # C-06: asked again, the ending is already decided
            continue
        if step.tools:
            for call in step.tools:
                if call.name == STRUCTURED_OUTPUT and accepts(call.input):
                    accepted = (call.input,)  # C-01: the last accepted call is kept
            prose = 0
            continue  # the tool results go back: another request (C-01, C-02, C-04)
        last_text = "".join(step.texts + step.texts_after) or last_text
        if aborted:
            return Prediction(Ending.RESULT, index + 1, "error_during_execution",
                              errors=("aborted",), rule="C-06")  # fmt: skip
        if accepted is not None:
            return Prediction(Ending.RESULT, index + 1, "success", last_text, accepted, rule="C-01")
        prose += 1
        if prose > PROSE_REASKS:
            return Prediction(Ending.RESULT, index + 1, "success", last_text, rule="C-03")
    return Prediction(Ending.WAITS, HORIZON, rule="C-02")
