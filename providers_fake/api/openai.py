"""
The OpenAI Responses API (``POST /v1/responses``), as Codex sees it.

A streamed answer is ``response.created``, ``response.in_progress``, then per
output item its ``output_item.added`` … ``output_item.done`` events (a
message: ``content_part.added``, ``output_text.delta``, ``output_text.done``,
``content_part.done``; a function call: ``function_call_arguments.delta`` /
``.done``; reasoning: ``reasoning_summary_*``), then ``response.completed``
with usage, or ``response.failed`` for a mid-stream error.  Every event has
its ``sequence_number``.  Each script text is one output message, so
``{"texts": [a, b]}`` gives Codex two agent messages.

Usage defaults to 12 tokens in and 7 out, the figures behind the captures'
``turn.completed`` lines.
"""

from __future__ import annotations

from providers_fake.api.script import Answer, HttpError
from providers_fake.api.wire import Reply, dumps, json_reply, merge_headers, pieces, sse

INPUT_TOKENS = 12
OUTPUT_TOKENS = 7
# 2026-11-29T22:00:00Z, the hour the captures were taken; plus the request number.
_CREATED_AT = 1_795_989_600
DEFAULT_FAILURE: dict[str, object] = {
    "code": "server_error",
    "message": "The server had an error processing your request.",
}
_SSE_HEADERS = (("content-type", "text/event-stream; charset=utf-8"), ("cache-control", "no-cache"))

_ERRORS: dict[int, tuple[str, str | None, str]] = {
    400: ("invalid_request_error", None, "Invalid request"),
    401: ("invalid_request_error", "invalid_api_key", "Incorrect API key provided."),
    404: ("invalid_request_error", "model_not_found", "The model does not exist."),
    429: ("requests", "rate_limit_exceeded", "Rate limit reached for requests."),
    500: ("server_error", None, "The server had an error while processing your request."),
    503: ("server_error", None, "The server is overloaded or not ready yet."),
}


def request_id(index: int) -> str:
    return f"req_fake{index:016d}"


def error_body(status: int, message: str | None) -> dict[str, object]:
    kind, code, default = _ERRORS.get(status, ("server_error", None, "Server error."))
    text = message if message is not None else default
    return {"error": {"message": text, "type": kind, "param": None, "code": code}}


def error_reply(step: HttpError, index: int) -> Reply:
    """A plain HTTP error: ``x-request-id`` always, ``retry-after`` on a 429."""
    defaults: tuple[tuple[str, str], ...] = (("x-request-id", request_id(index)),)
    if step.status == 429:
        defaults += (("retry-after", "1"),)
    body = step.body if step.body is not None else error_body(step.status, step.message)
    return json_reply(step.status, body, merge_headers(defaults, step.headers), delay=step.delay)


def _items(step: Answer, index: int) -> list[tuple[dict[str, object], str]]:
    """The complete output items in wire order, each with the text it streams."""
    items: list[tuple[dict[str, object], str]] = []
    if step.thinking is not None:
        summary = [{"type": "summary_text", "text": step.thinking}]
        reasoning: dict[str, object] = {
            "id": f"rs_{index}",
            "type": "reasoning",
            "summary": summary,
        }
        items.append((reasoning, step.thinking))
    for number, text in enumerate(step.texts):
        items.append(_message(index, number, text, step.phase_of(number)))
    for number, tool in enumerate(step.tools):
        arguments = dumps(tool.input)
        call: dict[str, object] = {
            "id": f"fc_{index}_{number}",
            "type": "function_call",
            "status": "completed",
            "arguments": arguments,
            "call_id": f"call_{index}_{number}",
            "name": tool.name,
        }
        items.append((call, arguments))
    for number, text in enumerate(step.texts_after, start=len(step.texts)):
        items.append(_message(index, number, text, step.phase_of(number)))
    return items


def _message(
    index: int, number: int, text: str, phase: str | None = None
) -> tuple[dict[str, object], str]:
    part = {"type": "output_text", "annotations": [], "logprobs": [], "text": text}
    message: dict[str, object] = {
        "id": f"msg_{index}_{number}",
        "type": "message",
        "status": "completed",
        "content": [part],
        "role": "assistant",
    }
    if phase is not None:  # the Responses API's commentary / final_answer mark
        message["phase"] = phase
    return message, text


def _response(request: dict[str, object], index: int, status: str) -> dict[str, object]:
    model = request.get("model")
    return {
        "id": f"resp_{index}",
        "object": "response",
        "created_at": _CREATED_AT + index,
        "status": status,
        "error": None,
        "incomplete_details": None,
        "model": model if isinstance(model, str) else "gpt-fake",
        "output": [],
        "usage": None,
    }


def _usage(step: Answer) -> dict[str, object]:
    tokens_in = INPUT_TOKENS if step.input_tokens is None else step.input_tokens
    tokens_out = OUTPUT_TOKENS if step.output_tokens is None else step.output_tokens
    return {
        "input_tokens": tokens_in,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": tokens_out,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": tokens_in + tokens_out,
    }


def failed_plainly(
    step: Answer, headers: tuple[tuple[str, str], ...], default: dict[str, object]
) -> Reply:
    """
    A failure mid-answer on a request that did not ask for a stream: nothing of the
    answer was sent yet, so the API answers a 500 with its error body (``default``'s
    message unless the script gives one).
    """
    message = (step.error_payload or default).get("message")
    body = error_body(500, message if isinstance(message, str) else None)
    return json_reply(500, body, headers, delay=step.delay)


def answer_reply(step: Answer, request: dict[str, object], index: int) -> Reply:
    """The answer to request `index`: SSE when the request asked for ``stream``."""
    headers = (("x-request-id", request_id(index)), *step.headers)
    if request.get("stream") is not True:
        if step.midstream_error:
            return failed_plainly(step, headers, DEFAULT_FAILURE)
        done = _response(request, index, "completed")
        done.update(output=[item for item, _ in _items(step, index)], usage=_usage(step))
        return json_reply(200, done, headers, delay=step.delay, cut=step.truncate_after is not None)
    events = _Events()
    events.add("response.created", response=_response(request, index, "in_progress"))
    events.add("response.in_progress", response=_response(request, index, "in_progress"))
    pairs = _items(step, index)
    for position, (item, text) in enumerate(pairs):
        _item_events(events, position, item, text)
    items = [item for item, _ in pairs]
    if step.midstream_error:
        failed = _response(request, index, "failed")
        failed.update(output=items, error=dict(step.error_payload or DEFAULT_FAILURE))
        events.add("response.failed", response=failed)
    else:
        done = _response(request, index, "completed")
        done.update(output=items, usage=_usage(step))
        events.add("response.completed", response=done)
    chunks = events.chunks
    cut = step.truncate_after is not None and step.truncate_after < len(chunks)
    if step.truncate_after is not None:
        chunks = chunks[: step.truncate_after]
    return Reply(200, _SSE_HEADERS + headers, tuple(chunks), True, step.delay, cut)


class _Events:
    """SSE events with their running ``sequence_number``."""

    def __init__(self) -> None:
        self.chunks: list[bytes] = []

    def add(self, kind: str, **fields: object) -> None:
        self.chunks.append(sse(kind, {"type": kind, "sequence_number": len(self.chunks), **fields}))


def _item_events(events: _Events, position: int, item: dict[str, object], text: str) -> None:
    """One output item's events, from ``output_item.added`` to ``output_item.done``."""
    kind = item["type"]
    where = {"item_id": item["id"], "output_index": position}
    if kind == "message":
        started = {**item, "status": "in_progress", "content": []}
        events.add("response.output_item.added", output_index=position, item=started)
        part = {"type": "output_text", "annotations": [], "logprobs": [], "text": text}
        empty = {**part, "text": ""}
        events.add("response.content_part.added", **where, content_index=0, part=empty)
        for delta in pieces(text):
            events.add(
                "response.output_text.delta", **where, content_index=0, delta=delta, logprobs=[]
            )
        events.add("response.output_text.done", **where, content_index=0, text=text, logprobs=[])
        events.add("response.content_part.done", **where, content_index=0, part=part)
    elif kind == "function_call":
        started = {**item, "status": "in_progress", "arguments": ""}
        events.add("response.output_item.added", output_index=position, item=started)
        for delta in pieces(text):
            events.add("response.function_call_arguments.delta", **where, delta=delta)
        events.add("response.function_call_arguments.done", **where, arguments=text)
    else:
        events.add(
            "response.output_item.added", output_index=position, item={**item, "summary": []}
        )
        summary = {"type": "summary_text", "text": text}
        events.add(
            "response.reasoning_summary_part.added",
            **where,
            summary_index=0,
            part={**summary, "text": ""},
        )
        for delta in pieces(text):
            events.add(
                "response.reasoning_summary_text.delta", **where, summary_index=0, delta=delta
            )
        events.add("response.reasoning_summary_text.done", **where, summary_index=0, text=text)
        events.add("response.reasoning_summary_part.done", **where, summary_index=0, part=summary)
    events.add("response.output_item.done", output_index=position, item=item)
