"""
The OpenAI Chat Completions API (``POST .../chat/completions``), as CodeBuddy Code sees it.

CodeBuddy Code talks to any endpoint of this shape (``CODEBUDDY_BASE_URL``),
so the fake answers it from the same script as the Messages and Responses
fakes.  The wire format is OpenAI's:

- a plain answer is one ``chat.completion`` object whose single choice holds
  the assistant ``message`` (``content``, ``tool_calls`` each with its
  ``arguments`` as a JSON *string*, ``refusal``, ``annotations``), its
  ``finish_reason`` (``tool_calls`` when the model called a tool, else
  ``stop``) and the ``usage``;
- a streamed answer is ``data:`` lines of ``chat.completion.chunk`` objects
  (no ``event:`` names): the first delta carries the role, then content
  deltas, then per tool call a delta with its ``index``, ``id``, ``type`` and
  ``name`` and an empty ``arguments``, then ``arguments`` pieces that are not
  JSON on their own; a last chunk with an empty delta and the
  ``finish_reason``; when the request asked for it
  (``stream_options.include_usage``) every chunk has ``"usage": null`` and
  one more chunk with no choices carries the usage; then ``data: [DONE]``;
- an error is ``{"error": {"message", "type", "param", "code"}}`` with its
  status (``retry-after`` on a 429), in the stream a ``data:`` line holding
  such an object (what the official SDKs raise as an APIError).

Each script text is a piece of the one ``content`` string (a Chat message has
one), ``texts_after`` streamed after the tool calls.  ``thinking`` goes out
as ``reasoning_content``, the field OpenAI-compatible reasoning models
(DeepSeek's API among them) stream beside ``content``; OpenAI's own API
sends no reasoning text on this endpoint.
"""

from __future__ import annotations

from providers_fake.api.openai import error_body, failed_plainly, request_id
from providers_fake.api.script import Answer, HttpError
from providers_fake.api.wire import Reply, dumps, json_reply, merge_headers, pieces

PROMPT_TOKENS = 12
COMPLETION_TOKENS = 7
# 2026-11-29T22:00:00Z, as the Responses fake; plus the request number.
_CREATED = 1_795_989_600
FINGERPRINT = "fp_fake0000"
DEFAULT_FAILURE: dict[str, object] = {
    "message": "The server had an error while processing your request.",
    "type": "server_error",
    "param": None,
    "code": None,
}
_SSE_HEADERS = (("content-type", "text/event-stream; charset=utf-8"), ("cache-control", "no-cache"))
DONE = b"data: [DONE]\n\n"


def completion_id(index: int) -> str:
    return f"chatcmpl-fake{index:016d}"


def call_id(index: int, number: int) -> str:
    return f"call_fake{index:04d}{number:04d}"


def error_reply(step: HttpError, index: int) -> Reply:
    """A plain HTTP error in OpenAI's shape: ``x-request-id`` always, ``retry-after`` on a 429."""
    defaults: tuple[tuple[str, str], ...] = (("x-request-id", request_id(index)),)
    if step.status == 429:
        defaults += (("retry-after", "1"),)
    body = step.body if step.body is not None else error_body(step.status, step.message)
    return json_reply(step.status, body, merge_headers(defaults, step.headers), delay=step.delay)


def _usage(step: Answer) -> dict[str, object]:
    prompt = PROMPT_TOKENS if step.input_tokens is None else step.input_tokens
    completion = COMPLETION_TOKENS if step.output_tokens is None else step.output_tokens
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
        "completion_tokens_details": {
            "reasoning_tokens": 0,
            "audio_tokens": 0,
            "accepted_prediction_tokens": 0,
            "rejected_prediction_tokens": 0,
        },
    }


def _finish_reason(step: Answer) -> str:
    if step.stop_reason is not None:
        return step.stop_reason
    return "tool_calls" if step.tools else "stop"


def _calls(step: Answer, index: int) -> list[dict[str, object]]:
    return [
        {
            "id": call_id(index, number),
            "type": "function",
            "function": {"name": tool.name, "arguments": dumps(tool.input)},
        }
        for number, tool in enumerate(step.tools)
    ]


def _model(request: dict[str, object]) -> str:
    model = request.get("model")
    return model if isinstance(model, str) else "gpt-fake"


def _completion(step: Answer, request: dict[str, object], index: int) -> dict[str, object]:
    content = "".join(step.texts + step.texts_after)
    message: dict[str, object] = {"role": "assistant", "content": content or None}
    if step.thinking is not None:
        message["reasoning_content"] = step.thinking
    calls = _calls(step, index)
    if calls:
        message["tool_calls"] = calls
    message.update(refusal=None, annotations=[])
    return {
        "id": completion_id(index),
        "object": "chat.completion",
        "created": _CREATED + index,
        "model": _model(request),
        "choices": [
            {
                "index": 0,
                "message": message,
                "logprobs": None,
                "finish_reason": _finish_reason(step),
            }
        ],
        "usage": _usage(step),
        "service_tier": "default",
        "system_fingerprint": FINGERPRINT,
    }


def _wants_usage(request: dict[str, object]) -> bool:
    options = request.get("stream_options")
    return isinstance(options, dict) and options.get("include_usage") is True


class _Chunks:
    """``chat.completion.chunk`` objects sharing one id, created time and model."""

    def __init__(self, request: dict[str, object], index: int) -> None:
        self.head = {
            "id": completion_id(index),
            "object": "chat.completion.chunk",
            "created": _CREATED + index,
            "model": _model(request),
            "service_tier": "default",
            "system_fingerprint": FINGERPRINT,
        }
        self.usage = _wants_usage(request)
        self.lines: list[bytes] = []

    def choice(self, delta: dict[str, object], finish: str | None = None) -> None:
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
        chunk: dict[str, object] = {**self.head, "choices": [choice]}
        if self.usage:
            chunk["usage"] = None
        self.add(chunk)

    def add(self, chunk: object) -> None:
        self.lines.append(f"data: {dumps(chunk)}\n\n".encode())


def _stream(step: Answer, request: dict[str, object], index: int) -> list[bytes]:
    chunks = _Chunks(request, index)
    chunks.choice({"role": "assistant", "content": "", "refusal": None})
    if step.thinking is not None:
        for piece in pieces(step.thinking):
            chunks.choice({"reasoning_content": piece})
    for piece in pieces("".join(step.texts)):
        chunks.choice({"content": piece})
    for number, call in enumerate(_calls(step, index)):
        function = call["function"]
        assert isinstance(function, dict)
        opening = {
            "index": number,
            "id": call["id"],
            "type": "function",
            "function": {"name": function["name"], "arguments": ""},
        }
        chunks.choice({"tool_calls": [opening]})
        for piece in pieces(str(function["arguments"])):
            chunks.choice({"tool_calls": [{"index": number, "function": {"arguments": piece}}]})
    for piece in pieces("".join(step.texts_after)):
        chunks.choice({"content": piece})
    if step.midstream_error:
        chunks.add({"error": dict(step.error_payload or DEFAULT_FAILURE)})
        return chunks.lines
    chunks.choice({}, _finish_reason(step))
    if chunks.usage:
        chunks.add({**chunks.head, "choices": [], "usage": _usage(step)})
    return [*chunks.lines, DONE]


def answer_reply(step: Answer, request: dict[str, object], index: int) -> Reply:
    """The answer to request `index`: ``data:`` chunks when the request asked for ``stream``."""
    headers = (("x-request-id", request_id(index)), *step.headers)
    if request.get("stream") is not True:
        if step.midstream_error:
            return failed_plainly(step, headers, DEFAULT_FAILURE)
        done = _completion(step, request, index)
        return json_reply(200, done, headers, delay=step.delay, cut=step.truncate_after is not None)
    chunks = _stream(step, request, index)
    cut = step.truncate_after is not None and step.truncate_after < len(chunks)
    if step.truncate_after is not None:
        chunks = chunks[: step.truncate_after]
    return Reply(200, _SSE_HEADERS + headers, tuple(chunks), True, step.delay, cut)
