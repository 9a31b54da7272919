"""
Fake CodeBuddy Code: Claude Code's events in CodeBuddy's record shapes.

CodeBuddy mirrors Claude Code's flags and conversation (including the
StructuredOutput tool), but its records differ: every record starts with
``__timestamp`` and ``_requestId``, the remaining keys come in sorted order,
usage is reported with Anthropic's snake_case fields and null placeholders,
and ``--output-format json`` prints one JSON array of the history followed by
the result (older builds printed the result object alone, which scripts can
ask for with ``json_shape: "object"``).  Payloads the model produced (tool
input, structured_output) keep their own key order.  Its launch rules are
Claude Code's, with two more options (`CodeBuddyCli`).
"""

from __future__ import annotations

from providers_fake.cli.argv import FLAG, VALUE
from providers_fake.cli.base import Context, finalize
from providers_fake.cli.claude import data
from providers_fake.cli.claude.render import OPTIONS as CLAUDE_OPTIONS
from providers_fake.cli.claude.render import ClaudeCli, ClaudeRenderer
from providers_fake.cli.claude.result import (
    errors,
    outcome,
    result_text,
    structured,
    text_mode_line,
)

DEFAULT_MODEL = "glm-5.2-ioa"
TOOLS = [
    "Agent",
    "Read",
    "Write",
    "Edit",
    "MultiEdit",
    "Bash",
    "Glob",
    "Grep",
    "LS",
    "WebFetch",
    "WebSearch",
    "TodoWrite",
    "NotebookEdit",
    "AskUserQuestion",
    "StructuredOutput",
]
SLASH_COMMANDS = ["init", "review", "compact", "clear", "cost", "memory", "model", "help"]
# Keys whose value came from the model or the script; sorting them would change data.
_PAYLOAD_KEYS = frozenset({"input", "structured_output"})


class CodeBuddyRenderer(ClaudeRenderer):
    """Claude's conversation, CodeBuddy's records: one request id, sorted keys, own usage."""

    default_model = DEFAULT_MODEL

    def __init__(self, ctx: Context) -> None:
        super().__init__(ctx)
        self.request_id = self.ids.hex(32)
        self.message_ids: dict[str, str] = {}

    def shaped(self, record: dict[str, object]) -> dict[str, object]:
        shaped: dict[str, object] = {"__timestamp": self.ids.iso(), "_requestId": self.request_id}
        for key in sorted(record):
            shaped[key] = _sorted_item(key, record[key])
        return shaped

    def init_records(self) -> list[dict[str, object]]:
        init: dict[str, object] = {
            "apiKeySource": "copilot.tencent.com",
            "cwd": self.ctx.cwd,
            "mcp_servers": [],
            "model": self.model,
            "output_style": "default",
            "permissionMode": self.ctx.parsed.text("permission_mode") or "default",
            "session_id": self.session_id,
            "slash_commands": list(SLASH_COMMANDS),
            "subtype": "init",
            "tools": list(TOOLS),
            "type": "system",
            "uuid": self.session_id,
        }
        status: dict[str, object] = {
            "session_id": self.session_id,
            "status": None,
            "subtype": "status",
            "type": "system",
            "uuid": self.ids.uuid4(),
        }
        snapshot: dict[str, object] = {
            "id": self.ids.uuid4(),
            "isSnapshotUpdate": False,
            "snapshot": {"messageId": self.ids.uuid4(), "trackedFileBackups": {}},
            "timestamp": self.ids.now_ms,
            "type": "file-history-snapshot",
        }
        return [self.shaped(init), self.shaped(status), self.shaped(snapshot)]

    def assistant_record(self, message_id: str, block: dict[str, object]) -> dict[str, object]:
        if message_id not in self.message_ids:
            # CodeBuddy's gateway names messages by local (UTC+8) time plus random hex.
            self.message_ids[message_id] = self.ids.compact_stamp(8) + self.ids.hex(13)
        message_id = self.message_ids[message_id]
        message = {
            "content": [block],
            "id": message_id,
            "model": self.model,
            "role": "assistant",
            "stop_reason": None,
            "stop_sequence": None,
            "type": "message",
            "usage": _usage(1),
        }
        return self.shaped(
            {
                "message": message,
                "parent_tool_use_id": None,
                "session_id": self.session_id,
                "type": "assistant",
                "uuid": self.ids.uuid4(),
            }
        )

    def tool_result_record(
        self, tool_id: str, content: str, error: str | None
    ) -> dict[str, object]:
        record = super().tool_result_record(tool_id, content, error)
        for key in ("timestamp", "tool_result_meta"):
            record.pop(key, None)
        return self.shaped(record)

    def reminder_record(self, text: str) -> dict[str, object]:
        record = super().reminder_record(text)
        record.pop("timestamp", None)
        return self.shaped(record)

    def retry_record(self, record: dict[str, object]) -> dict[str, object]:
        return self.shaped(record)

    def synthetic_record(self, text: str, error: str) -> dict[str, object]:
        record = super().synthetic_record(text, error)
        record.pop("timestamp", None)
        return self.shaped(record)

    def result_record(self, fields: dict[str, object]) -> dict[str, object]:
        state = self.state
        subtype, is_error = outcome(fields)
        duration = self.ids.elapsed_ms() + 40 + self.ids.below(120)
        record: dict[str, object] = {
            "duration_api_ms": max(0, duration - 100 - self.ids.below(60)),
            "duration_ms": duration,
            "is_error": is_error,
            "num_turns": state.num_turns,
            "permission_denials": [],
            "session_id": self.session_id,
            "subtype": subtype,
            "total_cost_usd": 0,
            "type": "result",
            "usage": _usage(len(state.messages)),
            "uuid": self.ids.uuid4(),
        }
        if subtype == "success":
            record["result"] = result_text(state, fields)
            value = structured(state, fields)
            if value is not None:
                record["structured_output"] = value[0]
        else:
            max_turns = self.ctx.parsed.text("max_turns")
            record["errors"] = errors(state, subtype, fields, self.ctx.env, max_turns)
        return finalize(self.shaped(record), fields)

    def print_result(self, record: dict[str, object]) -> None:
        if self.mode == "json":
            if self.ctx.json_shape == "object":
                self.write_json(record)
            else:
                self.write_json(self.history)
        elif self.mode == "stream-json":
            self.write_json(record)
        else:
            self.write_text(text_mode_line(record, self.ctx.parsed.text("max_turns")))


def _usage(messages: int) -> dict[str, object]:
    return {
        "cache_creation": None,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
        "input_tokens": data.INPUT_TOKENS * messages,
        "output_tokens": data.OUTPUT_TOKENS * messages,
        "server_tool_use": None,
        "service_tier": None,
    }


def _sorted(value: object) -> object:
    if isinstance(value, dict):
        return {key: _sorted_item(key, value[key]) for key in sorted(value)}
    if isinstance(value, list):
        return [_sorted(item) for item in value]
    return value


def _sorted_item(key: str, value: object) -> object:
    return value if key in _PAYLOAD_KEYS else _sorted(value)


class CodeBuddyCli(ClaudeCli):
    """``codebuddy -p``: Claude Code's command line plus ``-y`` and ``--system-prompt-file``."""

    name = "codebuddy"
    renderer = CodeBuddyRenderer
    options = (
        *CLAUDE_OPTIONS,
        (("-y",), "skip_permissions", FLAG, "", ()),
        (("--system-prompt-file",), "system_prompt_file", VALUE, "file", ()),
    )


CLI = CodeBuddyCli()
