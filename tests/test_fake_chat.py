"""
The fake OpenAI Chat Completions API, in process and over loopback, and the
real ``codebuddy`` driven by it.

The unit tests read the wire as an OpenAI client does (``data:`` lines of
``chat.completion.chunk`` objects up to ``[DONE]``, tool-call arguments
joined by index); the last part serves scripts to the pinned CodeBuddy Code
and checks that it reads each behaviour the way the script meant it.  Those
fail, not skip, when the binary is missing (``HARNESS_REAL_CLIS=off`` leaves
them out); each run is bounded by a timeout that kills its process group.
"""

from __future__ import annotations

import contextlib
import json
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import pytest

from harness import net
from providers_fake import api
from providers_fake.api import realcli
from tests import served
from tests.realbin import real_binary

CHAT = "/v1/chat/completions"
#: Long enough that its arguments stream in several pieces.
VALUE = {"cause": "the lockfile pins a yanked release", "fixes": ["pip install -U x", "re-lock"]}
SCHEMA = json.dumps(
    {
        "type": "object",
        "properties": {"cause": {"type": "string"}, "fixes": {"type": "array"}},
        "required": ["cause", "fixes"],
        "additionalProperties": False,
    }
)


class Served:
    """One script behind one way of reaching it (`tests.served`)."""

    def __init__(self, stack: contextlib.ExitStack, way: str, script: Any) -> None:
        self.fake = api.ScriptedModelAPI(script)
        self.client = served.client_for(stack, way, self.fake)

    def post(self, **body: Any) -> Any:
        body.setdefault("model", "gpt-probe")
        body.setdefault("messages", [{"role": "user", "content": "Diagnose."}])
        return self.client.post(CHAT, json=body, headers={"authorization": "Bearer sk-secret"})


@pytest.fixture(params=served.WAYS)
def serve(request: pytest.FixtureRequest) -> Any:
    with contextlib.ExitStack() as stack:
        yield lambda script: Served(stack, request.param, script)


def _data(body: bytes) -> list[Any]:
    """Each ``data:`` line's payload (``[DONE]`` kept as the string), as a client reads them."""
    out: list[Any] = []
    for block in body.decode().split("\n\n"):
        if block.strip():
            assert block.startswith("data: "), block
            assert "\n" not in block, block
            payload = block.removeprefix("data: ")
            out.append(payload if payload == "[DONE]" else json.loads(payload))
    return out


def _calls(chunks: list[Any]) -> dict[int, dict[str, str]]:
    """Tool calls joined by index, the way the OpenAI SDKs accumulate them."""
    calls: dict[int, dict[str, str]] = {}
    for chunk in chunks:
        for choice in chunk.get("choices", []) if isinstance(chunk, dict) else []:
            for call in choice["delta"].get("tool_calls", []):
                into = calls.setdefault(call["index"], {"id": "", "name": "", "arguments": ""})
                into["id"] += call.get("id", "")
                into["name"] += call.get("function", {}).get("name", "")
                into["arguments"] += call.get("function", {}).get("arguments", "")
    return calls


# -- the wire --------------------------------------------------------------------------------


def test_a_streamed_call_splits_its_arguments_and_ends_with_usage_and_done(serve: Any) -> None:
    served = serve([api.tool_call(VALUE, text="Reporting.")])
    response = served.post(stream=True, stream_options={"include_usage": True})
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/event-stream")
    assert response.headers["x-request-id"] == "req_fake0000000000000000"
    chunks = _data(response.content)
    assert chunks[-1] == "[DONE]"
    objects = chunks[:-1]
    assert {c["object"] for c in objects} == {"chat.completion.chunk"}
    assert {c["id"] for c in objects} == {"chatcmpl-fake0000000000000000"}
    assert {c["model"] for c in objects} == {"gpt-probe"}
    first = objects[0]["choices"][0]
    assert first == {
        "index": 0,
        "delta": {"role": "assistant", "content": "", "refusal": None},
        "logprobs": None,
        "finish_reason": None,
    }
    content = [c["choices"][0]["delta"].get("content", "") for c in objects if c["choices"]]
    assert "".join(content) == "Reporting."
    opening = objects[2]["choices"][0]["delta"]["tool_calls"][0]
    assert opening == {
        "index": 0,
        "id": "call_fake00000000",
        "type": "function",
        "function": {"name": "StructuredOutput", "arguments": ""},
    }
    pieces = [
        call["function"]["arguments"]
        for c in objects
        if c["choices"]
        for call in c["choices"][0]["delta"].get("tool_calls", [])
    ]
    assert len([p for p in pieces if p]) > 2, "the arguments come in several pieces"
    with pytest.raises(ValueError):
        json.loads(pieces[1])  # no piece is JSON on its own
    joined = {"id": "call_fake00000000", "name": "StructuredOutput"}
    assert _calls(objects) == {0: {**joined, "arguments": api.wire.dumps(VALUE)}}
    last_choice, usage = objects[-2], objects[-1]
    assert last_choice["choices"][0] == {
        "index": 0,
        "delta": {},
        "logprobs": None,
        "finish_reason": "tool_calls",
    }
    assert all(c["usage"] is None for c in objects[:-1])
    assert usage["choices"] == []
    assert usage["usage"]["prompt_tokens"] == 12
    assert usage["usage"]["completion_tokens"] == 7
    assert usage["usage"]["total_tokens"] == 19


def test_no_usage_chunk_unless_asked_and_prose_stops(serve: Any) -> None:
    served = serve([{"text": "It was a typo.", "usage": {"input_tokens": 3}}])
    objects = _data(served.post(stream=True).content)[:-1]
    assert all("usage" not in c and c["choices"] for c in objects)
    assert objects[-1]["choices"][0]["finish_reason"] == "stop"
    assert _calls(objects) == {}


def test_a_plain_answer_is_one_completion(serve: Any) -> None:
    served = serve([{"tools": [{"input": {"a": 1}}, {"input": {"b": 2}, "name": "Read"}]}])
    body = served.post().json()
    assert list(body) == [
        "id", "object", "created", "model", "choices", "usage", "service_tier",
        "system_fingerprint",
    ]  # fmt: skip
    assert body["object"] == "chat.completion"
    (choice,) = body["choices"]
    assert choice["finish_reason"] == "tool_calls"
    message = choice["message"]
    assert message["content"] is None
    assert [
        (c["function"]["name"], json.loads(c["function"]["arguments"]))
        for c in message["tool_calls"]
    ] == [("StructuredOutput", {"a": 1}), ("Read", {"b": 2})]
    assert body["usage"]["total_tokens"] == 19


def test_http_errors_carry_openai_bodies_and_retry_after(serve: Any) -> None:
    served = serve(
        [
            api.rate_limited(7),
            {"status": 400, "body": {"error": {"message": "bad", "code": "x"}}},
            {"status": 503, "message": "busy"},
        ]
    )
    limited = served.post(stream=True)
    assert (limited.status_code, limited.headers["retry-after"]) == (429, "7")
    assert limited.json()["error"]["code"] == "rate_limit_exceeded"
    assert served.post(stream=True).json() == {"error": {"message": "bad", "code": "x"}}
    busy = served.post(stream=True)
    assert busy.status_code == 503
    assert busy.json() == {
        "error": {"message": "busy", "type": "server_error", "param": None, "code": None}
    }
    assert [r.api for r in served.fake.requests] == ["chat"] * 3


def test_a_midstream_error_is_a_data_line_and_no_done(serve: Any) -> None:
    served = serve([{"text": "partial", "midstream_error": {"message": "overloaded", "type": "x"}}])
    chunks = _data(served.post(stream=True).content)
    assert chunks[-1] == {"error": {"message": "overloaded", "type": "x"}}
    assert "[DONE]" not in chunks


def test_a_cut_stream_stops_after_that_many_lines(serve: Any) -> None:
    served = serve([{"tool": VALUE, "truncate_after": 3}])
    with contextlib.suppress(httpx.HTTPError, net.HTTPError):  # the connection drops
        response = served.post(stream=True)
        assert len(_data(response.content)) == 3


# -- the real CodeBuddy Code ------------------------------------------------------------------


def _codebuddy(script: Any, timeout: float = 45.0) -> tuple[realcli.RealRun, api.ScriptedModelAPI]:
    binary = real_binary("codebuddy")
    with api.LoopbackServer(script) as server:
        run = realcli.run_codebuddy(
            binary, server.url + "/v1", prompt="Diagnose.", schema=SCHEMA, timeout=timeout
        )
    return run, server.fake


def _records(run: realcli.RealRun) -> list[dict[str, Any]]:
    return [json.loads(line) for line in run.stdout.decode().splitlines() if line.strip()]


@pytest.mark.subprocess
def test_real_codebuddy_joins_split_arguments_and_reads_the_usage_chunk() -> None:
    script = [
        {"tool": VALUE, "text": "Reporting.", "usage": {"input_tokens": 40, "output_tokens": 9}},
        {"text": "Done.", "usage": {"input_tokens": 50, "output_tokens": 2}},
    ]
    run, fake = _codebuddy(script)
    assert (run.exit_code, run.timed_out) == (0, False), run.stderr
    result = _records(run)[-1]
    assert result["structured_output"] == VALUE
    assert (result["subtype"], result["result"]) == ("success", "Done.")
    assert (result["usage"]["input_tokens"], result["usage"]["output_tokens"]) == (90, 11)
    fake.assert_no_unexpected()
    first = fake.requests[0]
    assert (first.path, first.api, first.stream) == (CHAT, "chat", True)
    assert first.json["stream_options"] == {"include_usage": True}
    tools: list[Any] = first.tools
    tool = next(t["function"] for t in tools if t["function"]["name"] == "StructuredOutput")
    assert tool["strict"] is False
    replayed: Any = fake.requests[1].messages[-2]
    assert replayed["tool_calls"][0]["function"]["arguments"] == api.wire.dumps(VALUE)


@pytest.mark.subprocess
def test_real_codebuddy_reads_an_error_body_and_a_midstream_error() -> None:
    """
    It waits minutes after either (docs/codebuddy.md), so the timeout ends each
    run; the two run side by side, and the timeout leaves room for a start-up
    that takes seconds on a loaded machine.
    """
    cases = (
        ({"status": 429, "message": "slow down", "headers": {"retry-after": "1"}}, "429 slow down"),
        ({"text": "x", "midstream_error": {"message": "stream broke"}}, "stream broke"),
    )
    with ThreadPoolExecutor(len(cases)) as pool:
        runs = list(pool.map(lambda case: _codebuddy([case[0], {"tool": VALUE}], 30), cases))
    for (step, shown), (run, fake) in zip(cases, runs, strict=True):
        assert run.timed_out, f"{step}: the CLI gave up by itself after {run.seconds:.1f}s"
        texts = [
            block.get("text", "")
            for record in _records(run)
            if record["type"] == "assistant"
            for block in record["message"]["content"]
        ]
        assert any(text.startswith(shown) for text in texts), texts
        assert len(fake.model_requests) == 1


@pytest.mark.subprocess
def test_real_codebuddy_reads_a_cut_stream_as_aborted_and_waits_out_a_delay() -> None:
    """
    A stream cut after four lines is no answer: the CLI prints ``aborted``,
    asks again, accepts the next call, and still ends the run as
    ``error_during_execution`` with ``errors: ["aborted"]`` and no output.
    """
    started = time.monotonic()
    run, fake = _codebuddy(
        [{"tool": VALUE, "truncate_after": 4, "delay": 2}, {"tool": VALUE}, {"text": "Done."}]
    )
    assert time.monotonic() - started >= 2
    assert (run.exit_code, run.timed_out) == (0, False)
    assert len(fake.model_requests) == 3
    records = _records(run)
    first = next(r for r in records if r["type"] == "assistant")
    assert first["message"]["content"] == [{"type": "text", "text": "aborted"}]
    result = records[-1]
    assert (result["subtype"], result["errors"]) == ("error_during_execution", ["aborted"])
    assert "structured_output" not in result
