"""
The Anthropic Messages API (``POST /v1/messages``), as Claude Code sees it.

Streaming answers follow the real event order: ``message_start``, ``ping``,
per block ``content_block_start`` / ``content_block_delta`` /
``content_block_stop`` (``text_delta``, ``input_json_delta`` starting with an
empty piece, ``thinking_delta`` then ``signature_delta``), ``message_delta``
with ``stop_reason`` and usage, ``message_stop``.  Non-streaming answers are
the same message as one JSON object (Claude Code falls back to them after a
broken stream).

Ids are numbered by request (``msg_3`` / ``toolu_3`` answer the fourth
request; a second call in one answer is ``toolu_b3_01``, see `tool_id`) and
usage carries only the two token counts, 10 in and 5 out by default: that is
what the fake behind the real-CLI captures sent, and the CLI copies these
values into the lines it prints, so any other choice would make the real
CLI's stdout differ from the captures.
"""

from __future__ import annotations

from providers_fake.api.script import Answer, HttpError
from providers_fake.api.wire import Reply, dumps, json_reply, merge_headers, pieces, sse

INPUT_TOKENS = 10
OUTPUT_TOKENS = 5
_SSE_HEADERS = (("content-type", "text/event-stream; charset=utf-8"), ("cache-control", "no-cache"))

# Status -> (error type, message) of the real API, for scripts that give no body.
_ERRORS: dict[int, tuple[str, str]] = {
    400: ("invalid_request_error", "Invalid request"),
    401: ("authentication_error", "invalid x-api-key"),
    403: ("permission_error", "Your API key does not have permission to use this resource."),
    404: ("not_found_error", "Not found"),
    413: ("request_too_large", "Request exceeds the maximum allowed number of bytes."),
    429: ("rate_limit_error", "Number of request tokens has exceeded your per-minute rate limit"),
    500: ("api_error", "Internal server error"),
    504: ("timeout_error", "Request timed out"),
    529: ("overloaded_error", "Overloaded"),
}
DEFAULT_STREAM_ERROR = {"type": "api_error", "message": "Internal server error"}


def request_id(index: int) -> str:
    return f"req_fake{index:016d}"


def error_body(status: int, message: str | None, index: int) -> dict[str, object]:
    kind, default = _ERRORS.get(status, ("api_error", "Internal server error"))
    return {
        "type": "error",
        "error": {"type": kind, "message": message if message is not None else default},
        "request_id": request_id(index),
    }


def error_reply(step: HttpError, index: int) -> Reply:
    """
    A plain HTTP error with the real API's headers.

    Every error carries ``request-id``; a 429 carries ``retry-after`` (whole
    seconds), as the real API's rate limiter sends it; a client error that a
    retry cannot fix carries ``x-should-retry: false``, as real 400s do.
    Overloads and server errors carry no ``x-should-retry``: Claude Code
    honours a ``false`` there and then skips the retries (and the model
    fallback) that the captures show.  The script's headers replace these.
    """
    defaults: tuple[tuple[str, str], ...] = (("request-id", request_id(index)),)
    if step.status == 429:
        defaults += (("retry-after", "1"),)
    elif step.status < 500 and step.status not in (408, 409):
        defaults += (("x-should-retry", "false"),)
    body = step.body if step.body is not None else error_body(step.status, step.message, index)
    return json_reply(step.status, body, merge_headers(defaults, step.headers), delay=step.delay)


def _model(request: dict[str, object]) -> str:
    model = request.get("model")
    return model if isinstance(model, str) else "claude-fake"


def _blocks(step: Answer, index: int) -> list[dict[str, object]]:
    """The complete content blocks of the answer, in wire order."""
    blocks: list[dict[str, object]] = []
    if step.thinking is not None:
        blocks.append({"type": "thinking", "thinking": step.thinking, "signature": f"sig_{index}"})
    blocks.extend({"type": "text", "text": text} for text in step.texts)
    for number, tool in enumerate(step.tools):
        call_id = tool_id(index, number)
        blocks.append({"type": "tool_use", "id": call_id, "name": tool.name, "input": tool.input})
    blocks.extend({"type": "text", "text": text} for text in step.texts_after)
    return blocks


def tool_id(index: int, number: int) -> str:
    """
    The id of the ``number``-th call (0-based) in the answer to request ``index``.

    No id of one answer is a prefix of another's: Claude Code 2.1.328 pairs
    results with calls by prefix, so with ``toolu_0`` and ``toolu_0_1`` it sends
    "[Tool result missing due to internal error]" for the second call and
    merges the results (probed).  The first call keeps the captures' ``toolu_N``;
    later ones differ from it at the first character after ``toolu_`` and have
    a fixed-width number.
    """
    return f"toolu_{index}" if number == 0 else f"toolu_b{index}_{number:02d}"


def _stop_reason(step: Answer) -> str:
    if step.stop_reason is not None:
        return step.stop_reason
    return "tool_use" if step.tools else "end_turn"


def _usage(step: Answer) -> dict[str, int]:
    return {
        "input_tokens": INPUT_TOKENS if step.input_tokens is None else step.input_tokens,
        "output_tokens": OUTPUT_TOKENS if step.output_tokens is None else step.output_tokens,
    }


def answer_reply(step: Answer, request: dict[str, object], index: int) -> Reply:
    """
    The answer to request `index`, streamed when the request asked for ``stream``.

    No ``request-id`` header on a 200, unlike the real API: Claude Code copies
    it into every stream-json assistant line as ``request_id``, and the
    captures' fake sent none, so their lines have no such key.  A step's own
    ``headers`` can add it.
    """
    headers = step.headers
    if request.get("stream") is not True:
        return _plain(step, request, index, headers)
    events = _events(step, request, index)
    cut = step.truncate_after is not None and step.truncate_after < len(events)
    if step.truncate_after is not None:
        events = events[: step.truncate_after]
    return Reply(200, _SSE_HEADERS + headers, tuple(events), True, step.delay, cut)


def _plain(
    step: Answer, request: dict[str, object], index: int, headers: tuple[tuple[str, str], ...]
) -> Reply:
    if step.midstream_error:
        # No stream to break: the same failure as a plain error, as the API reports it then.
        payload = step.error_payload or DEFAULT_STREAM_ERROR
        status = 529 if payload.get("type") == "overloaded_error" else 500
        body = {"type": "error", "error": dict(payload), "request_id": request_id(index)}
        return json_reply(status, body, headers, delay=step.delay)
    message: dict[str, object] = {
        "id": f"msg_{index}",
        "type": "message",
        "role": "assistant",
        "model": _model(request),
        "content": _blocks(step, index),
        "stop_reason": _stop_reason(step),
        "stop_sequence": None,
        "usage": _usage(step),
    }
    return json_reply(200, message, headers, delay=step.delay, cut=step.truncate_after is not None)


def _events(step: Answer, request: dict[str, object], index: int) -> list[bytes]:
    message: dict[str, object] = {
        "id": f"msg_{index}",
        "type": "message",
        "role": "assistant",
        "model": _model(request),
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": _usage(step),
    }
    events = [sse("message_start", {"type": "message_start", "message": message})]
    events.append(sse("ping", {"type": "ping"}))
    for number, block in enumerate(_blocks(step, index)):
        events.extend(_block_events(number, block))
    if step.midstream_error:
        error = {"type": "error", "error": dict(step.error_payload or DEFAULT_STREAM_ERROR)}
        return [*events, sse("error", error)]
    delta = {
        "type": "message_delta",
        "delta": {"stop_reason": _stop_reason(step), "stop_sequence": None},
        "usage": {"output_tokens": _usage(step)["output_tokens"]},
    }
    return [*events, sse("message_delta", delta), sse("message_stop", {"type": "message_stop"})]


def _block_events(number: int, block: dict[str, object]) -> list[bytes]:
    kind = block["type"]
    if kind == "text":
        start: dict[str, object] = {"type": "text", "text": ""}
        deltas = [{"type": "text_delta", "text": p} for p in pieces(str(block["text"]))]
    elif kind == "thinking":
        start = {"type": "thinking", "thinking": "", "signature": ""}
        deltas = [{"type": "thinking_delta", "thinking": p} for p in pieces(str(block["thinking"]))]
        deltas.append({"type": "signature_delta", "signature": str(block["signature"])})
    else:
        start = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
        deltas = [
            {"type": "input_json_delta", "partial_json": p}
            for p in ["", *pieces(dumps(block["input"]))]
        ]
    events = [
        sse(
            "content_block_start",
            {"type": "content_block_start", "index": number, "content_block": start},
        )
    ]
    events.extend(
        sse("content_block_delta", {"type": "content_block_delta", "index": number, "delta": d})
        for d in deltas
    )
    events.append(sse("content_block_stop", {"type": "content_block_stop", "index": number}))
    return events
