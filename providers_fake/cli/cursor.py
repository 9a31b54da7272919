"""
Fake Cursor Agent: semantic events rendered as ``cursor-agent -p`` prints them.

Cursor has no schema option, so structured output only ever arrives as text:
the assistant text comes in fragments and the terminal ``result`` carries
their concatenation, with no separator.  That joined text is what a
prompt-validating adaptor must parse, so the fake reproduces it exactly.
`CursorCli` holds the launch rules: print mode only, and the prompt is every
positional word joined with spaces.
"""

from __future__ import annotations

from providers_fake.cli.argv import FLAG, FORMATS, OPTIONAL, VALUE
from providers_fake.cli.base import Cli, Context, Renderer, dict_arg, finalize, text_arg
from providers_fake.cli.types import ScriptError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from providers_fake.cli.argv import Option, Parsed
    from providers_fake.cli.base import Refusal

DEFAULT_MODEL = "GPT-5"

_OPTIONS: tuple[Option, ...] = (
    (("-p", "--print"), "print", FLAG, "", ()),
    (("--output-format",), "output_format", VALUE, "format", FORMATS),
    (("-m", "--model"), "model", VALUE, "model", ()),
    (("-f", "--force"), "force", FLAG, "", ()),
    (("--yolo",), "force", FLAG, "", ()),
    (("--api-key",), "api_key", VALUE, "key", ()),
    (("--resume",), "resume", OPTIONAL, "chatId", ()),
    (("--trust",), "trust", FLAG, "", ()),
    (("--workspace",), "workspace", VALUE, "path", ()),
    (("--stream-partial-output",), "partial", FLAG, "", ()),
    (("--sandbox",), "sandbox", VALUE, "mode", ()),
    (("--approve-mcps",), "approve_mcps", FLAG, "", ()),
    (("--mode",), "mode", VALUE, "mode", ()),
)


class CursorRenderer(Renderer):
    """Cursor's few line kinds, and the text fragments its result joins."""

    def __init__(self, ctx: Context) -> None:
        super().__init__(ctx)
        self.mode = ctx.parsed.output_format
        self.session_id = self.ids.uuid4()
        self.fragments: list[str] = []
        self.exit_code = 0

    def _on_init(self, arg: object) -> None:
        self._stream(
            {
                "type": "system",
                "subtype": "init",
                "apiKeySource": self._key_source(),
                "cwd": self.ctx.cwd,
                "session_id": self.session_id,
                "model": text_arg("init", arg, self.ctx.parsed.text("model") or DEFAULT_MODEL),
                "permissionMode": "default",
            }
        )

    def _on_user(self, arg: object) -> None:
        self._message("user", text_arg("user", arg, self.ctx.prompt or ""))

    def _on_assistant(self, arg: object) -> None:
        text = text_arg("assistant", arg, "")
        self._message("assistant", text)
        self.fragments.append(text)

    def _on_result(self, arg: object) -> None:
        self._result(dict_arg("result", arg))

    def finish(self) -> int:
        return self.exit_code

    def _key_source(self) -> str:
        if self.ctx.parsed.text("api_key"):
            return "flag"
        return "env" if self.ctx.env.get("CURSOR_API_KEY") else "login"

    def _message(self, role: str, text: str) -> None:
        self.ids.advance(20, 400)
        message = {"role": role, "content": [{"type": "text", "text": text}]}
        self._stream({"type": role, "message": message, "session_id": self.session_id})

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


class CursorCli(Cli):
    """``cursor-agent -p``: commander, no schema option, the prompt is all positionals joined."""

    name = "cursor"
    renderer = CursorRenderer
    events = frozenset({"init", "user", "assistant", "result"})
    options = _OPTIONS

    def positional_prompt(self, parsed: Parsed) -> str | None:
        return " ".join(parsed.positionals) if parsed.positionals else None

    def preflight(self, parsed: Parsed, stdin: str | None, prompt: str | None) -> Refusal | None:
        if not parsed.flag("print"):
            return "fake-cursor: interactive mode is not supported; pass -p/--print\n", 2
        if prompt is None:
            return "Error: No prompt provided for print mode\n", 1
        return None


CLI = CursorCli()
