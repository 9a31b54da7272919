"""
A reference model of ``codebuddy -p --json-schema SCHEMA`` towards an OpenAI Chat Completions API.

CodeBuddy Code 2.117.0 (docs/codebuddy.md) posts streamed ``/chat/completions``
requests carrying a ``StructuredOutput`` function (``strict: false``) and
prints Claude Code's conversation in records of its own.  This model makes
the same requests in process (a `harness.net` client on the fake API's transport,
as the Claude and Codex models do), reads each streamed answer, lets the
rules of `harness.systems.codebuddy.Loop` decide what the CLI does next, and
prints with `fake-codebuddy`'s renderer (`providers_fake.cli.codebuddy`),
which was rebuilt field by field from the captures: stream-json records in
the CLI's key order, the json array of session items, the text line.

What a request carries after the prompt (the assistant messages with their
``tool_calls``, the ``tool`` results, the re-ask) is CodeBuddy's, as the
captures keep it (role, content, tool_calls, tool_call_id); the system prompt,
the reminders in the prompt message and the trace fields CodeBuddy adds to
every message are stand-ins.  The StructuredOutput parameters are the schema
as JavaScript re-serializes it, or the ``{data: object}`` wrapper when the
schema is not JSON; the binary races on them at start-up (some first
requests carry the wrapper), which the model does not.  A schema that is not
JSON, or not JSON Schema, judges nothing: every call is accepted.

A run the binary never ends by itself (C-05, C-07, the endless C-02) is shown
as killed at its caller's timeout: what was printed stays, exit -9.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness import net
from harness.catalogue import jsonvalue
from harness.catalogue.lines import sse_lines
from harness.systems import codebuddy as rules
from harness.systems.claude import validator
from harness.systems.profiles import CodeBuddyProfile
from providers_fake.api.script import STRUCTURED_OUTPUT
from providers_fake.cli.base import Context
from providers_fake.cli.claude.result import ABSENT
from providers_fake.cli.codebuddy import CLI, DEFAULT_MODEL, REMINDERS, CodeBuddyRenderer
from providers_fake.cli.ids import Ids
from providers_fake.cli.jsonout import dumps_js, loads_js
from providers_fake.cli.types import Output

if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping

USER_AGENT = "CLI/2.117.0 CodeBuddy/2.117.0"
#: The exit code of a run killed at its caller's timeout (SIGKILL).
KILLED = -9
#: Where the model stops a run the binary would re-ask without end (C-02).
MAX_REQUESTS = 64
TOOL_DESCRIPTION = (
    "Use this tool to return your final response in the requested structured format. "
    "You MUST call this tool exactly once at the end of your response to provide the "
    "structured output.\n"
)
TOOL_ACCEPTED = "Structured output captured successfully"


def reask_text(schema_text: str) -> str:
    """
    The re-ask after a turn without an accepted call (C-03), as the captures show
    it: the ``--json-schema`` argument quoted as given.
    """
    return (
        "<user_query>You MUST call the StructuredOutput tool to complete this request.\n"
        "The tool parameters must match this JSON Schema:\n\n"
        f"{schema_text}\n\nCall the StructuredOutput tool now with the appropriate data."
        "</user_query>"
    )


def recovery_text(name: str) -> str:
    """
    The note CodeBuddy Code 2.117.0 sends after a call to a tool it does not have
    (C-04), as it reaches the API (probed: the wire text, kept so the requests agree).
    """
    return (
        '<system-reminder data-role="error-recovery">\n## Model error retry: Tool Not Found\n\n'
        f'You attempted to call a tool named "{name}" but it does not exist in the current '
        "tool set.\n\nPlease check:\n1. Did you misspell the tool name? Common tool names "
        "include: Read, Write, Edit, Bash, Glob, Grep, Agent, WebFetch, WebSearch, etc.\n"
        "2. Is this tool available in the current context?\n\nIf you made a typo, please "
        "retry with the correct tool name.\nIf the tool genuinely doesn't exist, try to "
        "accomplish your goal using other available tools.\n</system-reminder>"
    )


#: The note after a cut stream (C-06), as it reaches the API (probed).
NETWORK_NOTE = (
    '<system-reminder data-role="error-recovery">Network error occurred, please continue'
    "</system-reminder>"
)


@dataclass(frozen=True)
class CodeBuddyRun:
    """What the modelled CLI did: its exit status, stdout bytes and stderr text."""

    exit_code: int
    stdout: bytes
    stderr: str
    timed_out: bool = False


@dataclass(frozen=True)
class ToolSchema:
    """The ``--json-schema`` as the CLI takes it: what it sends, and how it judges a call."""

    text: str
    parameters: object
    judges: bool
    #: Whether a turn without an accepted call is re-asked (C-03): only when the text
    #: parses as a JSON object or array (probed: not for ``true``, ``5``, ``null`` or
    #: ``not json``, whatever the turn said).
    reasks: bool = True

    @classmethod
    def of(cls, text: str, profile: CodeBuddyProfile) -> ToolSchema:
        try:
            value = loads_js(text)
        except ValueError:
            value = None
        if not isinstance(value, dict):
            wrapper = profile.structured_output_parameters.get("invalid_schema")
            return cls(text, wrapper, False, isinstance(value, list))
        # The parameters are the schema as JSON.parse read it (an integer past 2**53
        # rounded), as the binary sends it again.
        compiled = validator.compile_schema(text, formats=True)
        return cls(text, value, not isinstance(compiled, validator.Refusal))

    def verdict(self, arguments: str) -> str | None:
        """The validation message for a call's arguments, None when accepted."""
        if not self.judges:
            return None
        # CodeBuddy Code's Ajv, beside Claude Code's (probed on 2.117.0): each error without
        # the detail Claude Code adds, the input as it came (a number or an array against an
        # object schema is `root: must be object`), exact multipleOf quotients (0.3 is no
        # multiple of 0.1), and format checks on with no format known (a schema naming any
        # `format` does not compile, so every call is taken: `of`).
        verdict = validator.check(
            self.text, arguments, params=False, raw=True, precision=None, formats=True
        )
        return verdict.error


@dataclass
class _Answer:
    """One streamed answer, as the CLI assembles it."""

    id: str = ""
    text: str = ""
    calls: list[dict[str, str]] = field(default_factory=list)
    done: bool = False
    error: str | None = None


class _Renderer(CodeBuddyRenderer):
    """fake-codebuddy's records, with the API's completion ids and CodeBuddy's exit status."""

    upstream = ""

    def _completion(self, message_id: str) -> str:
        if message_id not in self.completion_ids and self.upstream:
            self.completion_ids[message_id] = self.upstream
            self.answered += 1
        return super()._completion(message_id)

    def finish(self) -> int:
        return 0  # CodeBuddy exits 0 whenever it prints a result, errors included

    def synthetic_record(self, text: str, error: str) -> dict[str, object]:
        """An error shown as text is an assistant message item of the json array too (fuzzed)."""
        part = {"type": "output_text", "text": text}
        item = {"type": "message", "role": "assistant", "status": "completed", "content": [part]}
        self.items.append({**item, "sessionId": self.session_id, "parentId": self.parent})
        return super().synthetic_record(text, error)

    def print_result(self, record: dict[str, object]) -> None:
        """
        On json and text an error result is its errors on stderr, nothing on
        stdout; on text a result that is JSON is printed again by JavaScript,
        indented by two (probed: ``1e-7``, ``1`` for ``1.0``, integer-like keys first).
        """
        errors = record.get("errors")
        failed = record.get("subtype") != "success" and isinstance(errors, list)
        if self.mode in ("json", "text") and failed and isinstance(errors, list):
            self.ctx.out.stderr("".join(f"{error}\n" for error in errors).encode())
            return
        text = record.get("result")
        if self.mode == "text" and isinstance(text, str):
            try:
                jsonvalue.loads(text)
            except ValueError:
                pass
            else:  # JSON.stringify(JSON.parse(text), null, 2): JavaScript's numbers and key order
                self.write_text(dumps_js(validator.normalized(text), indent=2))
                return
        super().print_result(record)


def run_codebuddy(
    client: net.Client,
    *,
    prompt: str,
    schema: str,
    output_format: str = "stream-json",
    max_turns: int | None = None,
    env: Mapping[str, str] | None = None,
    base_url: str,
    seed: str = "reference",
    timeout: float | None = None,
    workdir: Path | None = None,
    version: str | None = None,
) -> CodeBuddyRun:
    """
    One ``codebuddy -p --output-format F [--verbose] --json-schema SCHEMA
    [--max-turns N] PROMPT`` run against ``base_url`` (the ``CODEBUDDY_BASE_URL``);
    with ``timeout`` it is killed when that passes (what was printed stays, exit -9).
    """
    argv = ["-p", "--output-format", output_format]
    argv += ["--verbose"] if output_format == "stream-json" else []
    argv += ["--json-schema", schema]
    argv += [] if max_turns is None else ["--max-turns", str(max_turns)]
    out = Output()
    folder = workdir or Path("/work")
    ctx = Context(
        CLI,
        parsed=CLI.parse([*argv, prompt]),
        env=dict(env or {}),
        cwd=str(folder / "probe"),
        prompt=prompt,
        ids=Ids(seed, "codebuddy"),
        out=out,
        json_shape=None,
    )
    renderer = _Renderer(ctx)
    renderer.event("init", None)
    taken = ToolSchema.of(schema, CodeBuddyProfile.of(version))
    chat = _Chat(client, base_url, prompt, taken)
    loop = rules.Loop(
        max_turns,
        reasks=rules.PROSE_REASKS if output_format != "text" and taken.reasks else 0,
        forgets=output_format == "stream-json",
        last_result=output_format != "stream-json",
    )
    killed = not chat.converse(renderer, loop, timeout)
    stdout = b"".join(c[-1] for c in out.chunks if c[0] == "stdout" and isinstance(c[-1], bytes))
    stderr = b"".join(c[-1] for c in out.chunks if c[0] == "stderr" and isinstance(c[-1], bytes))
    return CodeBuddyRun(KILLED if killed else 0, stdout, stderr.decode(), timed_out=killed)


class _Chat:
    """The conversation with the API: the messages so far, each request, each answer read."""

    def __init__(self, client: net.Client, base_url: str, prompt: str, schema: ToolSchema) -> None:
        self.client = client
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.schema = schema
        texts = [*REMINDERS, f"<user_query>{prompt}</user_query>"]
        self.messages: list[dict[str, object]] = [
            {"role": "system", "content": "You are CodeBuddy Code (reference model)."},
            {"role": "user", "content": [{"type": "text", "text": t} for t in texts]},
        ]

    def body(self) -> dict[str, object]:
        function = {
            "name": STRUCTURED_OUTPUT,
            "description": TOOL_DESCRIPTION,
            "parameters": self.schema.parameters,
            "strict": False,
        }
        return {
            "model": DEFAULT_MODEL,
            "messages": self.messages,
            "temperature": 1,
            "max_tokens": 24000,
            "reasoning_effort": "high",
            "stream": True,
            "stream_options": {"include_usage": True},
            "tools": [{"type": "function", "function": function}],
        }

    def converse(self, renderer: _Renderer, loop: rules.Loop, timeout: float | None) -> bool:
        """Ask until the rules end the run; False when it would wait (killed at the timeout)."""
        headers = {"user-agent": USER_AGENT, "authorization": "Bearer sk-fake"}
        while loop.requests < MAX_REQUESTS:
            if loop.ask() is not None:  # C-07
                renderer.event("api_error_message", {"text": rules.max_turns_text(loop.requests)})
                return False
            try:
                answer = self._post(headers, timeout, renderer)
            except net.TimeoutException:
                return False  # the caller's timeout: nothing more is printed
            if answer is None:
                return False  # C-05: shown, then waited on
            if not self._take(answer, renderer, loop):
                return True
        return False  # C-02: the binary would go on asking

    def _post(
        self, headers: Mapping[str, str], timeout: float | None, renderer: _Renderer
    ) -> _Answer | None:
        # ASCII-escaped: a lone surrogate in a schema is escaped, as JSON.stringify does.
        content = json.dumps(self.body()).encode()
        with self.client.stream(
            "POST", self.url, content=content, headers=headers, timeout=timeout
        ) as response:
            if response.status_code >= 400:
                text = _http_error(response, renderer.ids.hex(32), renderer.session_id)
                renderer.event("api_error_message", {"text": text})
                return None
            answer = _read(response)
        if answer.error is not None:
            renderer.event("api_error_message", {"text": answer.error})
            return None
        return answer

    def _take(self, answer: _Answer, renderer: _Renderer, loop: rules.Loop) -> bool:
        """Print one answer and follow the rules; False when the run has ended."""
        renderer.upstream = answer.id
        if not answer.done:  # C-06
            renderer.event("api_error_message", {"text": rules.ABORTED})
            renderer.event("recovery", None)
            self._restart(NETWORK_NOTE)
            loop.cut()
            return True
        unknown = [c["name"] for c in answer.calls if c["name"] not in rules.TOOLS]
        if unknown:  # C-04: the answer is dropped, a note joins the last user message
            renderer.event("api_error_message", {"text": rules.not_found(unknown[0])})
            renderer.event("recovery", None)
            self._restart(recovery_text(unknown[0]))
            loop.unknown(unknown[0])
            return True
        if answer.calls:
            self._calls(answer, renderer, loop)
            return True
        step = loop.text(answer.text)
        if step is rules.Step.REASK:
            self._said(answer)
            renderer.event("text", answer.text)
            renderer.event("enforce_reminder", "")
            reask = {"type": "text", "text": reask_text(self.schema.text)}
            self.messages = [*rules.rebuilt(self.messages), {"role": "user", "content": [reask]}]
            return True
        ending = loop.ending
        assert ending is not None
        renderer.event("text" if loop.prints_last else "unprinted_answer", answer.text)
        fields: dict[str, object] = {"subtype": ending.subtype}
        if ending.subtype == "success":
            fields["result"] = ending.result or ""
            value = ending.structured_output
            fields["structured_output"] = ABSENT if value is None else value[0]
        else:
            fields["errors"] = list(ending.errors)
        renderer.event("result", fields)
        return False

    def _restart(self, text: str) -> None:
        """
        The request sent again (C-04, C-06): the conversation rebuilt (C-08) and an
        error-recovery note, joining the last user message or one of its own after
        tool results.
        """
        self.messages = rules.rebuilt(self.messages)
        note = {"type": "text", "text": text}
        last = self.messages[-1]
        parts = last.get("content")
        if last.get("role") == "user" and isinstance(parts, list):
            last["content"] = [*parts, note]
        else:
            self.messages.append({"role": "user", "content": [note]})

    def _said(self, answer: _Answer) -> None:
        part = {"type": "text", "text": answer.text, "annotations": []}
        self.messages.append({"role": "assistant", "content": [part]})

    def _calls(self, answer: _Answer, renderer: _Renderer, loop: rules.Loop) -> None:
        """StructuredOutput calls: each judged, printed, sent back with its result (C-01, C-02)."""
        printed: list[dict[str, object]] = []
        verdicts: list[tuple[object, bool]] = []
        message: dict[str, object] = {"role": "assistant"}
        if answer.text:
            renderer.event("text", answer.text)
            message["content"] = [{"type": "text", "text": answer.text, "annotations": []}]
        message["tool_calls"] = [
            {
                "id": c["id"],
                "type": "function",
                "function": {"name": c["name"], "arguments": c["arguments"]},
            }
            for c in answer.calls
        ]
        results: list[dict[str, object]] = []
        for call in answer.calls:
            value = _arguments(call["arguments"])
            error = self.schema.verdict(call["arguments"])
            shown: dict[str, object] = {"id": call["id"], "input": value}
            if error is not None:
                shown["error"] = error
            printed.append(shown)
            verdicts.append((value, error is None))
            content = TOOL_ACCEPTED if error is None else error
            results.append({"role": "tool", "content": content, "tool_call_id": call["id"]})
        renderer.event("structured_output_calls", printed)
        loop.calls(verdicts)
        self.messages += [message, *results]


def _arguments(text: str) -> object:
    """A call's input as the CLI holds it after ``JSON.parse`` (1e30, not a Python int)."""
    try:
        jsonvalue.loads(text)
    except ValueError:
        return {}
    return validator.normalized(text)


def _http_error(response: net.Response, request_id: str, session_id: str) -> str:
    """``STATUS MESSAGE (REQUEST-ID/SESSION-ID)``, the body's message (C-05)."""
    text = response.read().decode(errors="replace")
    message = text
    try:
        body = jsonvalue.loads(text)
    except ValueError:
        body = None
    error = body.get("error") if isinstance(body, dict) else None
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        message = error["message"]
    return f"{response.status_code} {message} ({request_id}/{session_id})"


def _read(response: net.Response) -> _Answer:
    """The answer a stream carries: its text, its calls, whether ``[DONE]`` came, an error line."""
    answer = _Answer()
    by_index: dict[int, dict[str, str]] = {}
    try:
        for data in _data(sse_lines(response.iter_text())):
            if data == "[DONE]":
                answer.done = True
                break
            _chunk(answer, by_index, data)
            if answer.error is not None:
                break
    except net.TimeoutException:
        raise
    except net.TransportError:
        answer.done = False
    answer.calls = [by_index[i] for i in sorted(by_index)]
    return answer


def _chunk(answer: _Answer, calls: dict[int, dict[str, str]], data: str) -> None:
    try:
        chunk = jsonvalue.loads(data)
    except ValueError:
        return
    if not isinstance(chunk, dict):
        return
    error = chunk.get("error")
    if isinstance(error, dict):
        answer.error = str(error.get("message", ""))
        return
    answer.id = str(chunk.get("id") or answer.id)
    for choice in chunk.get("choices") or []:
        delta: dict[str, Any] = choice.get("delta") or {}
        if isinstance(delta.get("content"), str):
            answer.text += delta["content"]
        for piece in delta.get("tool_calls") or []:
            call = calls.setdefault(
                int(piece.get("index", 0)), {"id": "", "name": "", "arguments": ""}
            )
            function = piece.get("function") or {}
            call["id"] = piece.get("id") or call["id"]
            call["name"] = function.get("name") or call["name"]
            call["arguments"] += function.get("arguments") or ""


def _data(lines: Iterator[str]) -> Iterator[str]:
    for line in lines:
        if line.startswith("data:"):
            yield line[5:].strip(" ")
