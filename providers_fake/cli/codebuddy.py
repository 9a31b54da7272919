"""
Fake CodeBuddy Code 2.117.0, rebuilt field by field from captures of the real CLI.

The captures (tests/data/captures/codebuddy, docs/codebuddy.md) show Claude
Code's conversation in CodeBuddy's own records:

- keys in the CLI's order, ``__timestamp`` then ``_requestId`` last; the
  request id is on the records of the first model turn and missing from the
  records of later re-asks and from the result (the real CLI is racy about
  it, so the comparison only holds it last where present);
- an init line, a ``status`` line and a ``file-history-snapshot`` before the
  first answer, and one snapshot before each re-ask after prose;
- an assistant record per block, its ``uuid`` and ``message.id`` the
  upstream completion id, ``stop_reason`` ``tool_use`` on a tool call and
  null otherwise; a StructuredOutput result is a ``user`` record whose
  ``parent_tool_use_id`` is the call, ``is_error`` false even when the input
  missed the schema (the validation message is the content);
- the turn goes on after an accepted call: the result's ``result`` is the
  last text; ``num_turns`` counts the history records (snapshots, assistant
  and user records);
- prose is answered by a re-ask (sent, not printed: a snapshot shows it),
  three times; the fourth prose answer ends the run as a success without
  ``structured_output`` and is not printed on stream-json
  (``unprinted_answer``);
- ``--output-format json`` prints one indented JSON array of the session's
  items (the prompt message, snapshots, ``function_call``,
  ``function_call_result`` and assistant ``message`` items with their
  ``providerData``) followed by the result, whose ``structured_output``
  comes after ``__timestamp`` there; text prints the result text.

Several StructuredOutput calls of one message are one event
(``structured_output_calls``: every call, then every result, the usage on the
last block), and a call to a tool the CLI lacks is ``api_error_message`` then
``recovery`` (a snapshot; the turn goes on).  The vendor's system reminders
in the prompt item are not reproduced (stand-ins of the same shape; the
comparison masks them).  Launch rules are
Claude Code's with two more options (`CodeBuddyCli`).
"""

from __future__ import annotations

import json

from providers_fake.cli.argv import FLAG, VALUE
from providers_fake.cli.base import Context, dict_arg, finalize, text_arg
from providers_fake.cli.claude.render import OPTIONS as CLAUDE_OPTIONS
from providers_fake.cli.claude.render import ClaudeCli, ClaudeRenderer
from providers_fake.cli.claude.result import errors, outcome, structured, text_mode_line
from providers_fake.cli.jsonout import dumps_js
from providers_fake.cli.types import ScriptError

DEFAULT_MODEL = "default-model"
MODEL_NAME = "Default"
API_KEY_SOURCE = "www.codebuddy.ai"
#: Per request, the fake Chat Completions API's figures (providers_fake.api.chat).
INPUT_TOKENS, OUTPUT_TOKENS = 12, 7
TOOL_ACCEPTED = "Structured output captured successfully"
DEFAULT_REJECTION = "Output does not match required schema: root: must match the schema"
#: Stand-ins for the two system reminders CodeBuddy puts before the prompt.
REMINDERS = (
    '<system-reminder data-role="memory"><memory>\n(auto memory)\n</memory></system-reminder>',
    "<system-reminder>\n(context)\n</system-reminder>\n",
)
TOOLS = [
    "Agent", "Read", "Write", "Edit", "Bash", "PowerShell", "Glob", "Grep", "EnterPlanMode",
    "ExitPlanMode", "TaskCreate", "TaskGet", "TaskUpdate", "TaskList", "WebFetch", "WebSearch",
    "TaskStop", "TaskOutput", "Skill", "SkillManage", "AskUserQuestion", "StructuredOutput",
    "ToolSearch", "DeferExecuteTool", "SendMessage", "TeamCreate", "TeamDelete", "NotebookEdit",
    "LSP", "ImageGen", "ImageEdit", "VideoGen", "EnterWorktree", "LeaveWorktree", "CronCreate",
    "CronDelete", "CronList", "WeChatReply", "WeComReply", "ComputerUse", "ListMcpResources",
    "ReadMcpResource", "WaitForMcpServers", "Workflow",
]  # fmt: skip
SLASH_COMMANDS = [
    "add-dir", "agents", "branch", "btw", "clear", "config", "context", "cost", "doctor", "exit",
    "export", "feedback", "fork", "gateway", "goal", "remote-control", "help", "hooks",
    "keybindings", "ide", "install-github-app", "login", "logout", "mcp", "memory",
    "migrate-installer", "model", "permissions", "plan", "pr-comments", "release-notes",
    "rename", "resume", "review", "rewind", "sandbox", "skills", "status", "terminal-setup",
    "upgrade", "vim", "tasks", "todos", "plugin", "reload-plugins", "plugin-validate", "theme",
    "output-style", "stats", "workflows", "effort", "deep-research", "simplify", "code-review",
    "verify", "copy", "debug", "model:text-to-video", "model:image-to-video", "init", "compact",
    "_compact", "statusline", "security-review", "commit", "commit-push-pr", "insights",
]  # fmt: skip


def _usage(messages: int) -> dict[str, object]:
    return {
        "input_tokens": INPUT_TOKENS * messages,
        "output_tokens": OUTPUT_TOKENS * messages,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
        "cache_creation": None,
        "server_tool_use": None,
        "service_tier": None,
    }


def _raw_usage(tokens_in: int, tokens_out: int) -> dict[str, object]:
    """What the Chat Completions API reported, as CodeBuddy keeps it in ``providerData``."""
    return {
        "prompt_tokens": tokens_in,
        "completion_tokens": tokens_out,
        "total_tokens": tokens_in + tokens_out,
        "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
        "completion_tokens_details": {
            "reasoning_tokens": 0,
            "audio_tokens": 0,
            "accepted_prediction_tokens": 0,
            "rejected_prediction_tokens": 0,
        },
    }


class CodeBuddyRenderer(ClaudeRenderer):
    """Claude's conversation state, CodeBuddy's records in its own key order."""

    default_model = DEFAULT_MODEL

    def __init__(self, ctx: Context) -> None:
        super().__init__(ctx)
        self.request_id = self.ids.hex(32)
        self.first_turn = True  # records get _requestId until the first re-ask
        self.completion_ids: dict[str, str] = {}
        self.turns = 0  # history records: what num_turns counts
        self.answered = 0  # answers with usage (API error texts have none)
        self.trace = (self.ids.hex(32), self.ids.hex(32))  # traceId, conversationRequestId
        self.items: list[dict[str, object]] = []  # the json array
        self.parent = ""
        self.silent = False  # an answer counted but not printed
        self.unmetered = 0  # blocks still to print before the one carrying the usage

    # -- shapes -------------------------------------------------------------------------

    def stamped(self, record: dict[str, object]) -> dict[str, object]:
        record["__timestamp"] = self.ids.iso()
        if self.first_turn:
            record["_requestId"] = self.request_id
        return record

    def emit(self, record: dict[str, object]) -> None:
        if record.get("type") != "system":
            self.turns += 1
        if not self.silent:
            super().emit(record)

    def _on_unprinted_answer(self, arg: object) -> None:
        """
        The prose answer that ends the re-asking: counted (``num_turns``,
        usage), kept in the json array, but not printed on stream-json.
        """
        self.silent = True
        try:
            self._on_text(text_arg("unprinted_answer", arg, ""))
        finally:
            self.silent = False

    def _snapshot(self) -> dict[str, object]:
        snapshot: dict[str, object] = {
            "type": "file-history-snapshot",
            "id": self.ids.uuid4(),
            "timestamp": self.ids.now_ms,
            "isSnapshotUpdate": False,
            "snapshot": {"messageId": self.ids.uuid4(), "trackedFileBackups": {}},
        }
        self.items.append(dict(snapshot))
        return self.stamped(snapshot)

    def init_records(self) -> list[dict[str, object]]:
        permission = self.ctx.parsed.text("permission_mode") or "default"
        if self.ctx.parsed.flag("skip_permissions"):
            permission = "bypassPermissions"
        init = self.stamped(
            {
                "type": "system",
                "subtype": "init",
                "uuid": self.session_id,
                "session_id": self.session_id,
                "apiKeySource": API_KEY_SOURCE,
                "cwd": self.ctx.cwd,
                "tools": list(TOOLS),
                "mcp_servers": [],
                "model": self.model,
                "permissionMode": permission,
                "slash_commands": list(SLASH_COMMANDS),
                "output_style": "default",
            }
        )
        status = self.stamped(
            {
                "type": "system",
                "subtype": "status",
                "status": None,
                "uuid": self.ids.uuid4(),
                "session_id": self.session_id,
            }
        )
        prompt = self.ctx.prompt or ""
        texts = [*REMINDERS, f"<user_query>{prompt}</user_query>"]
        self.parent = self.ids.uuid4()
        self.items.append(
            {
                "type": "message",
                "role": "user",
                "content": [{"type": "input_text", "text": text} for text in texts],
                "providerData": {"agent": "cli"},
                "id": self.parent,
                "timestamp": self.ids.now_ms,
                "sessionId": self.session_id,
            }
        )
        return [init, status, self._snapshot()]

    def _completion(self, message_id: str) -> str:
        if message_id not in self.completion_ids:
            self.completion_ids[message_id] = f"chatcmpl-{self.ids.hex(29)}"
            self.answered += 1
        return self.completion_ids[message_id]

    def _provider_data(self, usage: bool) -> dict[str, object]:
        data: dict[str, object] = {
            "messageId": self.ids.hex(32),
            "model": self.model,
            "requestModelId": self.model,
            "requestModelName": MODEL_NAME,
            "traceId": self.trace[0],
            "conversationRequestId": self.trace[1],
        }
        if usage:
            data["rawUsage"] = _raw_usage(INPUT_TOKENS, OUTPUT_TOKENS)
        data["agent"] = "cli"
        return data

    def _usage_item(self) -> dict[str, object]:
        return {
            "requests": 1,
            "inputTokens": INPUT_TOKENS,
            "outputTokens": OUTPUT_TOKENS,
            "totalTokens": INPUT_TOKENS + OUTPUT_TOKENS,
            "inputTokensDetails": [{"cached_tokens": 0}],
            "outputTokensDetails": [{"reasoning_tokens": 0}],
        }

    def assistant_record(self, message_id: str, block: dict[str, object]) -> dict[str, object]:
        # A message's usage is on its last block's record; the ones before show none
        # (two calls in one message, capture two-calls-one-message).
        metered = self.unmetered == 0
        self.unmetered = max(0, self.unmetered - 1)
        completion = self._completion(message_id)
        tool = block.get("type") == "tool_use"
        self._assistant_item(completion, block)
        message = {
            "id": completion,
            "content": [block],
            "model": self.model,
            "role": "assistant",
            "stop_reason": "tool_use" if tool else None,
            "stop_sequence": None,
            "type": "message",
            "usage": _usage(1 if metered else 0),
        }
        return self.stamped(
            {
                "type": "assistant",
                "uuid": completion,
                "session_id": self.session_id,
                "message": message,
                "parent_tool_use_id": None,
            }
        )

    def _assistant_item(self, completion: str, block: dict[str, object]) -> None:
        data = self._provider_data(usage=True)
        when = self.ids.now_ms
        if block.get("type") == "tool_use":
            data["argumentsDisplayText"] = ""
            data["usage"] = self._usage_item()
            item: dict[str, object] = {
                "providerData": data,
                "id": completion,
                "type": "function_call",
                "callId": block["id"],
                "name": block["name"],
                "arguments": json.dumps(block["input"], separators=(",", ":"), ensure_ascii=False),
                "timestamp": when,
                "sessionId": self.session_id,
                "parentId": self.parent,
            }
        else:
            data["usage"] = self._usage_item()
            part = {
                "providerData": {"annotations": []},
                "type": "output_text",
                "text": block["text"],
            }
            item = {
                "id": completion,
                "type": "message",
                "role": "assistant",
                "status": "completed",
                "content": [part],
                "timestamp": when,
                "providerData": data,
                "sessionId": self.session_id,
                "parentId": self.parent,
            }
        self.items.append(item)
        self.parent = completion

    def tool_call(self, name: str, tool_input: object, given: str | None = None) -> str:
        block_id = given or f"call_{self.ids.hex(24)}"
        return super().tool_call(name, tool_input, block_id)

    def tool_result_record(
        self, tool_id: str, content: str, error: str | None
    ) -> dict[str, object]:
        """CodeBuddy marks no StructuredOutput result as an error: the text says it."""
        self.ids.advance(4, 16)
        text = content if error is None else error
        call = next(i for i in reversed(self.items) if i.get("callId") == tool_id)
        data = self._provider_data(usage=False)
        data["toolResult"] = {"content": text, "renderer": {"type": "text"}}
        result_id = self.ids.uuid4()
        self.items.append(
            {
                "type": "function_call_result",
                "name": call["name"],
                "callId": tool_id,
                "status": "completed",
                "output": {"type": "text", "text": text},
                "timestamp": self.ids.now_ms,
                "providerData": data,
                "id": result_id,
                "sessionId": self.session_id,
                "parentId": self.parent,
            }
        )
        self.parent = result_id
        block = {
            "type": "tool_result",
            "tool_use_id": tool_id,
            "content": [{"type": "text", "text": text}],
            "is_error": False,
        }
        return self.stamped(
            {
                "type": "user",
                "uuid": self.ids.uuid4(),
                "session_id": self.session_id,
                "message": {"content": [block], "role": "user"},
                "parent_tool_use_id": tool_id,
            }
        )

    def _on_structured_output_rejected(self, arg: object) -> None:
        if isinstance(arg, dict) and "error" not in arg:
            arg = {**arg, "error": DEFAULT_REJECTION}
        super()._on_structured_output_rejected(arg)

    def _on_structured_output(self, arg: object) -> None:
        tool_id = self._assistant_tool(arg)
        self._close_message()
        self.emit(self.tool_result_record(tool_id, TOOL_ACCEPTED, None))
        self.state.user_lines += 1
        self.state.accepted = (arg,)

    def _on_structured_output_calls(self, arg: object) -> None:
        """
        Several StructuredOutput calls in one message: every call is printed, then
        every result (``{"input": V}`` is taken, ``{"input": V, "error": E}`` gets
        the validation message E; ``id`` names the call); the last call taken is kept.
        """
        if not isinstance(arg, list) or not arg:
            raise ScriptError("event 'structured_output_calls': give a list of calls")
        calls = [dict_arg("structured_output_calls", call) for call in arg]
        answers = []
        self.unmetered = len(calls) - 1
        for call in calls:
            error = call.get("error")
            if error is not None and not isinstance(error, str):
                raise ScriptError("event 'structured_output_calls': 'error' must be a string")
            given = call.get("id")
            tool_id = self.tool_call(
                "StructuredOutput", call.get("input", {}), given if isinstance(given, str) else None
            )
            answers.append((tool_id, call.get("input"), error))
        self._close_message()
        for tool_id, value, error in answers:
            self.emit(self.tool_result_record(tool_id, error or TOOL_ACCEPTED, None))
            self.state.user_lines += 1
            if error is None:
                self.state.accepted = (value,)
            else:
                self.state.rejections += 1
                self.state.last_rejection = error

    def _on_recovery(self, arg: object) -> None:
        """
        A call to a tool the CLI does not have: the request is sent again, with
        a recovery note in the prompt; a snapshot shows it, the turn goes on.
        """
        self._close_message()
        self.ids.advance(4, 10)
        self.emit(self._snapshot())

    def _on_enforce_reminder(self, arg: object) -> None:
        """The re-ask after prose is sent, not printed: a snapshot shows it."""
        text_arg("enforce_reminder", arg, "")
        self._close_message()
        self.first_turn = False
        self.ids.advance(4, 10)
        self.emit(self._snapshot())

    def synthetic_record(self, text: str, error: str) -> dict[str, object]:
        """An API error shown as assistant text: a uuid for an id, no usage."""
        record_id = self.ids.uuid4()
        message = {
            "id": record_id,
            "content": [{"type": "text", "text": text}],
            "model": self.model,
            "role": "assistant",
            "stop_reason": None,
            "stop_sequence": None,
            "type": "message",
            "usage": _usage(0),
        }
        return self.stamped(
            {
                "type": "assistant",
                "uuid": record_id,
                "session_id": self.session_id,
                "message": message,
                "parent_tool_use_id": None,
            }
        )

    def result_record(self, fields: dict[str, object]) -> dict[str, object]:
        subtype, is_error = outcome(fields)
        duration = self.ids.elapsed_ms() + 40 + self.ids.below(120)
        record: dict[str, object] = {"type": "result", "subtype": subtype, "is_error": is_error}
        if subtype == "success":
            text = fields.get("result", self.state.last_text or "")
            record["result"] = text if isinstance(text, str) else ""
        record.update(
            uuid=self.ids.uuid4(),
            session_id=self.session_id,
            duration_ms=duration,
            duration_api_ms=max(0, duration - 10 - self.ids.below(60)),
            num_turns=self.turns,
            total_cost_usd=0,
            usage=_usage(self.answered),
            permission_denials=[],
        )
        value = structured(self.state, fields) if subtype == "success" else None
        if subtype != "success":
            max_turns = self.ctx.parsed.text("max_turns")
            record["errors"] = errors(self.state, subtype, fields, self.ctx.env, max_turns)
        if value is not None and self.mode != "json":
            record["structured_output"] = value[0]
        record["__timestamp"] = self.ids.iso()
        if value is not None and self.mode == "json":
            record["structured_output"] = value[0]
        return finalize(record, fields)

    def print_result(self, record: dict[str, object]) -> None:
        if self.mode == "json":
            if self.ctx.json_shape == "object":
                self.write_json(record)
            else:
                document = [*self.items, record]
                self.write_text(dumps_js(document, indent=2))  # JSON.stringify(.., null, 2)
        elif self.mode == "stream-json":
            self.write_json(record)
        else:
            self.write_text(text_mode_line(record, self.ctx.parsed.text("max_turns")))


class CodeBuddyCli(ClaudeCli):
    """``codebuddy -p``: Claude Code's command line plus ``-y`` and ``--system-prompt-file``."""

    name = "codebuddy"
    renderer = CodeBuddyRenderer
    events = ClaudeCli.events | {"unprinted_answer", "structured_output_calls", "recovery"}
    options = (
        *CLAUDE_OPTIONS,
        (("-y",), "skip_permissions", FLAG, "", ()),
        (("--system-prompt-file",), "system_prompt_file", VALUE, "file", ()),
    )


CLI = CodeBuddyCli()
