"""
What the Claude Code model does when an answer does not come or is refused.

The HTTP errors (`Recovery.failed`: resent, retried, handed to a fallback
model, summarised, or the end, in the CLI's words for each) and the
``refusal`` stop (`Recovery.refused`: continued once, retried on an armed
fallback, or the end).  Split from `harness.systems.claude.loop`, whose
`Loop` takes these as a base: the rules are `failures`'; this module
applies them to the loop's state, which it names below.
"""

from __future__ import annotations

from typing import Any

from harness import net
from harness.systems.claude import compaction, failures, wire, words
from harness.systems.claude.notes import Conversation, card_note
from harness.systems.claude.profile import ClaudeProfile
from harness.systems.claude.turn import Settings, Turn
from providers_fake.api import realcli
from providers_fake.cli.claude import data
from providers_fake.cli.claude.render import ClaudeRenderer

#: The wording of a Foundry deployment without structured outputs (LOOP-10).
FOUNDRY_WORDING = "structured_outputs not supported"


class Recovery:
    """The loop's error and refusal paths; `harness.systems.claude.loop.Loop` is the whole."""

    client: net.Client
    url: str
    renderer: ClaudeRenderer
    settings: Settings
    talk: Conversation
    history: list[dict[str, Any]]
    pending: list[dict[str, Any]]
    recoveries: failures.Recoveries
    notices: list[str]
    held: list[object]
    sent: dict[str, Any]
    waited: float
    unanswered: bool
    foundry_gap: bool
    first_exchange: int
    accepted: tuple[object] | None
    profile: ClaudeProfile
    denials: list[dict[str, Any]]

    def event(self, name: str, arg: object = None) -> None:
        if name == "api_error_message" or (name == "refusal" and _words(arg)):
            # The CLI keeps its own error message as an answer row of the transcript,
            # which the task tools' reminder counts (B-47, probed on 2.1.328).
            self.talk.error_rows += 1
        self.renderer.event(name, arg)

    def result(self, fields: dict[str, Any]) -> None:
        """The run's result record, with the calls the permission rules refused."""
        extra = {**fields.pop("extra", {}), "permission_denials": list(self.denials)}
        self.event("result", {**fields, "extra": extra})

    def time_left(self) -> float | None:
        """
        Seconds an answer may be held back before the caller kills the run;
        raises once the run is over its time.  As the harness times a real
        binary (`realcli.OWN_TIME`): the timeout is for answers held back, and
        the CLI's own time, its back-offs here, is bounded on top of it.
        """
        timeout = self.settings.timeout
        if timeout is None:
            return None
        own = timeout + realcli.OWN_TIME - self.waited
        if own <= 0:
            raise net.ReadTimeout("the caller's timeout passed")
        return min(timeout, own)

    # -- HTTP errors -------------------------------------------------------------------

    def failed(self, turn: Turn, tool: dict[str, object], failure: failures.Failure) -> bool | None:
        """
        An HTTP error: None when the run has ended, else whether the request
        is sent again streaming (False: once more without streaming, after a 404).
        """
        status = failure.status
        if failures.too_long(failure) and not (self.history or self.talk.resumed):  # B-39
            turn.too_long += 1
            if failure.status != 413 and turn.too_long < self.profile.too_long_requests:
                return True  # sent once more up to 2.1.281, never a 413 (probed)
            ending = failures.too_long_ending(failure, self.first_exchange)
            self.ended(failure, turn, ending)
            return None
        if status == 413 and self.talk.groups() == 1:
            # Later in a session the CLI tries to compact the conversation first, and
            # gives up at once when it holds a single answer (probed on 2.1.328); with
            # more it summarises them in requests of its own (`summarise`, B-48).
            self.event("compact_failed", {"error": "too_few_groups"})
        elif status == 413 and self.talk.groups() > 1 and self.profile.summarises:
            self.summarise()
        if FOUNDRY_WORDING in failure.message and tool.get("strict") is True:
            self.foundry_gap = True  # remembered; the retry goes without strict (LOOP-10)
            return True
        if status in failures.CASCADE and self.recoveries.ladder:
            step = self.recoveries.next()  # B-33
            if step is None:
                return self.last_resort(failure, turn)
            if step == failures.TOOL_SEARCH:
                self.pending.append(card_note(failures.TOOL_SEARCH_GONE))
            return True
        if status in failures.CASCADE:
            if FOUNDRY_WORDING in failure.message:  # B-13
                limit = len(self.profile.bad_request_retries)
            else:  # B-24
                limit = dict(self.profile.cascade_requests)[status] - 1
            if turn.cascade < limit:
                turn.cascade += 1  # sent again with fewer beta features, no api_retry
                return True
            self.ended(failure, turn)
            return None
        if status == 404 and not turn.plain:
            if turn.fallback is not None and (turn.failures or turn.cuts):
                # On a retry (after a retried error or a cut stream) an armed fallback
                # takes over at once, with no resend unstreamed (probed on 2.1.328).
                return self.fall_back(turn, turn.fallback)
            turn.plain = True
            return False
        if failures.server_error(status) and turn.fallback is not None:
            return self.fall_back(turn, turn.fallback)  # at once, before any retry (probed)
        if status == 529 and (turn.fallback is not None or failures.counts_overloads(turn.model)):
            turn.overloads += 1
            if turn.overloads >= failures.OVERLOADS and turn.fallback is not None:
                return self.fall_back(turn, turn.fallback)
            if turn.overloads >= failures.OVERLOADS:
                self.overloaded(failure)
                return None
        budget = turn.budget - turn.cuts
        if failures.retried(failure):
            if turn.failures < budget:
                turn.failures += 1
                retry = {"attempt": turn.failures, "status": status, "max_retries": budget}
                delay = self.back_off(turn.failures, failure.retry_after)
                kind = failures.retry_kind(status)
                self.event("api_retry", {**retry, "error": kind, "delay_ms": delay})
                return True
            self.ended(failure, turn)  # retries spent: no fallback (probed with a 408)
            return None
        return self.last_resort(failure, turn)

    def summarise(self) -> None:
        """
        The summary requests of a compaction after a 413 (B-48): each that gets a
        413 too is sent once more, then the compaction has failed and the 413
        ends the run.  A summary the model gives is not modelled: the run ends
        on the 413 as before.
        """
        caching = not wire.env_on(self.settings.env.get("DISABLE_PROMPT_CACHING"))
        messages = compaction.summary_messages(list(self.sent["messages"]), caching)
        if messages is None:
            return
        body = wire.encoded({**self.sent, "messages": messages})
        for _ in range(compaction.SUMMARY_REQUESTS):
            left = self.time_left()
            with self.client.stream(
                "POST", self.url, content=body, headers=wire.SENT, timeout=left
            ) as response:
                response.read()
                if response.status_code != 413:
                    return
        self.event("compact_failed", {"error": compaction.UNSTRIPPABLE})

    def last_resort(self, failure: failures.Failure, turn: Turn) -> bool | None:
        """
        An error the CLI does not send again: an armed fallback model is tried,
        unless the status is one the fallback cannot help with (probed and read
        in the binary); else the run ends.
        """
        status = failure.status
        # A 404 is one of them only while streaming: the request sent again
        # without streaming (after a 404) hands over on a second one.
        excluded = status in failures.NO_LAST_RESORT and not (status == 404 and turn.plain)
        if turn.fallback is not None and not excluded:
            return self.fall_back(turn, turn.fallback)
        self.ended(failure, turn)
        return None

    def fall_back(self, turn: Turn, target: str) -> bool:
        """
        The turn goes on with ``--fallback-model``, once: a new model call, whose
        recoveries of a 400 start over and whose own overloads count afresh.
        """
        self.event("model_fallback", {"from": turn.model, "to": target})
        # As for ANTHROPIC_MODEL (B-29), once the model is used: 2.1.235 names
        # my-custom-model, not claude-fable-5-1 (probed).
        aliases, known = dict(self.profile.model_aliases), self.profile.known_models()
        unknown = data.unrecognized_model(target, aliases, known)
        if unknown is not None:
            self.notices.append(unknown)
        turn.model, turn.effort, turn.fallback = target, "high", None
        turn.overloads = turn.failures = turn.cascade = 0
        turn.plain = False
        self.recoveries.restart()
        self.pending.clear()  # the call's notes go with it
        for message in self.history:  # thinking is signed by the model that wrote it (probed)
            if message["role"] == "assistant" and isinstance(message["content"], list):
                message["content"] = [b for b in message["content"] if b.get("type") != "thinking"]
        return True

    def back_off(self, attempt: int, retry_after: str | None) -> int:
        """The wait before a retry, in ms (counted towards the CLI's own time)."""
        base = failures.delay_base_ms(attempt, retry_after)
        delay = base + self.renderer.ids.below(base // 4 + 1)
        self.waited += delay / 1000
        self.time_left()  # killed while it waits, once its own time is up
        return delay

    def ended(
        self, failure: failures.Failure, turn: Turn, ending: failures.Ending | None = None
    ) -> None:
        """The run ends on an HTTP error, in the CLI's words for its status (or ``ending``)."""
        self.unanswered = True
        named = turn.model
        if self.settings.long_context(turn.model):
            named += "[1m]"  # the 1M-context variant was asked for (B-07, probed on 2.1.235)
        ending = ending or failures.ending(failure, self.settings.gateway, named)
        message = {
            "text": ending.text,
            "error": ending.error,
            "extra": failures.message_fields(failure),
        }
        self.event("api_error_message", message)
        self.result(
            {
                "is_error": True,
                "api_error_status": failure.status,
                "api_error_type": failure.kind,
                "terminal_reason": ending.terminal_reason,
            }
        )

    def connection_lost(self) -> None:
        """A stream cut again after the retries: the run ends in the CLI's words (B-41)."""
        self.unanswered = True
        extra = {"api_error": "connection_failed"}
        message = {"text": words.CONNECTION_LOST, "error": "server_error", "extra": extra}
        self.event("api_error_message", message)
        fields = {"is_error": True, "api_error_status": None, "terminal_reason": "api_error"}
        self.result({**fields, "extra": extra})

    def overloaded(self, failure: failures.Failure) -> None:
        """Three 529s and no fallback model: the run ends with the CLI's own words."""
        self.unanswered = True
        text = data.REPEATED_OVERLOADS.format(gateway=self.settings.gateway)
        extra = failures.message_fields(failure)
        self.event("api_error_message", {"text": text, "error": "server_error", "extra": extra})
        self.result({"is_error": True, "api_error_status": 529, "api_error_type": failure.kind})

    # -- refusals ----------------------------------------------------------------------

    def refused(self, turn: Turn, answer: wire.Answer, outcome: str, mark: int) -> bool:
        """A ``refusal`` stop: continued once, retried on an armed fallback, or the end."""
        target = self.settings.refusal_fallback
        once = self.profile.refusal_continues  # B-09
        if once and not turn.continued and outcome != "accepted" and target is None:
            self.release()
            turn.continued = True  # once per turn, with a note to the model
            notice = self.profile.refusal_notice
            self.event("refusal_continue", {"message_id": answer.message_id, "notice": notice})
            self.talk.note(words.wrapped(self.profile, data.REFUSAL_NOTICE))
            return False
        if target is None or target == turn.model:
            long = self.settings.long_context(turn.model)
            text = words.refusal_text(self.profile, turn.model, answer.message_id, long)
            fields: dict[str, object] = {"message_id": answer.message_id, "model": turn.model}
            fields["text"] = text
            if outcome == "rejected" and self.profile.refusal_line_first:
                # The rejected calls' results follow the refusal line (B-36; an accepted
                # call's result comes before it).
                fields["results"], self.held = self.held, []
            self.release()
            self.event("refusal", fields)
            if outcome == "rejected":
                # A refusal that ends the turn still answers the call's tool error, and
                # the loop goes on as after any rejection (probed on 2.1.235, and on
                # 2.1.328 once its one continuation is spent); the refusal is then no
                # longer the run's end, so the renderer must not end on it.
                state = self.renderer.state
                state.refused, state.synthetic = None, False
                return False
            # Its message ends the transcript, as a failed request's does: the next
            # prompt of the session joins what came before (probed on 2.1.328, B-40).
            self.unanswered = True
            ended: dict[str, Any] = {"refused": True}
            if self.profile.refusal_keeps_object and self.accepted is not None:  # B-10
                ended["structured_output"] = self.accepted[0]
            self.result(ended)
            return True
        self.release()
        turn.retracted += self.retract(mark, turn.model, target)
        turn.model = target
        return False

    def spent_refusal(self, turn: Turn) -> bool:
        """Whether a refusal that spends the attempts is shown as one (B-36)."""
        continued = turn.continued or not self.profile.refusal_continues
        plain = self.settings.refusal_fallback is None
        return continued and plain and self.profile.refusal_line_first

    def release(self) -> None:
        """Show the tool results a refusal's answer held back, in their order."""
        held, self.held = self.held, []
        for fields in held:
            self.event("tool_result", fields)

    def retract(self, mark: int, model: str, target: str) -> int:
        """
        Tombstone the refused answer: its messages leave the conversation, its
        StructuredOutput calls still count as attempts, its object is withdrawn.
        """
        gone = self.history[mark:]
        self.talk.truncate(mark)
        self.event("refusal_fallback", {"from": model, "to": target})
        return wire.calls(gone)


def _words(arg: object) -> bool:
    """Whether a refusal's line carries the CLI's message (not the quiet kind, B-36)."""
    return isinstance(arg, dict) and "text" in arg
