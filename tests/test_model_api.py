"""The model-api seam: its lint checks, its comparison, and the real CLIs as the `real` target."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from harness import targets
from harness.catalogue import loader
from harness.catalogue.scenario import Seam
from harness.cli import main
from harness.seams import RunOptions
from harness.seams.case import execute
from harness.seams.model_api import run
from harness.seams.model_api.expect import calls_per_message, compare, expectation_of
from harness.seams.model_api.values import (
    ModelApiOutcome,
    ModelApiRequest,
    SeenRequest,
    final_result,
)
from providers_fake.api import Script, realcli
from tests.lintcheck import assert_one_clear_line

ROOT = Path(__file__).resolve().parents[1]
MODEL_API = ROOT / "scenarios" / "model-api"

CODEX = """\
id: a-model-api-scenario
title: A good model-api scenario
description: The base each broken case changes in one place.
clauses: [CDX-06]
seam: model-api
request:
  cli: codex
  schema: {type: object}
provider:
  model_script: [{text: '{}'}]
expect:
  exit_code: 0
  requests: 1
  line_types: [thread.started, turn.started, item.completed/agent_message, turn.completed]
  structured_output: {}
"""

#: The bundled catalogue's Bash cases run, confined, as under `make test`.
EXEC = RunOptions(allow_exec=True)


def _broken(old: str, new: str) -> str:
    assert old in CODEX, old
    return CODEX.replace(old, new, 1)


CASES = [
    # (name, document, line, field, message fragment)
    ("unknown-cli", _broken("cli: codex", "cli: cursor"), 7, "request.cli", "is not one of"),
    (
        "no-schema",
        _broken("  schema: {type: object}\n", "  prompt: hi\n"),
        6,
        "request.schema",
        "give the schema",
    ),
    (
        "two-schemas",
        _broken("  schema: {type: object}", "  schema: {type: object}\n  schema_text: '{}'"),
        9,
        "request.schema_text",
        "give one schema source",
    ),
    (
        "bad-model-script",
        _broken("[{text: '{}'}]", "[{txet: '{}'}]"),
        10,
        "provider.model_script",
        "unknown keys",
    ),
    (
        "no-provider",
        _broken("provider:\n  model_script: [{text: '{}'}]\n", ""),
        1,
        "provider",
        "required field is missing",
    ),
    (
        "unknown-expectation",
        _broken("  requests: 1", "  requests: 1\n  launches: 1"),
        14,
        "expect.launches",
        "unknown field",
    ),
    (
        "contradiction",
        _broken("  structured_output: {}", "  structured_output: {}\n  no_structured_output: true"),
        16,
        "expect.no_structured_output",
        "contradicts 'structured_output'",
    ),
    (
        "claude-field-on-codex",
        _broken("  requests: 1", "  requests: 1\n  subtype: success"),
        14,
        "expect.subtype",
        "codex prints no such field",
    ),
    (
        # The kill at the timeout is expected only of a script that holds an
        # answer back past it: else the verdict would depend on the machine.
        "timed-out-without-a-hold",
        _broken("  requests: 1", "  requests: 1\n  timed_out: true"),
        14,
        "expect.timed_out",
        "no step of model_script holds its answer back longer",
    ),
    (
        "codex-with-gates",
        _broken("cli: codex", "cli: codex\n  gates: {tengu_structured_output_strict: true}"),
        8,
        "request.gates",
        "applies to claude only",
    ),
    (
        "codex-max-turns",
        _broken("cli: codex", "cli: codex\n  max_turns: 3"),
        8,
        "request.max_turns",
        "applies to claude and codebuddy only",
    ),
    (
        "codex-stream-json",
        _broken("cli: codex", "cli: codex\n  output_format: stream-json"),
        8,
        "request.output_format",
        "codex has no stream-json output",
    ),
    (
        "stdout-of-a-json-run",
        _broken("  requests: 1", "  requests: 1\n  stdout: x"),
        14,
        "expect.stdout",
        "stdout is checked on text output",
    ),
    (
        "claude-output-last-message",
        _broken("cli: codex", "cli: claude\n  output_last_message: last.txt"),
        8,
        "request.output_last_message",
        "applies to codex only",
    ),
    (
        "generated-and-inline-schema",
        _broken(
            "  schema: {type: object}",
            "  schema: {type: object}\n  schema_generated: {enum_items: 3}",
        ),
        9,
        "request.schema_generated",
        "give one schema source",
    ),
    (
        "bad-generated-schema",
        _broken("  schema: {type: object}", "  schema_generated: {nested: not}"),
        8,
        "request.schema_generated.depth",
        "required field is missing",
    ),
    (
        "unknown-allowed-tool",
        _broken("cli: codex", "cli: claude\n  allowed_tools: [Write]"),
        8,
        "request.allowed_tools[0]",
        "is not one of",
    ),
    (
        "adaptor-unknown-status",
        _broken("  requests: 1", "  requests: 1\n  adaptor: {status: fine}"),
        14,
        "expect.adaptor.status",
        "is not one of",
    ),
    (
        "file-content-not-text",
        _broken("  requests: 1", "  requests: 1\n  files: {out.txt: 3}"),
        14,
        "expect.files.out.txt",
        "is not of type 'string'",
    ),
    (
        "models-miscounted",
        _broken("  requests: 1", "  requests: 1\n  models: [a, b]"),
        14,
        "expect.models",
        "different number of requests",
    ),
]


@pytest.mark.parametrize(
    ("document", "line", "field", "fragment"), [pytest.param(*c[1:], id=c[0]) for c in CASES]
)
def test_a_broken_model_api_scenario_gives_one_clear_line(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    document: str,
    line: int,
    field: str,
    fragment: str,
) -> None:
    assert_one_clear_line(tmp_path, capsys, document, line, field, fragment)


def test_the_base_document_is_good(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "good.yaml"
    path.write_text(CODEX)
    assert main(["lint", str(path)]) == 0, capsys.readouterr().out


def _outcome(**changes: Any) -> ModelApiOutcome:
    lines: tuple[object, ...] = (
        {"type": "system", "subtype": "init"},
        {"type": "result", "subtype": "success", "is_error": False, "structured_output": {"a": 1}},
    )
    base = ModelApiOutcome(
        cli="claude",
        exit_code=0,
        stderr="",
        timed_out=False,
        lines=lines,
        final=final_result("claude", lines),
        requests=(
            SeenRequest("m1", {"type": "object"}, None, None, []),
            SeenRequest("m2", {"type": "object"}, None, None, [{"content": "[enforce] now"}]),
            SeenRequest(None, None, None, None, None, unexpected="no such endpoint"),
        ),
    )
    return replace(base, **changes)


def test_only_the_given_expectations_are_checked() -> None:
    met = expectation_of(
        {
            "exit_code": 0,
            "subtype": "success",
            "is_error": False,
            "structured_output": {"a": 1},
            "line_types": ["system/init", "result/success"],
            "requests": 2,
            "models": ["m1", "m2"],
            "input_schema": {"type": "object"},
            "strict": False,
            "messages_after_prompt_contain": ["[enforce]"],
            "messages_after_prompt_lack": ["No response requested."],
            "calls_per_message": [[], []],
        }
    )
    assert compare(met, _outcome()) == ()
    assert compare(expectation_of({}), _outcome()) == ()


def test_every_unmet_expectation_is_named() -> None:
    unmet = expectation_of(
        {
            "exit_code": 1,
            "stderr_contains": "Error",
            "terminal_reason": "completed",
            "no_structured_output": True,
            "errors_contain": ["attempts"],
            "line_types": ["result/success"],
            "requests": 3,
            "models": ["m1", "m1"],
            "strict": True,
            "messages_after_prompt_contain": ["Output does not match"],
            "messages_after_prompt_lack": ["[enforce]"],
            "calls_per_message": [[], [1]],
            "no_unexpected_requests": True,
        }
    )
    named = [m.field for m in compare(unmet, _outcome())]
    assert named == [
        "exit_code",
        "stderr_contains",
        "terminal_reason",
        "no_structured_output",
        "errors_contain",
        "line_types",
        "no_unexpected_requests",
        "requests",
        "models",
        "strict",
        "messages_after_prompt_contain",
        "messages_after_prompt_lack",
        "calls_per_message",
    ]


def test_codex_final_result_is_its_last_agent_message_and_errors() -> None:
    lines: tuple[object, ...] = (
        {"type": "thread.started"},
        {"type": "item.completed", "item": {"type": "agent_message", "text": "prose"}},
        {"type": "item.completed", "item": {"type": "agent_message", "text": '{"a": 1}'}},
        {"type": "error", "message": "boom"},
        {"type": "turn.failed"},
        "not json",
    )
    assert final_result("codex", lines) == {
        "type": "turn.failed",
        "result": '{"a": 1}',
        "structured_output": {"a": 1},
        "errors": ["boom"],
    }
    assert final_result("codex", ()) is None
    outcome = _outcome(cli="codex", lines=lines, final=final_result("codex", lines))
    assert outcome.line_types[1:3] == ("item.completed/agent_message",) * 2
    assert outcome.line_types[-1] == "<not json>"
    assert ModelApiOutcome.from_json(json.loads(json.dumps(outcome.to_json()))) == outcome


def test_missing_real_clis_error_with_the_install_command(
    catalogue: loader.Loaded, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(realcli.DIR_ENV, str(tmp_path))
    scenario = next(s for s in catalogue.scenarios if s.seam is Seam.MODEL_API)
    result = execute(scenario, targets.create("real"))
    assert result.status == "errored"
    assert realcli.INSTALL_HINT in (result.reason or "")


def test_show_prints_the_model_script(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["show", "model-claude-exhausted-env2", str(MODEL_API)]) == 0
    out = capsys.readouterr().out
    # What the user wrote, as written: the environment, the model script, the counts.
    assert "claude/exhausted-env2.yaml, lines 1-" in out
    assert "    MAX_STRUCTURED_OUTPUT_RETRIES: '2'\n" in out
    assert "  model_script:\n" in out
    assert "  requests: 2\n" in out


@pytest.mark.subprocess
def test_harness_run_drives_the_real_clis(
    catalogue: loader.Loaded, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The command-line path with the real target, on one case of each CLI; every
    # model-api case on both targets is tests/test_differential.py's.
    if not realcli.enabled():
        pytest.skip(f"{realcli.SWITCH_ENV}=off")
    chosen = {"model-claude-happy-stream", "model-codex-two-messages"}
    argv = ["run", str(MODEL_API), "--target", "real", "--tag", "capture", "-k"]
    code = main([*argv, " or ".join(sorted(chosen)), "--reports", str(tmp_path)])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "harness: real: 2 passed, 0 failed, 0 errored, 0 skipped" in out
    report = json.loads((tmp_path / "report.json").read_text())
    assert {c["scenario"] for c in report["cases"]} == chosen


def test_reports_mask_what_real_clis_make_up_per_run() -> None:
    from harness.seams.model_api.values import stable  # noqa: PLC0415  (one test's helper)

    line = {
        "type": "assistant",
        "session_id": "s-1",
        "message": {"id": "3920b7f4-2a5d-4fe5-af54-a7e08c66de83", "content": ["msg_0"]},
        "item": {"id": "fco_01a234d2-8420-7492-879c-90dca392fe17", "call_id": "call_0_0"},
        "duration_ms": 359,
        "num_turns": 2,
    }
    assert stable([line]) == [
        {
            "type": "assistant",
            "session_id": "<volatile>",
            "message": {"id": "<volatile>", "content": ["msg_0"]},
            "item": {"id": "<volatile>", "call_id": "call_0_0"},
            "duration_ms": "<volatile>",
            "num_turns": 2,
        }
    ]


def test_per_run_names_claude_code_makes_up_are_masked() -> None:
    from harness.seams.model_api import run  # noqa: PLC0415

    session = "f92d3152-eaad-4c29-804d-f54122c522f3"
    stdout = b'{"type":"system","subtype":"init","session_id":"' + session.encode() + b'"}\n'
    masks = run._masks("/tmp/real-claude-ab12", 40123, stdout)
    saved = (
        f"Full output saved to: /tmp/real-claude-ab12/home/.claude/projects/"
        f"-tmp-real-claude-ab12-probe/{session}/tool-results/bo4xpa9q9.txt\n\nPreview"
    )
    assert run._masked(masks, [saved]) == [
        "Full output saved to: <work>/home/.claude/projects/"
        "<work-slug>-probe/<session>/tool-results/<file>.txt\n\nPreview"
    ]
    assert (
        run._masked(masks, stdout)
        == b'{"type":"system","subtype":"init","session_id":"<session>"}\n'
    )
    # Without a session line (codex), nothing is taken for one.
    assert [real for real, _ in run._masks("", 1, b"{}")] == ["127.0.0.1:1"]


def _printing(*runs: bytes) -> Any:
    """A stand-in for the real claude that prints ``runs`` in turn, one per call."""
    printed = list(runs)

    def runner(binary: Path, server: Any, request: Any, jail: Any) -> tuple[realcli.RealRun, int]:
        return realcli.RealRun(("claude",), 0, printed.pop(0), b"", 0.1, False), 0

    runner.left = printed  # type: ignore[attr-defined]
    return runner


def _printed(run: int, *, retried: bool) -> bytes:
    retry = b'{"type":"system","subtype":"api_retry","attempt":1}\n' if retried else b""
    return retry + b'{"type":"result","subtype":"success","run":%d}\n' % run


@pytest.mark.parametrize(
    ("steps", "retried", "outcome_of"),
    [
        pytest.param([{"text": "{}"}], True, 2, id="calm-script-retried-runs-again"),
        pytest.param([{"text": "{}"}], False, 1, id="calm-script-not-retried-runs-once"),
        pytest.param([{"status": 529}, {"text": "{}"}], True, 1, id="scripted-error-is-the-case"),
        pytest.param([{"text": "{}", "delay": 0.5}], True, 1, id="scripted-delay-is-the-case"),
        pytest.param([{"text": "{}", "truncate_after": 2}], True, 1, id="scripted-cut-is-the-case"),
    ],
)
def test_a_retry_the_script_gave_no_reason_for_runs_the_case_again(
    monkeypatch: pytest.MonkeyPatch, steps: list[object], retried: bool, outcome_of: int
) -> None:
    # The second run retries too: it is the outcome all the same, so a CLI that
    # always retries still fails its case.
    runner = _printing(_printed(1, retried=retried), _printed(2, retried=True))
    monkeypatch.setitem(run._REAL, "claude", runner)
    request = ModelApiRequest(cli="claude", schema="{}", output_format="stream-json")
    outcome = run.run_case(request, Script.from_json(steps), Path("claude"))
    assert outcome.final is not None
    assert outcome.final["run"] == outcome_of
    assert len(runner.left) == 2 - outcome_of


def test_calls_are_counted_per_assistant_message() -> None:
    """Chat tool_calls and Anthropic tool_use blocks count; messages without calls are left out."""
    chat = {"role": "assistant", "tool_calls": [{"id": "a"}, {"id": "b"}]}
    blocks = {"role": "assistant", "content": [{"type": "text"}, {"type": "tool_use"}]}
    others = [{"role": "tool", "tool_calls": [{}]}, {"role": "assistant", "content": "x"}, "odd"]
    assert calls_per_message([chat, *others, blocks]) == (2, 1)
    assert calls_per_message(None) == ()
