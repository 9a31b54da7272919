"""
``harness record``: the real pinned CLIs through the recording proxy, the fake APIs upstream.

Each recording is of a run against `LoopbackServer` serving a script, so the
test knows what the model did; the written scenario must lint, script that
behaviour (HTTP errors with their bodies, stream cuts where they fell, the
exhausted retry loop), hold no planted secret, and pass when the ``real``
target replays it.  The answer reader and the scrubber are also checked on
their own, without a binary.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from harness import seams, targets
from harness.catalogue import loader
from harness.catalogue.scenario import Scenario
from harness.cli import main
from harness.exceptions import CannotWrite
from harness.record import answers, asked, recorder, scrub
from harness.record.proxy import Exchange
from harness.seams.model_api.expect import ModelApiExpectation
from harness.seams.model_api.values import ModelApiRequest
from providers_fake.api import LoopbackServer, anthropic, chat, openai
from providers_fake.api.script import Answer, step_from_json
from tests.realbin import real_binary

SCHEMA = {
    "type": "object",
    "properties": {
        "cause": {"type": "string"},
        "fixes": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["cause", "fixes"],
    "additionalProperties": False,
}
PROMPT = "Diagnose the build failure."


def _claude_args(output_format: str = "stream-json") -> tuple[str, ...]:
    verbose = ("--verbose",) if output_format == "stream-json" else ()
    return ("-p", PROMPT, "--json-schema", json.dumps(SCHEMA), "--output-format", output_format,
            *verbose)  # fmt: skip


def _codex_args(tmp_path: Path) -> tuple[str, ...]:
    schema = tmp_path / "schema.json"
    schema.write_text(json.dumps(SCHEMA))
    return ("exec", "--json", "--output-schema", str(schema), PROMPT)


def _record(
    cli: str, argv: tuple[str, ...], script: Sequence[object], tmp_path: Path, **options: Any
) -> tuple[recorder.Recording, Scenario]:
    real_binary(cli)
    out = tmp_path / f"recorded-{cli}.yaml"
    with LoopbackServer(script) as upstream:
        done = recorder.record(
            recorder.Options(cli, argv, upstream=upstream.url, out=out, verify=False, **options)
        )
        requests = upstream.fake.requests
    out.write_text(done.text)
    loaded = loader.load([out])
    assert loaded.problems == ()
    [scenario] = loaded.scenarios
    steps = _steps(scenario)
    assert len(steps) == len(requests)  # one step per model request, in order
    return done, scenario


def _request(scenario: Scenario) -> ModelApiRequest:
    assert isinstance(scenario.request, ModelApiRequest), scenario.request
    return scenario.request


def _expect(scenario: Scenario) -> ModelApiExpectation:
    assert isinstance(scenario.expect, ModelApiExpectation), scenario.expect
    return scenario.expect


def _steps(scenario: Scenario) -> list[dict[str, Any]]:
    script = json.loads(_request(scenario).model_script)
    assert script["repeat_last"] is False
    # An answer slow to start keeps its delay; on a loaded machine even the fake can be.
    steps: list[dict[str, Any]] = [
        {k: v for k, v in step.items() if k != "delay"} for step in script["steps"]
    ]
    return steps


def _replays_on_real(scenario: Scenario) -> None:
    """The written file, run as `harness run --target real` runs it, meets its expectation."""
    seam = seams.require("model-api")
    outcome = seam.observe(scenario, targets.create("real"), seams.RunOptions())
    assert seam.compare(scenario.expect, outcome) == ()


@pytest.mark.subprocess
def test_claude_cut_stream_overload_thinking_and_rejection(tmp_path: Path) -> None:
    script = [
        {"tool": {"cause": "cut", "fixes": []}, "truncate_after": 4},
        {"status": 529},
        {"thinking": "Let me look.", "text": "Checking.", "tool": {"cause": 1}},
        {"tool": {"cause": "c", "fixes": []}},
    ]
    _, scenario = _record("claude", _claude_args(), script, tmp_path)
    steps = _steps(scenario)
    # The cut fell after the tool block's start: no input reached the CLI.
    assert steps[0] == {"tool": {}, "truncate_after": 3}
    assert steps[1]["status"] == 529
    assert steps[1]["body"]["error"] == {"type": "overloaded_error", "message": "Overloaded"}
    assert steps[1]["body"]["request_id"] == "<id-1>"  # the upstream's id, scrubbed
    assert steps[2] == {"thinking": "Let me look.", "text": "Checking.", "tool": {"cause": 1}}
    expect = _expect(scenario)
    assert expect.exit_code == 0
    assert expect.requests == 4
    assert expect.line_types is not None
    assert expect.line_types[:3] == ("system/init", "system/api_retry", "system/api_retry")
    _replays_on_real(scenario)


@pytest.mark.subprocess
def test_claude_exhausted_retry_loop_with_the_env_that_matters(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MAX_STRUCTURED_OUTPUT_RETRIES", "2")
    monkeypatch.setenv("SOME_UNRELATED_SETTING", "not recorded")
    done, scenario = _record("claude", _claude_args("json"), [{"tool": {"cause": 1}}], tmp_path)
    assert _steps(scenario) == [{"tool": {"cause": 1}}, {"tool": {"cause": 1}}]
    assert _request(scenario).env == (("MAX_STRUCTURED_OUTPUT_RETRIES", "2"),)
    expect = _expect(scenario)
    assert expect.subtype == "error_max_structured_output_retries"
    assert expect.exit_code == 1
    assert any("after 2 attempts" in e for e in expect.errors_contain)
    assert "not recorded" not in done.text
    _replays_on_real(scenario)


SECRET_KEY = "sk-ant-api03-PLANTEDkey0123456789abcdef"
SECRET_ENV = "planted-env-secret-42ab17"


@pytest.mark.subprocess
def test_planted_secrets_never_reach_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A key in the environment goes out as a header; the upstream echoes it in body and header."""
    real_binary("claude")
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET_KEY)
    monkeypatch.setenv("UNRELATED_TOKEN", SECRET_ENV)
    echo = f"invalid x-api-key {SECRET_KEY}"
    encoded = base64.b64encode(f"user:{SECRET_KEY}".encode()).decode()
    half = len(SECRET_KEY) // 2
    error = {
        "type": "authentication_error",
        "message": echo,
        "basic": f"Basic {encoded}",
        "url": f"https://api.invalid/?key={quote(SECRET_KEY, safe='')}",
        "first": SECRET_KEY[:half],
        "second": SECRET_KEY[half:],
        "dsn": "postgres://me:planted-db-pass-9x@db.invalid/app",
    }
    script = [
        {
            "status": 401,
            "body": {"type": "error", "error": error},
            "headers": {
                "x-echo": SECRET_KEY,
                "x-should-retry": "false",
                "content-type": f"application/json; key={SECRET_KEY[:half]}",
            },
        }
    ]
    out = tmp_path / "secret.yaml"
    with LoopbackServer(script) as upstream:
        status = main(["record", "--cli", "claude", "--upstream", upstream.url, "--out", str(out),
                       "--", *_claude_args("json")])  # fmt: skip
        [request] = upstream.fake.requests
    err = capsys.readouterr().err
    assert status == 0, err
    assert request.header("x-api-key") == "<redacted>"  # the fake got it (and hid it itself)
    text = out.read_text()
    for secret in (SECRET_KEY, SECRET_ENV, SECRET_KEY[-12:], SECRET_KEY[:half], encoded[8:-4]):
        assert secret not in text
        assert secret not in err
    assert "planted-db-pass-9x" not in text
    assert quote(SECRET_KEY, safe="") not in text
    assert "invalid x-api-key <redacted>" in text
    assert "reproduces the recording" in err


@pytest.mark.subprocess
def test_codex_reasoning_and_two_messages(tmp_path: Path) -> None:
    script = [
        {"thinking": "Reading the log.", "texts": ["Looking.", '{"cause": "c", "fixes": []}']}
    ]
    _, scenario = _record("codex", _codex_args(tmp_path), script, tmp_path)
    assert _steps(scenario) == script
    value = _expect(scenario).structured_output
    assert value is not None
    assert value.value == {"cause": "c", "fixes": []}
    _replays_on_real(scenario)


@pytest.mark.subprocess
def test_codex_http_error_keeps_status_body_and_retry_header(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-proj-PLANTEDopenaikey0123456789")
    script = [{"status": 429, "message": "Rate limit reached for requests"}]
    done, scenario = _record("codex", _codex_args(tmp_path), script, tmp_path)
    [step] = _steps(scenario)
    assert step["status"] == 429
    assert step["headers"] == {"retry-after": "1"}
    assert step["body"]["error"]["code"] == "rate_limit_exceeded"
    assert "PLANTEDopenaikey" not in done.text
    # Codex names the upstream's request id: the expectation stops before it.
    assert _expect(scenario).errors_contain == (
        "exceeded retry limit, last status: 429 Too Many Requests, request id:",
    )
    _replays_on_real(scenario)


@pytest.mark.subprocess
def test_codex_stream_cut_mid_message(tmp_path: Path) -> None:
    script = [{"text": '{"cause": "c", "fixes": ["a long enough fix"]}', "truncate_after": 5}]
    _, scenario = _record("codex", _codex_args(tmp_path), script, tmp_path)
    [step] = _steps(scenario)
    assert step == {"text": '{"cause": "c", "fixes": ', "truncate_after": 5}
    assert _expect(scenario).exit_code == 1
    _replays_on_real(scenario)


def _codebuddy_args(output_format: str = "stream-json") -> tuple[str, ...]:
    verbose = ("--verbose",) if output_format == "stream-json" else ()
    return ("-p", "--output-format", output_format, *verbose, "--json-schema", json.dumps(SCHEMA),
            PROMPT)  # fmt: skip


@pytest.mark.subprocess
def test_codebuddy_rejection_two_calls_and_the_turn_after(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """
    A real CodeBuddy run through the proxy: its Chat Completions answers become
    the script (the calls of one message kept together), its result the
    expectation, its key never written; the file replays on the real binary.
    """
    monkeypatch.setenv("CODEBUDDY_API_KEY", "sk-PLANTEDcodebuddykey0123456789")
    calls = [
        {"name": "StructuredOutput", "input": {"fixes": []}},
        {"name": "StructuredOutput", "input": {"cause": "c", "fixes": ["a"]}},
    ]
    script = [{"tool": {"cause": 1}}, {"tools": calls}, {"text": "Done."}]
    done, scenario = _record("codebuddy", _codebuddy_args(), script, tmp_path)
    assert _steps(scenario) == script
    assert "PLANTEDcodebuddykey" not in done.text
    expect = _expect(scenario)
    assert (expect.exit_code, expect.subtype, expect.result, expect.requests) == (
        0,
        "success",
        "Done.",
        3,
    )
    assert expect.structured_output is not None
    assert expect.structured_output.value == {"cause": "c", "fixes": ["a"]}
    assert expect.line_types is not None
    assert expect.line_types[-1] == "result/success"
    assert _request(scenario).output_format == "stream-json"
    _replays_on_real(scenario)


def test_codebuddy_needs_an_upstream_to_record(tmp_path: Path) -> None:
    with pytest.raises(CannotWrite) as refused:
        recorder.record(recorder.Options("codebuddy", _codebuddy_args(), verify=False))
    assert refused.value.field == "--upstream"


def test_a_chat_completions_answer_reads_back_as_its_step() -> None:
    """What the fake Chat Completions API streams is read back into the step it rendered."""
    for step in (
        {"text": "Looking."},
        {
            "tools": [
                {"name": "StructuredOutput", "input": {"cause": 1}},
                {"name": "Deploy", "input": {"a": 1}},
            ]
        },
        {"text": "x", "midstream_error": True},
        {"text": "partial", "midstream_error": {"message": "broke", "type": "server_error"}},
    ):
        body = {"model": "m", "stream": True, "stream_options": {"include_usage": True}}
        answer = step_from_json(step, "s")
        assert isinstance(answer, Answer)
        reply = chat.answer_reply(answer, body, 0)
        headers = tuple((k.lower(), v) for k, v in reply.headers if k.lower() == "content-type")
        exchange = Exchange(0, "POST", "/v1/chat/completions", json.dumps(body).encode(), 200,
                            headers, b"".join(reply.chunks), reply.cut, 0.0)  # fmt: skip
        assert answers.step_of(exchange, "chat").step == step


# -- without a binary ---------------------------------------------------------------------


def _exchange(api: str, step: dict[str, Any], *, request: dict[str, Any] | None = None) -> Exchange:
    """What the proxy keeps when the fake upstream answers `step` (cut where the step says)."""
    body = {"model": "m", "stream": True, **(request or {})}
    renderers = {"anthropic": anthropic.answer_reply, "openai": openai.answer_reply}
    answer = step_from_json(step, "s")
    assert isinstance(answer, Answer), step
    reply = renderers[api](answer, body, 0)
    headers = tuple((k.lower(), v) for k, v in reply.headers if k.lower() == "content-type")
    return Exchange(0, "POST", "/v1/x", json.dumps(body).encode(), 200, headers,
                    b"".join(reply.chunks), reply.cut, 0.0)  # fmt: skip


@pytest.mark.parametrize("api", ["anthropic", "openai"])
@pytest.mark.parametrize(
    "step",
    [
        {"thinking": "Hmm, let me think about the build.", "text": "A long enough prose answer."},
        {"texts": ["one", "two"], "tool": {"cause": "c", "fixes": ["x"]}},
        {"tool": {"cause": "c"}, "tool_name": "Bash"},
    ],
)
def test_a_cut_anywhere_replays_what_the_cli_saw(api: str, step: dict[str, Any]) -> None:
    """Cut the fake's stream after every event: the recovered step sends the same events."""
    whole = _exchange(api, step)
    events = answers.sse_events(whole.body)
    assert answers.step_of(whole, api).step == step
    for cut in range(len(events)):
        seen = _exchange(api, {**step, "truncate_after": cut})
        recovered = answers.step_of(seen, api).step
        assert recovered["truncate_after"] <= cut
        again = _exchange(api, recovered)
        sent = [answers.sse_key(e) for e in answers.sse_events(again.body)]
        got = [answers.sse_key(e) for e in answers.sse_events(seen.body)]
        assert sent == got[: len(sent)]
        # A tool call cut inside its input is replayed cut before any of it; all else exactly.
        if recovered.get("tool") != {}:
            assert again.body == seen.body


def test_midstream_errors_stop_reasons_and_plain_answers() -> None:
    error = {"tool": {"cause": "A"}, "midstream_error": True}
    assert answers.step_of(_exchange("anthropic", error), "anthropic").step == error
    custom = {"text": "t", "midstream_error": {"type": "overloaded_error", "message": "busy"}}
    assert answers.step_of(_exchange("anthropic", custom), "anthropic").step == custom
    failed = {"text": "t", "midstream_error": {"code": "server_error", "message": "down"}}
    assert answers.step_of(_exchange("openai", failed), "openai").step == failed
    refusal = {"text": "no", "stop_reason": "refusal"}
    assert answers.step_of(_exchange("anthropic", refusal), "anthropic").step == refusal
    plain = _exchange("anthropic", {"tool": {"cause": "x"}}, request={"stream": False})
    assert answers.step_of(plain, "anthropic").step == {"tool": {"cause": "x"}}


def test_reordered_content_is_noted() -> None:
    body = b"".join(
        answers_event(name, data)
        for name, data in [
            ("content_block_start", {"type": "content_block_start", "index": 0,
                                     "content_block": {"type": "tool_use", "name": "Bash",
                                                       "input": {}}}),
            ("content_block_delta", {"type": "content_block_delta", "index": 0,
                                     "delta": {"type": "input_json_delta", "partial_json": "{}"}}),
            ("content_block_stop", {"type": "content_block_stop", "index": 0}),
            ("content_block_start", {"type": "content_block_start", "index": 1,
                                     "content_block": {"type": "text", "text": "after"}}),
            ("content_block_stop", {"type": "content_block_stop", "index": 1}),
            ("message_stop", {"type": "message_stop"}),
        ]
    )  # fmt: skip
    exchange = Exchange(3, "POST", "/v1/messages", b"{}", 200,
                        (("content-type", "text/event-stream"),), body, False, 0.0)  # fmt: skip
    recorded = answers.step_of(exchange, "anthropic")
    assert recorded.step == {"text": "after", "tool": {}, "tool_name": "Bash"}
    assert recorded.notes == (
        "request #4: the content came in the order tool, text; the script replays it as "
        "thinking, texts, then tool calls",
    )


def answers_event(name: str, data: object) -> bytes:
    return f"event: {name}\ndata: {json.dumps(data)}\n\n".encode()


def test_redaction_by_pointer_and_pattern() -> None:
    document = {
        "provider": {"model_script": {"steps": [{"tool": {"account": "ACME-77", "n": 4417}}]}},
        "expect": {"structured_output": {"account": "ACME-77", "n": 4417},
                   "result": '{"account":"ACME-77","n":4417}'},
    }  # fmt: skip
    hidden = scrub.redact(document, ["/provider/model_script/steps/0/tool", r"ACME-\d+"])
    text = json.dumps(hidden)
    assert "ACME" not in text
    assert "4417" not in text
    assert hidden["expect"]["structured_output"] == {"account": "<redacted>", "n": "<redacted>"}
    with pytest.raises(CannotWrite, match="no such value"):
        scrub.redact(document, ["/provider/nothing"])
    with pytest.raises(CannotWrite, match="not a regular expression"):
        scrub.redact(document, ["(unclosed"])


def test_a_surviving_secret_stops_the_write() -> None:
    with pytest.raises(CannotWrite, match="credential"):
        scrub.assert_clean("key: abc-secret-123", ("abc-secret-123",), "out.yaml")
    with pytest.raises(CannotWrite, match="API-key-shaped"):
        scrub.assert_clean("x: sk-ant-api03-abcdefghijklmnop", (), "out.yaml")
    assert scrub.hide_secrets({"a": "Bearer abcdefghij12"}, ()) == {"a": "Bearer <redacted>"}
    assert scrub.hide_secrets({"a": "disk-usage-monitoring-tool"}, ()) == {
        "a": "disk-usage-monitoring-tool"
    }


@pytest.mark.parametrize(
    ("cli", "argv", "field"),
    [
        ("claude", ["-p", "x", "--json-schema", "{}", "--model", "opus"], "--model"),
        ("claude", ["-p", "x"], "--json-schema"),
        ("claude", ["-p", "--json-schema", "{}"], "PROMPT"),
        (
            "claude",
            ["-p", "x", "--json-schema", "{}", "--output-format", "text"],
            "--output-format",
        ),
        ("claude", ["--bogus"], ""),
        ("codex", ["exec", "--json", "x"], "--output-schema"),
        ("codex", ["exec", "--output-schema", "/nonexistent.json", "x"], "--output-schema"),
        ("codex", ["exec", "-c", "k=v", "--output-schema", "s.json", "x"], "--config"),
    ],
)
def test_arguments_a_scenario_cannot_replay_are_refused(
    cli: str, argv: list[str], field: str
) -> None:
    with pytest.raises(CannotWrite) as refused:
        asked.read(cli, argv)
    assert refused.value.field == field


def test_a_refused_recording_is_one_line_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "never.yaml"
    status = main(["record", "--cli", "claude", "--out", str(out), "--", "-p", "x"])
    assert status == 4
    assert capsys.readouterr().err.strip() == (
        "harness: claude arguments: --json-schema: required: the scenario is about it"
    )
    assert not out.exists()


def test_the_schema_is_kept_as_json_or_as_text() -> None:
    assert asked.schema_field('{"type": "object"}') == {"schema": {"type": "object"}}
    assert asked.schema_field('{"a": 1, "a": 2}') == {"schema_text": '{"a": 1, "a": 2}'}
    assert asked.schema_field("not json") == {"schema_text": "not json"}


def _post(url: str, **options: Any) -> Any:
    """One POST as a CLI would send it, through the harness's own client."""
    from harness import net  # noqa: PLC0415

    with net.Client(timeout=10) as client:
        return client.post(url, **options)


def test_the_fake_model_api_serves_from_a_shell(tmp_path: Path) -> None:
    """``python -m providers_fake.api SCRIPT``: the upstream the docs record against."""
    import subprocess  # noqa: PLC0415
    import sys  # noqa: PLC0415

    script = tmp_path / "script.json"
    script.write_text(json.dumps([{"status": 529}]))
    server = subprocess.Popen(
        [sys.executable, "-m", "providers_fake.api", str(script), "--for", "30"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None
        url = server.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:")
        answer = _post(url + "/v1/messages", json={"model": "m"})
        assert answer.status_code == 529
    finally:
        server.terminate()
        assert server.wait(timeout=10) == 0
    script.write_text("[{")
    bad = subprocess.run(
        [sys.executable, "-m", "providers_fake.api", str(script)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert bad.returncode == 2
    assert bad.stderr.startswith(f"providers_fake.api: {script}: ")
    assert len(bad.stderr.splitlines()) == 1


def test_the_proxy_relays_streams_cuts_and_refuses_past_its_bounds(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from harness import net  # noqa: PLC0415
    from harness.record import proxy  # noqa: PLC0415

    script = [
        {"text": "a fairly long answer, in several deltas"},
        {"text": "cut", "truncate_after": 3},
    ]
    body = {"model": "m", "stream": True, "messages": []}
    key = {"x-api-key": "sk-ant-api03-proxytest-0123456789"}
    with LoopbackServer(script) as upstream, proxy.Proxy(upstream.url, timeout=10) as relay:
        whole = _post(relay.url + "/v1/messages", json=body, headers=key)
        assert whole.status_code == 200
        assert whole.text.count("event: content_block_delta") == 2
        with pytest.raises(net.RemoteProtocolError):  # the cut reaches the CLI as a cut
            _post(relay.url + "/v1/messages", json=body)
        monkeypatch.setattr(proxy, "MAX_REQUEST_BYTES", 100)
        refused = _post(relay.url + "/v1/messages", content=b"x" * 101)
        assert refused.status_code == 413
        assert relay.overflow is not None
        first, cut = relay.exchanges[:2]
        assert relay.secrets >= {key["x-api-key"]}
    assert first.body == whole.content
    assert not first.cut
    assert cut.cut
    assert answers.step_of(cut, "anthropic").step == {"text": "", "truncate_after": 3}
    assert key["x-api-key"].encode() not in repr(relay.exchanges).encode()
    assert len(upstream.fake.requests) == 2  # the refused request never went upstream


class _HangsUpAfterOneChunk:
    """A CLI's side of the proxy that reads one chunk and then is gone."""

    def __init__(self) -> None:
        self.close_connection = False
        self.writes = 0
        self.wfile = self

    def send_response(self, status: int) -> None:
        pass

    def send_header(self, name: str, value: str) -> None:
        pass

    def end_headers(self) -> None:
        pass

    def write(self, data: bytes) -> None:
        self.writes += 1
        if self.writes > 1:
            raise BrokenPipeError

    def flush(self) -> None:
        pass


def test_an_answer_the_cli_hung_up_on_is_kept_whole() -> None:
    """A CLI that exits on a tool call before message_stop must not record a cut stream."""
    from harness import net  # noqa: PLC0415
    from harness.record import proxy  # noqa: PLC0415

    def upstream(end: BaseException | None) -> net.Response:
        def chunks() -> Iterator[bytes]:
            yield from (b"one ", b"two ", b"three")
            if end is not None:
                raise end

        return net.Response(200, stream=chunks())

    relay = proxy.Proxy("http://127.0.0.1:9", timeout=5)
    handler = _HangsUpAfterOneChunk()
    assert relay._stream(handler, upstream(None)) == (b"one two three", False)  # type: ignore[arg-type]
    assert handler.close_connection
    # An upstream that breaks off after the CLI left: the answer as far as it was sent.
    cut = relay._stream(_HangsUpAfterOneChunk(), upstream(net.ReadTimeout("slow")))  # type: ignore[arg-type]
    assert cut == (b"one two ", False)


def test_the_exchanges_wait_for_a_relay_still_reading_its_answer() -> None:
    """The CLI has exited, its last answer is still being read on: it is not lost."""
    import threading  # noqa: PLC0415

    from harness.record import proxy  # noqa: PLC0415

    relay = proxy.Proxy("http://127.0.0.1:9", timeout=5)
    answered = Exchange(0, "POST", "/v1/messages", b"{}", 200, (), b"whole", False, 0.0)

    def slow(handler: object) -> None:
        assert relay._number() == 0
        threading.Event().wait(0.3)  # the rest of the answer, read after the hang-up
        relay._keep(answered)

    relay._relay = slow  # type: ignore[method-assign]
    worker = threading.Thread(target=relay.relay, args=(None,))
    worker.start()
    threading.Event().wait(0.05)
    assert relay.exchanges == [answered]
    worker.join()


def test_an_upstream_that_does_not_answer_ends_the_run_at_once() -> None:
    from harness.record import proxy  # noqa: PLC0415

    with proxy.Proxy("http://127.0.0.1:9", timeout=5) as relay:
        answer = _post(relay.url + "/v1/responses", json={})
    assert answer.status_code == 400
    assert answer.headers["x-should-retry"] == "false"
    [exchange] = relay.exchanges
    assert exchange.failure is not None
    assert exchange.failure.startswith("ConnectError")
