"""
From what the upstream answered to a ``model_script`` step the fake can replay.

The fake model API renders a step (`providers_fake.api.script`) in one fixed
wire shape: content in the order thinking, texts, tool calls; deltas of 24
characters; its own ids and usage.  A recorded answer is read back into the
content it carried (what the CLI acts on), not its bytes: text, tool calls,
thinking, the stop reason when it is not the one the content implies, an SSE
error with its payload, an HTTP error with its status, body and retry
headers.  A stream the upstream cut is cut at the same point of the fake's
rendering of that content (after the same blocks and events), which is what
the CLI saw.  What the script format cannot say (another block order, a
block type it does not know) is kept as a note for the user.

Each API has its own reader, chosen through `READERS` by the fake's own
routing (`providers_fake.api.api_for`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from harness.record.proxy import Exchange
from harness.record.transcript import parse
from providers_fake.api import anthropic, chat, openai
from providers_fake.api.script import STRUCTURED_OUTPUT, step_from_json
from providers_fake.api.wire import Reply

#: An answer's wait for its headers at or above which the step keeps it as ``delay``.
SLOW = 1.0
#: Answer headers the CLIs read to decide on a retry, kept on scripted HTTP errors.
RETRY_HEADERS = ("retry-after", "retry-after-ms", "x-should-retry")


@dataclass(frozen=True)
class Sse:
    """One server-sent event: its name and its JSON data (None when not JSON)."""

    name: str
    data: Any


def sse_events(body: bytes) -> list[Sse]:
    """The complete events of an SSE body; a last event the cut left half-sent is dropped."""
    # An event stream's lines end at CR, LF or CRLF, and at nothing else (not U+2028).
    text = body.decode("utf-8", "replace").replace("\r\n", "\n").replace("\r", "\n")
    complete, _, _ = text.rpartition("\n\n")
    events: list[Sse] = []
    for block in complete.split("\n\n"):
        name, data = "message", []
        for line in block.split("\n"):
            key, _, value = line.partition(":")
            value = value.removeprefix(" ")
            if key == "event":
                name = value
            elif key == "data":
                data.append(value)
        if not data:
            continue
        events.append(Sse(name, parse("\n".join(data))[0]))
    return events


@dataclass
class _Content:
    """The content an answer carried, gathered in wire order."""

    thinking: list[str] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)
    tools: list[tuple[str, object]] = field(default_factory=list)
    kinds: list[str] = field(default_factory=list)
    stop_reason: str | None = None
    error: dict[str, Any] | None = None
    ended: bool = False
    notes: list[str] = field(default_factory=list)
    #: The index of a block cut before its end: its deltas cannot all be replayed.
    partial_tool: int | None = None


@dataclass(frozen=True)
class Recorded:
    """One scripted step and what it could not keep."""

    step: dict[str, Any]
    notes: tuple[str, ...] = ()


def step_of(exchange: Exchange, api: str) -> Recorded:
    """The script step that answers like the upstream answered ``exchange``."""
    if exchange.status >= 400:
        return _http_error(exchange)
    if exchange.status != 200:
        return Recorded(
            {"status": 500, "message": f"the upstream answered {exchange.status}"},
            (f"request #{exchange.index + 1}: status {exchange.status} cannot be scripted; "
             "a 500 stands in for it",),
        )  # fmt: skip
    request = _json_object(exchange.request_body)
    streamed = "text/event-stream" in (exchange.header("content-type") or "")
    reader = READERS[api]
    content = reader.read(exchange.body, streamed)
    step = _step(content, api)
    if not streamed and exchange.cut:
        step["truncate_after"] = 0  # the fake drops a plain answer half way through
    elif streamed and not content.ended and content.error is None:
        probe = {**request, "stream": True}
        rendered = [sse_key(e) for e in sse_events(reader.render(step, probe, exchange.index))]
        observed = [sse_key(e) for e in sse_events(exchange.body)]
        step["truncate_after"] = cut_point(observed, rendered, content.partial_tool)
    if exchange.seconds_to_headers >= SLOW:
        step["delay"] = round(exchange.seconds_to_headers, 1)
    notes = tuple(f"request #{exchange.index + 1}: {note}" for note in content.notes)
    return Recorded(step, notes)


def _http_error(exchange: Exchange) -> Recorded:
    text = exchange.body.decode("utf-8", "replace")
    body: object = text
    parsed, ok = parse(text)
    # The fake writes an object with Python's separators; keep the text when that differs.
    if ok and json.dumps(parsed) == text:
        body = parsed
    step: dict[str, Any] = {"status": exchange.status, "body": body}
    headers = {name: value for name, value in exchange.headers if name in RETRY_HEADERS}
    if headers:
        step["headers"] = headers
    if exchange.seconds_to_headers >= SLOW:
        step["delay"] = round(exchange.seconds_to_headers, 1)
    notes = ("the error body was cut short",) if exchange.cut else ()
    return Recorded(step, tuple(f"request #{exchange.index + 1}: {n}" for n in notes))


def _step(content: _Content, api: str) -> dict[str, Any]:
    step: dict[str, Any] = {}
    if content.thinking:
        step["thinking"] = "".join(content.thinking)
        if len(content.thinking) > 1:
            content.notes.append("several thinking blocks were joined into one")
    if len(content.texts) == 1:
        step["text"] = content.texts[0]
    elif content.texts:
        step["texts"] = list(content.texts)
    if len(content.tools) == 1:
        name, value = content.tools[0]
        step["tool"] = value
        if name != STRUCTURED_OUTPUT:
            step["tool_name"] = name
    elif content.tools:
        step["tools"] = [{"name": name, "input": value} for name, value in content.tools]
    order = {"thinking": 0, "text": 1, "tool": 2}
    ranks = [order[k] for k in content.kinds if k in order]
    if ranks != sorted(ranks):
        content.notes.append(
            "the content came in the order "
            + ", ".join(content.kinds)
            + "; the script replays it as thinking, texts, then tool calls"
        )
    default_stop = "tool_use" if content.tools else "end_turn"
    if api == "anthropic" and content.stop_reason not in (None, default_stop):
        step["stop_reason"] = content.stop_reason
    if content.error is not None:
        default = _DEFAULT_FAILURES.get(api, openai.DEFAULT_FAILURE)
        step["midstream_error"] = True if content.error == default else content.error
    return step


# -- the APIs -------------------------------------------------------------------------------

#: The error each API's fake sends for ``midstream_error: true``.
_DEFAULT_FAILURES: dict[str, object] = {
    "anthropic": anthropic.DEFAULT_STREAM_ERROR,
    "chat": chat.DEFAULT_FAILURE,
}


class _Reader:
    """How one API's answers are read, and how the fake renders a step of it."""

    def read(self, body: bytes, streamed: bool) -> _Content:
        raise NotImplementedError

    def render(self, step: dict[str, Any], request: dict[str, Any], index: int) -> bytes:
        raise NotImplementedError


class _Anthropic(_Reader):
    """Messages API: ``message_start``, blocks by index, ``message_delta``, ``message_stop``."""

    def read(self, body: bytes, streamed: bool) -> _Content:
        content = _Content()
        if not streamed:
            message = _json_object(body)
            for block in _list(message.get("content")):
                self._block(content, block, complete=True)
            content.stop_reason = _text_or_none(message.get("stop_reason"))
            content.ended = bool(message)
            return content
        blocks: dict[int, dict[str, Any]] = {}
        for event in sse_events(body):
            data = event.data if isinstance(event.data, dict) else {}
            kind = data.get("type", event.name)
            index = data.get("index")
            if kind == "content_block_start" and isinstance(index, int):
                start = data.get("content_block")
                blocks[index] = (
                    {**start, "_json": "", "_done": False}
                    if isinstance(start, dict)
                    else {"type": "?", "_json": "", "_done": False}
                )
            elif kind == "content_block_delta" and index in blocks:
                _apply_delta(blocks[index], data.get("delta"))
            elif kind == "content_block_stop" and index in blocks:
                blocks[index]["_done"] = True
            elif kind == "message_delta":
                delta = data.get("delta")
                if isinstance(delta, dict):
                    content.stop_reason = _text_or_none(delta.get("stop_reason"))
            elif kind == "message_stop":
                content.ended = True
            elif kind == "error":
                error = data.get("error")
                content.error = error if isinstance(error, dict) else {"type": "api_error"}
        for index in sorted(blocks):
            block = blocks[index]
            if block.get("type") == "tool_use":
                block["input"], ok = parse(block["_json"])
                if not ok:
                    # Cut before (or inside) its input: the CLI never had an input to act on.
                    block["input"] = {}
                    content.partial_tool = index
                    if block["_json"]:
                        content.notes.append(
                            "a tool call was cut inside its input; the script gives it {} and "
                            "cuts before any of it"
                        )
            self._block(content, block, complete=block["_done"])
        return content

    @staticmethod
    def _block(content: _Content, block: dict[str, Any], *, complete: bool) -> None:
        kind = block.get("type")
        if kind == "text":
            content.texts.append(str(block.get("text", "")))
            content.kinds.append("text")
        elif kind == "thinking":
            content.thinking.append(str(block.get("thinking", "")))
            content.kinds.append("thinking")
        elif kind == "tool_use":
            content.tools.append((str(block.get("name", STRUCTURED_OUTPUT)), block.get("input")))
            content.kinds.append("tool")
        else:
            content.notes.append(f"a {kind} block cannot be scripted and was left out")

    def render(self, step: dict[str, Any], request: dict[str, Any], index: int) -> bytes:
        reply = anthropic.answer_reply(_answer(step), request, index)
        return _body(reply)


def _apply_delta(block: dict[str, Any], delta: object) -> None:
    if not isinstance(delta, dict):
        return
    kind = delta.get("type")
    if kind == "text_delta":
        block["text"] = str(block.get("text", "")) + str(delta.get("text", ""))
    elif kind == "thinking_delta":
        block["thinking"] = str(block.get("thinking", "")) + str(delta.get("thinking", ""))
    elif kind == "input_json_delta":
        block["_json"] += str(delta.get("partial_json", ""))


class _OpenAI(_Reader):
    """Responses API: items by ``output_index``, then ``response.completed`` or ``.failed``."""

    def read(self, body: bytes, streamed: bool) -> _Content:
        content = _Content()
        if not streamed:
            whole = _json_object(body)
            for item in _list(whole.get("output")):
                self._item(content, item)
            content.ended = bool(whole)
            return content
        items: dict[int, dict[str, Any]] = {}
        for event in sse_events(body):
            data = event.data if isinstance(event.data, dict) else {}
            kind = str(data.get("type", event.name))
            position = data.get("output_index")
            if kind == "response.output_item.added" and isinstance(position, int):
                added = data.get("item")
                items[position] = {**added, "_text": ""} if isinstance(added, dict) else {}
            elif kind == "response.output_item.done" and isinstance(position, int):
                done = data.get("item")
                if isinstance(done, dict):
                    items[position] = {**done, "_done": True}
            elif kind.endswith(".delta") and position in items:
                items[position]["_text"] = items[position].get("_text", "") + str(
                    data.get("delta", "")
                )
            elif kind.endswith(".done") and position in items:
                complete = data.get("arguments", data.get("text"))
                if isinstance(complete, str):
                    items[position]["_text"] = complete
            elif kind == "response.completed":
                content.ended = True
            elif kind == "response.failed":
                failed = data.get("response")
                error = failed.get("error") if isinstance(failed, dict) else None
                content.error = error if isinstance(error, dict) else dict(openai.DEFAULT_FAILURE)
            elif kind == "error":
                content.error = {"code": data.get("code"), "message": data.get("message")}
                content.notes.append("an SSE error event is replayed as response.failed")
            elif kind == "response.incomplete":
                content.ended = True
                content.notes.append("response.incomplete is replayed as response.completed")
        for position in sorted(items):
            item = items[position]
            if not item.get("_done"):
                item = _partial_item(item)
                if item.get("type") == "function_call" and not item["arguments"]:
                    content.partial_tool = position
            self._item(content, item)
        return content

    @staticmethod
    def _item(content: _Content, item: dict[str, Any]) -> None:
        kind = item.get("type")
        if kind == "message":
            parts = _list(item.get("content"))
            content.texts.append("".join(str(p.get("text", "")) for p in parts))
            content.kinds.append("text")
        elif kind == "reasoning":
            summary = _list(item.get("summary"))
            content.thinking.append("".join(str(p.get("text", "")) for p in summary))
            content.kinds.append("thinking")
        elif kind == "function_call":
            arguments = str(item.get("arguments", ""))
            value, ok = parse(arguments) if arguments else ({}, True)
            if not ok:
                value = {}
                content.notes.append("a function call's arguments are not JSON; replayed as {}")
            content.tools.append((str(item.get("name", STRUCTURED_OUTPUT)), value))
            content.kinds.append("tool")
        else:
            content.notes.append(f"an output item of type {kind} cannot be scripted")

    def render(self, step: dict[str, Any], request: dict[str, Any], index: int) -> bytes:
        return _body(openai.answer_reply(_answer(step), request, index))


def _partial_item(item: dict[str, Any]) -> dict[str, Any]:
    """An output item the cut left unfinished, with the text its deltas brought."""
    text = str(item.get("_text", ""))
    kind = item.get("type")
    if kind == "message":
        return {**item, "content": [{"type": "output_text", "text": text}]}
    if kind == "reasoning":
        return {**item, "summary": [{"type": "summary_text", "text": text}]}
    if not parse(text)[1]:
        return {**item, "arguments": ""}  # half an argument list is no input at all
    return {**item, "arguments": text}


class _Chat(_Reader):
    """
    Chat Completions (CodeBuddy Code): ``chat.completion.chunk`` deltas of one
    choice, the content and each call by its ``index``, ``data: [DONE]`` at the
    end, an ``{"error": ...}`` data line for a mid-stream error.
    """

    def read(self, body: bytes, streamed: bool) -> _Content:
        content = _Content()
        if not streamed:
            whole = _json_object(body)
            choices = _list(whole.get("choices"))
            message = choices[0].get("message") if choices else None
            if isinstance(message, dict):
                self._message(content, message.get("content"), _list(message.get("tool_calls")))
            content.ended = bool(whole)
            return content
        text = ""
        calls: dict[int, dict[str, str]] = {}
        for event in sse_events(body):
            data = event.data if isinstance(event.data, dict) else {}
            error = data.get("error")
            if isinstance(error, dict):
                content.error = error
            for choice in _list(data.get("choices")):
                delta = _dict(choice.get("delta"))
                text += str(delta.get("content") or "")
                for piece in _list(delta.get("tool_calls")):
                    at = piece.get("index")
                    call = calls.setdefault(
                        at if isinstance(at, int) else 0, {"name": "", "arguments": ""}
                    )
                    function = _dict(piece.get("function"))
                    call["name"] = str(function.get("name") or call["name"])
                    call["arguments"] += str(function.get("arguments") or "")
        content.ended = b"data: [DONE]" in body
        self._message(content, text, [{"function": calls[i]} for i in sorted(calls)])
        return content

    @staticmethod
    def _message(content: _Content, text: object, calls: list[dict[str, Any]]) -> None:
        if isinstance(text, str) and text:
            content.texts.append(text)
            content.kinds.append("text")
        for call in calls:
            function = _dict(call.get("function"))
            arguments = str(function.get("arguments", ""))
            value, ok = parse(arguments) if arguments else ({}, True)
            if not ok:
                value = {}
                content.notes.append("a function call's arguments are not JSON; replayed as {}")
            content.tools.append((str(function.get("name") or STRUCTURED_OUTPUT), value))
            content.kinds.append("tool")

    def render(self, step: dict[str, Any], request: dict[str, Any], index: int) -> bytes:
        return _body(chat.answer_reply(_answer(step), request, index))


READERS: dict[str, _Reader] = {"anthropic": _Anthropic(), "openai": _OpenAI(), "chat": _Chat()}


# -- where a cut falls ----------------------------------------------------------------------

SseKey = tuple[str, object, int]


def sse_key(event: Sse) -> SseKey:
    """What an event is, independent of how the content was split into deltas."""
    data = event.data if isinstance(event.data, dict) else {}
    kind = str(data.get("type", event.name))
    delta = data.get("delta")
    if kind == "content_block_delta" and isinstance(delta, dict):
        kind += ":" + str(delta.get("type"))  # a thinking block ends with a signature_delta
    where = data.get("index", data.get("output_index"))
    return (kind, where, 0)


def _numbered(keys: list[SseKey]) -> list[SseKey]:
    seen: dict[tuple[str, object], int] = {}
    out = []
    for kind, where, _ in keys:
        count = seen.get((kind, where), 0)
        seen[(kind, where)] = count + 1
        out.append((kind, where, count))
    return out


def _is_delta(kind: str) -> bool:
    """A piece of content (whose count depends on how it was split), not a structural event."""
    return kind.startswith("content_block_delta") or kind.endswith(".delta")


def cut_point(observed: list[SseKey], rendered: list[SseKey], partial: object) -> int:
    """
    How many of the fake's events to send so the CLI sees what it saw before the cut.

    Events are matched by kind, block (or output item) and occurrence.  The
    upstream may split a text into more deltas than the fake does: all the
    fake's deltas of a block stand for any number of the upstream's (the
    scripted text is what arrived).  A tool call cut inside its input
    (``partial``, its block or item) gets none of its input deltas.
    """
    numbered = _numbered(rendered)
    positions = {key: index for index, key in enumerate(numbered)}
    last_delta: dict[tuple[str, object], int] = {}
    for index, (kind, where, _) in enumerate(numbered):
        if _is_delta(kind) and (partial is None or where != partial):
            last_delta[(kind, where)] = index
    reached = -1
    for key in _numbered(observed):
        kind, where, _ = key
        if _is_delta(kind):
            reached = max(reached, last_delta.get((kind, where), -1))
        elif key in positions:
            reached = max(reached, positions[key])
    return reached + 1


# -- helpers --------------------------------------------------------------------------------


def _answer(step: dict[str, Any]) -> Any:
    plain = {k: v for k, v in step.items() if k not in ("truncate_after", "delay")}
    return step_from_json(plain, "recorded step")


def _body(reply: Reply) -> bytes:
    return b"".join(reply.chunks)


def _json_object(data: bytes) -> dict[str, Any]:
    parsed = parse(data)[0]
    return parsed if isinstance(parsed, dict) else {}


def _dict(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: object) -> list[dict[str, Any]]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def _text_or_none(value: object) -> str | None:
    return value if isinstance(value, str) else None


def model_requests(
    exchanges: list[Exchange], api_for: Callable[[str, str], str | None]
) -> Iterator[tuple[Exchange, str]]:
    """The exchanges a model script answers, with their API."""
    for exchange in exchanges:
        api = api_for(exchange.method, exchange.path)
        if api is not None:
            yield exchange, api
