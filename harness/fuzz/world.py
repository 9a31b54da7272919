"""
What users' runs meet that hand-picked pools miss: string classes, the providers' error kinds, cuts.

The model-api fuzzer drew its strings, errors and cuts from a few values
its authors thought of, and agreed with the real binaries on every case
while cases written outside the project found disagreements (issue 24).
This module widens the world the generator draws from:

- strings of the classes readers get wrong: the line and paragraph
  separators and NEL that ``str.splitlines`` splits at, astral characters
  (surrogate pairs in JavaScript and JSON escapes), combining marks, NUL
  and escapes.  They go into what a model *answers* (prose, values), never
  into a schema, which travels in argv (where NUL cannot);
- HTTP answers drawn from the kinds of error each provider documents, with
  the bodies the APIs send (Anthropic: https://docs.anthropic.com/en/api/errors;
  OpenAI: https://platform.openai.com/docs/guides/error-codes and the
  Responses API's ``response.failed`` event);
- cuts at every event boundary of an answer: the boundaries are counted on
  the fake's own wire (`providers_fake.api`), so a cut lands anywhere from
  before ``message_start`` to before the last event.
"""

from __future__ import annotations

import json
import unicodedata
from typing import Any

from hypothesis import strategies as st

from providers_fake.api import anthropic, openai
from providers_fake.api.script import Answer, step_from_json

Json = Any
Draw = st.DrawFn
Step = dict[str, Json]

#: Strings of each class a reader may get wrong, as a model could write them.
STRING_CLASSES: dict[str, tuple[str, ...]] = {
    "line-separators": ("a\u2028b", "end\u2029", "next\u0085line", "\u2028\u2029"),
    "astral": ("\U0001d11e clef", "\U0001f9ea test", "\U00020000", "\U0001f468\u200d\U0001f4bb"),
    "combining": ("e\u0301te\u0301", "n\u0303", "a\u0308\u0304", "\u0915\u094d\u0937"),
    "nul": ("a\x00b", "\x00", "end\x00"),
    "escapes": ('say "hi"\\', "tab\there", "\x1b[31mred\x1b[0m", "\\u0041 literal", "cr\r\nlf"),
}


def string_classes(text: str) -> set[str]:
    """The classes ``text`` belongs to, read off its characters (so any source counts)."""
    found = set()
    if any(c in "\u2028\u2029\u0085" for c in text):
        found.add("line-separators")
    if any(ord(c) > 0xFFFF for c in text):
        found.add("astral")
    if any(unicodedata.combining(c) for c in text):
        found.add("combining")
    if "\x00" in text:
        found.add("nul")
    if any(c in '"\\' or (ord(c) < 0x20 and c != "\x00") for c in text):
        found.add("escapes")
    return found


#: A string of one of the classes (each class as likely), whole or inside ordinary prose.
WORLD_STRINGS: st.SearchStrategy[str] = (
    st.sampled_from(sorted(STRING_CLASSES))
    .flatmap(lambda name: st.sampled_from(STRING_CLASSES[name]))
    .flatmap(lambda s: st.sampled_from((s, f"Checked {s} here.")))
)


def _anthropic(status: int, kind: str, message: str) -> Step:
    body = {
        "type": "error",
        "error": {"type": kind, "message": message},
        "request_id": "req_011CVfuzzWorld0000000001",
    }
    return {"status": status, "body": body}


#: Anthropic errors that end a run (or a short fixed cascade), by the API's error type.
ANTHROPIC_FINAL: dict[str, tuple[Step, ...]] = {
    "invalid_request_error": (
        _anthropic(400, "invalid_request_error", "messages: text content blocks must be non-empty"),
        _anthropic(400, "invalid_request_error", "max_tokens: Field required"),
    ),
    "prompt_too_long": (
        _anthropic(
            400, "invalid_request_error", "prompt is too long: 210000 tokens > 200000 maximum"
        ),
        _anthropic(400, "invalid_request_error", "prompt is too long: 1024 tokens > 1000 maximum"),
    ),
    "authentication_error": (_anthropic(401, "authentication_error", "invalid x-api-key"),),
    "permission_error": (
        _anthropic(
            403,
            "permission_error",
            "Your API key does not have permission to use the specified resource.",
        ),
    ),
    "not_found_error": (_anthropic(404, "not_found_error", "model: claude-fuzz-unknown"),),
    "request_too_large": (
        _anthropic(
            413, "request_too_large", "Request exceeds the maximum allowed number of bytes."
        ),
    ),
}
#: Anthropic errors the CLI retries: few, with short retry headers, never the last step.
ANTHROPIC_RETRIED: dict[str, tuple[Step, ...]] = {
    "rate_limit_error": (
        {
            **_anthropic(
                429,
                "rate_limit_error",
                "Number of request tokens has exceeded your per-minute rate limit",
            ),
            "headers": {"retry-after": "0"},
        },
        {
            **_anthropic(
                429,
                "rate_limit_error",
                "This request would exceed the rate limit for your organization",
            ),
            "headers": {"retry-after-ms": "5"},
        },
    ),
    "api_error": (
        {
            **_anthropic(500, "api_error", "Internal server error"),
            "headers": {"retry-after-ms": "5"},
        },
    ),
    "overloaded_error": (
        {**_anthropic(529, "overloaded_error", "Overloaded"), "headers": {"retry-after-ms": "5"}},
    ),
}


def anthropic_kind(step: Step) -> str | None:
    """The error kind of an Anthropic error step, from its body or (no body) its status."""
    if "status" not in step:
        return None
    body = step.get("body")
    error = body.get("error") if isinstance(body, dict) else None
    message = (
        str(error.get("message", "")) if isinstance(error, dict) else str(step.get("message", ""))
    )
    if "prompt is too long" in message.lower():
        return "prompt_too_long"
    if isinstance(error, dict) and isinstance(error.get("type"), str):
        return str(error["type"])
    defaults = {
        400: "invalid_request_error",
        401: "authentication_error",
        403: "permission_error",
        404: "not_found_error",
        413: "request_too_large",
        429: "rate_limit_error",
        529: "overloaded_error",
    }
    return defaults.get(int(step["status"]), "api_error")


def _openai(
    status: int, message: str, kind: str, code: str | None, param: str | None = None
) -> Step:
    return {
        "status": status,
        "body": {"error": {"message": message, "type": kind, "param": param, "code": code}},
    }


#: OpenAI Responses errors by kind: HTTP errors, and ``response.failed`` events (midstream).
OPENAI_ERRORS: dict[str, tuple[Step, ...]] = {
    "context_length_exceeded": (
        _openai(
            400,
            "Your input exceeds the context window of this model. "
            "Please adjust your input and try again.",
            "invalid_request_error",
            "context_length_exceeded",
            "input",
        ),
    ),
    "invalid_json_schema": (
        _openai(
            400,
            "Invalid schema for response_format 'codex_output_schema': In context=(), "
            "'additionalProperties' is required to be supplied and to be false.",
            "invalid_request_error",
            "invalid_json_schema",
            "text.format.schema",
        ),
    ),
    "5xx": (
        _openai(
            500,
            "The server had an error while processing your request. Sorry about that!",
            "server_error",
            None,
        ),
        _openai(502, "Bad gateway.", "server_error", None),
        _openai(503, "The server is overloaded or not ready yet.", "server_error", None),
    ),
    "failed:context_length_exceeded": (
        {
            "midstream_error": {
                "code": "context_length_exceeded",
                "message": "Your input exceeds the context window of this model.",
            }
        },
    ),
    "failed:rate_limit_exceeded": (
        {
            "midstream_error": {
                "code": "rate_limit_exceeded",
                "message": "Rate limit reached for gpt-5 on tokens per min (TPM): Limit 30000, "
                "Used 30000, Requested 100. Please try again in 1.5s.",
            }
        },
    ),
    "failed:server_error": (
        {
            "midstream_error": {
                "code": "server_error",
                "message": "The server had an error processing your request.",
            }
        },
    ),
}


def openai_kind(step: Step) -> str | None:
    """The kind of an OpenAI error step: the error's code, ``5xx``, or a failed event's code."""
    failed = step.get("midstream_error")
    if isinstance(failed, dict):
        return f"failed:{failed.get('code')}"
    if "status" not in step:
        return None
    body = step.get("body")
    error = body.get("error") if isinstance(body, dict) else None
    code = error.get("code") if isinstance(error, dict) else None
    if isinstance(code, str):
        return code
    return "5xx" if int(step["status"]) >= 500 else f"http-{step['status']}"


# -- cuts -------------------------------------------------------------------------------


def events(cli: str, step: Step) -> list[dict[str, Json]]:
    """The SSE events (as JSON) the fake streams for an answer step, cut or not."""
    whole = {k: v for k, v in step.items() if k not in ("truncate_after", "delay")}
    answer = step_from_json(whole, "step")
    if not isinstance(answer, Answer):
        return []
    api = anthropic if cli == "claude" else openai
    reply = api.answer_reply(answer, {"stream": True, "model": "m"}, 0)
    return [_data(chunk) for chunk in reply.chunks]


def _data(chunk: bytes) -> dict[str, Json]:
    for line in chunk.decode().split("\n"):
        if line.startswith("data: "):
            value = json.loads(line[len("data: ") :])
            return value if isinstance(value, dict) else {}
    return {}


def cut_here(draw: Draw, cli: str, step: Step) -> Step:
    """The step cut at one of its event boundaries (any, from none sent to all but the last)."""
    count = len(events(cli, step))
    return {**step, "truncate_after": draw(st.integers(0, max(count - 1, 0)))}


def cut_kinds(cli: str, step: Step) -> set[str]:
    """``cut``; and ``cut:tool-after-text`` when it lands in a tool block after a whole text."""
    after = step.get("truncate_after")
    if not isinstance(after, int):
        return set()
    sent = events(cli, step)
    if after >= len(sent):
        return set()
    found = {"cut"}
    if cli == "claude":
        open_blocks: dict[int, str] = {}
        texts_done = False
        for event in sent[:after]:
            kind = event.get("type")
            if kind == "content_block_start":
                open_blocks[int(event["index"])] = str(event["content_block"]["type"])
            elif kind == "content_block_stop":
                closed = open_blocks.pop(int(event["index"]), "")
                texts_done = texts_done or closed == "text"
        if texts_done and "tool_use" in open_blocks.values():
            found.add("cut:tool-after-text")
    return found
