"""
The reference model of Claude Code's loop against every real Claude capture.

Each ``claude-*`` capture's model-api scenario is run through
`harness.systems.claude.run.run_claude` in process, with the capture's model
script served by the scripted fake in process (`harness.systems.inprocess`).
Its stdout must match the capture field for field (`compare_to_capture`),
with the captured exit status and stderr, and the requests the fake recorded
must equal the capture's ``requests_to_model_api``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, cast

import pytest

from harness import net
from harness.catalogue import loader
from harness.catalogue.scenario import Scenario
from harness.seams.model_api.expect import ModelApiExpectation
from harness.seams.model_api.run import model_script
from harness.seams.model_api.values import CODEX_MODEL, ModelApiOutcome, ModelApiRequest
from harness.systems.claude import failures
from harness.systems.claude.run import run_claude
from harness.systems.codex import run_codex
from harness.systems.inprocess import transport
from providers_fake.api import ScriptedModelAPI
from providers_fake.api.inprocess import ANTHROPIC_BASE_URL, OPENAI_BASE_URL
from tests import captures
from tests.capture_compare import compare_to_capture

ROOT = Path(__file__).resolve().parents[1]
SCENARIOS = ROOT / "scenarios" / "model-api"


def _capture_scenarios(cli: str) -> dict[str, Scenario]:
    loaded = loader.load([SCENARIOS])
    return {
        s.capture: s
        for s in loaded.scenarios
        if s.capture is not None and s.capture.startswith(f"{cli}-")
    }


CLAUDE = _capture_scenarios("claude")
CODEX = _capture_scenarios("codex")


def _run(scenario: Scenario) -> tuple[Any, ScriptedModelAPI]:
    request = cast(ModelApiRequest, scenario.request)
    fake = ScriptedModelAPI(model_script(scenario))
    with net.Client(transport=transport(fake, ANTHROPIC_BASE_URL)) as client:
        run = run_claude(
            client,
            prompt=request.prompt,
            schema=request.schema,
            output_format=request.output_format,
            fallback_model=request.fallback_model,
            env=dict(request.env),
            seed=scenario.id,
        )
    return run, fake


def test_every_claude_capture_has_a_scenario() -> None:
    assert set(captures.names("claude-")) == set(CLAUDE)


@pytest.mark.parametrize("name", sorted(CLAUDE))
def test_reference_claude_matches_capture(name: str) -> None:
    meta, captured = captures.meta(name), captures.stdout(name)
    run, fake = _run(CLAUDE[name])
    assert compare_to_capture(_same_jitter(run.stdout, captured), captured) == []
    assert (run.exit_code, run.stderr) == (meta["exit_code"], meta["stderr"])
    seen = [r.capture_view() for r in fake.requests]
    assert seen == meta["requests_to_model_api"]


def _same_jitter(stdout: bytes, captured: bytes) -> bytes:
    """
    ``stdout`` with each api_retry's random back-off replaced by the capture's.

    Both must lie in the CLI's window for that attempt (500 ms doubling, plus
    up to a quarter of jitter); only the draw differs.
    """
    theirs = [json.loads(line) for line in captured.splitlines()]
    out: list[bytes] = []
    for number, raw in enumerate(stdout.splitlines()):
        line = json.loads(raw)
        text = raw
        if isinstance(line, dict) and line.get("subtype") == "api_retry":
            base = 500 * 2 ** (line["attempt"] - 1)
            assert base <= line["retry_delay_ms"] <= base * 5 // 4
            if number < len(theirs) and theirs[number].get("subtype") == "api_retry":
                assert base <= theirs[number]["retry_delay_ms"] <= base * 5 // 4
                line["retry_delay_ms"] = theirs[number]["retry_delay_ms"]
            text = json.dumps(line, ensure_ascii=False, separators=(",", ":")).encode()
        out.append(text)
    return b"".join(line + b"\n" for line in out)


SCHEMA = {
    "type": "object",
    "properties": {
        "cause": {"type": "string"},
        "fixes": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["cause", "fixes"],
    "additionalProperties": False,
}

# -- rules beyond the captures ---------------------------------------------------------------
#
# Each test below pins a rule of the model that no capture shows; each rule is also a
# model-api scenario the `real` target runs (named in the test), so the binary, not this
# file, is the witness.  These tests only keep the rule visible where the model is read.

GOOD = {"cause": "c", "fixes": []}


def _run_steps(
    *steps: object, fallback: str | None = None, allowed: tuple[str, ...] = (), **env: str
) -> tuple[Any, Any]:
    fake = ScriptedModelAPI(list(steps))
    with net.Client(transport=transport(fake, ANTHROPIC_BASE_URL)) as client:
        run = run_claude(
            client,
            prompt="p",
            schema=json.dumps(SCHEMA),
            output_format="stream-json",
            fallback_model=fallback,
            env=env,
            allowed_tools=allowed,
        )
    return run, fake


def _result(run: Any) -> dict[str, Any]:
    return cast("dict[str, Any]", run.lines[-1])


def _subtypes(run: Any) -> list[object]:
    return [line.get("subtype") for line in run.lines if line.get("type") == "system"]


def test_overload_without_fallback_gives_up_after_three() -> None:
    # Scenario model-claude-overloaded-no-fallback.
    run, fake = _run_steps({"status": 529})
    assert _subtypes(run) == ["init"] + ["api_retry"] * 2
    assert len(fake.requests) == 3
    assert (run.exit_code, _result(run)["api_error_status"]) == (1, 529)
    assert "Repeated 529 Overloaded errors" in _result(run)["result"]


def test_server_errors_are_retried_as_often_as_the_environment_says() -> None:
    # Scenario model-claude-server-error-exhausts-retries (10 retries unless told).
    run, fake = _run_steps({"status": 500}, CLAUDE_CODE_MAX_RETRIES="2")
    assert _subtypes(run) == ["init", "api_retry", "api_retry"]
    assert len(fake.requests) == 3
    assert (run.exit_code, _result(run)["api_error_status"]) == (1, 500)
    assert "This is a server-side issue" in _result(run)["result"]


def test_a_server_error_is_retried_then_the_answer_counts() -> None:
    # Scenario model-claude-server-error-retried.
    run, fake = _run_steps({"status": 500}, {"tool": GOOD})
    assert len(fake.requests) == 2
    assert _subtypes(run)[1] == "api_retry"
    assert _result(run)["structured_output"] == GOOD


def test_a_400_is_sent_six_times_in_all_without_api_retry_lines() -> None:
    # Scenario model-claude-400-cascade.
    run, fake = _run_steps({"status": 400, "message": "bad request"})
    assert len(fake.requests) == 6
    assert _subtypes(run) == ["init"]
    result = _result(run)
    assert (run.exit_code, result["is_error"], result["result"]) == (
        1,
        True,
        "API Error: 400 bad request",
    )


def test_an_unusable_attempt_budget_falls_back_to_five() -> None:
    # Scenario model-claude-garbage-attempts.
    run, fake = _run_steps({"tool": {"cause": 1}}, MAX_STRUCTURED_OUTPUT_RETRIES="zero")
    assert len(fake.requests) == 5
    assert _result(run)["subtype"] == "error_max_structured_output_retries"


def test_a_tool_call_the_rules_refuse_is_answered_and_the_loop_goes_on() -> None:
    # Scenario model-claude-bash-denied: a call is not a prose stop, so no enforce reminder.
    run, fake = _run_steps({"tool_name": "Bash", "tool": {"command": "touch f"}}, {"tool": GOOD})
    assert len(fake.requests) == 2
    assert not fake.requests[1].enforce_reminders
    result = fake.requests[1].messages_after_prompt[-1]["content"][0]
    assert result["is_error"] is True
    assert result["content"].startswith("touch in '")
    assert "permission_denied" in _subtypes(run)
    assert _result(run)["permission_denials"][0]["tool_name"] == "Bash"
    assert _result(run)["structured_output"] == GOOD


def test_a_prompt_too_long_ends_the_first_exchange_at_once() -> None:
    # Scenario model-claude-prompt-too-long: the answer after it is never asked for.
    too_long = {"status": 400, "message": "prompt is too long: 210000 tokens > 200000 maximum"}
    run, fake = _run_steps(too_long, {"tool": GOOD})
    result = _result(run)
    assert (run.exit_code, len(fake.requests), _subtypes(run)) == (1, 1, ["init"])
    assert (result["terminal_reason"], result["is_error"]) == ("prompt_too_long", True)
    # The prompt "p" is under half a token: the estimate is what 2.1.328 attaches.
    assert (
        "~210000 tokens (limit 200000) but this conversation is only ~2501 tokens"
        in (result["result"])
    )


@pytest.mark.parametrize(
    ("status", "message", "words", "reason"),
    [
        (
            400,
            "prompt is too long: 210000 tokens > 200000 maximum",
            "but this conversation",
            "prompt_too_long",
        ),
        (
            422,
            "Prompt is too long: 3000 tokens > 200000 maximum",
            "own content is most",
            "prompt_too_long",
        ),
        (400, "Input is too long for requested model.", "a single exchange and", "prompt_too_long"),
        (413, "prompt is too long: 210000 tokens > 200000 maximum", "", "image_error"),
    ],
)
def test_the_words_of_a_prompt_too_long_say_where_the_bulk_is(
    status: int, message: str, words: str, reason: str
) -> None:
    # Scenarios model-claude-prompt-too-long-*: 2501 tokens is four fifths of 3000 and more.
    failure = failures.Failure(status, "invalid_request_error", message, None, None)
    assert failures.too_long(failure)
    ending = failures.too_long_ending(failure, 2501)
    assert ending.text.startswith(failures.TOO_LONG)
    assert words in ending.text
    assert (ending.error, ending.terminal_reason) == ("invalid_request", reason)


def test_a_prompt_too_long_is_told_by_its_words_and_status() -> None:
    def failure(status: int, message: str) -> failures.Failure:
        return failures.Failure(status, None, message, None, None)

    assert not failures.too_long(failure(400, "bad request"))
    assert failures.too_long(failure(400, "Error: PROMPT IS TOO LONG"))


def test_the_estimate_of_a_text_is_its_utf16_length_over_four_rounded_half_up() -> None:
    # Probed: prompts of 1, 27, 4000 and 10000 characters add 0, 7, 1000 and 2500.
    lengths = {"p": 0, "Diagnose the build failure.": 7, "x" * 4000: 1000, "ab": 1}
    for text, tokens in lengths.items():
        assert failures.estimate_tokens(text) == tokens
    assert failures.estimate_tokens("\U0001f600\U0001f600") == 1  # two UTF-16 units each


# -- codex exec ----------------------------------------------------------------------------


def _run_codex(scenario: Scenario) -> tuple[Any, ScriptedModelAPI]:
    request = cast(ModelApiRequest, scenario.request)
    fake = ScriptedModelAPI(model_script(scenario))
    with net.Client(transport=transport(fake, OPENAI_BASE_URL)) as client:
        run = run_codex(
            client,
            prompt=request.prompt,
            schema=request.schema,
            model=CODEX_MODEL,
            env=dict(request.env),
            seed=scenario.id,
        )
    return run, fake


def _same_body_spacing(stdout: bytes) -> bytes:
    """
    Error messages that carry a JSON body, re-spaced as the captures' fake sent it.

    Codex prints an error body as it came; the captures' fake spaced its JSON,
    the scripted fake sends it compact, so only the spacing may differ.
    """
    out: list[bytes] = []
    for raw in stdout.splitlines():
        line = json.loads(raw)
        holder = line.get("error", line) if line.get("type") == "turn.failed" else line
        message = holder.get("message") if line.get("type") in ("error", "turn.failed") else None
        if isinstance(message, str) and message.startswith("{"):
            holder["message"] = json.dumps(json.loads(message))
            raw = json.dumps(line, separators=(",", ":")).encode()  # noqa: PLW2901
        out.append(raw)
    return b"".join(line + b"\n" for line in out)


def test_every_codex_capture_has_a_scenario() -> None:
    assert set(captures.names("codex-")) == set(CODEX)


@pytest.mark.parametrize("name", sorted(CODEX))
def test_reference_codex_matches_capture(name: str) -> None:
    meta, captured = captures.meta(name), captures.stdout(name)
    run, fake = _run_codex(CODEX[name])
    assert compare_to_capture(_same_body_spacing(run.stdout), captured) == []
    assert (run.exit_code, run.stderr) == (meta["exit_code"], meta["stderr"])
    assert [r.capture_view() for r in fake.requests] == meta["requests_to_model_api"]


def _unreachable(request: net.Request) -> net.Response:
    raise AssertionError(f"no request was expected: {request}")


def test_codex_refuses_a_schema_that_is_not_json() -> None:
    with net.Client(transport=net.MockTransport(_unreachable)) as client:
        run = run_codex(client, prompt="p", schema="{", model=CODEX_MODEL)
    assert run.exit_code == 1
    assert "is not valid JSON" in run.stderr


def test_a_refusal_that_spends_the_last_attempt_prints_its_line_then_the_exhaustion() -> None:
    # The real binary's line races the end of its run under load, so the scenario
    # leaves its lines unchecked from 2.1.282; the model prints what an unhurried
    # binary prints, the scenario's shared expectation (B-36).
    family = loader.load([SCENARIOS / "claude" / "refusal-rejected-order.yaml"]).scenarios
    scenario = next(s for s in family if s.id == "model-claude-refusal-rejected-exhausts")
    run, _ = _run(scenario)
    printed = ModelApiOutcome("claude", run.exit_code, "", False, tuple(run.lines), None)
    assert isinstance(scenario.expect, ModelApiExpectation)
    assert printed.line_types == scenario.expect.line_types
    assert printed.line_types[-3:] == (
        "system/model_refusal_no_fallback",
        "user",
        "result/error_max_structured_output_retries",
    )


def _run_codex_steps(*steps: object) -> tuple[Any, ScriptedModelAPI]:
    fake = ScriptedModelAPI(list(steps))
    with net.Client(transport=transport(fake, OPENAI_BASE_URL)) as client:
        run = run_codex(client, prompt="p", schema=json.dumps(SCHEMA), model=CODEX_MODEL)
    return run, fake


def test_codex_answers_a_call_to_a_tool_it_lacks_and_asks_again() -> None:
    # Scenarios model-codex-shell-call-unsupported, model-codex-unknown-tool-call.
    run, fake = _run_codex_steps(
        {"thinking": "t", "text": "first", "tool_name": "shell", "tool": {"command": ["ls"]}},
        {"text": json.dumps(GOOD)},
    )
    assert (run.exit_code, len(fake.requests)) == (0, 2)
    assert run.stderr.endswith("ERROR codex_core::tools::router: error=unsupported call: shell\n")
    sent = fake.requests[1].messages_after_prompt
    assert [item["type"] for item in sent] == [
        "reasoning", "message", "function_call", "function_call_output"
    ]  # fmt: skip
    assert sent[-1]["output"] == "unsupported call: shell"
    assert sent[-1]["call_id"] == sent[2]["call_id"]
    lines = [json.loads(line) for line in run.stdout.split(b"\n") if line]
    assert lines[-2]["item"]["text"] == json.dumps(GOOD)
    # turn.completed counts the tokens of both answers.
    assert lines[-1]["usage"]["input_tokens"] == 24


def test_codex_that_is_never_answered_is_killed_as_by_its_timeout() -> None:
    run, fake = _run_codex_steps({"tool_name": "shell", "tool": {}})
    assert (run.exit_code, run.timed_out) == (-9, True)
    assert len(fake.requests) == 64


@pytest.mark.parametrize(
    ("step", "words"),
    [
        (
            {"status": 400, "body": {"error": {"message": "m", "code": "context_length_exceeded"}}},
            "Codex ran out of room in the model's context window.",
        ),
        (
            {"midstream_error": {"code": "rate_limit_exceeded", "message": "Try again in 1s."}},
            "rate limit exceeded: Try again in 1s.",
        ),
        ({"midstream_error": {"code": "slow_down"}}, "rate limit exceeded: "),
        ({"midstream_error": {"code": "server_error", "message": "m"}}, "stream disconnected"),
        ({"midstream_error": {"code": "invalid_prompt"}}, "Invalid request."),
        ({"midstream_error": {"code": "invalid_prompt", "message": "m"}}, "m"),
        (
            {"status": 429, "body": {"error": {"message": "m", "code": "insufficient_quota"}}},
            "Quota exceeded.",
        ),
        (
            {"status": 429, "body": {"error": {"message": "m", "code": "usage_not_included"}}},
            "exceeded retry limit",
        ),
        (
            {"status": 429, "body": {"error": {"message": "m", "type": "usage_not_included"}}},
            "To use Codex with your ChatGPT plan",
        ),
    ],
)
def test_codex_words_some_errors_by_their_kind(step: dict[str, object], words: str) -> None:
    # Scenarios model-codex-error-kinds (scenarios/model-api/codex/error-kinds.yaml).
    run, fake = _run_codex_steps(step)
    last = json.loads(run.stdout.split(b"\n")[-2])
    assert (run.exit_code, len(fake.requests), last["type"]) == (1, 1, "turn.failed")
    assert last["error"]["message"].startswith(words)


@pytest.mark.parametrize(
    ("model", "told"), [("claude-opus-5-5", True), ("claude-sonnet-4-5", False)]
)
def test_only_some_models_hear_that_the_user_has_not_heard_from_them(
    model: str, told: bool
) -> None:
    # B-25, probed on 2.1.328 (issue 24): six rejected calls in a row; the notice would go
    # into the request after the fifth, for the models whose card says so only.
    steps = [{"tool": {"cause": n}} for n in range(6)]
    run, fake = _run_steps(
        *steps, {"tool": GOOD}, ANTHROPIC_MODEL=model, MAX_STRUCTURED_OUTPUT_RETRIES="9"
    )
    heard = ["hasn't heard from you" in json.dumps(r.messages_after_prompt) for r in fake.requests]
    assert heard == [False] * 5 + [told] * 2
    assert _result(run)["structured_output"] == GOOD
