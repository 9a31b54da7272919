"""
A reference model of ``codex exec --json --output-schema FILE`` towards the model API.

Codex 0.169.0 (as the real-CLI captures and probes show it) sends the schema
as a strict ``text.format`` of one ``POST /v1/responses`` request (SSE),
validates nothing itself, and prints each completed output message as an
``agent_message`` item (a reasoning summary as a ``reasoning`` item).  An
HTTP error becomes an ``error`` line in codex's words for its status
(`_http_error`), then ``turn.failed``; a ``response.failed`` in the stream
becomes ``stream disconnected before completion: MESSAGE``, then
``turn.failed``; both end with exit status 1.  Some kinds of error, named by
the API's ``code`` (a context window outgrown, a quota spent, a rate limit),
have codex's own words instead (`FAILED_WORDS`, `_http_error`).  Retries are off, as in the
captures (the provider's ``request_max_retries`` and ``stream_max_retries``
are 0), so a failed request is not sent again.

A function call to a tool the release does not offer (``shell``, any made-up
name) is logged on stderr and answered ``unsupported call: NAME`` (`_Turn`):
codex sends every item of that answer back with the call's output and asks
again, until an answer has no call; it never ends by itself when every answer
calls, so the model stops after `MAX_REQUESTS` as if killed at its caller's
timeout.  Calls to codex's own tools (``exec_command`` and the rest), which
the binary runs, are not modelled: the model answers them as unsupported too.

As for Claude (`harness.systems.claude.loop`), the lines are printed by the fake
``codex`` renderer (`providers_fake.cli.codex`) from semantic events; only the
decisions are made here.  A resumed session (``codex exec resume``) sends
the earlier turns' input and answers before the new prompt and counts their
tokens in ``turn.completed``; what it prints without ``--json`` and its ``-o``
file are `harness.systems.codex_exec`'s.  Not modelled: Codex's own retries
and its ``Reconnecting...`` lines; the compaction of a resumed session whose
context window is outgrown (probed: codex summarises the session in requests
of its own, ``CONTEXT CHECKPOINT COMPACTION``, and drops its oldest items).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from harness import net
from harness.catalogue import jsonvalue
from harness.catalogue.lines import sse_lines
from harness.systems.profiles import CodexProfile
from providers_fake.cli.base import Context
from providers_fake.cli.codex import CLI, CodexRenderer, serde_problem
from providers_fake.cli.ids import Ids
from providers_fake.cli.types import Output

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Mapping

OPENAI_BASE_URL = "https://api.openai.com/v1"
FORMAT_NAME = "codex_output_schema"
#: The schema file's name in the run's throwaway folder (as `realcli` lays it out).
SCHEMA_FILE = "schema.json"
#: The exit code of a run killed at its caller's timeout (SIGKILL).
KILLED = -9


@dataclass(frozen=True)
class CodexRun:
    """What the modelled CLI did: its exit status, stdout bytes and stderr text."""

    exit_code: int
    stdout: bytes
    stderr: str
    #: Killed at the caller's timeout (exit_code is then -9, as for SIGKILL).
    timed_out: bool = False
    #: The session's input after this turn, as a resumed turn sends it first.
    conversation: tuple[dict[str, object], ...] = ()
    #: The session's token counts so far (``turn.completed`` counts the whole session).
    usage: tuple[tuple[str, int], ...] = ()
    #: Each stderr chunk with the number of stdout lines printed before it: codex logs
    #: as things happen, so its text output (`harness.systems.codex_exec`) interleaves them.
    logged: tuple[tuple[int, str], ...] = ()
    #: The session's input and output tokens, once an answer of this run completed:
    #: codex's text output ends with them even when the turn then failed (probed).
    spent: int | None = None
    #: Whether the session has a token count: an answer of it completed.
    counted: bool = False


def text_format(schema: object) -> dict[str, object]:
    return {"type": "json_schema", "strict": True, "schema": schema, "name": FORMAT_NAME}


def _request_body(model: str, prompt: str, schema: object) -> dict[str, object]:
    return {
        "model": model,
        "input": [
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": prompt}]}
        ],
        "tools": [],
        "tool_choice": "auto",
        "parallel_tool_calls": False,
        "reasoning": None,
        "store": False,
        "stream": True,
        "include": [],
        "prompt_cache_key": "reference-model",
        "text": {"format": text_format(schema)},
        "client_metadata": {},
    }


class _Verbatim(str):
    """A number Codex passes on as written because no float holds it (``1e999``)."""

    __slots__ = ()


def _number(text: str) -> float | _Verbatim:
    # Codex's serde_json keeps each number's text (arbitrary precision): probed,
    # `"maximum": 1e999` reaches the API as written, where a float would be infinite.
    value = float(text)
    return value if math.isfinite(value) else _Verbatim(text)


def _encoded(body: object) -> bytes:
    """The request body as JSON, with numbers no float holds written as Codex read them."""
    kept: list[str] = []
    plain = json.dumps(body, ensure_ascii=False, separators=(",", ":"))
    fence = "\x00" * (plain.count("\x00") + 1)  # a marker no string of the body equals

    def mark(value: object) -> object:
        if isinstance(value, _Verbatim):
            kept.append(value)
            return f"{fence}{len(kept) - 1}{fence}"
        if isinstance(value, dict):
            return {key: mark(item) for key, item in value.items()}
        if isinstance(value, list):
            return [mark(item) for item in value]
        return value

    text = json.dumps(mark(body), ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    escaped = json.dumps(fence)[1:-1]
    for number, written in enumerate(kept):
        text = text.replace(f'"{escaped}{number}{escaped}"', written, 1)
    return text.encode("utf-8")


def _headers(profile: CodexProfile) -> dict[str, str]:
    """What a release sends beside the body: its name and version, and its encodings."""
    headers = {"authorization": "Bearer x", "user-agent": profile.user_agent}
    if profile.accept_encoding is not None:
        headers["accept-encoding"] = profile.accept_encoding
    return headers


def _sse(lines: Iterator[str]) -> Iterator[dict[str, Any]]:
    data: list[str] = []
    for line in lines:
        if not line:
            yield from _event(data)
            data = []
        elif line.startswith("data:"):
            data.append(line[5:].strip(" "))
    yield from _event(data)


def _event(data: list[str]) -> Iterator[dict[str, Any]]:
    """
    One event's JSON; none for data that is not a JSON object, which the
    binary skips (codex-rs logs "Failed to parse SSE event" and reads on).
    """
    if not data:
        return
    try:
        event = jsonvalue.loads("\n".join(data))
    except ValueError:
        return
    if isinstance(event, dict):
        yield event


#: What codex 0.169.0 sends back for a call to a tool it does not offer (``shell``,
#: any made-up name), and logs on stderr with the time and its router's name (probed).
UNSUPPORTED = "unsupported call: "
ROUTER = "codex_core::tools::router"
#: The model's clock for that log line (the captures' hour; reports mask the time).
LOG_STAMP = "2026-11-29T22:00:00.000000Z"
#: Where the model stops a model that never stops calling tools: the binary asks on
#: until its caller's timeout kills it, which the model shows as that kill.
MAX_REQUESTS = 64
#: The fields of each output item codex sends back, in its order (probed); a
#: reasoning item's absent ``content`` and ``encrypted_content`` go back as null.
_ITEM_FIELDS = {
    "function_call": ("status", "id", "name", "arguments", "call_id"),
    # A message's phase goes back although the exec events drop it (probed).
    "message": ("status", "id", "role", "content", "phase"),
    "reasoning": ("id", "summary", "content", "encrypted_content"),
}
_NULLED = ("content", "encrypted_content")
#: ``turn.completed``'s usage fields and where each is read in a response's usage.
_USAGE_FROM = {
    "input_tokens": ("input_tokens",),
    "cached_input_tokens": ("input_tokens_details", "cached_tokens"),
    "output_tokens": ("output_tokens",),
    "reasoning_output_tokens": ("output_tokens_details", "reasoning_tokens"),
}


class _Turn:
    """
    One turn's conversation with the API: the input so far, the function calls of
    the answer being read, and the usage of every answer (``turn.completed``
    prints their sum).  Codex answers each call to a tool it does not offer with
    ``unsupported call: NAME`` and asks again, until an answer has no call.
    Every item codex read whole stays in the session, sent back by a resumed
    turn, even when its answer then broke off or failed (probed).
    """

    def __init__(self, body: dict[str, object], ids: Ids) -> None:
        self.body = body
        self.ids = ids
        self.requests = 0
        self.items: list[Mapping[str, Any]] = []  # the output items of the answer being read
        self.pending: list[Mapping[str, Any]] = []  # those of a completed answer, to send back
        self.unsent: list[Mapping[str, Any]] = []  # completed answers' items not sent back
        self.answered = False  # whether an answer of this run completed
        self.counted = False  # whether the session has a token count (an answer completed)
        self.broke = False  # whether the turn failed in a response's stream (not its status)
        self.outgrown = False  # whether the API said the context window is outgrown
        self.usage = dict.fromkeys(_USAGE_FROM, 0)
        self.endless = False

    def asking(self) -> bool:
        if self.requests and not self.pending:
            return False
        self.endless = self.requests >= MAX_REQUESTS
        return not self.endless

    def next_body(self) -> dict[str, object]:
        sent = cast("list[object]", self.body["input"])
        sent.extend(_echo(item) for item in self.pending)
        for call in self._calls(self.pending):
            output = f"{UNSUPPORTED}{call.get('name', '')}"
            answer = {"id": f"fco_{self.ids.uuid7()}", "call_id": call.get("call_id")}
            sent.append({"type": "function_call_output", **answer, "output": output})
        self.pending, self.unsent = [], []
        self.requests += 1
        return self.body

    def completed(self, usage: object) -> bool:
        """Count an answer's usage; whether its calls make codex ask again."""
        for field, path in _USAGE_FROM.items():
            value: object = usage
            for key in path:
                value = value.get(key) if isinstance(value, dict) else None
            self.usage[field] += value if isinstance(value, int) else 0
        self.pending = self.items if self._calls(self.items) else []
        self.unsent, self.items = [*self.unsent, *self.items], []
        self.answered = self.counted = True
        return bool(self.pending)

    def session(self) -> tuple[dict[str, object], ...]:
        """The session's input after this turn: what was sent, then every item read since."""
        sent = cast("list[dict[str, object]]", self.body["input"])
        return (*sent, *(_echo(item) for item in [*self.unsent, *self.items]))

    def failed(self, message: str, *, streamed: bool) -> None:
        """
        Note the error the turn failed with (codex words a context window
        outgrown itself), and whether it came in the stream of a response.
        """
        self.outgrown = self.outgrown or message == CONTEXT_WINDOW
        self.broke = streamed

    def spent(self) -> int | None:
        """
        The session's tokens as codex's text output shows them at the end, when
        codex told them in this run (probed on 0.169.0): once an answer of the
        run completed; when a response's stream failed or was cut and the
        session has a count (an answer of an earlier turn), not when the API
        answered an error status; after a context window outgrown 0, whatever
        the answers before spent.
        """
        if self.outgrown:
            return 0
        told = self.answered or (self.broke and self.counted)
        return self.usage["input_tokens"] + self.usage["output_tokens"] if told else None

    def refused(self) -> list[str]:
        """The names of the calls codex is about to answer as unsupported (its log lines)."""
        return [str(call.get("name", "")) for call in self._calls(self.pending)]

    @staticmethod
    def _calls(items: list[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
        return [item for item in items if item.get("type") == "function_call"]


def _echo(item: Mapping[str, Any]) -> dict[str, object]:
    """An output item as codex sends it back: its own fields, in its order."""
    kind = item.get("type")
    fields = _ITEM_FIELDS.get(str(kind), tuple(k for k in item if k != "type"))
    echoed: dict[str, object] = {"type": kind}
    for key in fields:
        if key in item or (kind == "reasoning" and key in _NULLED):
            echoed[key] = item.get(key)
    return echoed


def _message_text(item: Mapping[str, Any]) -> str:
    parts = item.get("content") or []
    return "".join(p.get("text", "") for p in parts if p.get("type") == "output_text")


def run_codex(
    client: net.Client,
    *,
    prompt: str,
    schema: str,
    model: str,
    env: Mapping[str, str] | None = None,
    base_url: str = OPENAI_BASE_URL,
    seed: str = "reference",
    timeout: float | None = None,
    workdir: Path | None = None,
    version: str | None = None,
    resumed: CodexRun | None = None,
) -> CodexRun:
    """
    One ``codex exec --json --output-schema FILE -m MODEL PROMPT`` run; with
    ``timeout`` it is killed when that passes (what was printed stays, exit -9).
    ``resumed`` is the session's last run: this one is ``codex exec resume``.
    ``workdir`` is the run's throwaway folder: the schema file is written there
    and the working directory is its ``probe`` folder, as for the real binary.
    ``version`` picks the release modelled (`harness.systems.profiles.CODEX`).
    """
    folder = workdir or Path("/work")
    schema_file = folder / SCHEMA_FILE
    if workdir is not None:
        schema_file.write_text(schema)
    reason = serde_problem(schema)
    if reason is not None:
        message = f"Output schema file {schema_file} is not valid JSON: {reason}\n"
        return CodexRun(1, b"", message, logged=((0, message),))
    schema_value = json.loads(schema, parse_float=_number)
    argv = ["exec", "--json", "--skip-git-repo-check", "-m", model, prompt]
    parsed = CLI.parse(argv)
    out = Output()
    ctx = Context(
        CLI,
        parsed=parsed,
        env=dict(env or {}),
        cwd=str(folder / "probe"),
        prompt=prompt,
        ids=Ids(seed, "codex"),
        out=out,
        json_shape=None,
    )
    renderer = CodexRenderer(ctx)
    for name in ("thread.started", "warning", "turn.started"):
        renderer.event(name, None)
    url = base_url.rstrip("/") + "/responses"
    headers = {**_headers(CodexProfile.of(version)), "content-type": "application/json"}
    turn = _Turn(_request_body(model, prompt, schema_value), Ids(seed, "codex-calls"))
    if resumed is not None:  # the new prompt, with an id of its own, after the session (probed)
        asked = cast("list[dict[str, object]]", turn.body["input"])[-1]
        said: dict[str, object] = {"type": "message", "id": f"msg_{turn.ids.uuid7()}"}
        said.update(role="user", content=asked["content"])
        turn.body["input"] = [*resumed.conversation, said]
        turn.usage.update(dict(resumed.usage))
        turn.counted = resumed.counted
    killed = False
    try:
        while turn.asking():
            body = turn.next_body()
            with client.stream(
                "POST", url, content=_encoded(body), headers=headers, timeout=timeout
            ) as response:
                if response.status_code >= 400:
                    text = _http_error(response)
                    turn.failed(text, streamed=False)
                    renderer.event("error", text)
                    renderer.event("turn.failed", text)
                else:
                    _stream(renderer, response, turn)
            for name in turn.refused():
                out.stderr(f"{LOG_STAMP} ERROR {ROUTER}: error={UNSUPPORTED}{name}\n".encode())
        killed = turn.endless
    except net.TimeoutException:
        killed = True  # the caller's timeout, not codex's own: nothing more is printed
    parts = [chunk[-1] for chunk in out.chunks if chunk[0] == "stdout"]
    logged = tuple(_logged(out))
    return CodexRun(
        KILLED if killed else renderer.finish(),
        b"".join(p for p in parts if isinstance(p, bytes)),
        "".join(text for _, text in logged),
        timed_out=killed,
        conversation=turn.session(),
        usage=tuple(turn.usage.items()),
        logged=logged,
        spent=turn.spent(),
        counted=turn.counted,
    )


def _logged(out: Output) -> Iterator[tuple[int, str]]:
    """Each stderr chunk, after how many stdout lines it was printed."""
    lines = 0
    for chunk in out.chunks:
        data = chunk[-1]
        if not isinstance(data, bytes):
            continue
        if chunk[0] == "stdout":
            lines += data.count(b"\n")
        elif chunk[0] == "stderr":
            yield lines, data.decode()


#: What codex 0.169.0 says when the connection closes in the middle of the body.
CUT_STREAM = "Transport error: network error: error decoding response body"
#: Its words for a 500 (the body is not shown).
SERVER_BUSY = "We\u2019re currently experiencing high demand, which may cause temporary errors."
#: The reason phrases of Rust's ``http`` crate, which codex prints with a status.
REASONS = {
    400: "Bad Request", 401: "Unauthorized", 402: "Payment Required", 403: "Forbidden",
    404: "Not Found", 405: "Method Not Allowed", 406: "Not Acceptable",
    407: "Proxy Authentication Required", 408: "Request Timeout", 409: "Conflict", 410: "Gone",
    411: "Length Required", 412: "Precondition Failed", 413: "Payload Too Large",
    414: "URI Too Long", 415: "Unsupported Media Type", 416: "Range Not Satisfiable",
    417: "Expectation Failed", 418: "I'm a teapot", 421: "Misdirected Request",
    422: "Unprocessable Entity", 423: "Locked", 424: "Failed Dependency",
    426: "Upgrade Required", 428: "Precondition Required", 429: "Too Many Requests",
    431: "Request Header Fields Too Large", 451: "Unavailable For Legal Reasons",
    500: "Internal Server Error", 501: "Not Implemented", 502: "Bad Gateway",
    503: "Service Unavailable", 504: "Gateway Timeout", 505: "HTTP Version Not Supported",
    506: "Variant Also Negotiates", 507: "Insufficient Storage", 508: "Loop Detected",
    510: "Not Extended", 511: "Network Authentication Required",
}  # fmt: skip


CONTEXT_WINDOW = (
    "Codex ran out of room in the model's context window. Start a new thread or clear "
    "earlier history before retrying."
)
QUOTA = "Quota exceeded. Check your plan and billing details."
PLUS = "To use Codex with your ChatGPT plan, upgrade to Plus: https://chatgpt.com/explore/plus."
AT_CAPACITY = "Selected model is at capacity. Please try a different model."
CYBER_RISK = "This request has been flagged for possible cybersecurity risk."


def _rate_limited(message: str | None) -> str:
    return f"rate limit exceeded: {message or ''}"


#: Codex 0.169.0's words for a ``response.failed`` by its error's ``code``, given
#: the error's message (probed); any other code is a disconnected stream.
FAILED_WORDS: dict[str, Callable[[str | None], str]] = {
    "context_length_exceeded": lambda _message: CONTEXT_WINDOW,
    "insufficient_quota": lambda _message: QUOTA,
    "usage_not_included": lambda _message: PLUS,
    "rate_limit_exceeded": _rate_limited,
    "slow_down": _rate_limited,
    "server_is_overloaded": lambda _message: AT_CAPACITY,
    "invalid_prompt": lambda message: "Invalid request." if message is None else message,
    "cyber_policy": lambda message: CYBER_RISK if message is None else message,
}
USAGE_LIMIT = "You\u2019ve hit your usage limit. Try again later."
#: The kinds of a 429 that codex words as such instead of as retries run out, by
#: its error's ``type``, and by its ``code`` (probed; a ``usage_limit_reached``'s
#: plan and reset time, which codex words too, are not modelled).
LIMIT_BY_TYPE = {
    "insufficient_quota": QUOTA,
    "usage_not_included": PLUS,
    "usage_limit_reached": USAGE_LIMIT,
}
LIMIT_BY_CODE = {"insufficient_quota": QUOTA}


def _failed(error: Mapping[str, Any]) -> str:
    """The message of codex's error line for a ``response.failed`` carrying ``error``."""
    message = error.get("message")
    text = message if isinstance(message, str) else None
    words = FAILED_WORDS.get(str(error.get("code")))
    if words is not None:
        return words(text)
    return f"stream disconnected before completion: {text or ''}"


def _api_error(text: str) -> dict[str, Any]:
    try:
        body = jsonvalue.loads(text)
    except ValueError:
        return {}
    error = body.get("error") if isinstance(body, dict) else None
    return error if isinstance(error, dict) else {}


def _http_error(response: net.Response) -> str:
    """
    The message of codex's error line for an HTTP error, retries off (probed):
    a 400's body verbatim (a context window outgrown in codex's words), a 429
    as exhausted retries (a quota or plan in codex's words), a 500 as high
    demand, an unknown model by the API's message, anything else as an
    unexpected status naming the API's message (or the body), the URL and the
    request id.
    """
    text = response.read().decode(errors="replace")
    status = response.status_code
    request = response.headers.get("x-request-id", "")
    error = _api_error(text)
    if status == 400:
        return CONTEXT_WINDOW if error.get("code") == "context_length_exceeded" else text
    limit = LIMIT_BY_CODE.get(str(error.get("code"))) or LIMIT_BY_TYPE.get(str(error.get("type")))
    if status == 429 and limit is not None:
        return limit
    if status == 429:
        return f"exceeded retry limit, last status: 429 Too Many Requests, request id: {request}"
    if status == 500:
        return SERVER_BUSY
    message = error.get("message")
    if status == 404 and error.get("code") == "model_not_found" and isinstance(message, str):
        return message
    shown = message if isinstance(message, str) else (text or "Unknown error")
    reason = REASONS.get(status, "<unknown status code>")
    return (
        f"unexpected status {status} {reason}: {shown}, url: {response.request.url}, "
        f"request id: {request}"
    )


def _stream(renderer: CodexRenderer, response: net.Response, turn: _Turn) -> None:
    try:
        for event in _sse(sse_lines(response.iter_text())):
            kind = event.get("type")
            item = event.get("item") if kind == "response.output_item.done" else None
            if isinstance(item, dict):
                turn.items.append(item)
            if isinstance(item, dict) and item.get("type") == "message":
                renderer.event("agent_message", _message_text(item))
            elif isinstance(item, dict) and item.get("type") == "reasoning":
                summary = item.get("summary") or []
                text = "".join(p.get("text", "") for p in summary if isinstance(p, dict))
                renderer.event("reasoning", text)
            elif kind == "response.failed":
                message = _failed(event.get("response", {}).get("error") or {})
                turn.failed(message, streamed=True)
                renderer.event("error", message)
                renderer.event("turn.failed", message)
                return
            elif kind == "response.completed":
                if not turn.completed(event.get("response", {}).get("usage")):
                    renderer.event("turn.completed", turn.usage)
                return
    except net.TimeoutException:
        raise
    except net.TransportError:
        message = f"stream disconnected before completion: {CUT_STREAM}"
        turn.failed(message, streamed=True)
        renderer.event("error", message)
        renderer.event("turn.failed", message)
        return
    message = "stream disconnected before completion: stream closed before response.completed"
    turn.failed(message, streamed=True)
    renderer.event("error", message)
    renderer.event("turn.failed", message)
