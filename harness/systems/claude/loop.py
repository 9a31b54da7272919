"""
A reference model of Claude Code's structured-output loop, towards the model API.

`harness.systems.claude.run.run_claude` behaves like ``claude -p PROMPT
--json-schema SCHEMA --output-format json|stream-json [--verbose]
[--fallback-model M]`` (Claude Code 2.1.328, as the real-CLI captures and
probes of the binary show it): it checks the schema argument with the
binary's own validator library (`validator`: refusals before launch, Ajv's
strict-mode warnings on stderr), then this module's `Loop` offers the schema
as the ``StructuredOutput`` tool, talks to ``POST
/v1/messages?beta=true`` through the `harness.net` client it is given (so it runs in
process against the scripted fake), and drives the loop: each answer
shown and its calls run as they stream (`answer`), attempts counted, the
enforce reminder, HTTP errors per status (`failures`), the model fallback,
cut and broken streams, other tools (`tools`).

What it prints is not built here: every step of the loop becomes one of the
semantic events of the fake ``claude`` (`providers_fake.cli.claude.render`),
whose renderer prints capture-faithful lines and result objects.  Only the
decisions are this module's.  Everything it shows is derived from its
inputs (its base URL, its working folder, its environment), so that a
report masks it the way it masks the real binary's output.

Beyond the captures, from seed 004 and probes of the real binary: the schema
size guard and ``$async`` (SCH-10); a stream cut before ``message_stop`` is
retried whole and its partial calls never count; prose broken by an SSE
error is resumed three times; a ``refusal`` stop is continued once, then
ends the run in error without the object; a ``--resume`` turn counts only
its own calls (LOOP-12); an answer with nothing to show (no text, no call)
is nudged unless StructuredOutput was already called this turn (once until
an answer shows something), and
notes in a row go as one user message (`wire.joined`).  Modelled from the
seed alone, because they need remote configuration the real binary cannot
be given offline (scenarios with them skip the real target and say why;
tests/test_offline_reach.py shows the binary ignoring every offline way
in): the strict wire schema
behind the ``tengu_structured_output_strict`` gate (`strict`, LOOP-09), the
Foundry capability memory that strips it (LOOP-10), and the refusal
fallback that tombstones the refused model's messages, counts their
StructuredOutput calls and retracts their objects (LOOP-11, 13).
"""

from __future__ import annotations

import json
from typing import Any

from harness import net
from harness.systems.claude import failures, models, strict, validator, wire, words
from harness.systems.claude.answer import Taking
from harness.systems.claude.notes import Conversation
from harness.systems.claude.recovery import Recovery
from harness.systems.claude.tools import Bench
from harness.systems.claude.turn import Settings, Turn
from providers_fake.cli.claude import data
from providers_fake.cli.claude.render import ClaudeRenderer
from providers_fake.cli.jsonout import js_number

MESSAGES_PATH = "/v1/messages?beta=true"
TOOL_NAME = wire.TOOL_NAME
DEFAULT_ATTEMPTS = 5
#: Times a stream broken after prose only is resumed before the run gives up.
MIDSTREAM_RESUMES = 3
STRICT_GATE = "tengu_structured_output_strict"
#: How much of the last StructuredOutput error the exhaustion message quotes.
LAST_ERROR_CUT = 600
#: Answers in a row with calls and no prose after which the CLI adds `QUIET_NOTICE`.
QUIET_ANSWERS = 5
QUIET_NOTICE = (
    "The user hasn't heard from you in a while. As you continue, keep them updated when "
    "there's something to tell \u2014 a finding, a change of plan."
)


class Loop(Recovery):
    def __init__(
        self,
        client: net.Client,
        base_url: str,
        renderer: ClaudeRenderer,
        settings: Settings,
        bench: Bench,
    ) -> None:
        self.client = client
        self.url = base_url.rstrip("/") + MESSAGES_PATH
        self.renderer = renderer
        self.settings = settings
        self.bench = bench
        self.talk = Conversation(settings.profile, list(settings.resumed))
        #: The conversation's messages (the notes' rules are `Conversation`'s).
        self.history = self.talk.messages
        #: The model of the last request (whose notes a resumed session carries).
        self.model = ""
        self.denials: list[dict[str, Any]] = []
        #: The deployment said it has no structured outputs: strict is stripped from now on.
        self.foundry_gap = False
        #: Seconds the CLI would have slept between retries: the reference does not wait,
        #: but they count towards the CLI's own time (`time_left`).
        self.waited = 0.0
        #: The run ended on a request that failed (the API's error, overloads, a lost
        #: connection) or on a refusal: the transcript ends on the CLI's error message
        #: and the message before it stays unanswered (B-40).
        self.unanswered = False
        #: The next request goes without streaming (the silent retry of a cut stream).
        self.unstreamed = False
        #: The run ended on its spent attempts: the turn is closed even after one answer
        #: (probed on 2.1.328, B-40).
        self.spent = False
        self.profile = settings.profile
        #: A refusal's tool results, shown once it is known how the refusal is met.
        self.held: list[object] = []
        #: Lines for stderr the loop prints on its way (a fallback model it does not know).
        self.notices: list[str] = []
        self.accepted: tuple[object] | None = None  # the last accepted input (B-10)
        self.recoveries = failures.Recoveries(self.profile.bad_request_ladder)  # B-33
        if failures.TOOL_SEARCH_GONE in json.dumps(self.talk.resumed):
            # An earlier turn of the session dropped tool search: the resumed session
            # keeps it off, so a 400 ladder is shorter (probed on 2.1.328, issue 24).
            self.recoveries.dropped.add(failures.TOOL_SEARCH)
        #: The tools the session's transcript last recorded (B-44): None before its
        #: first complete answer, else whether tool search was off.
        self.recorded: bool | None = None
        if wire.answered_before(self.talk.resumed):
            self.recorded = failures.TOOL_SEARCH in self.recoveries.dropped
        #: The history's length and last message when the transcript last recorded
        #: its tools, if it did in this run (B-44).
        self.recorded_at: tuple[int, object] | None = None
        #: The model of the run's last complete answer (B-45).
        self.answered_by: str | None = None
        #: The body of the last request sent (what a compaction summarises, B-48).
        self.sent: dict[str, Any] = {}
        #: Notes sent after the conversation until an answer comes, then part of it.
        self.pending: list[dict[str, Any]] = []
        #: The CLI's estimate of the first exchange's tokens (B-39): the prompt's and
        #: those of what the release attaches to it.
        self.first_exchange = 0

    def tool(self) -> dict[str, object]:
        schema = self.settings.schema.wire
        if not self.settings.gates.get(STRICT_GATE, False) or self.foundry_gap:
            return wire.tool_definition(schema)
        derived = strict.derive(schema)  # a failure falls back silently (LOOP-09)
        return wire.tool_definition(schema, derived.schema)

    def run(self, prompt: str, model: str) -> None:
        env = self.settings.env
        allowed = validator.env_int(env.get("MAX_STRUCTURED_OUTPUT_RETRIES"))
        budget = failures.retries(validator.env_int(env.get("CLAUDE_CODE_MAX_RETRIES")))
        fallback = self.settings.fallback
        armed = None if fallback == model else fallback
        turn = Turn(model, armed, DEFAULT_ATTEMPTS if allowed is None else allowed, budget)
        self.first_exchange = self.profile.attached_tokens + failures.estimate_tokens(prompt)
        self.talk.announced = model
        self.event("init")
        stream = True
        while True:
            tool = self.tool()
            self.model = turn.model
            self.talk.token_note(turn.model)
            found = models.card(turn.model, self.profile.known_models())
            hinted = found is not None and found.hint and self.talk.noted == len(self.history)
            body = wire.request_body(
                turn.model,
                turn.effort,
                prompt,
                [
                    *self.talk.rendered(turn.model),
                    *(self.talk.placed(n["content"], turn.model) for n in self.pending),
                ],
                tool,
                self.talk.resumed,
                stream=stream,
                caching=not wire.env_on(env.get("DISABLE_PROMPT_CACHING")),
                tail=models.PLANNING_HINT if hinted else None,
            )
            left = self.time_left()
            self.sent = body
            with self.client.stream(
                "POST", self.url, content=wire.encoded(body), headers=wire.SENT, timeout=left
            ) as response:
                if response.status_code >= 400:
                    response.read()
                    decision = self.failed(turn, tool, wire.failure_of(response))
                    if decision is None:
                        return
                    # A request sent again unstreamed after a 404 stays so through its
                    # retries (probed on 2.1.328: a 529 on it, then SSE errors as 500s).
                    stream = decision and not turn.plain
                    continue
                self.recoveries.answered()
                self.history += self.pending  # they go in before the answer (B-33)
                self.pending.clear()
                reparses = self.profile.reparses_string_input  # B-46
                answer = (
                    wire.read_answer(response) if stream else wire.read_message(response, reparses)
                )
            stream = True
            if self.settled(turn, answer):
                return
            if self.unstreamed:  # the silent retry of a cut stream (B-41)
                self.unstreamed, stream = False, False
            if self.out_of_turns():
                return

    def out_of_turns(self) -> bool:
        """
        ``--max-turns N`` (probed): after the Nth answer, when the run would ask
        again (a call answered, a reminder sent), it ends ``error_max_turns``.
        """
        limit = self.settings.max_turns
        if limit is None or self.talk.answers < limit:
            return False
        self.result({"subtype": "error_max_turns", "terminal_reason": "max_turns"})
        return True

    # -- answers -----------------------------------------------------------------------

    def resume(self, turn: Turn, notice: str) -> bool:
        """Ask the model to go on where its answer was cut; the run goes on."""
        turn.resumed_unseen = not self.profile.shows_recovery_notes  # B-06
        if not turn.resumed_unseen:
            self.event("enforce_reminder", notice)
        self.history.append({"role": "user", "content": words.wrapped(self.profile, notice)})
        return False

    def exhausted(self, turn: Turn) -> None:
        self.spent = True
        limit = turn.allowed if isinstance(turn.allowed, int) else js_number(turn.allowed)
        message = f"Failed to provide valid structured output after {limit} attempts"
        if turn.last_rejection and self.profile.exhaustion_names_last_error:  # B-03
            # The error as the CLI raised it: no tool_use_error tags, one line (B-46).
            error = turn.last_rejection.removeprefix("<tool_use_error>")
            error = error.removesuffix("</tool_use_error>").replace("\n", " ")
            last = words.shortened(error, LAST_ERROR_CUT)
            message += f" \u2014 last StructuredOutput error: {last}"
        self.result({"subtype": "error_max_structured_output_retries", "errors": [message]})

    def record_tools(self, answer: wire.Answer, model: str) -> None:
        """
        After a complete answer's messages, the transcript records the tools it
        was asked with when they are not those it last recorded: after the
        session's first complete answer, and after the first once tool search
        is dropped (B-44, read in 2.1.328's transcripts).  A broken stream's
        part is not a complete answer, nor is one cut at the output limit, nor
        a refusal, which the CLI meets on a path of its own (probed).
        """
        self.answered_by = model  # any answer the transcript keeps names its model (B-45)
        if answer.midstream_error or answer.stop_reason in ("refusal", "max_tokens"):
            return
        searchless = failures.TOOL_SEARCH in self.recoveries.dropped
        if self.recorded is None or self.recorded != searchless:
            self.recorded = searchless
            self.recorded_at = (len(self.history), self.history[-1] if self.history else None)

    def ends_on_record(self) -> bool:
        """
        The run's transcript ends on its record of the tools: nothing went in
        after the answer it followed (no note, no reminder), so a resumed
        turn's prompt joins that answer's results instead of following
        `wire.NO_RESPONSE` (B-44).
        """
        if self.recorded_at is None or not self.history:
            return False
        length, last = self.recorded_at
        return length == len(self.history) and last is self.history[-1]

    def settled(self, turn: Turn, answer: wire.Answer) -> bool:
        """A 200 answer: True when the run has ended, False to ask the model again."""
        if answer.truncated and not answer.midstream_error:
            # The partial message never enters the conversation.  A cut stream is
            # retried CLAUDE_CODE_MAX_RETRIES times with api_retry lines, then once
            # more without one; a cut after that ends the run (B-41, probed with 0-2).
            if turn.cuts + turn.failures < turn.budget:
                # Errors retried for the same request spend the same retries (probed on
                # 2.1.328: a 503 retried, then a cut, gets no api_retry line).
                turn.cuts += 1
                attempt = turn.cuts + turn.failures
                delay = self.back_off(attempt, None)
                self.event("api_retry", {"attempt": attempt, "status": None, "delay_ms": delay})
                return False
            if not turn.cut_unseen:
                # Sent without streaming: an SSE error in its answer comes as the API's
                # plain error (probed on 2.1.328, issue 24).
                turn.cut_unseen = self.unstreamed = True
                return False
            self.connection_lost()
            return True
        if self.taken(turn, answer):
            return True
        if turn.rejected + turn.retracted >= turn.allowed and not turn.resumed_unseen:
            # The limit is checked again before the next request, after the reminder or
            # the results went in: a limit of zero or less ends the run at the first
            # answer without an object, whatever it was (probed); releases before
            # 2.1.269 skip it after a recovery note they do not show (B-06).
            self.exhausted(turn)
            return True
        return False

    def taken(self, turn: Turn, answer: wire.Answer) -> bool:
        """A complete answer shown and answered: True when the run has ended."""
        turn.failures = turn.overloads = turn.cascade = 0
        turn.plain = False  # a 404 after an answer is sent again unstreamed too (probed)
        turn.resumed_unseen = False
        self.talk.answers += 1
        mark = len(self.history)
        taking = self.answered(turn, answer)
        outcome = taking.outcome
        self.record_tools(answer, turn.model)
        if taking.accepted is not None:
            self.accepted = taking.accepted
        if self.talk.answers == 1 and self.profile.billing_notice:
            # B-12: the binary prints it while the first answer streams; its place among
            # the lines depends on timing, here it follows the first answer's lines.
            text = words.BILLING_NOTICE.format(gateway=self.settings.gateway)
            self.event("notice", {"text": text, "level": "warning"})
        if answer.stop_reason == "refusal" and outcome != "exhausted":
            return self.refused(turn, answer, outcome, mark)
        if answer.stop_reason == "refusal" and self.spent_refusal(turn):
            # The call that spent the attempts came with a refusal: its line comes first,
            # then the results, then the exhaustion, no refusal message (probed, B-36).
            refusal = {"message_id": answer.message_id, "model": turn.model, "message": False}
            self.event("refusal", {**refusal, "results": self.held})
            self.held = []
        self.release()
        if outcome == "exhausted":
            self.exhausted(turn)
            return True
        cut_prose = outcome == "prose" and (
            answer.midstream_error or answer.stop_reason == "max_tokens"
        )
        if not _unseen(answer):
            # The one nudge is per stretch of answers with nothing to show: an answer
            # with something lifts it (probed on 2.1.328: empty, call, empty nudged twice).
            turn.nudged = False
        nudged = not turn.nudged and _unseen(answer) and not self.talk.called_structured_output()
        if not (cut_prose or nudged):
            # The resumes counted are those in a row (probed, B-42); an empty answer's
            # nudge between them does not break the row (probed on 2.1.328, issue 24).
            turn.resumes = turn.cut_offs = 0
        if answer.midstream_error and outcome == "prose":
            resumed = turn.resumes + turn.cut_offs  # one count for both kinds (probed, B-42)
            if resumed < MIDSTREAM_RESUMES and self.profile.resumes_broken_prose:  # B-22
                turn.resumes += 1  # the model is asked to pick up where the stream broke
                return self.resume(turn, data.CUT_OFF_NOTICE)
            self.event("api_error_message")
            self.unanswered = True  # the stream broke: the turn ends as failed (B-40)
            self.result({"is_error": True})
            return True
        if answer.stop_reason == "max_tokens" and outcome == "prose":
            if turn.resumes + turn.cut_offs < MIDSTREAM_RESUMES:  # B-42
                turn.cut_offs += 1  # likewise after the output token limit
                return self.resume(turn, data.MAX_TOKENS_NOTICE)
            extra = {"api_error": "max_output_tokens", "api_error_params": {"cut": "output_limit"}}
            text = words.max_tokens_error(self.profile, self.output_limit(turn.model))  # B-08
            message = {"text": text, "error": "max_output_tokens", "extra": extra}
            self.event("api_error_message", message)
            self.result({"is_error": True})
            return True
        if nudged:
            turn.nudged = True  # nothing to show: one nudge before the prose rules
            self.talk.truncate(mark)  # its thinking, if any, is not sent back (probed)
            self.event("enforce_reminder", data.NO_OUTPUT_NOTICE)
            # Joined on the wire to results or notes before it (probed).
            self.talk.note(words.wrapped(self.profile, data.NO_OUTPUT_NOTICE))  # B-15
            return False
        if outcome == "accepted":
            fields: dict[str, Any] = {}
            if answer.midstream_error:
                self.event("api_error_message")
                self.unanswered = True  # the stream broke: the turn ends as failed (B-40)
                fields.update(_AFTER_CALL.get(self.profile.midstream_after_call, {}))  # B-11
            if taking.text_after is not None:
                fields["result"] = taking.text_after  # prose after the call is the result
            elif answer.text_after_call and not answer.text_after_call.strip():
                # Blank prose after the call is never shown, yet it is the result (probed).
                fields["result"] = answer.text_after_call
            if answer.stop_reason is not None and not answer.midstream_error:
                fields["stop_reason"] = answer.stop_reason
            self.result(fields)
            return True
        if outcome in ("rejected", "working"):
            if answer.midstream_error:
                self.event("api_error_message")  # shown only: the calls before the break stand
            return False
        if not turn.reminded:
            turn.reminded = True
            self.event("enforce_reminder")
            self.talk.note(data.ENFORCE_REMINDER)  # after results: joined to them on the wire
            return False
        # A second prose stop ends the turn; if its only objects were retracted, in error (LOOP-13).
        if turn.retracted:
            self.exhausted(turn)
        else:  # the answer's last text is the result, even a blank one the CLI did not show
            # The last answer's text, empty when it had none, not an earlier answer's (probed).
            ending: dict[str, Any] = {"result": answer.last_text or ""}
            if answer.stop_reason is not None and not answer.midstream_error:
                ending["stop_reason"] = answer.stop_reason  # the last answer's, shown or not
            self.result(ending)
        return True

    def output_limit(self, model: str) -> int | str:
        """The output token limit the CLI names: the setting's, else the model's."""
        setting = validator.env_int(self.settings.env.get("CLAUDE_CODE_MAX_OUTPUT_TOKENS"))
        if setting is None or setting <= 0:
            return self.profile.output_ceiling(model)
        return setting if isinstance(setting, int) else js_number(setting)

    def answered(self, turn: Turn, answer: wire.Answer) -> Taking:
        """Show the answer's blocks and run its calls (`answer`); the history grows by it."""

        def spent(rejections: int) -> bool:
            return turn.rejected + rejections + turn.retracted >= turn.allowed

        def shown(name: str, arg: object = None) -> None:
            if name == "tool_result" and answer.stop_reason == "refusal":
                self.held.append(arg)  # its place follows how the refusal is met (`refused`)
            else:
                self.event(name, arg)

        taking = Taking(
            self.settings.schema_text,
            self.bench,
            shown,
            spent,
            self.judge,
            sends_empty_text=self.profile.sends_empty_text,  # B-37
        )
        taking.take(answer.blocks)
        self.event("answer_end")
        turn.rejected += taking.rejections
        turn.last_rejection = taking.last_rejection or turn.last_rejection
        self.denials += taking.denials
        self.history += taking.messages()
        turn.quiet = 0 if taking.spoke else turn.quiet + bool(taking.calls)
        found = models.card(turn.model, self.profile.known_models())
        told = self.profile.quiet_notice and found is not None and found.quiet  # B-25
        quiet = turn.quiet == QUIET_ANSWERS and told
        if quiet and not turn.nudged_quiet and taking.outcome != "accepted":
            turn.nudged_quiet = True  # once: the model is asked to keep the user posted
            self.history.append({"role": "system", "content": QUIET_NOTICE})
        return taking

    def judge(self, schema_text: str, raw: str) -> validator.Verdict:
        """A StructuredOutput call, with the release's checks (B-02, B-04, B-16, B-38, B-46)."""
        profile = self.profile
        error = words.unparsed_error(TOOL_NAME, raw)
        if error is not None:  # an input the CLI could not read is not judged (B-46)
            value = json.loads(raw)
            return validator.Verdict(error, value, value)
        if profile.checks_input_type:
            value = validator.normalized(raw)
            error = words.input_type_error(profile, value)
            if error is not None:  # refused before the schema is consulted
                return validator.Verdict(error, value, value)
        return validator.check(
            schema_text,
            raw,
            params=profile.feedback_params,
            precision=profile.multiple_of_precision,
            annotated=profile.converts_annotated,
        )


def _unseen(answer: wire.Answer) -> bool:
    """
    An answer that ended its turn with nothing for the user: no text (blank
    text is not sent) and no call, thinking at most; the CLI nudges it once in a row.
    """
    return not any(map(wire.shown, answer.blocks)) and answer.stop_reason in _TURN_ENDS


#: The stop reasons of an answer that ends its turn (the nudge looks at no other).
_TURN_ENDS = frozenset({"end_turn", "stop_sequence"})
#: How a run ends after an SSE error that followed a complete, accepted call (B-11).
_AFTER_CALL: dict[str, dict[str, object]] = {
    "error": {
        "is_error": True,
        "result": data.MIDSTREAM_ERROR,
        "stop_reason": "stop_sequence",
        "terminal_reason": "completed",
    },
    "success_early": {"stop_reason": "stop_sequence"},
}
