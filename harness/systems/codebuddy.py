"""
CodeBuddy Code 2.117.0's structured-output loop as rules: what a model script makes it do.

Each rule was read off a capture or a probe of the real binary
(tests/data/captures/codebuddy, docs/codebuddy.md) and is checked against
every capture by tests/test_codebuddy_model.py.  `Loop` holds the rules as a
pure state machine fed one model answer at a time; `predict` walks a model
script through it and says how the run ends, and the reference model
(`harness.systems.codebuddy_run`) walks the fake API's real answers through
the same machine and prints what the binary prints.

A *turn* is the agent loop of one user message: requests go on while the
answers call tools, and the first answer without a call ends the turn.  The
prompt is the first turn; a re-ask (C-03) is a turn of its own.

- **C-01** an accepted StructuredOutput call does not end the turn: the call's
  result goes back and the model is asked again; the turn ends at the next
  answer without a call.  Several accepted calls keep the last value.  The
  result's ``result`` is the text that ended the *first* turn, whatever the
  re-asks answered (on json and text the last turn's; once C-04 or C-06 was
  met in the first turn, the one before the last turn's);
- **C-02** a call that misses the schema gets the validation message back and
  the model is asked again, without limit (`CodeBuddyProfile.schema_retry_limit`);
- **C-03** a turn that ends without an accepted call is followed by a re-ask
  (a user message naming the tool and the schema, printed as a snapshot), at
  most three times (never on ``--output-format text``, nor when the
  ``--json-schema`` does not parse as a JSON object or array); the turn after the
  last re-ask ends the run as
  ``success``, with ``structured_output`` only if a call was accepted.  The
  answer ending a re-ask turn that ends the run is not printed on stream-json
  (it is in the json array), unless C-04 or C-06 was met in the first turn;
- **C-04** a call to a tool the CLI does not have is shown as the text ``Tool
  NAME not found in agent cli.`` (no usage), dropped from the history, and the
  same request is sent again with a recovery note in the prompt (a snapshot
  shows it).  If the turn then ends with an accepted call and no re-ask
  follows, the run ends as ``error_during_execution`` with that text as its
  error and no output; a re-ask forgets it (on stream-json; with no re-ask to
  follow, the first turn's error ends the run so too); an error of a re-ask's
  turn never ends the run; where no re-ask is possible at all (a schema that
  is no JSON object or array), the answer ending the run so is not printed;
- **C-05** an HTTP error or a mid-stream error is shown and then waited on for
  minutes: the run does not end by itself (`Ending.WAITS`);
- **C-06** a stream cut before ``[DONE]`` is shown as ``aborted`` and asked
  again, as C-04 is (a snapshot, no note): a turn that then ends with an
  accepted call ends the run as ``error_during_execution`` (``errors:
  ["aborted"]``); a re-ask forgets it (on json and text, the first turn
  that met C-04 or C-06 ends the run so, the error on stderr alone);
- **C-07** ``--max-turns N`` stops asking after N requests, prints ``Max turns
  (N) exceeded`` and then waits without a result (`Ending.WAITS`);
- **C-08** within a turn the conversation goes back as it was answered, but a
  request that starts again (a re-ask, C-04's or C-06's retry) sends it
  rebuilt from the session's items: a message of several calls becomes one
  assistant message per call, each followed by its own result, the message's
  text with the first (`rebuilt`).

The CLI exits 0 whenever it prints a result, ``error_during_execution``
included.  An adaptor bounds the runs that wait (a timeout, or stopping at
the ``Max turns`` text): the machine says where they stop, not when.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from providers_fake.api.script import STRUCTURED_OUTPUT, HttpError, Script

#: How many re-asks follow a turn that ended without an accepted call (C-03).
PROSE_REASKS = 3
#: Requests `predict` walks at most: the endless re-asking of C-02 stops here.
HORIZON = 1000
#: The tools CodeBuddy Code 2.117.0 offers the model in print mode (its requests'
#: ``tools``, tests/data/captures/codebuddy): a call to any other name is C-04's.
TOOLS = frozenset(
    {
        "Agent", "Read", "Write", "Edit", "Bash", "Glob", "Grep", "EnterPlanMode",
        "ExitPlanMode", "TaskCreate", "TaskGet", "TaskUpdate", "TaskList", "WebFetch",
        "WebSearch", "TaskStop", "TaskOutput", "Skill", STRUCTURED_OUTPUT, "ToolSearch",
        "DeferExecuteTool", "SendMessage", "WaitForMcpServers",
    }
)  # fmt: skip
ABORTED = "aborted"


def not_found(name: str) -> str:
    """What the CLI shows for a call to a tool it does not have (C-04)."""
    return f"Tool {name} not found in agent cli."


def max_turns_text(limit: int) -> str:
    """What the CLI shows when ``--max-turns`` stops it (C-07)."""
    return f"Max turns ({limit}) exceeded"


Message = dict[str, object]


def rebuilt(messages: Sequence[Message]) -> list[Message]:
    """
    The conversation as CodeBuddy Code sends it when a request starts again
    (C-08): it keeps each call as an item of its own (the json array shows
    them) and turns the items back into messages one call at a time, so an
    assistant message of several calls and the results after it become one
    message per call, each followed by its result.  Probed on 2.117.0 after a
    re-ask, an unknown tool and a cut stream, with and without text in the
    message; a message of one call, text or a user message is sent as it was.
    """
    out: list[Message] = []
    index = 0
    while index < len(messages):
        message = messages[index]
        calls = message.get("tool_calls")
        index += 1
        if message.get("role") != "assistant" or not isinstance(calls, list) or len(calls) < 2:
            out.append(message)
            continue
        results: dict[object, Message] = {}
        while index < len(messages) and messages[index].get("role") == "tool":
            results[messages[index].get("tool_call_id")] = messages[index]
            index += 1
        for number, call in enumerate(calls):
            head = {k: v for k, v in message.items() if k != "tool_calls" and number == 0}
            one: Message = {**head, "role": "assistant", "tool_calls": [call]}
            out.append(one)
            result = results.pop(call.get("id") if isinstance(call, dict) else None, None)
            if result is not None:
                out.append(result)
        out += results.values()
    return out


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


class Step(enum.Enum):
    """What the CLI does after an answer."""

    ASK = "ask"  # the next request of the same turn (tool results, a retry)
    RECOVER = "recover"  # the same request again, the answer dropped (C-04)
    REASK = "reask"  # a re-ask: a new turn (C-03)
    END = "end"  # the result record (`Loop.ending`)


@dataclass
class Loop:
    """The rules as a state machine: feed it each answer, it says what the CLI does next."""

    max_turns: int | None = None
    #: Re-asks after a turn without an accepted call: none on ``--output-format text``
    #: nor when the ``--json-schema`` is no JSON object or array.
    reasks: int = PROSE_REASKS
    #: Whether a re-ask forgets a C-04/C-06 error of the first turn: on stream-json only;
    #: on json and text, or with no re-ask to follow, that turn ends the run as
    #: error_during_execution (on json and text its error on stderr); an error of a
    #: later turn is forgotten on every format.
    forgets: bool = True
    #: Whether the result's text is the last turn's (json and text) or the first's.
    last_result: bool = False
    requests: int = 0
    turn: int = 0
    #: The text that ended each turn so far (C-01).
    texts: list[str] = field(default_factory=list)
    accepted: tuple[object] | None = None
    #: C-04's or C-06's text, while the turn it happened in lasts, and that turn.
    error: str | None = None
    error_turn: int = 0
    #: Whether C-04 or C-06 was met in the first turn: the result's text is then the
    #: last turn's, and the answer ending the run is printed.
    recovered: bool = False
    #: Whether the answer that ended the run is left unprinted whatever came before.
    unprinted_end: bool = False
    ending: Prediction | None = field(default=None)

    def ask(self) -> Prediction | None:
        """Before a request: the C-07 stop (None: the request is sent)."""
        if self.max_turns is not None and self.requests >= self.max_turns:
            return Prediction(Ending.WAITS, self.requests, rule="C-07")
        self.requests += 1
        return None

    def failed(self) -> Prediction:
        """An HTTP error or a mid-stream error: shown, then waited on (C-05)."""
        return Prediction(Ending.WAITS, self.requests, rule="C-05")

    def cut(self) -> Step:
        """A stream cut before ``[DONE]``: shown as aborted and asked again (C-06)."""
        self.error, self.error_turn = ABORTED, self.turn
        self.recovered = self.recovered or self.turn == 0
        return Step.ASK

    def unknown(self, name: str) -> Step:
        """A call to a tool the CLI does not have (C-04)."""
        self.error, self.error_turn = not_found(name), self.turn
        self.recovered = self.recovered or self.turn == 0
        return Step.RECOVER

    def calls(self, verdicts: list[tuple[object, bool]]) -> Step:
        """Calls, each (input, accepted); the last accepted is kept (C-01, C-02)."""
        for value, accepted in verdicts:
            if accepted:
                self.accepted = (value,)
        return Step.ASK

    def text(self, text: str) -> Step:
        """An answer without a call: the turn ends (C-01, C-03, C-04, C-06)."""
        self.texts.append(text)
        result = self.result_text()
        # Only an error of the first turn ends the run (probed: one in a re-ask's turn does
        # not, even before an accepted call).  A re-ask forgets it on stream-json; on json
        # and text, or when no re-ask follows (text output, a schema that is no object),
        # it ends the run without an accepted call too.
        error = self.error if self.error_turn == 0 else None
        forgotten = self.forgets and self.turn < self.reasks
        if error is not None and (self.accepted is not None or not forgotten):
            rule = "C-06" if error == ABORTED else "C-04"
            self.ending = Prediction(Ending.RESULT, self.requests, "error_during_execution",
                                     errors=(error,), rule=rule)  # fmt: skip
            # Probed: with no re-ask possible at all (a schema that is no object or
            # array), the answer that ends the run so is not printed on stream-json.
            self.unprinted_end = self.reasks == 0
        elif self.accepted is not None:
            self.ending = Prediction(Ending.RESULT, self.requests, "success", result,
                                     self.accepted, rule="C-01")  # fmt: skip
        elif self.turn >= self.reasks:
            self.ending = Prediction(Ending.RESULT, self.requests, "success", result, rule="C-03")
        else:
            self.turn += 1
            self.error = None
            return Step.REASK
        return Step.END

    def result_text(self) -> str:
        """
        The result's text (C-01): the first turn's; the last turn's on json and
        text; once C-04 or C-06 was met in the first turn, the one before the
        last (probed on stream-json: `Deploy`, then prose A to D gives C; A, then
        an accepted call and B gives A).
        """
        if self.last_result:
            return self.texts[-1]
        if self.recovered:
            return self.texts[-2] if len(self.texts) > 1 else self.texts[-1]
        return self.texts[0]

    @property
    def prints_last(self) -> bool:
        """Whether the answer that ended the run is printed on stream-json (C-03, C-04)."""
        return not self.unprinted_end and (self.turn == 0 or self.recovered)


def predict(
    script: Script, accepts: Callable[[object], bool], max_turns: int | None = None
) -> Prediction:
    """
    The run `script` makes, `accepts` judging each StructuredOutput input
    against the schema; `HORIZON` requests stand for "never ends" (C-02).
    """
    loop = Loop(max_turns)
    for index in range(HORIZON):
        stop = loop.ask()
        if stop is not None:
            return stop
        step = script.step_for(index)
        if step is None or isinstance(step, HttpError) or step.midstream_error:
            return loop.failed()
        if step.truncate_after is not None:
            loop.cut()
            continue
        unknown = [call.name for call in step.tools if call.name not in TOOLS]
        if unknown:
            loop.unknown(unknown[0])
            continue
        if step.tools:
            so = [call for call in step.tools if call.name == STRUCTURED_OUTPUT]
            loop.calls([(call.input, accepts(call.input)) for call in so])
            continue
        loop.text("".join(step.texts + step.texts_after))
        if loop.ending is not None:
            return loop.ending
    return Prediction(Ending.WAITS, HORIZON, rule="C-02")


def waits_by_itself(script: Script, max_turns: int | None = None) -> bool:
    """
    Whether the CLI, on this script, stops asking and waits without end (after
    an HTTP error or past --max-turns: C-05, C-07), so that only a timeout
    ends the run, whatever the machine's speed: the case's verdict does not
    hang on a held answer.
    """
    return predict(script, lambda value: False, max_turns).rule in {"C-05", "C-07"}
