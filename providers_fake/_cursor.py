"""
Fake Cursor Agent: semantic events rendered as ``cursor-agent -p`` prints them.

Cursor has no schema option, so structured output only ever arrives as text:
the assistant text comes in fragments and the terminal ``result`` carries
their concatenation, with no separator.  That joined text is what a
prompt-validating adaptor must parse, so the fake reproduces it exactly.
"""

from __future__ import annotations

from providers_fake._base import Context, Renderer, dict_arg, finalize, text_arg
from providers_fake._types import ScriptError

DEFAULT_MODEL = "GPT-5"


class CursorRenderer(Renderer):
    """Cursor's few line kinds, and the text fragments its result joins."""

    def __init__(self, ctx: Context) -> None:
        super().__init__(ctx)
        self.mode = ctx.parsed.output_format
        self.session_id = self.ids.uuid4()
        self.fragments: list[str] = []
        self.exit_code = 0

    def event(self, name: str, arg: object) -> None:
        if name == "init":
            self._stream(
                {
                    "type": "system",
                    "subtype": "init",
                    "apiKeySource": self._key_source(),
                    "cwd": self.ctx.cwd,
                    "session_id": self.session_id,
                    "model": text_arg(name, arg, self.ctx.parsed.text("model") or DEFAULT_MODEL),
                    "permissionMode": "default",
                }
            )
        elif name in ("user", "assistant"):
            default = (self.ctx.prompt or "") if name == "user" else ""
            text = text_arg(name, arg, default)
            self.ids.advance(20, 400)
            message = {"role": name, "content": [{"type": "text", "text": text}]}
            self._stream({"type": name, "message": message, "session_id": self.session_id})
            if name == "assistant":
                self.fragments.append(text)
        elif name == "result":
            self._result(dict_arg(name, arg))
        else:  # pragma: no cover - the script loader only lets known names through
            raise ScriptError(f"unknown cursor event {name!r}")

    def finish(self) -> int:
        return self.exit_code

    def _key_source(self) -> str:
        if self.ctx.parsed.text("api_key"):
            return "flag"
        return "env" if self.ctx.env.get("CURSOR_API_KEY") else "login"

    def _stream(self, record: dict[str, object]) -> None:
        if self.mode == "stream-json":
            self.write_json(record)

    def _result(self, fields: dict[str, object]) -> None:
        subtype = fields.get("subtype", "success")
        is_error = fields.get("is_error", subtype != "success")
        if not isinstance(is_error, bool):
            raise ScriptError("event 'result': 'is_error' must be a boolean")
        text = fields.get("result", "".join(self.fragments))
        self.ids.advance(100, 900)
        duration = self.ids.elapsed_ms()
        record = finalize(
            {
                "type": "result",
                "subtype": subtype,
                "duration_ms": duration,
                "duration_api_ms": duration,
                "is_error": is_error,
                "result": text,
                "session_id": self.session_id,
                "request_id": self.ids.uuid4(),
                "usage": {
                    "inputTokens": 12,
                    "outputTokens": 7 * max(1, len(self.fragments)),
                    "cacheReadTokens": 0,
                    "cacheWriteTokens": 0,
                },
            },
            fields,
        )
        self.exit_code = 1 if is_error else 0
        if self.mode == "text":
            self.write_text(text if isinstance(text, str) else "")
        else:
            self.write_json(record)
