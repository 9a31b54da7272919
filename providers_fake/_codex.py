"""
Fake Codex: semantic events rendered as ``codex exec --json`` prints them.

Codex numbers items ``item_0``, ``item_1``... per process, in emission order,
and decides its exit status from one "an error was seen" flag: a failed turn
or a top-level ``error`` that will not be retried.  ``Reconnecting...``
errors are retries, so they leave the status alone, as in the real CLI.
Without ``--json`` Codex prints only the final agent message on stdout.
"""

from __future__ import annotations

from providers_fake._base import Context, Renderer, dict_arg, text_arg
from providers_fake._types import ScriptError

DEFAULT_MODEL = "gpt-probe"
STREAM_ERROR = (
    "stream disconnected before completion: The server had an error processing your request."
)
_USAGE_KEYS = (
    "input_tokens",
    "cached_input_tokens",
    "cache_write_input_tokens",
    "output_tokens",
    "reasoning_output_tokens",
)
_DEFAULT_USAGE = (12, 0, 0, 7, 0)


class CodexRenderer(Renderer):
    """Codex's item counter, its single error flag and its final agent message."""

    def __init__(self, ctx: Context) -> None:
        super().__init__(ctx)
        self.jsonl = ctx.parsed.flag("json")
        self.model = ctx.parsed.text("model") or DEFAULT_MODEL
        self.items = 0
        self.started_item: str | None = None  # an agent_message announced by item.started
        self.last_message: str | None = None
        self.last_error: str | None = None
        self.error_seen = False
        self.turn_failed = False
        self.turn_completed = False

    def event(self, name: str, arg: object) -> None:
        if name == "thread.started":
            thread_id = text_arg(name, arg, "") or self.ids.uuid7()
            self._line({"type": "thread.started", "thread_id": thread_id})
        elif name == "turn.started":
            self._line({"type": "turn.started"})
        elif name == "warning":
            default = (
                f"Model metadata for `{self.model}` not found. Defaulting to fallback metadata; "
                "this can degrade performance and cause issues."
            )
            self._item("item.completed", "error", "message", text_arg(name, arg, default))
        elif name == "agent_message":
            text = text_arg(name, arg, "")
            self._item("item.completed", "agent_message", "text", text)
            self.last_message = text
        elif name == "agent_message.started":
            self.started_item = self._item(
                "item.started", "agent_message", "text", text_arg(name, arg, "")
            )
        elif name == "reasoning":
            self._item("item.completed", "reasoning", "text", text_arg(name, arg, ""))
        elif name == "error":
            message = text_arg(name, arg, STREAM_ERROR)
            self._line({"type": "error", "message": message})
            if not message.startswith("Reconnecting..."):
                self.error_seen = True
                self.last_error = message
            if not self.jsonl:
                self.out.stderr(f"ERROR: {message}\n".encode())
        elif name == "turn.completed":
            self._line({"type": "turn.completed", "usage": _usage(arg)})
            self.turn_completed = True
        elif name == "turn.failed":
            message = text_arg(name, arg, self.last_error or "turn failed")
            self._line({"type": "turn.failed", "error": {"message": message}})
            self.error_seen = self.turn_failed = True
            self.last_message = None  # a failed turn has no final message
        else:  # pragma: no cover - the script loader only lets known names through
            raise ScriptError(f"unknown codex event {name!r}")

    def finish(self) -> int:
        if not self.jsonl and self.last_message is not None and not self.turn_failed:
            self.write_text(self.last_message)
        self._write_last_message()
        return 1 if self.error_seen else 0

    def _line(self, record: dict[str, object]) -> None:
        if self.jsonl:
            self.write_json(record)

    def _item(self, kind: str, item_type: str, key: str, value: str) -> str:
        if kind == "item.completed" and item_type == "agent_message" and self.started_item:
            item_id, self.started_item = self.started_item, None
        else:
            item_id = f"item_{self.items}"
            self.items += 1
        self._line({"type": kind, "item": {"id": item_id, "type": item_type, key: value}})
        return item_id

    def _write_last_message(self) -> None:
        """``-o FILE``: the one side effect besides the launch record, done as Codex does it."""
        path = self.ctx.parsed.text("output_last_message")
        if path is None or self.out.hung:
            return
        text = self.last_message if self.turn_completed and not self.turn_failed else None
        try:
            with open(path, "w", encoding="utf-8") as handle:
                handle.write(text or "")
        except OSError as error:
            self.out.stderr(f"Failed to write last message file {path}: {error}\n".encode())
            return
        if text is None:
            self.out.stderr(
                f"Warning: no last agent message; wrote empty content to {path}\n".encode()
            )


def _usage(arg: object) -> dict[str, object]:
    usage: dict[str, object] = dict(zip(_USAGE_KEYS, _DEFAULT_USAGE, strict=True))
    usage.update(dict_arg("turn.completed", arg))
    return usage
