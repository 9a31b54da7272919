"""
Claude Code's streaming input: the conversation an Agent SDK holds on stdin.

The Agent SDKs run ``claude --output-format stream-json --verbose ...
--input-format stream-json`` with no prompt argument and keep stdin open.
They first send control requests (``initialize``) and wait for each
``control_response`` on stdout before they send the prompt as a stream-json
``user`` line; they close stdin only when they are done with the session
(the Python SDK's one-shot ``query()`` right after the user line, a client
with hooks or permission callbacks only once the run has ended).  A fake
that read stdin to its end before answering would deadlock with them.

So the executable holds a `Conversation` instead: it reads stdin line by line, answers
every control request at once, and stops at the first user line.  What it
read is then handed to `replay` as that launch's stdin, which finds the
prompt in it (`first_user_message`) exactly as the in-process path does
with stdin bytes given up front, so the launch record carries the prompt the
SDK sent.  The script is replayed as in ordinary stream-json mode; then, like
the real CLI, the process waits for the end of its input before it exits,
still answering control requests.  Only the control responses are printed
outside `replay`: they depend on what the SDK sends, not on the script.

The shapes follow Claude Code 2.1.332, the build bundled with
claude-agent-sdk 0.2.189, run without a login: it answers ``initialize``
with the payload `initialize_response` mirrors (long descriptions and the
model table left out), prints nothing and exits 0 when its input ends
before a user line, and after a result waits for the end of its input.  It
also sends ``session_state_changed`` frames when asked to with
``CLAUDE_CODE_SDK_READS_SESSION_STATE``; whether 2.1.328 does is not known,
so the fake sends none, which the SDKs treat as an older CLI.
"""

from __future__ import annotations

import json
import os

from providers_fake.bounded import LIMIT, TooLarge
from providers_fake.cli.claude import data

TYPE_CHECKING = False
if TYPE_CHECKING:
    from providers_fake.cli.argv import Parsed

# Requests the fake answers before the prompt with an empty success (besides initialize).
_EMPTY_SUCCESS = frozenset(
    {"interrupt", "set_permission_mode", "set_model", "set_max_thinking_tokens"}
)
_OUTPUT_STYLES = ["default", "Proactive", "Concise", "Explanatory", "Learning"]
_INITIALIZE_CAPABILITIES = [
    "ui_surface_v1",
    "mcp_call_result_not_for_model_v1",
    "mcp_call_soft_error_result_v1",
    "mcp_call_check_permissions_v1",
    "voice_call_talk_line_v1",
    "ui_pane_widget_v1",
    "reload_plugins_refuse_if_busy_v1",
    "get_usage_detached_v1",
]


def is_stream_input(parsed: Parsed) -> bool:
    """Whether the command line asks for an SDK's stream-json input."""
    return parsed.text("input_format") == "stream-json"


def first_user_message(stdin: str) -> str | None:
    """The prompt an SDK sent as a stream-json user line (control lines are skipped)."""
    for line in stdin.split("\n"):  # JSON lines end at LF only, never at U+2028
        message = _message(line)
        if message is None or message.get("type") != "user":
            continue
        body = message.get("message")
        content = body.get("content") if isinstance(body, dict) else None
        if isinstance(content, str):
            return content
        if isinstance(content, list):
            texts = [b.get("text") for b in content if isinstance(b, dict)]
            return "".join(t for t in texts if isinstance(t, str))
    return None


class Conversation:
    """The fake's side of one SDK's stdin: control requests answered as they come."""

    def __init__(self, read_fd: int = 0, write_fd: int = 1) -> None:
        self.read_fd = read_fd
        self.write_fd = write_fd
        self.pending = bytearray()  # read, but not yet a whole line

    def read(self, *, to_end: bool = False) -> bytes:
        """
        Read up to and including the first user line (with `to_end`: to the end
        of input, past any user line), answering each control request as soon
        as its line is complete.  Returns the lines read.
        """
        consumed = bytearray()
        fresh = True  # whether pending may hold a newline not looked at yet
        while True:
            while fresh and b"\n" in self.pending:
                line, _, rest = self.pending.partition(b"\n")
                self.pending = bytearray(rest)
                consumed += line + b"\n"
                message = _message(bytes(line))
                if message is None:
                    continue  # blank or foreign lines carry nothing for the fake
                if message.get("type") == "user" and not to_end:
                    return bytes(consumed)
                if message.get("type") == "control_request":
                    _write_all(self.write_fd, (json.dumps(respond(message)) + "\n").encode())
            try:
                chunk = os.read(self.read_fd, 65536)
            except OSError:
                chunk = b""
            if not chunk:
                consumed += self.pending
                self.pending = bytearray()
                return bytes(consumed)
            self.pending += chunk
            fresh = b"\n" in chunk  # a line without end is not scanned again per read
            if len(self.pending) + len(consumed) > LIMIT:
                raise TooLarge  # an endless stdin (/dev/zero) must not fill the memory


def respond(message: dict[str, object]) -> dict[str, object]:
    """The control_response line answering one control_request."""
    request_id = message.get("request_id")
    request = message.get("request")
    subtype = request.get("subtype") if isinstance(request, dict) else None
    answer: dict[str, object] = {"subtype": "success", "request_id": request_id}
    if subtype == "initialize":
        answer["response"] = initialize_response()
        answer["pending_permission_requests"] = []
        answer["pending_user_dialog_requests"] = []
    elif subtype == "mcp_status":
        answer["response"] = {"mcpServers": []}
    elif subtype in _EMPTY_SUCCESS:
        answer["response"] = {}
    else:
        answer = {
            "subtype": "error",
            "request_id": request_id,
            "error": f"Unsupported control request subtype: {subtype}",
        }
    return {"type": "control_response", "response": answer}


def initialize_response() -> dict[str, object]:
    """What the fake tells an SDK about itself in answer to ``initialize``."""
    home = os.environ.get("HOME", "")
    return {
        "commands": [
            {"name": name, "description": "", "argumentHint": "", "builtin": True}
            for name in data.SLASH_COMMANDS
        ],
        "agents": [{"name": name, "description": ""} for name in data.AGENTS],
        "output_style": "default",
        "available_output_styles": list(_OUTPUT_STYLES),
        "user_output_styles_dir": f"{home}/.claude/output-styles",
        "models": [
            {"value": "default", "resolvedModel": data.DEFAULT_MODEL, "displayName": "Default"}
        ],
        "account": {"tokenSource": "none", "apiProvider": "firstParty"},
        "pid": os.getpid(),
        "claude_code_version": data.VERSION,
        "current_permission_mode": "default",
        "hook_on_failure_supported": True,
        "analytics_disabled": True,
        "sandbox_enabled": False,
        "fast_mode_state": "off",
        "fast_mode_disabled_reason": "sdk_opt_in_required",
        "session_state": "idle",
        "capabilities": list(_INITIALIZE_CAPABILITIES),
    }


def _message(line: str | bytes) -> dict[str, object] | None:
    try:
        message = json.loads(line)
    except ValueError:
        return None
    return message if isinstance(message, dict) else None


def _write_all(fd: int, payload: bytes) -> None:
    view = memoryview(payload)
    try:
        while view:
            view = view[os.write(fd, view) :]
    except BrokenPipeError:
        pass  # the SDK went away; the session ends when its stdin does
