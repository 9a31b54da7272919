"""
Fake Claude Code: semantic events rendered as ``claude -p`` prints them.

The renderer keeps the little conversation state the real CLI derives its
output from: which API request is current (it names ``msg_N``/``toolu_N``),
which model answered each message (usage and cost per model), how many user
lines started a new turn, and the last accepted StructuredOutput input.
Consecutive assistant blocks with no user or system line between them belong
to one API message, exactly as a real response with several content blocks
is printed as several lines sharing one ``message.id``.

`ClaudeCli` holds the launch rules: print mode or an SDK's stream-json
input (the conversation on stdin lives in `providers_fake.cli.streamin`), ``--verbose``
required for stream-json output, ``--json-schema`` checked before the run,
``-v`` answered with the version.

CodeBuddy mirrors Claude Code; `providers_fake.cli.codebuddy` subclasses this renderer and
this spec, and only swaps the record shapes and a few options.
"""

from __future__ import annotations

from providers_fake.cli import schemaflag
from providers_fake.cli.argv import FLAG, FORMATS, OPTIONAL, VALUE, VARIADIC
from providers_fake.cli.base import Cli, Context, Renderer, dict_arg, int_field, str_field, text_arg
from providers_fake.cli.claude import beyond as _more
from providers_fake.cli.claude import data
from providers_fake.cli.claude.result import ResultState, build_result, text_mode_line
from providers_fake.cli.streamin import first_user_message, is_stream_input
from providers_fake.cli.types import ScriptError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from providers_fake.cli.argv import Option, Parsed
    from providers_fake.cli.base import Refusal

_ERROR_KINDS = {429: "rate_limit", 529: "overloaded", 401: "authentication_failed"}

OPTIONS: tuple[Option, ...] = (
    (("-p", "--print"), "print", FLAG, "", ()),
    (("--output-format",), "output_format", VALUE, "format", FORMATS),
    (("--input-format",), "input_format", VALUE, "format", ("text", "stream-json")),
    (("--verbose",), "verbose", FLAG, "", ()),
    (("--json-schema",), "json_schema", VALUE, "schema", ()),
    (("--model",), "model", VALUE, "model", ()),
    (("--fallback-model",), "fallback_model", VALUE, "model", ()),
    (("--max-turns",), "max_turns", VALUE, "turns", ()),
    (("--max-budget-usd",), "max_budget_usd", VALUE, "amount", ()),
    (("--permission-mode",), "permission_mode", VALUE, "mode", ()),
    (("--allowedTools", "--allowed-tools"), "allowed_tools", VARIADIC, "tools...", ()),
    (("--disallowedTools", "--disallowed-tools"), "disallowed_tools", VARIADIC, "tools...", ()),
    (("--append-system-prompt",), "append_system_prompt", VALUE, "prompt", ()),
    (("--system-prompt",), "system_prompt", VALUE, "prompt", ()),
    (("--session-id",), "session_id", VALUE, "uuid", ()),
    (("-r", "--resume"), "resume", OPTIONAL, "value", ()),
    (("-c", "--continue"), "continue", FLAG, "", ()),
    (("--dangerously-skip-permissions",), "skip_permissions", FLAG, "", ()),
    (("--include-partial-messages",), "partial", FLAG, "", ()),
    (("--settings",), "settings", VALUE, "file-or-json", ()),
    (("--setting-sources",), "setting_sources", VALUE, "sources", ()),
    (("--mcp-config",), "mcp_config", VARIADIC, "configs...", ()),
    (("--strict-mcp-config",), "strict_mcp_config", FLAG, "", ()),
    (("--add-dir",), "add_dir", VARIADIC, "directories...", ()),
    (("--permission-prompt-tool",), "permission_prompt_tool", VALUE, "tool", ()),
    (("--max-thinking-tokens",), "max_thinking_tokens", VALUE, "tokens", ()),
    (("--fork-session",), "fork_session", FLAG, "", ()),
    (("--agents",), "agents", VALUE, "json", ()),
    (("--effort",), "effort", VALUE, "level", ()),
)


class ClaudeRenderer(Renderer):
    """Claude Code's conversation state and record shapes; the shapes are overridable."""

    default_model = data.DEFAULT_MODEL

    def __init__(self, ctx: Context) -> None:
        super().__init__(ctx)
        parsed = ctx.parsed
        self.mode = parsed.output_format
        self.session_id = parsed.text("session_id") or self.ids.uuid4()
        chosen = data.chosen_model(ctx.env.get("ANTHROPIC_MODEL"))
        self.model = parsed.text("model") or (self.default_model if chosen is None else chosen)
        self.fallback_model = parsed.text("fallback_model") or data.DEFAULT_FALLBACK
        self.state = ResultState()
        self.requests = 0  # API requests made so far, failed ones included
        self.open_message: str | None = None  # id of the message still receiving blocks
        self.tools_in_message = 0
        self.retries = 0
        self.history: list[dict[str, object]] = []
        self.exit_code = 0

    # -- output ---------------------------------------------------------------

    def emit(self, record: dict[str, object]) -> None:
        """A history line: printed in stream-json mode, kept for CodeBuddy's json array."""
        self.history.append(record)
        if self.mode == "stream-json":
            self.write_json(record)

    def finish(self) -> int:
        return self.exit_code

    # -- events ---------------------------------------------------------------

    def _on_init(self, arg: object) -> None:
        if arg is not None:
            self.model = text_arg("init", arg, self.model)
        for record in self.init_records():
            self.emit(record)

    def _on_text(self, arg: object) -> None:
        text = text_arg("text", arg, "")
        self._assistant_block({"type": "text", "text": text})
        self.state.last_text = text

    def _on_structured_output(self, arg: object) -> None:
        tool_id = self._assistant_tool(arg)
        self._close_message()
        self.emit(self.tool_result_record(tool_id, data.TOOL_ACCEPTED, None))
        self.state.user_lines += 1
        self.state.accepted = (arg,)

    def _on_structured_output_rejected(self, arg: object) -> None:
        fields = dict_arg("structured_output_rejected", arg)
        error = str_field("structured_output_rejected", fields, "error", data.DEFAULT_REJECTION)
        tool_id = self._assistant_tool(fields.get("input", {}))
        self._close_message()
        self.emit(self.tool_result_record(tool_id, error, error))
        self.state.user_lines += 1
        self.state.rejections += 1
        self.state.last_rejection = error

    def _on_enforce_reminder(self, arg: object) -> None:
        self._close_message()
        self.emit(self.reminder_record(text_arg("enforce_reminder", arg, data.ENFORCE_REMINDER)))
        self.state.user_lines += 1

    def _on_api_retry(self, arg: object) -> None:
        fields = dict_arg("api_retry", arg)
        self._close_message()
        self.requests += 1
        self.retries += 1
        attempt = int_field("api_retry", fields, "attempt", self.retries)
        status = fields.get("status", 529)
        if status is not None and (not isinstance(status, int) or isinstance(status, bool)):
            raise ScriptError("event 'api_retry': 'status' must be an integer or null")
        base = 500 * 2 ** min(max(attempt - 1, 0), 5)
        delay = int_field("api_retry", fields, "delay_ms", base + self.ids.below(base // 4 + 1))
        kind = _ERROR_KINDS.get(status or 0, "server_error" if (status or 0) >= 500 else "unknown")
        self.emit(
            self.retry_record(
                {
                    "type": "system",
                    "subtype": "api_retry",
                    "attempt": attempt,
                    "max_retries": int_field("api_retry", fields, "max_retries", 10),
                    "retry_delay_ms": delay,
                    "error_status": status,
                    "error": str_field("api_retry", fields, "error", kind),
                    "session_id": self.session_id,
                    "uuid": self.ids.uuid4(),
                }
            )
        )
        self.ids.advance(delay, delay + 30)

    def _on_model_fallback(self, arg: object) -> None:
        fields = dict_arg("model_fallback", arg)
        self._close_message()
        self.requests += 1  # the request that failed over
        original = str_field("model_fallback", fields, "from", self.model)
        fallback = str_field("model_fallback", fields, "to", self.fallback_model)
        notice = (
            f"Switched to {data.display_name(fallback)} due to high demand for "
            f"{data.display_name(original)}"
        )
        self.emit(
            self.retry_record(
                {
                    "type": "system",
                    "subtype": "model_fallback",
                    "uuid": self.ids.uuid4(),
                    "trigger": str_field("model_fallback", fields, "trigger", "overloaded"),
                    "original_model": original,
                    "fallback_model": fallback,
                    "content": str_field("model_fallback", fields, "content", notice),
                    "session_id": self.session_id,
                }
            )
        )
        self.model = fallback

    # Beyond the structured-output loop (refusals, other tools): `beyond`.

    def _on_refusal(self, arg: object) -> None:
        _more.refusal(self, dict_arg("refusal", arg))

    def _on_refusal_continue(self, arg: object) -> None:
        _more.refusal_continue(self, dict_arg("refusal_continue", arg))

    def _on_refusal_fallback(self, arg: object) -> None:
        _more.refusal_fallback(self, dict_arg("refusal_fallback", arg))

    def _on_tool(self, arg: object) -> None:
        _more.tool(self, dict_arg("tool", arg))

    def _on_tool_use(self, arg: object) -> None:
        _more.tool_use(self, dict_arg("tool_use", arg))

    def _on_tool_result(self, arg: object) -> None:
        _more.tool_result(self, dict_arg("tool_result", arg))

    def _on_permission_denied(self, arg: object) -> None:
        _more.permission_denied(self, dict_arg("permission_denied", arg))

    def _on_answer_end(self, arg: object) -> None:
        self._close_message()  # the next assistant block belongs to the next request

    def _on_thinking(self, arg: object) -> None:
        _more.thinking(self, dict_arg("thinking", arg))

    def _on_notice(self, arg: object) -> None:
        _more.notice(self, dict_arg("notice", arg))

    def _on_compact_failed(self, arg: object) -> None:
        _more.compact_failed(self, dict_arg("compact_failed", arg or {}))

    def _on_api_error_message(self, arg: object) -> None:
        if isinstance(arg, dict):
            text = str_field("api_error_message", arg, "text", data.MIDSTREAM_ERROR)
            error = str_field("api_error_message", arg, "error", "server_error")
        else:
            text, error = text_arg("api_error_message", arg, data.MIDSTREAM_ERROR), "server_error"
        extra = dict_arg("api_error_message", arg.get("extra")) if isinstance(arg, dict) else {}
        self._close_message()
        self.ids.advance(3, 8)
        self.emit({**self.synthetic_record(text, error), **extra})
        self.state.last_text = text
        self.state.synthetic = True

    def _on_result(self, arg: object) -> None:
        fields = dict_arg("result", arg)
        self._close_message()
        self.ids.advance(5, 15)
        record = self.result_record(fields)
        self.history.append(record)
        self.exit_code = 1 if record.get("is_error") is True else 0
        self.print_result(record)

    # -- assistant messages ---------------------------------------------------

    def _assistant_block(
        self, block: dict[str, object], extra: dict[str, object] | None = None
    ) -> None:
        if self.open_message is None:
            self.open_message = f"msg_{self.requests}"
            self.requests += 1
            self.tools_in_message = 0
            self.state.messages.append(self.model)
            self.ids.advance(55, 70)
        else:
            self.ids.advance(1, 3)
        self.state.last_block = str(block["type"])
        record = self.assistant_record(self.open_message, block)
        self.emit({**record, **(extra or {})})

    def _assistant_tool(self, tool_input: object) -> str:
        return self.tool_call("StructuredOutput", tool_input)

    def tool_call(self, name: str, tool_input: object, given: str | None = None) -> str:
        """A tool_use block in the open assistant message (or a new one); its id."""
        number = self.requests if self.open_message is None else self.requests - 1
        tool_id = f"toolu_{number}"
        if self.open_message is not None and self.tools_in_message:
            tool_id += f"_{self.tools_in_message}"
        tool_id = given or tool_id
        block = {"type": "tool_use", "id": tool_id, "name": name, "input": tool_input}
        self._assistant_block(block)
        self.tools_in_message += 1
        return tool_id

    def _close_message(self) -> None:
        self.open_message = None

    # -- record shapes (CodeBuddy overrides these) ------------------------------

    def init_records(self) -> list[dict[str, object]]:
        cwd = self.ctx.cwd
        home = self.ctx.env.get("HOME", "")
        project = "".join(c if c.isalnum() else "-" for c in cwd)
        permission = self.ctx.parsed.text("permission_mode") or "default"
        if self.ctx.parsed.flag("skip_permissions"):
            permission = "bypassPermissions"
        return [
            {
                "type": "system",
                "subtype": "init",
                "cwd": cwd,
                "session_id": self.session_id,
                "tools": list(data.TOOLS),
                "mcp_servers": [],
                "model": self.model,
                "permissionMode": permission,
                "slash_commands": list(data.SLASH_COMMANDS),
                "terminal_slash_commands": list(data.TERMINAL_SLASH_COMMANDS),
                "apiKeySource": "ANTHROPIC_API_KEY",
                "claude_code_version": data.VERSION,
                "output_style": "default",
                "agents": list(data.AGENTS),
                "skills": list(data.SKILLS),
                "plugins": [dict(plugin) for plugin in data.PLUGINS],
                "capabilities": list(data.CAPABILITIES),
                "analytics_disabled": True,
                "product_feedback_disabled": True,
                "uuid": self.ids.uuid4(),
                "memory_paths": {"auto": f"{home}/.claude/projects/{project}/memory/"},
                "original_cwd": cwd,
                "additional_directories": self.ctx.parsed.values("add_dir"),
                "messaging_socket_path": f"{home}/.claude/run/{self.session_id[:8]}.sock",
                "fast_mode_state": "off",
                "fast_mode_disabled_reason": "sdk_opt_in_required",
                "per_turn_effort_active": True,
                "ultrathink_available": False,
                "ultrathink_typed_raises": False,
                "view_mode": "default",
            }
        ]

    def assistant_record(self, message_id: str, block: dict[str, object]) -> dict[str, object]:
        return {
            "type": "assistant",
            "message": {
                "id": message_id,
                "type": "message",
                "role": "assistant",
                "model": self.model,
                "content": [block],
                "stop_reason": None,
                "stop_sequence": None,
                "usage": {"input_tokens": data.INPUT_TOKENS, "output_tokens": data.OUTPUT_TOKENS},
                "context_management": None,
            },
            "parent_tool_use_id": None,
            "session_id": self.session_id,
            "uuid": self.ids.uuid4(),
            "timestamp": self.ids.iso(),
        }

    def tool_result_record(
        self, tool_id: str, content: str, error: str | None
    ) -> dict[str, object]:
        """The user line answering a StructuredOutput call (`error` set when rejected)."""
        self.ids.advance(4, 16)
        block: dict[str, object]
        if error is None:
            block = {"tool_use_id": tool_id, "type": "tool_result", "content": content}
        else:
            block = {"type": "tool_result", "content": content, "is_error": True}
            block["tool_use_id"] = tool_id
        return {
            "type": "user",
            "message": {"role": "user", "content": [block]},
            "parent_tool_use_id": None,
            "session_id": self.session_id,
            "uuid": self.ids.uuid4(),
            "timestamp": self.ids.iso(),
            "tool_use_result": content if error is None else f"Error: {error}",
            "tool_result_meta": [
                {"id": tool_id, "permission_decision": {"decision": "accept", "source": "config"}}
            ],
        }

    def reminder_record(self, text: str) -> dict[str, object]:
        self.ids.advance(4, 10)
        return {
            "type": "user",
            "message": {"role": "user", "content": [{"type": "text", "text": text}]},
            "parent_tool_use_id": None,
            "session_id": self.session_id,
            "uuid": self.ids.uuid4(),
            "timestamp": self.ids.iso(),
            "isSynthetic": True,
        }

    def retry_record(self, record: dict[str, object]) -> dict[str, object]:
        """System lines between requests (api_retry, model_fallback) need no reshaping here."""
        return record

    def synthetic_record(self, text: str, error: str) -> dict[str, object]:
        usage = {
            "output_tokens_details": None,
            "input_tokens": 0,
            "output_tokens": 0,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
            "server_tool_use": {"web_search_requests": 0, "web_fetch_requests": 0},
            "service_tier": None,
            "cache_creation": {"ephemeral_1h_input_tokens": 0, "ephemeral_5m_input_tokens": 0},
            "inference_geo": None,
            "iterations": None,
            "speed": None,
            "fallback_credit": None,
        }
        return {
            "type": "assistant",
            "message": {
                "diagnostics": None,
                "id": self.ids.uuid4(),
                "container": None,
                "model": "<synthetic>",
                "role": "assistant",
                "stop_details": None,
                "stop_reason": "stop_sequence",
                "stop_sequence": "",
                "type": "message",
                "usage": usage,
                "content": [{"type": "text", "text": text}],
                "context_management": None,
            },
            "parent_tool_use_id": None,
            "session_id": self.session_id,
            "uuid": self.ids.uuid4(),
            "timestamp": self.ids.iso(),
            "error": error,
            "is_api_error_message": True,
        }

    def result_record(self, fields: dict[str, object]) -> dict[str, object]:
        return build_result(
            self.state,
            fields,
            session_id=self.session_id,
            ids=self.ids,
            stream=self.mode == "stream-json",
            env=self.ctx.env,
            max_turns=self.ctx.parsed.text("max_turns"),
        )

    def print_result(self, record: dict[str, object]) -> None:
        if self.mode in ("json", "stream-json"):
            self.write_json(record)
        else:
            self.write_text(text_mode_line(record, self.ctx.parsed.text("max_turns")))


class ClaudeCli(Cli):
    """``claude -p``: commander, one positional prompt, an inline ``--json-schema``."""

    name = "claude"
    renderer = ClaudeRenderer
    events = frozenset(
        {
            "init",
            "text",
            "structured_output",
            "structured_output_rejected",
            "enforce_reminder",
            "api_retry",
            "model_fallback",
            "api_error_message",
            "result",
            "refusal",
            "refusal_continue",
            "refusal_fallback",
            "tool",
            "tool_use",
            "tool_result",
            "permission_denied",
            "answer_end",
            "thinking",
            "notice",
            "compact_failed",
        }
    )
    options = (*OPTIONS, (("-v", "--version"), "version", FLAG, "", ()))
    max_positionals = 1

    def answer(self, parsed: Parsed) -> str | None:
        # commander's version option: printed as soon as it is parsed, then exit 0.
        return f"{data.VERSION} (Claude Code)\n" if parsed.flag("version") else None

    def reads_stdin(self, parsed: Parsed) -> bool:
        if is_stream_input(parsed):
            return False  # the SDK keeps stdin open; reading to EOF would deadlock
        return super().reads_stdin(parsed)

    def converses(self, parsed: Parsed) -> bool:
        # Refused command lines exit before the real CLI reads any input.
        return is_stream_input(parsed) and self.refusal(parsed, None, None) is None

    def prompt(self, parsed: Parsed, stdin: str | None) -> str | None:
        if parsed.prompt is None and stdin is not None and is_stream_input(parsed):
            return first_user_message(stdin)
        return super().prompt(parsed, stdin)

    def preflight(self, parsed: Parsed, stdin: str | None, prompt: str | None) -> Refusal | None:
        stream_input = is_stream_input(parsed)
        if not parsed.flag("print") and not stream_input:
            return f"fake-{self.name}: interactive mode is not supported; pass -p/--print\n", 2
        if parsed.output_format == "stream-json" and not parsed.flag("verbose"):
            return "Error: When using --print, --output-format=stream-json requires --verbose\n", 1
        schema_text = parsed.text("json_schema")
        if schema_text is not None:
            problem = schemaflag.check(schema_text)[1]
            if problem is not None:
                return problem, 1
        if prompt is None and not stream_input:
            return (
                "Error: Input must be provided either through stdin or as a prompt argument "
                "when using --print\n",
                1,
            )
        if prompt is None and stdin is not None:
            return "", 0  # an SDK's input ended before any user line: no turn, no output
        return None

    def received_schema(self, parsed: Parsed) -> object:
        text = parsed.text("json_schema")
        return None if text is None else schemaflag.parse_quietly(text)


CLI = ClaudeCli()
