"""
The Codex driver: ``codex exec --json`` with ``--output-schema`` (CDX-01..08).

The candidate is the text of the last completed ``agent_message``, and only
after a clean ``turn.completed`` from a process that exited 0.  A top-level
``result`` envelope is ignored like any unknown event, never a candidate.

Seed 001: "The Driver keeps all completed assistant messages in Result.Text";
how they are joined is the SDK's (``codex/parser.go`` @
e7709de6f4e2458f2011171c877e8ce3bf8897d1, ``buildOutput``): each message
trimmed, blank ones dropped, a blank line between them.  The v1 SDK keeps
the last message only (``codex/parser.go`` @
b07349b77fc4ca9043031b0dfaf6266328425f60), which the ``b07349b7`` contract
profile follows (`_TEXT`).  Codex has one
transport here, ``codex exec --json`` (the seed: "no; batch is negotiated").
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import ClassVar

from harness.adaptor.drivers import Malformed, Parsed, json_lines, process_failure, register
from harness.adaptor.intake import Schema
from harness.adaptor.launch import Finished
from harness.adaptor.negotiate import Plan
from harness.catalogue.contracts import Contract
from harness.catalogue.scenario import Json

_ITEM_EVENTS = frozenset({"item.started", "item.updated", "item.completed"})
_TERMINALS = frozenset({"turn.completed", "turn.failed"})


@register
class Codex:
    """See the module docstring."""

    name: ClassVar[str] = "codex"
    rich: ClassVar[bool] = False

    def argv(
        self, exe: str, plan: Plan, schema: Schema | None, prompt: str, work: Path
    ) -> list[str]:
        argv = [exe, "exec", "--json", "--skip-git-repo-check"]
        if schema is not None and plan.mechanism == "native":
            file = work / "output-schema.json"
            file.write_text(schema.text, encoding="utf-8")
            argv += ["--output-schema", str(file)]
        return [*argv, prompt]

    def parse(self, finished: Finished, plan: Plan, contract: Contract) -> Parsed:
        early = process_failure(finished)
        if early is not None:
            return early
        messages: list[str] = []
        terminal: dict[str, object] | None = None
        failure: str | None = None
        thread = False
        try:
            for event in json_lines(finished.stdout, allow_prose=True):
                kind = event.get("type")
                if terminal is not None:
                    raise Malformed(f"event {kind!r} after the terminal event")
                if kind == "thread.started":
                    if thread or not isinstance(event.get("thread_id"), str):
                        raise Malformed("thread.started repeated or without a thread_id")
                    thread = True
                elif kind in _ITEM_EVENTS:
                    if not thread:
                        raise Malformed(f"{kind} before thread.started")
                    item = event.get("item")
                    if not isinstance(item, dict):
                        raise Malformed(f"{kind} without an item object")
                    if kind == "item.completed" and item.get("type") == "agent_message":
                        text = item.get("text")
                        if not isinstance(text, str):
                            raise Malformed("agent_message text is not a string")
                        messages.append(text)
                elif kind in _TERMINALS and not thread:
                    raise Malformed(f"{kind} before thread.started")
                elif kind == "turn.completed":
                    terminal = event
                elif kind == "turn.failed":
                    terminal = event
                    error = event.get("error")
                    failure = str(error.get("message") if isinstance(error, dict) else error)
                elif kind == "error":
                    failure = failure or str(event.get("message"))
        except Malformed as error:
            text = _TEXT[contract.codex_text](messages)
            return Parsed(text=text, cause="malformed_protocol", message=str(error))
        text = _TEXT[contract.codex_text](messages)
        raw = None if terminal is None else Json.of(terminal)
        if failure is not None:
            return Parsed(text=text, raw=raw, cause="turn_failed", message=failure)
        if finished.returncode != 0:
            return Parsed(
                text=text,
                raw=raw,
                cause="nonzero_exit",
                message=f"provider exited with status {finished.returncode}",
            )
        if terminal is None:
            return Parsed(text=text, cause="missing_terminal", message="no turn.completed event")
        last = messages[-1] if messages else ""
        return Parsed(text=text, raw=raw, candidate=last if last.strip() else None)


def _join(messages: list[str]) -> str | None:
    kept = [m.strip() for m in messages if m.strip()]
    return "\n\n".join(kept) if kept else None


def _last(messages: list[str]) -> str | None:
    return messages[-1] if messages else None


#: The text of a run, by the contract's ``codex_text`` rule.
_TEXT: dict[str, Callable[[list[str]], str | None]] = {"joined": _join, "last": _last}
