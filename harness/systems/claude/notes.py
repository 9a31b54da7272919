"""
The conversation Claude Code keeps with the model, and the notes it adds to it.

Besides the answers and tool results, the CLI writes notes of its own into
the conversation: the tokens left and the model's own name after tool results
(B-14, B-34, placed as the model's card says, `models`), the reminder that the
task tools have not been used for a while (B-47), the enforce reminder, the
nudge and the refusal's note.  Where a note goes, joined to a message or
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

#: The key that marks a system note of the loop's own placed as the model's card says
#: (`Conversation.placed`); it never goes on the wire.
CARD_PLACED = "card_placed"


def card_note(text: str) -> dict[str, Any]:
    """A note of the loop's own, kept in the conversation, placed per model (`placed`)."""
    return {"role": "system", "content": text, CARD_PLACED: True}


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
    #: The notes attached to results, by the results' index (-1: after the prompt).
    attached: dict[int, list[str]] = field(default_factory=dict)
    #: The session's answer rows (`rows`) when this run sent the task tools' reminder.
    reminded: int | None = None
    #: Rows of the CLI's own error messages (a refusal's, an API error's), which the
    #: transcript keeps as answers but the wire never carries: earlier turns' and this
    #: run's (B-47).
    error_rows: int = 0

    def token_note(self, model: str) -> None:
        """
        Before a request that follows new tool results (or a resumed turn's
        prompt), the notes the CLI attaches to them for ``model``: the tokens
        left, on releases before 2.1.314 for every model and from then on for the
        models whose card says so (B-14), its figure fixed by the first note (the
        budget less the last answer's tokens); and once the run has fallen back,
        which model this is (B-34).  Results get their notes when first sent: a
        model the run falls back to later hears nothing new about them.
        """
        notes = [m for m in self.messages if m["role"] != "system"]  # the loop's own notes aside
        last = notes[-1] if notes else None
        after_prompt = last is None and bool(self.resumed)
        results = last is not None and last["role"] == "user" and wire.has_tool_results(last)
        if not (after_prompt or results) or self.noted == len(self.messages):
            return  # nothing new to note, or the results already have theirs
        self.noted = len(self.messages)
        found = models.card(model, self.profile.known_models())
        texts = []
        tasks = found is not None and found.tasks and self.profile.task_reminder
        if tasks and self.task_reminder_due():
            texts.append(TASK_REMINDER)  # before the others (probed on 2.1.328, B-47)
            self.reminded = self.rows()
        if self.profile.announces_model and model != self.announced:
            texts.append(models.announcement(model, found))
            self.announced = model
        if self.profile.token_notes or (found is not None and found.tokens):
            if self.tokens_left is None:
                spent = data.INPUT_TOKENS + data.OUTPUT_TOKENS if self.answers else 0
                self.tokens_left = words.TOKEN_BUDGET - spent
            texts.append(words.token_text(self.tokens_left))
        if texts:
            at = -1 if last is None else max(i for i, m in enumerate(self.messages) if m is last)
            self.attached[at] = texts

    def rows(self) -> int:
        """The rows the CLI's transcript holds for the session's answers so far (`_rows`)."""
        return sum(_rows(m) for m in (*self.resumed, *self.messages)) + self.error_rows

    def task_reminder_due(self) -> bool:
        """
        Whether the task tools' reminder goes with this request's notes to a
        model given those tools (B-47, read in 2.1.328 and probed): the
        answers' transcript rows
        since the last call of TaskCreate or TaskUpdate, and since the last
        such reminder, are `TASK_REMINDER_ROWS` or more each.
        """
        since_use = since_reminder = 0
        used = reminded = False
        if self.reminded is not None:
            since_reminder, reminded = self.rows() - self.reminded, True
        for message in reversed([*self.resumed, *self.messages]):
            if message["role"] == "assistant":
                rows = _rows(message)
                used = used or _uses(message, TASK_TOOLS)
                since_use += 0 if used else rows
                since_reminder += 0 if reminded else rows
            elif TASK_REMINDER_START in str(message["content"]):
                reminded = True
            if used and reminded:
                break
        # Where the CLI's error rows stood among the answers is not kept: they count
        # as after the last use and reminder found in the messages.
        since_use += 0 if used else self.error_rows
        since_reminder += 0 if reminded else self.error_rows
        return min(since_use, since_reminder) >= TASK_REMINDER_ROWS

    def rendered(self, model: str) -> list[dict[str, Any]]:
        """
        The messages as they go to ``model``, the notes placed as its card says
        (`models`): in the last tool result of the results they belong to, or in
        a system message after those results and the user messages joined to them
        (joined to a system note of the loop's own there: a cd's, B-26, probed on
        2.1.268 and 2.1.280).  A note is placed anew for each request: after a
        fallback the notes written before go where the new model takes them
        (probed on 2.1.235).
        """
        found = models.card(model, self.profile.known_models())
        place, wrapped = (found.place, found.wrapped) if found else (models.IN_SYSTEM, False)
        out: list[dict[str, Any]] = []
        due: list[str] = list(self.attached.get(-1, ()))
        if due and place == models.IN_RESULT:
            # After a resumed turn's prompt: in the earlier turn's last result, which
            # the prompt joins on the wire, else before the prompt (`wire.NOTE`, probed
            # on 2.1.328).
            out += [{"role": wire.NOTE, "content": words.reminder(t)} for t in due]
            due = []

        def said(texts: list[str]) -> str:
            return "\n\n".join(words.reminder(t) if wrapped else t for t in texts)

        for i, message in enumerate(self.messages):
            if CARD_PLACED in message:
                out.append(self.placed(message["content"], model))
                continue
            if due and message["role"] != "user":
                text, due = said(due), []
                if message["role"] == "system" and isinstance(message["content"], str):
                    out.append({**message, "content": f"{message['content']}\n\n{text}"})
                    continue
                out.append({"role": "system", "content": text})
            texts = self.attached.get(i, [])
            noted = _in_result(message, texts) if texts and place == models.IN_RESULT else None
            out.append(message if noted is None else noted)
            due += texts if noted is None else []
        if due:
            out.append({"role": "system", "content": said(due)})
        return out

    def placed(self, text: str, model: str) -> dict[str, Any]:
        """
        A note of the loop's own that goes where ``model``'s card puts notes
        (ToolSearch's, B-33): in the last tool result before it, wrapped, for
        the models that take notes there (probed on 2.1.328 with Sonnet 4.5
        as the model and as the fallback); else a system message.
        """
        found = models.card(model, self.profile.known_models())
        if found is not None and found.place == models.IN_RESULT:
            return {"role": wire.NOTE, "content": words.reminder(text)}
        return {"role": "system", "content": text}

    def groups(self) -> int:
        """
        The rounds of the session so far as the CLI's compaction counts them:
        its assistant messages, the one that closes an earlier turn included
        (probed on 2.1.328: a turn ended by the spent attempts and closed with
        `wire.NO_RESPONSE` makes two).
        """
        return sum(m["role"] == "assistant" for m in (*self.resumed, *self.messages))

    def called_structured_output(self) -> bool:
        """
        Whether the model has called StructuredOutput since the prompt: an answer
        with nothing to show then gets no nudge (probed; read in the binary, which
        looks back to the last user message that is neither meta nor tool results).
        """
        return wire.calls(self.messages) > 0

    def truncate(self, mark: int) -> None:
        """Drop the messages from ``mark`` on, and the notes attached to them."""
        del self.messages[mark:]
        self.attached = {at: texts for at, texts in self.attached.items() if at < mark}
        if self.noted is not None and self.noted > mark:
            self.noted = None

    def note(self, text: str) -> None:
        """
        A meta text for the model: a user message of its own, which the wire
        joins to the user messages before it (`wire.joined`: after a text, with
        a line break at the seam), before any system note of theirs.
        """
        self.messages.append({"role": "user", "content": text})


def _in_result(message: dict[str, Any], texts: list[str]) -> dict[str, Any] | None:
    """The message with the notes in its last tool result, if it has one with text."""
    content = message.get("content")
    if not isinstance(content, list):
        return None
    blocks = [b for b in content if b.get("type") == "tool_result"]
    if not blocks or not isinstance(blocks[-1].get("content"), str):
        return None
    last = blocks[-1]
    added = "".join(f"\n\n{words.reminder(t)}" for t in texts)
    noted = {**last, "content": last["content"] + added}
    return {**message, "content": [noted if b is last else b for b in content]}


#: The tools whose calls the task tools' reminder waits for (B-47).
TASK_TOOLS = frozenset({"TaskCreate", "TaskUpdate"})
#: Answer rows without them, and since the last reminder, before the reminder (B-47).
TASK_REMINDER_ROWS = 10
#: The reminder, as 2.1.328 writes it when the session has no tasks (B-47).
TASK_REMINDER = (
    "The task tools haven't been used recently. If you're working on tasks that would "
    "benefit from tracking progress, consider using TaskCreate to add new tasks and "
    "TaskUpdate to update task status (set to in_progress when starting, completed when "
    "done). Also consider cleaning up the task list if it has become stale. Only use these "
    "if relevant to the current work. This is just a gentle reminder - ignore if not "
    "applicable.\n"
)
TASK_REMINDER_START = TASK_REMINDER[:40]


def _rows(message: dict[str, Any]) -> int:
    """
    The rows an answer takes in the CLI's transcript: one per block, thinking
    blocks aside (a row of thinking alone is not counted, B-47).
    """
    if message["role"] != "assistant":
        return 0
    content = message["content"]
    if not isinstance(content, list):
        return 1
    return sum(1 for b in content if b.get("type") not in ("thinking", "redacted_thinking"))


def _uses(message: dict[str, Any], names: frozenset[str]) -> bool:
    content = message["content"]
    return isinstance(content, list) and any(
        b.get("type") == "tool_use" and b.get("name") in names for b in content
    )
