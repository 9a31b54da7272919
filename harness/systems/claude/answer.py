"""
One answer of the model, as Claude Code 2.1.328 takes it in: blocks shown, calls run.

The CLI runs tool calls while the answer streams (probed on the binary,
docs/model-api.md), so what it prints and sends depends on when each call
finishes:

- each block is printed as it completes; a call starts as soon as its block
  is in, if it may: a read-only call (StructuredOutput, a read-only command,
  a call refused at once) runs beside the others, any other call waits for
  those before it and holds up those after it;
- a StructuredOutput call, a refusal and an error finish at once, so their
  results come before those of commands that were started earlier; commands
  finish after the answer has streamed, in the order they started;
- a rejected StructuredOutput call that spends the last attempt ends the run
  there, unless the answer already delivered an object: later blocks are not
  shown and later commands do not run;
- the answer goes back to the model with its prose first and its calls
  after, and the results in the order they finished.

`Taking` holds that state for one answer; the loop (`loop`) decides what
happens next from its outcome.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from harness.systems.claude import validator, wire
from harness.systems.claude.tools import Bench, Call, Pending, Result, with_defaults
from providers_fake.cli.claude import data

if TYPE_CHECKING:
    from collections.abc import Callable

TOOL_NAME = wire.TOOL_NAME


@dataclass
class _Item:
    """A call on its way: done at once (``result``) or a command still to run."""

    call: Call
    concurrent: bool
    result: Result | None = None
    pending: Pending | None = None
    #: StructuredOutput: the input as prepared, as validated, and the verdict's error.
    prepared: object = None
    validated: object = None
    error: str | None = None


#: An empty text block as a release that sends it back sends it (B-37).
_EMPTY_TEXT = {"type": "text", "text": ""}


@dataclass
class Taking:
    """One answer's calls and what came of them."""

    schema_text: str
    bench: Bench
    event: Callable[[str, object], None]
    #: Whether a rejection now spends the last attempt (given this answer's rejections).
    spent: Callable[[int], bool]
    #: How a StructuredOutput call is judged (schema text, input text): the release's checks.
    judge: Callable[[str, str], validator.Verdict] = validator.check
    active: list[_Item] = field(default_factory=list)
    queued: list[_Item] = field(default_factory=list)
    results: list[dict[str, Any]] = field(default_factory=list)
    calls: list[dict[str, Any]] = field(default_factory=list)
    prose: list[dict[str, Any]] = field(default_factory=list)
    denials: list[dict[str, Any]] = field(default_factory=list)
    accepted: tuple[object] | None = None
    #: The answer's last line when it is prose after an accepted call: the result then.
    text_after: str | None = None
    rejections: int = 0
    last_rejection: str | None = None
    ran_other: bool = False
    exhausted: bool = False
    #: Whether the answer showed the user any prose (thinking is not shown).
    spoke: bool = False
    #: Whether an empty text block goes back in the answer's message (B-37).
    sends_empty_text: bool = False

    # -- the stream ----------------------------------------------------------------

    def take(self, blocks: list[dict[str, Any]]) -> None:
        """Show and run the answer's blocks in order; stop where the attempts run out."""
        for block in blocks:
            if self.exhausted:
                return
            kind = block["type"]
            if kind == "thinking":
                self.event("thinking", block)
                kept = {k: block.get(k, "") for k in ("type", "thinking", "signature")}
                self.prose.append(kept)
            elif kind == "text" and block.get(wire.EMPTY):
                if self.sends_empty_text:  # not shown, but sent back in its place
                    self.prose.append({"type": "text", "text": ""})
            elif kind == "text":
                self.event("text", block["text"])
                self.prose.append({"type": "text", "text": block["text"]})
                self.spoke = True
                if self.accepted is not None:
                    self.text_after = block["text"]
            elif kind == "tool_use":
                self._offer(self._call(block))
        while not self.exhausted and (self.active or self.queued):
            if self.active:
                self._finish(self.active.pop(0))
            self._start_queued()

    def _call(self, block: dict[str, Any]) -> _Item:
        name = str(block["name"])
        raw = str(block.get("raw") or json.dumps(block.get("input", {})))
        if name == TOOL_NAME:
            verdict = self.judge(self.schema_text, raw)
            call = Call(str(block["id"]), name, verdict.prepared)
            self.event("tool_use", {"name": name, "input": verdict.prepared, "id": call.id})
            item = _Item(call, True)
            item.prepared, item.validated, item.error = (
                verdict.prepared,
                verdict.validated,
                verdict.error,
            )
        else:
            call = Call(str(block["id"]), name, with_defaults(name, validator.normalized(raw)))
            self.event("tool_use", {"name": name, "input": call.input, "id": call.id})
            started = self.bench.start(call)
            if isinstance(started, Pending):
                item = _Item(call, started.concurrent, pending=started)
            else:
                item = _Item(call, True, result=started)
        self.calls.append({"type": "tool_use", "id": call.id, "name": name, "input": call.input})
        return item

    # -- running them ------------------------------------------------------------

    def _can_start(self, item: _Item) -> bool:
        if any(not other.concurrent for other in self.active):
            return False
        return item.concurrent or not self.active

    def _offer(self, item: _Item) -> None:
        if not self.queued and self._can_start(item):
            self._start(item)
        else:
            self.queued.append(item)

    def _start_queued(self) -> None:
        while self.queued and not self.exhausted and self._can_start(self.queued[0]):
            self._start(self.queued.pop(0))

    def _start(self, item: _Item) -> None:
        if item.pending is not None:
            self.active.append(item)  # a command: it finishes after the instant calls
        else:
            self._finish(item)

    def _finish(self, item: _Item) -> None:
        if item.call.name == TOOL_NAME:
            self._judged(item)
            return
        result = item.result or self.bench.run(item.pending)  # type: ignore[arg-type]
        self.ran_other = True
        if result.denied is not None:
            self.event(
                "permission_denied",
                {"name": item.call.name, "id": item.call.id, "message": result.denied},
            )
        if result.denial is not None:
            self.denials.append(result.denial)
        self.event(
            "tool_result",
            {"block": result.block, "tool_use_result": result.line, "meta": result.meta},
        )
        self.results.append(dict(result.block))
        self.text_after = None  # a result came last: the run's result is the object's JSON
        if self.accepted is None and self.spent(self.rejections):
            # The limit is looked at after every tool's result, not only after refused
            # calls: with none allowed, the first result before an object ends the run
            # (probed on 2.1.328 with MAX_STRUCTURED_OUTPUT_RETRIES=0).
            self.exhausted = True

    def _judged(self, item: _Item) -> None:
        call = item.call
        meta = [{"id": call.id, "permission_decision": {"decision": "accept", "source": "config"}}]
        block: dict[str, Any]
        if item.error is None:
            block = {"tool_use_id": call.id, "type": "tool_result", "content": data.TOOL_ACCEPTED}
            fields = {"block": block, "meta": meta, "structured_output": item.validated}
            self.event("tool_result", fields)
            self.results.append(block)
            self.accepted, self.text_after = (item.validated,), None
            return
        block = {"type": "tool_result", "content": item.error, "is_error": True}
        block["tool_use_id"] = call.id
        self.event(
            "tool_result",
            {
                "block": block,
                "tool_use_result": f"Error: {item.error}",
                "meta": meta,
                "rejection": item.error,
            },
        )
        self.results.append(block)
        self.text_after = None
        self.rejections += 1
        self.last_rejection = item.error
        if self.accepted is None and self.spent(self.rejections):
            self.exhausted = True

    # -- what it comes to --------------------------------------------------------

    @property
    def outcome(self) -> str:
        """accepted, exhausted, rejected, working (other tools ran) or prose."""
        if self.accepted is not None:
            return "accepted"
        if self.exhausted:
            return "exhausted"
        if self.rejections:
            return "rejected"
        return "working" if self.ran_other else "prose"

    def messages(self) -> list[dict[str, Any]]:
        """
        The answer and its results as the next request carries them, then a
        note for each move of the shell's working folder.
        """
        out: list[dict[str, Any]] = []
        content = self.prose + self.calls
        if any(block != _EMPTY_TEXT for block in content):  # empty texts alone: no message
            out.append({"role": "assistant", "content": content})
        if self.results:
            out.append({"role": "user", "content": self.results})
        out += [{"role": "system", "content": note} for note in self.bench.moved()]
        return out
