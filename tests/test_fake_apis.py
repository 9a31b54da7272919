"""
The scripted fake model APIs, in process (the harness's client, and httpx
through respx) and over loopback, and the
real ``claude`` and ``codex`` binaries driven by them.

The unit tests run every wire behaviour through both transports from the same
script: the point of having two is that they cannot disagree.  The last part
replays each real-CLI capture's ``model_script`` to the pinned real binary and
demands what the capture shows: the exit status, stdout (volatile fields
aside), stderr and the requests the CLI made.  Those tests fail, not skip,
when the binaries are missing; ``HARNESS_REAL_CLIS=off`` leaves them out.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
import respx

from harness import net
from providers_fake import api
from providers_fake.api import realcli
from tests import captures, served
from tests.capture_compare import CAPTURE_SCHEMAS, compare_to_capture
from tests.realbin import real_binary

ROOT = Path(__file__).resolve().parent.parent
DIAGNOSIS = (ROOT / "scenarios" / "agent-cli" / "schemas" / "diagnosis.json").read_text()
MESSAGES = "/v1/messages?beta=true"
VALUE = {"cause": "missing dependency", "fixes": ["pip install x"]}
#: A dropped connection, as each client raises it.
CUT = (httpx.RemoteProtocolError, net.RemoteProtocolError)


def _sse(body: bytes) -> list[tuple[str, dict[str, Any]]]:
    events = []
    for block in body.decode().split("\n\n"):
        if block.strip():
            name, data = block.split("\n", 1)
            events.append((name.removeprefix("event: "), json.loads(data.removeprefix("data: "))))
    return events


class Served:
    """One script behind one way of reaching it (`tests.served`)."""

    def __init__(self, stack: contextlib.ExitStack, way: str, script: Any) -> None:
        self.fake = api.ScriptedModelAPI(script)
        self.client = served.client_for(stack, way, self.fake)

    def post(self, path: str = MESSAGES, **body: Any) -> Any:
        body.setdefault("model", "claude-opus-5-5")
        return self.client.post(path, json=body, headers={"x-api-key": "sk-secret"})


@pytest.fixture(params=served.WAYS)
def serve(request: pytest.FixtureRequest) -> Any:
    with contextlib.ExitStack() as stack:
        yield lambda script: Served(stack, request.param, script)


# -- Anthropic Messages API ----------------------------------------------------------------


def test_streamed_text_and_structured_output_call(serve: Any) -> None:
    served = serve([api.tool_call(VALUE, text="Done. Reporting now.")])
    response = served.post(stream=True)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/event-stream")
    assert "request-id" not in response.headers  # see `_anthropic.answer_reply`
    events = _sse(response.content)
    names = [name for name, _ in events]
    assert names[:2] == ["message_start", "ping"]
    assert names[-2:] == ["message_delta", "message_stop"]
    assert all(name == data["type"] for name, data in events)
    start = events[0][1]["message"]
    assert (start["id"], start["model"], start["content"]) == ("msg_0", "claude-opus-5-5", [])
    starts = [d["content_block"] for n, d in events if n == "content_block_start"]
    assert starts[0] == {"type": "text", "text": ""}
    assert starts[1] == {
        "type": "tool_use",
        "id": "toolu_0",
        "name": "StructuredOutput",
        "input": {},
    }
    deltas = [d for n, d in events if n == "content_block_delta"]
    assert "".join(d["delta"]["text"] for d in deltas if d["index"] == 0) == "Done. Reporting now."
    partial = [d["delta"]["partial_json"] for d in deltas if d["index"] == 1]
    assert partial[0] == ""
    assert json.loads("".join(partial)) == VALUE
    assert [d["index"] for n, d in events if n == "content_block_stop"] == [0, 1]
    final = events[-2][1]
    assert (final["delta"]["stop_reason"], final["usage"]) == ("tool_use", {"output_tokens": 5})


def test_thinking_block_and_prose_stop(serve: Any) -> None:
    served = serve([api.Answer(thinking="Let me think.", texts=("prose",))])
    events = _sse(served.post(stream=True).content)
    starts = [d["content_block"]["type"] for n, d in events if n == "content_block_start"]
    assert starts == ["thinking", "text"]
    kinds = [d["delta"]["type"] for n, d in events if n == "content_block_delta"]
    assert kinds == ["thinking_delta", "signature_delta", "text_delta"]
    assert events[-2][1]["delta"]["stop_reason"] == "end_turn"


def test_plain_json_answer_when_not_streaming(serve: Any) -> None:
    served = serve([api.Answer(texts=("hi",), tools=(api.ToolUse([1, 2]),), input_tokens=3)])
    response = served.post(stream=False)
    assert response.headers["content-type"] == "application/json"
    message = response.json()
    assert message["stop_reason"] == "tool_use"
    assert message["usage"] == {"input_tokens": 3, "output_tokens": 5}
    assert message["content"] == [
        {"type": "text", "text": "hi"},
        {"type": "tool_use", "id": "toolu_0", "name": "StructuredOutput", "input": [1, 2]},
    ]


@pytest.mark.parametrize(
    ("step", "status", "kind", "headers"),
    [
        (api.foundry_unsupported(), 400, "invalid_request_error", {"x-should-retry": "false"}),
        (api.rate_limited(7), 429, "rate_limit_error", {"retry-after": "7"}),
        (api.server_error(), 500, "api_error", {}),
        (api.overloaded(), 529, "overloaded_error", {}),
    ],
)
def test_http_errors_carry_real_bodies_and_headers(
    serve: Any, step: api.HttpError, status: int, kind: str, headers: dict[str, str]
) -> None:
    response = serve([step]).post(stream=True)
    assert response.status_code == status
    body = response.json()
    assert (body["type"], body["error"]["type"]) == ("error", kind)
    assert body["request_id"] == response.headers["request-id"] == "req_fake0000000000000000"
    assert {k: response.headers.get(k) for k in headers} == headers
    if status >= 500:
        assert "x-should-retry" not in response.headers  # or Claude Code skips its retries
    if status == 400:
        assert body["error"]["message"] == api.FOUNDRY_MESSAGE


def test_a_scripted_body_is_sent_byte_for_byte(serve: Any) -> None:
    body = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    served = serve([{"status": 529, "body": body, "headers": {"x-should-retry": "true"}}])
    response = served.post(stream=True)
    assert response.content == json.dumps(body).encode()
    assert response.headers["x-should-retry"] == "true"


def test_midstream_error_follows_complete_blocks(serve: Any) -> None:
    events = _sse(serve([{"tool": VALUE, "midstream_error": True}]).post(stream=True).content)
    names = [name for name, _ in events]
    assert names[-2:] == ["content_block_stop", "error"]
    assert {"message_stop", "message_delta"}.isdisjoint(names)
    assert events[-1][1] == {
        "type": "error",
        "error": {"type": "api_error", "message": "Internal server error"},
    }


def test_a_delay_holds_the_answer_back_and_a_cut_drops_the_connection(serve: Any) -> None:
    slow = api.Answer(texts=("slow",), delay=0.3)
    served = serve([slow, api.Answer(tools=(api.ToolUse(VALUE),), truncate_after=4)])
    started = time.monotonic()
    assert served.post(stream=True).status_code == 200
    assert time.monotonic() - started >= 0.3
    with pytest.raises(CUT):
        served.post(stream=True)
    assert len(served.fake.requests) == 2


def test_the_last_step_repeats(serve: Any) -> None:
    served = serve([api.text("prose"), api.tool_call(VALUE)])
    ids = [served.post(stream=False).json()["id"] for _ in range(4)]
    assert ids == ["msg_0", "msg_1", "msg_2", "msg_3"]
    assert [r.step for r in served.fake.requests] == [0, 1, 2, 3]
    assert served.fake.models == ["claude-opus-5-5"] * 4
    served.fake.assert_no_unexpected()


def test_a_request_beyond_a_non_repeating_script_is_unexpected(serve: Any) -> None:
    served = serve(api.Script.of(api.tool_call(VALUE), repeat_last=False))
    assert served.post(stream=True).status_code == 200
    response = served.post(stream=True)
    assert response.status_code == 500
    error = response.json()["error"]
    assert error["type"] == "api_error"
    assert error["message"].startswith("fake: unexpected request #2: the script has 1 step(s)")
    [odd] = served.fake.unexpected
    assert (odd.index, odd.step, odd.status) == (1, None, 500)
    assert served.fake.model_requests == served.fake.requests[:1]
    with pytest.raises(AssertionError, match="unexpected request #2"):
        served.fake.assert_no_unexpected()


def test_unknown_endpoints_and_bad_bodies_are_unexpected_and_use_no_step(serve: Any) -> None:
    served = serve([api.text("a"), api.text("b")])
    assert served.client.get("/v1/models").status_code == 404
    bad = served.client.post(MESSAGES, content=b"not json")
    assert bad.status_code == 400
    assert served.post(stream=False).json()["content"] == [{"type": "text", "text": "a"}]
    reasons = [r.unexpected for r in served.fake.unexpected]
    assert reasons == ["no such endpoint: GET /v1/models", "the body is not a JSON object"]


def _say(role: str, **block: Any) -> dict[str, Any]:
    return {"role": role, "content": [block]}


TOOL_USE = {"type": "tool_use", "id": "toolu_0", "name": "StructuredOutput", "input": {"cause": 1}}
CLAUDE_LIKE_BODY: dict[str, Any] = {
    "model": "claude-sonnet-5",
    "stream": True,
    "tools": [
        {"name": "Bash", "input_schema": {"type": "object"}},
        {"name": "StructuredOutput", "input_schema": json.loads(DIAGNOSIS), "strict": True},
    ],
    "messages": [
        _say("user", type="text", text="<system-reminder>…"),
        {"role": "system", "content": "# Environment"},
        _say("assistant", **TOOL_USE),
        _say("user", type="tool_result", tool_use_id="toolu_0", is_error=True, content="Bad"),
        _say("assistant", type="text", text="prose"),
        _say("user", type="text", text="[structured-output-enforce] Call"),
    ],
}


def test_recorded_requests_name_what_scenarios_ask_about(serve: Any) -> None:
    served = serve([api.tool_call(VALUE)])
    served.post(**CLAUDE_LIKE_BODY)
    [request] = served.fake.requests
    assert (request.method, request.path, request.api) == ("POST", MESSAGES, "anthropic")
    assert (request.model, request.stream, request.strict) == ("claude-sonnet-5", True, True)
    assert request.header("x-api-key") == "<redacted>"
    assert request.input_schema == json.loads(DIAGNOSIS)
    assert [m["role"] for m in request.messages_after_prompt] == ["assistant", "user"] * 2
    assert [b["id"] for b in request.tool_uses] == ["toolu_0"]
    assert request.retry_feedback == ["Bad"]
    assert request.enforce_reminders == ["[structured-output-enforce] Call"]
    assert request.capture_view()["structured_output_tool"] == CLAUDE_LIKE_BODY["tools"][1]
    assert json.loads(request.raw_body) == CLAUDE_LIKE_BODY


# -- OpenAI Responses API ------------------------------------------------------------------

TEXT_FORMAT = {"type": "json_schema", "strict": True, "name": "codex_output_schema"}
CODEX_BODY = {"model": "gpt-probe", "stream": True, "input": [], "text": {"format": TEXT_FORMAT}}
MESSAGE_EVENTS = ("output_item.added", "content_part.added", "output_text.delta")
PER_MESSAGE = [
    f"response.{kind}"
    for kind in (*MESSAGE_EVENTS, "output_text.done", "content_part.done", "output_item.done")
]


def test_responses_stream_with_two_output_messages(serve: Any) -> None:
    texts = ["Looking at the logs.", '{"cause":"dep","fixes":[]}']
    served = serve([{"texts": texts}])
    response = served.post("/v1/responses", **CODEX_BODY)
    assert response.headers["x-request-id"] == "req_fake0000000000000000"
    events = _sse(response.content)
    assert [d["sequence_number"] for _, d in events] == list(range(len(events)))
    names = [n for i, (n, _) in enumerate(events) if i == 0 or events[i - 1][0] != n]
    start, end = ["response.created", "response.in_progress"], ["response.completed"]
    assert names == start + PER_MESSAGE * 2 + end
    done = [d["item"] for n, d in events if n == "response.output_item.done"]
    assert [item["content"][0]["text"] for item in done] == texts
    completed = events[-1][1]["response"]
    assert (completed["status"], completed["model"]) == ("completed", "gpt-probe")
    assert (completed["usage"]["input_tokens"], completed["usage"]["output_tokens"]) == (12, 7)
    [request] = served.fake.requests
    assert (request.api, request.text_format) == ("openai", TEXT_FORMAT)


def test_a_responses_request_after_the_prompt_is_what_the_model_said_and_the_answers(
    serve: Any,
) -> None:
    served = serve([{"text": "x"}])
    call = {"type": "function_call", "name": "shell", "call_id": "c0", "arguments": "{}"}
    answer = {"type": "function_call_output", "call_id": "c0", "output": "unsupported call: shell"}
    prompt = [
        {"type": "message", "role": "developer", "content": []},
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "p"}]},
    ]
    served.post("/v1/responses", **{**CODEX_BODY, "input": [*prompt, call, answer]})
    served.post("/v1/responses", **{**CODEX_BODY, "input": prompt})
    first, second = served.fake.requests
    assert first.messages_after_prompt == [call, answer]
    assert second.messages_after_prompt == []


def test_response_failed_after_a_complete_message(serve: Any) -> None:
    served = serve([{"text": "partial", "midstream_error": True}])
    events = _sse(served.post("/v1/responses", **CODEX_BODY).content)
    names = [name for name, _ in events]
    assert names[-2:] == ["response.output_item.done", "response.failed"]
    failed = events[-1][1]["response"]
    assert failed["status"] == "failed"
    assert failed["error"] == {
        "code": "server_error",
        "message": "The server had an error processing your request.",
    }


def test_reasoning_and_function_call_items(serve: Any) -> None:
    served = serve([api.Answer(thinking="hmm", tools=(api.ToolUse({"a": 1}, "shell"),))])
    events = _sse(served.post("/v1/responses", **CODEX_BODY).content)
    done = [d["item"] for n, d in events if n == "response.output_item.done"]
    assert [item["type"] for item in done] == ["reasoning", "function_call"]
    assert json.loads(done[1]["arguments"]) == {"a": 1}
    assert done[1]["name"] == "shell"


def test_responses_400_invalid_json_schema_as_captured(serve: Any) -> None:
    meta = captures.meta("codex-400-invalid-schema")
    response = serve(meta["model_script"]).post("/v1/responses", **CODEX_BODY)
    assert response.status_code == 400
    assert response.content == json.dumps(meta["model_script"][0]["body"]).encode()
    assert response.json()["error"]["code"] == "invalid_json_schema"


def test_plain_answers_errors_and_cuts_on_both_apis(serve: Any) -> None:
    served = serve(
        [
            {"text": "{}", "stop_reason": "max_tokens", "usage": {"output_tokens": 1}},
            {"tool": 1, "midstream_error": {"type": "overloaded_error", "message": "Overloaded"}},
            {"text": "{}", "midstream_error": True},
            {"status": 429},
            {"text": "cut", "truncate_after": 0},
        ]
    )
    plain = served.post("/v1/responses", **{**CODEX_BODY, "stream": False}).json()
    assert (plain["status"], plain["output"][0]["content"][0]["text"]) == ("completed", "{}")
    assert served.post(stream=False).status_code == 529  # no stream to break: a plain error
    assert served.post("/v1/responses", stream=False).json()["error"]["type"] == "server_error"
    limited = served.post("/v1/responses", **CODEX_BODY)
    assert limited.json()["error"]["code"] == "rate_limit_exceeded"
    assert limited.headers["retry-after"] == "1"
    with pytest.raises(CUT):
        served.post(stream=False)


def test_loopback_reads_chunked_request_bodies() -> None:
    script = {"steps": [{"tools": [{"input": {}}]}], "repeat_last": False}
    with api.LoopbackServer(script) as server:
        chunks = iter([b'{"stream": false, ', b'"model": "m"}'])
        response = httpx.post(server.url + MESSAGES, content=chunks)
        assert response.json()["content"][0]["name"] == "StructuredOutput"
    assert server.fake.requests[0].json == {"stream": False, "model": "m"}


# -- scripts, transports --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("document", "message"),
    [
        ([{"tool": {}, "colour": 1}], "unknown keys"),
        ([{"status": 200}], "not an HTTP error status"),
        ([{"text": 3}], "must be str"),
        ([{"text": "a", "delay": -1}], "non-negative"),
        ([{"status": 500, "headers": {"a": 1}}], "must be str"),
        ([{"tools": [{"name": "x"}]}], "needs an input"),
        ({"steps": [], "repeat": True}, "unknown keys"),
        ("tool", "steps must be a list"),
    ],
)
def test_bad_scripts_are_refused_up_front(document: Any, message: str) -> None:
    with pytest.raises(api.ScriptError, match=message):
        api.Script.from_json(document)


def test_every_capture_script_loads() -> None:
    for name in captures.names():
        assert api.Script.from_json(captures.meta(name)["model_script"]).steps, name


def test_loopback_servers_bind_loopback_on_their_own_ports() -> None:
    with api.LoopbackServer([api.text("a")]) as one, api.LoopbackServer([api.text("b")]) as two:
        assert one.port != two.port
        assert one.url.startswith("http://127.0.0.1:")
        assert one._server is not None
        assert one._server.server_address[0] == "127.0.0.1"  # never beyond loopback
        port = one.port
    with pytest.raises(OSError), socket.create_connection(("127.0.0.1", port), timeout=1):
        pass


def test_leaving_the_server_closes_kept_alive_connections() -> None:
    with httpx.Client(timeout=5) as client:
        with api.LoopbackServer([api.text("a")]) as server:
            assert client.post(server.url + MESSAGES, json={"stream": True}).status_code == 200
        with pytest.raises(httpx.TransportError):
            client.post(server.url + MESSAGES, json={"stream": True})


def test_respx_serves_async_clients_with_delay_and_cut() -> None:
    fake = api.ScriptedModelAPI(
        [api.Answer(texts=("x",), delay=0.2), api.Answer(texts=("y",), truncate_after=2)]
    )

    async def scenario() -> None:
        with respx.mock() as router:
            api.install_respx(router, fake, "https://fake.test")
            async with httpx.AsyncClient(base_url="https://fake.test") as client:
                started = time.monotonic()
                first = await client.post(MESSAGES, json={"stream": True})
                assert time.monotonic() - started >= 0.2
                assert first.status_code == 200
                with pytest.raises(httpx.RemoteProtocolError):
                    await client.post(MESSAGES, json={"stream": True})

    asyncio.run(scenario())
    assert len(fake.requests) == 2


# -- the real binaries against the loopback fake --------------------------------------------

# How each capture was taken, as its stdout and meta show: the transport (stream-json
# when stdout starts with system/init), the schema, and the flags or environment a
# case needed.  The fallback model is not in the captures' README; without
# --fallback-model the CLI gives up after three 529s instead of switching models.
SCHEMAS = CAPTURE_SCHEMAS
ENV = {"claude-exhausted-env2": {"MAX_STRUCTURED_OUTPUT_RETRIES": "2"}}
ARGS = {"claude-overload-fallback": ["--fallback-model", "claude-sonnet-5"]}
# Values the CLI draws at random (a retry's jittered backoff), beyond capture_compare's list.
JITTER = ("retry_delay_ms",)
# When the attempts run out, the CLI's exhaustion check races its own stream, so an
# exhausted result may or may not count the last answer's tokens (output 25 or 30)
# and its stop_reason may be null: the figures are taken from the capture, the keys
# and their kinds are still compared.
RACY = ("usage", "modelUsage", "total_cost_usd", "model_usage_since_last_result", "stop_reason")


def _without_jitter(actual: bytes, capture: bytes) -> bytes:
    """`actual` with each jittered number replaced by the capture's, line by line."""
    lines = actual.splitlines(keepends=True)
    for number, (mine, theirs) in enumerate(zip(lines, capture.splitlines(), strict=False)):
        try:
            line, expected = json.loads(mine), json.loads(theirs)
        except ValueError:
            continue
        if isinstance(line, dict) and isinstance(expected, dict):
            for key in JITTER:
                if isinstance(line.get(key), int) and isinstance(expected.get(key), int):
                    line[key] = expected[key]
            if line.get("type") == "result" and str(line.get("subtype")).startswith("error_"):
                for key in RACY:
                    if key in line and key in expected:
                        line[key] = _figures_from(line[key], expected[key])
            lines[number] = json.dumps(line, ensure_ascii=False).encode() + b"\n"
    return b"".join(lines)


def _figures_from(mine: object, theirs: object) -> object:
    """``mine`` with its numbers (and a null or racing stop_reason) taken from ``theirs``."""
    if isinstance(mine, dict) and isinstance(theirs, dict):
        return {k: _figures_from(v, theirs[k]) if k in theirs else v for k, v in mine.items()}
    numbers = (int, float)
    if isinstance(mine, numbers) and isinstance(theirs, numbers) and not isinstance(mine, bool):
        return theirs
    if mine in (None, "tool_use") and theirs in (None, "tool_use"):
        return theirs
    return mine


@pytest.mark.subprocess
@pytest.mark.parametrize("name", captures.names())
def test_real_cli_reproduces_capture(name: str) -> None:
    meta, capture = captures.meta(name), captures.stdout(name)
    cli = name.split("-", 1)[0]
    binary = real_binary(cli)
    with api.LoopbackServer(meta["model_script"]) as server:
        if cli == "claude":
            stream = capture.startswith(b'{"type":"system"')
            run = realcli.run_claude(
                binary,
                server.url,
                prompt="Diagnose the build failure.",
                schema=SCHEMAS.get(name, DIAGNOSIS),
                args=ARGS.get(name, ()),
                env=ENV.get(name),
                output_format="stream-json" if stream else "json",
            )
        else:
            run = realcli.run_codex(
                binary, server.url + "/v1", prompt="Diagnose the build failure.", schema=DIAGNOSIS
            )
    fake = server.fake
    assert not run.timed_out, f"{name}: killed after {run.seconds:.1f}s"
    assert (run.exit_code, run.stderr.decode()) == (meta["exit_code"], meta["stderr"])
    assert compare_to_capture(_without_jitter(run.stdout, capture), capture) == []
    fake.assert_no_unexpected()
    expected = meta["requests_to_model_api"]
    views = [request.capture_view() for request in fake.requests]
    assert len(views) == len(expected), [r.describe() for r in fake.requests]
    for number, (view, wanted) in enumerate(zip(views, expected, strict=True)):
        assert {key: view[key] for key in wanted} == wanted, f"request {number}"
