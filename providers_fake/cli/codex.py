"""
Fake Codex: ``codex exec`` as a launch sees it, and its events as ``--json`` prints them.

Codex numbers items ``item_0``, ``item_1``... per process, in emission order,
and decides its exit status from one "an error was seen" flag: a failed turn
or a top-level ``error`` that will not be retried.  ``Reconnecting...``
errors are retries, so they leave the status alone, as in the real CLI.
Without ``--json`` Codex prints only the final agent message on stdout.

Before any of that, `CodexCli` holds what Codex does differently from the
JavaScript CLIs: clap's parser behind an ``exec`` subcommand, a schema given
as a file (read, and refused, before the run), and a prompt read from stdin
even when it is blank.
"""

from __future__ import annotations

import json
import re

from providers_fake.bounded import read_file
from providers_fake.cli.argv import FLAG, MULTI, VALUE, Clap
from providers_fake.cli.base import Cli, Context, Renderer, dict_arg, text_arg

TYPE_CHECKING = False
if TYPE_CHECKING:
    from providers_fake.cli.argv import Option, Parsed
    from providers_fake.cli.base import Refusal

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
# Python's json messages that serde_json words differently; the rest only lose their capital.
_SERDE_WORDING = {"Expecting value": "expected value", "Extra data": "trailing characters"}
_USAGE = "Usage: codex exec [OPTIONS] [PROMPT]\n\nFor more information, try '--help'.\n"

_OPTIONS: tuple[Option, ...] = (
    (("--json", "--experimental-json"), "json", FLAG, "", ()),
    (("--skip-git-repo-check",), "skip_git_repo_check", FLAG, "", ()),
    (("--output-schema",), "output_schema", VALUE, "FILE", ()),
    (("-m", "--model"), "model", VALUE, "MODEL", ()),
    (("-c", "--config"), "config", MULTI, "key=value", ()),
    (("-o", "--output-last-message"), "output_last_message", VALUE, "FILE", ()),
    (
        ("-s", "--sandbox"),
        "sandbox",
        VALUE,
        "SANDBOX_MODE",
        ("read-only", "workspace-write", "danger-full-access"),
    ),
    (("--full-auto",), "full_auto", FLAG, "", ()),
    (("--dangerously-bypass-approvals-and-sandbox",), "bypass", FLAG, "", ()),
    (("-C", "--cd"), "cd", VALUE, "DIR", ()),
    (("--color",), "color", VALUE, "COLOR", ("always", "never", "auto")),
    (("-p", "--profile"), "profile", VALUE, "CONFIG_PROFILE", ()),
    (("-i", "--image"), "image", MULTI, "FILE", ()),
    (("--oss",), "oss", FLAG, "", ()),
)


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

    def _on_thread_started(self, arg: object) -> None:
        thread_id = text_arg("thread.started", arg, "") or self.ids.uuid7()
        self._line({"type": "thread.started", "thread_id": thread_id})

    def _on_turn_started(self, arg: object) -> None:
        self._line({"type": "turn.started"})

    def _on_warning(self, arg: object) -> None:
        default = (
            f"Model metadata for `{self.model}` not found. Defaulting to fallback metadata; "
            "this can degrade performance and cause issues."
        )
        self._item("item.completed", "error", "message", text_arg("warning", arg, default))

    def _on_agent_message(self, arg: object) -> None:
        text = text_arg("agent_message", arg, "")
        self._item("item.completed", "agent_message", "text", text)
        self.last_message = text

    def _on_agent_message_started(self, arg: object) -> None:
        text = text_arg("agent_message.started", arg, "")
        self.started_item = self._item("item.started", "agent_message", "text", text)

    def _on_reasoning(self, arg: object) -> None:
        self._item("item.completed", "reasoning", "text", text_arg("reasoning", arg, ""))

    def _on_error(self, arg: object) -> None:
        message = text_arg("error", arg, STREAM_ERROR)
        self._line({"type": "error", "message": message})
        if not message.startswith("Reconnecting..."):
            self.error_seen = True
            self.last_error = message
        if not self.jsonl:
            self.out.stderr(f"ERROR: {message}\n".encode())

    def _on_turn_completed(self, arg: object) -> None:
        self._line({"type": "turn.completed", "usage": _usage(arg)})
        self.turn_completed = True

    def _on_turn_failed(self, arg: object) -> None:
        message = text_arg("turn.failed", arg, self.last_error or "turn failed")
        self._line({"type": "turn.failed", "error": {"message": message}})
        self.error_seen = self.turn_failed = True
        self.last_message = None  # a failed turn has no final message

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


class CodexCli(Cli):
    """``codex exec``: clap, an ``exec`` subcommand, and a schema given as a file."""

    name = "codex"
    renderer = CodexRenderer
    events = frozenset(
        {
            "thread.started",
            "turn.started",
            "warning",
            "agent_message",
            "agent_message.started",
            "reasoning",
            "error",
            "turn.completed",
            "turn.failed",
        }
    )
    options = _OPTIONS
    dialect = Clap(_USAGE)
    max_positionals = 1

    def arguments(self, words: list[str], parsed: Parsed) -> list[str]:
        # Global options (`codex -c k=v exec ...`) may come first; skip them and their values.
        takes_value = {flag for option in _OPTIONS if option[2] != FLAG for flag in option[0]}
        index = 0
        while index < len(words):
            word = words[index]
            if word in ("exec", "e"):
                return words[:index] + words[index + 1 :]
            if word == "--" or not word.startswith("-"):
                break
            index += 2 if word in takes_value else 1
        parsed.fail("fake-codex: only the `codex exec` subcommand is supported\n")
        return words

    def output_format(self, parsed: Parsed) -> str:
        return "jsonl" if parsed.flag("json") else "text"

    def positional_prompt(self, parsed: Parsed) -> str | None:
        if not parsed.positionals or parsed.positionals[0] == "-":
            return None  # `-` asks for the prompt on stdin
        return parsed.positionals[0]

    def prompt(self, parsed: Parsed, stdin: str | None) -> str | None:
        # Unlike the JavaScript CLIs, Codex takes stdin as it is, blank or not.
        return parsed.prompt if parsed.prompt is not None else stdin

    def preflight(self, parsed: Parsed, stdin: str | None, prompt: str | None) -> Refusal | None:
        path = parsed.text("output_schema")
        if path is not None:
            try:
                data = read_file(path)
            except OSError as error:
                reason = f"{error.strerror} (os error {error.errno})"
                return f"Failed to read output schema file {path}: {reason}\n", 1
            problem = serde_problem(data.decode(errors="replace"))
            if problem is not None:
                return f"Output schema file {path} is not valid JSON: {problem}\n", 1
        if parsed.prompt is None:
            if stdin is None:
                return (
                    "No prompt provided. Either specify one as an argument or pipe the prompt "
                    "into stdin.\n",
                    1,
                )
            if not stdin.strip():
                return "No prompt provided via stdin.\n", 1
        return None

    def received_schema(self, parsed: Parsed) -> object:
        path = parsed.text("output_schema")
        if path is None:
            return None
        try:
            return json.loads(read_file(path))
        except (OSError, ValueError, RecursionError):
            return None


#: A JSON string literal, and one escape inside it (in text Python's json has read).
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_ESCAPE = re.compile(r"\\(?:u([0-9a-fA-F]{4})|.)", re.DOTALL)
_LONE = "lone leading surrogate in hex escape"


def serde_problem(text: str) -> str | None:
    """
    serde_json's message for a schema file's text, or None when it reads it.
    Python's reader is more lenient in two ways serde_json is not: a leading
    byte-order mark (serde_json expects a value there) and an escaped UTF-16
    surrogate without its other half (serde_json reads into UTF-8 strings).
    """
    if text.startswith("\ufeff"):
        return f"expected value at {_serde_place(text, 0)}"
    try:
        json.loads(text)
    except json.JSONDecodeError as error:
        return serde_message(text, error)
    return _lone_surrogate(text)


def _lone_surrogate(text: str) -> str | None:
    """
    serde_json's message for the first escaped surrogate without its pair, in
    text that is otherwise valid JSON: a trailing half alone, or a leading
    half followed by anything but an escaped trailing half.  It stops after
    the last hex digit, or just past the character that is not ``\\u``.
    """
    for string in _STRING.finditer(text):
        escapes = list(_ESCAPE.finditer(text, string.start() + 1, string.end() - 1))
        at = 0
        while at < len(escapes):
            first = escapes[at]
            code = int(first[1], 16) if first[1] else None
            at += 1
            if code is None or not 0xD800 <= code <= 0xDFFF:
                continue
            if code >= 0xDC00:
                return f"{_LONE} at {_serde_place(text, first.end() - 1)}"
            after = first.end()
            if text[after] != "\\" or text[after + 1] != "u":
                stop = after if text[after] != "\\" else after + 1
                return f"unexpected end of hex escape at {_serde_place(text, stop)}"
            second = escapes[at]
            at += 1
            if not 0xDC00 <= int(second[1], 16) <= 0xDFFF:
                return f"{_LONE} at {_serde_place(text, second.end() - 1)}"
    return None


def serde_message(text: str, error: ValueError) -> str:
    """
    serde_json's wording for the first thing it stumbles on, as codex prints it:
    ``expected value at line 1 column 1``.  A bare word starting like ``null``,
    ``true`` or ``false`` is read letter by letter ("expected ident" at the first
    letter that differs); running out of text is "EOF while parsing a value" at
    the last character; a comma before ``]`` or ``}`` is a "trailing comma".
    """
    if not isinstance(error, json.JSONDecodeError):
        return str(error)
    start = len(text) - len(text.lstrip())
    for word in ("null", "true", "false"):
        given = text[start : start + len(word)]
        if given[:1] != word[0]:
            continue
        wrong = next((i for i, c in enumerate(given) if c != word[i]), None)
        if wrong is not None:
            return f"expected ident at {_serde_place(text, start + wrong)}"
        if len(given) < len(word):
            return f"EOF while parsing a value at {_serde_place(text, start + len(given) - 1)}"
    if error.pos >= len(text.rstrip()) or error.msg.startswith("Unterminated string"):
        return f"EOF while parsing {_open_at_end(text)} at {_serde_place(text, len(text) - 1)}"
    before = text[: error.pos].rstrip()
    if before.endswith(",") and text[error.pos : error.pos + 1] in ("]", "}"):
        return f"trailing comma at {_serde_place(text, error.pos)}"
    message = _SERDE_WORDING.get(error.msg) or error.msg[:1].lower() + error.msg[1:]
    return f"{message} at {_serde_place(text, error.pos)}"


def _open_at_end(text: str) -> str:
    """
    What serde_json was in the middle of when ``text`` ran out: "an object"
    while it waits for a key, a colon, a comma or ``}``, "a list" after ``[``
    or an item, "a string" inside one, else "a value".
    """
    stack: list[str] = []
    wants_value = True
    inside = escaped = False
    for char in text:
        if inside:
            inside = escaped or char != '"'
            escaped = not escaped and char == "\\"
            if not inside:
                wants_value = False
        elif char == '"':
            inside = True
        elif char in "{[":
            stack.append(char)
            wants_value = char == "["
        elif char in "}]":
            stack = stack[:-1]
            wants_value = False
        elif char == ":":
            wants_value = True
        elif char == ",":
            wants_value = bool(stack) and stack[-1] == "["
        elif not char.isspace():
            wants_value = False
    if inside:
        return "a string"
    if not stack:
        return "a value"
    if stack[-1] == "{":
        return "a value" if wants_value and text.rstrip().endswith(":") else "an object"
    return "a list" if text.rstrip().endswith("[") or not wants_value else "a value"


def _serde_place(text: str, offset: int) -> str:
    """Where serde_json stopped, at ``text[offset]``: its column counts UTF-8 bytes."""
    line = text.count("\n", 0, offset) + 1
    start = text.rfind("\n", 0, offset) + 1
    column = len(text[start:offset].encode("utf-8", "surrogatepass")) + 1
    return f"line {line} column {column}"


CLI = CodexCli()
