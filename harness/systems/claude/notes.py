"""
The conversation Claude Code keeps with the model, and the notes it adds to it.

Besides the answers and tool results, the CLI writes notes of its own into
the conversation: the tokens left and the model's own name after tool results
(B-14, B-34, placed as the model's card says, `models`), the enforce reminder,
the nudge and the refusal's note.  Where a note goes, joined to a message or
one of its own, decides what the model is sent (`wire.joined` merges user
messages in a row) and whether a later note follows it; this module holds
those rules, the loop (`harness.systems.claude.loop`) says when.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from harness.systems.claude import models, wire, words
from harness.systems.claude.profile import ClaudeProfile
from providers_fake.cli.claude import data


@dataclass
class Conversation:
    """This turn's messages after the prompt, and what the notes in them depend on."""

    profile: ClaudeProfile
    #: The session's earlier turns (a ``--resume``), sent before this turn's prompt.
    resumed: list[dict[str, Any]] = field(default_factory=list)
    messages: list[dict[str, Any]] = field(default_factory=list)
    #: Complete answers this run (what the token notes count, B-14).
    answers: int = 0
    #: The token notes' figure, fixed by the first.
    tokens_left: int | None = None
    #: The conversation's length when notes were last added after it (B-14, B-34).
    noted: int | None = None
    #: The model the run was started with or last told it is (B-34).
    announced: str = ""

    def token_note(self, model: str) -> None:
        """
        Before a request that follows tool results (or a resumed turn's prompt),
        the notes the CLI adds for ``model``: the tokens left, on releases before
        2.1.314 for every model and from then on for the models whose card says
        so (B-14), its figure fixed by the first note (the budget less the last
        answer's tokens); and once the run has fallen back, which model this is
        (B-34).  Where they go is the model's (`models`): in the last tool
        result or a system message of their own.
        """
        notes = [m for m in self.messages if m["role"] != "system"]  # the loop's own notes aside
        last = notes[-1] if notes else None
        after_prompt = last is None and bool(self.resumed)
        results = last is not None and last["role"] == "user" and wire.has_tool_results(last)
        if not (after_prompt or results) or self.noted == len(self.messages):
            return  # nothing new to note, or the results already have theirs
        found = models.card(model, self.profile.known_models())
        texts = []
        if self.profile.announces_model and model != self.announced:
            texts.append(models.announcement(model, found))
            self.announced = model
        if self.profile.token_notes or (found is not None and found.tokens):
            if self.tokens_left is None:
                spent = data.INPUT_TOKENS + data.OUTPUT_TOKENS if self.answers else 0
                self.tokens_left = words.TOKEN_BUDGET - spent
            texts.append(words.token_text(self.tokens_left))
        if not texts:
            return
        place, wrapped = (found.place, found.wrapped) if found else (models.IN_SYSTEM, False)
        if place == models.IN_RESULT and last is not None and results:
            result = [b for b in last["content"] if b.get("type") == "tool_result"][-1]
            if isinstance(result.get("content"), str):
                result["content"] += "".join(f"\n\n{words.reminder(t)}" for t in texts)
                self.noted = len(self.messages)
                return
        text = "\n\n".join(words.reminder(t) if wrapped else t for t in texts)
        end = self.messages[-1] if self.messages else None
        if end is not None and end["role"] == "system" and isinstance(end["content"], str):
            # After a note of the loop's (a cd's, B-26) it joins that system message
            # (probed on 2.1.268: '# Environment update ...\n\n<total_tokens>...').
            end["content"] += "\n\n" + text
        else:
            self.messages.append({"role": "system", "content": text})
        self.noted = len(self.messages)

    def called_structured_output(self) -> bool:
        """
        Whether the model has called StructuredOutput since the prompt: an answer
        with nothing to show then gets no nudge (probed; read in the binary, which
        looks back to the last user message that is neither meta nor tool results).
        """
        return wire.calls(self.messages) > 0

    def after_results(self) -> bool:
        """
        Whether the conversation ends on tool results: the enforce reminder after
        an empty answer is then joined to the results (probed).  The
        token note releases before 2.1.314 add after results (B-14) does not count:
        2.1.235 joins the reminder to the results before it (probed).
        """
        last = self.last_user(past_token_note=True)
        if last is None:
            return False
        content = last["content"]
        return isinstance(content, list) and any(b.get("type") == "tool_result" for b in content)

    def last_user(self, *, past_token_note: bool = False) -> dict[str, Any] | None:
        """The conversation's last message if it is the user's, maybe before a token note."""
        end = len(self.messages)
        if past_token_note and end and end == self.noted and self.messages[-1]["role"] == "system":
            end -= 1
        return self.messages[end - 1] if end and self.messages[end - 1]["role"] == "user" else None

    def note(self, text: str, *, past_token_note: bool = False) -> None:
        """
        A meta text for the model, joined to the last user message when there is
        one (the enforce reminder after results: the one before a token note).
        """
        last = self.last_user(past_token_note=past_token_note)
        if last is not None and self.messages[-1] is not last:
            # Before a token note, into the results it follows (2.1.235, probed).
            content = last["content"]
            if isinstance(content, str):
                content = last["content"] = [{"type": "text", "text": content}]
            content.append({"type": "text", "text": text})
        else:
            # A message of its own, which the wire joins to the user messages before it
            # (`wire.joined`): after a text, with a line break at the seam.
            self.messages.append({"role": "user", "content": text})
