"""
Expectations check what their scenarios promise.

`harness lint` holds every expectation to its seam's decisive fields and to
the effects its description names (`harness.seams.promises`); expectations on
what a model API received fail when nothing was received; and a plausible
broken CLI model that the old catalogue let through fails now.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from harness import targets
from harness.catalogue import loader
from harness.catalogue.outcome import Outcome
from harness.catalogue.scenario import Scenario
from harness.cli import main
from harness.seams.agent_cli import provider_expectation
from harness.seams.case import execute
from harness.seams.compare import provider_mismatches
from harness.seams.model_api.expect import compare, expectation_of
from harness.seams.model_api.values import ModelApiOutcome, SeenRequest
from harness.systems.claude import loop, wire
from tests.lintcheck import assert_one_clear_line

ROOT = Path(__file__).resolve().parent.parent

MODEL = """\
id: model-claude-lint
title: A valid call ends the run
description: {description}
clauses: [LOOP-01]
seam: model-api
request:
  cli: claude
  schema: {{type: object}}
provider:
  model_script: [{{tool: {{cause: c}}}}]
expect:
{expect}
"""
MODEL_EXPECT = {
    "exit_code": "0",
    "requests": "1",
    "line_types": "[result/success]",
    "structured_output": "{cause: c}",
    "subtype": "success",
    "is_error": "false",
}


def _model(description: str = "A valid call.", **changes: str | None) -> str:
    fields = {**MODEL_EXPECT, **changes}
    expect = "\n".join(f"  {k}: {v}" for k, v in fields.items() if v is not None)
    return MODEL.format(description=description, expect=expect)


def test_a_complete_model_api_expectation_lints_clean(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "good.yaml"
    path.write_text(_model())
    assert main(["lint", str(path)]) == 0, capsys.readouterr().out


@pytest.mark.parametrize(
    ("document", "line", "field", "fragment"),
    [
        (_model(exit_code=None), 11, "expect", "give exit_code: how the run ends"),
        (_model(requests=None), 11, "expect", "give requests"),
        (_model(line_types=None), 11, "expect", "give line_types"),
        (_model(structured_output=None), 11, "expect", "structured_output or no_structured_output"),
        (_model(subtype=None), 11, "expect", "give subtype"),
        (
            _model("The CLI exits 1 at once."),
            3,
            "description",
            "names 'exits 1', but exit_code is 0",
        ),
        (_model("Two requests reach the API."), 3, "description", "but requests is 1"),
        (
            _model("An api_retry line comes first."),
            3,
            "description",
            "names 'api_retry', but line_types is",
        ),
        (
            _model("It ends in error_max_structured_output_retries."),
            3,
            "description",
            "but subtype is 'success'",
        ),
        (
            _model("The schema goes to input_schema."),
            3,
            "description",
            "does not check input_schema",
        ),
        (_model("stderr says why."), 3, "description", "does not check stderr_contains"),
    ],
)
def test_a_model_api_expectation_that_checks_too_little_is_one_clear_line(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    document: str,
    line: int,
    field: str,
    fragment: str,
) -> None:
    assert_one_clear_line(tmp_path, capsys, document, line, field, fragment)


AGENT = """\
id: agent-lint
title: A case
description: {description}
clauses: [CDX-01]
seam: agent-cli
request: {{driver: codex, schema: {{type: object}}}}
provider:
  steps: [thread.started, turn.started, {{agent_message: '{{}}'}}, turn.completed]
expect: {expect}
"""


@pytest.mark.parametrize(
    ("description", "expect", "line", "field", "fragment"),
    [
        ("Fine.", "{launches: 1}", 9, "expect", "give status or error"),
        ("Fine.", "{error: execution_error}", 9, "expect", "give cause"),
        ("Fine.", "{status: ok}", 9, "expect", "give value or no_value"),
        ("Fine.", "{error: invalid_output_schema}", 9, "expect", "give launches"),
        ("Fine.", "{error: invalid_output_schema, launches: 1}", 9, "expect.launches", "must be 0"),
        ("It is a decode_error.", "{error: policy_violation}", 3, "description", "but error is"),
        (
            "It is turn_failed.",
            "{error: execution_error, cause: nonzero_exit}",
            3,
            "description",
            "",
        ),
        ("Two diagnostics.", "{error: policy_violation}", 3, "description", "diagnostics"),
        (
            "Refused before launch.",
            "{status: ok, value: {}}",
            3,
            "description",
            "does not check launches",
        ),
    ],
)
def test_an_agent_cli_expectation_that_checks_too_little_is_one_clear_line(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    description: str,
    expect: str,
    line: int,
    field: str,
    fragment: str,
) -> None:
    document = AGENT.format(description=description, expect=expect)
    assert_one_clear_line(tmp_path, capsys, document, line, field, fragment)


THRONG = """\
id: throng-lint
title: A turn
description: {description}
clauses: [THR-04]
seam: service-api
request:
  service: throng
  manifest:
    agent: {{platform: claude, output_format: {{type: json_schema, schema: {{type: objekt}}}}}}
  turn: {{a2a: v1}}
provider:
  steps: [init, result]
expect: {expect}
"""


@pytest.mark.parametrize(
    ("description", "expect", "line", "field", "fragment"),
    [
        ("Fine.", "{status: 202, turn: failed}", 13, "expect", "give turn_error"),
        ("Fine.", "{status: 202, turn: completed, launches: 1}", 13, "expect", "give parts"),
        ("It answers 202 and fails the turn.", "{status: 202}", 3, "description", "turn"),
        ("It answers 400.", "{status: 202}", 3, "description", "but status is 202"),
    ],
)
def test_a_throng_expectation_that_checks_too_little_is_one_clear_line(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    description: str,
    expect: str,
    line: int,
    field: str,
    fragment: str,
) -> None:
    document = THRONG.format(description=description, expect=expect)
    assert_one_clear_line(tmp_path, capsys, document, line, field, fragment)


# -- what was received ---------------------------------------------------------


def _nothing_received(cli: str) -> ModelApiOutcome:
    return ModelApiOutcome(cli, 1, "", False, (), None, requests=())


@pytest.mark.parametrize(
    ("cli", "field", "value"),
    [
        ("claude", "input_schema", {"type": "object"}),
        ("claude", "strict", False),
        ("claude", "strict", True),
        ("codex", "text_format", {"type": "json_schema"}),
    ],
)
def test_what_was_received_is_not_met_when_nothing_was(cli: str, field: str, value: Any) -> None:
    expect = expectation_of({field: value})
    mismatches = compare(expect, _nothing_received(cli))
    assert [(m.field, m.actual) for m in mismatches] == [
        (field, '"<no request reached the model API>"')
    ]


def test_strict_false_is_not_met_by_a_request_without_the_tool() -> None:
    toolless = SeenRequest("m", None, None, None, [])
    outcome = replace(_nothing_received("claude"), requests=(toolless,))
    assert [m.field for m in compare(expectation_of({"strict": False}), outcome)] == ["strict"]
    flagged = SeenRequest("m", {"type": "object"}, 1, None, [])
    outcome = replace(outcome, requests=(flagged,))
    # strict: 1 is not strict: true, and it is not an absent (false) flag either.
    assert [m.field for m in compare(expectation_of({"strict": True}), outcome)] == ["strict"]
    assert [m.field for m in compare(expectation_of({"strict": False}), outcome)] == ["strict"]


# -- a broken CLI model the old catalogue passed -------------------------------


@pytest.fixture(scope="module")
def catalogue() -> dict[str, Scenario]:
    return {s.id: s for s in loader.load([ROOT / "scenarios" / "model-api"]).scenarios}


def test_a_cli_that_ends_a_broken_stream_at_once_fails(
    catalogue: dict[str, Scenario], monkeypatch: pytest.MonkeyPatch
) -> None:
    """
    The mutant of the issue: a mid-stream error before any StructuredOutput call
    ends the run at once, as a success with exit 0 and no structured output.  The
    scenario used to check only that there was no structured output.
    """
    case = catalogue["model-claude-midstream-error-before-tool"]
    reference = targets.create("reference-inproc")
    assert execute(case, reference).status == "passed"
    original = loop.Loop.settled

    def settled(self: loop.Loop, turn: Any, answer: wire.Answer) -> bool:
        calls = [b for b in answer.blocks if b.get("type") == "tool_use"]
        if answer.midstream_error and not calls:
            self.answered(turn, answer)
            self.result({})
            return True
        return original(self, turn, answer)

    monkeypatch.setattr(loop.Loop, "settled", settled)
    result = execute(case, targets.create("reference-inproc"))
    assert result.status == "failed"
    named = {m.field for m in result.mismatches}
    assert {"exit_code", "requests", "is_error", "line_types"} <= named, named


def test_what_a_fake_cli_received_is_not_met_without_a_launch() -> None:
    """On agent-cli (and behind a service) a provider expectation needs a launch to hold."""
    for raw in (
        {"no_schema": True},
        {"argv_excludes": ["--json-schema"]},
        {"prompt_excludes": ["x"]},
    ):
        got = list(provider_mismatches(provider_expectation(raw), Outcome("ok").calls))
        assert [(m.field, m.actual) for m in got] == [("provider", "no launch")]


CHOICE = AGENT.replace(
    "expect: {expect}", "tags: [{tags}]\nexpect: {expect}\nby_target: {by_target}"
)


@pytest.mark.parametrize(
    ("tags", "by_target", "problem"),
    [
        # The contract leaves the ending open: the reference's reading decides it.
        ("choice", "{reference: {error: policy_violation, diagnostics: [{path: ''}]}}", None),
        # Without the tag the shared expectation must decide for every target.
        ("codex", "{reference: {error: policy_violation}}", "exactly when it is tagged"),
        # The override must then be decisive itself.
        ("choice", "{reference: {launches: 1}}", "by_target.reference: give status or error"),
    ],
)
def test_a_choice_leaves_the_decisive_fields_to_its_overrides(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    tags: str,
    by_target: str,
    problem: str | None,
) -> None:
    document = CHOICE.format(
        description="The reference reports one diagnostic.",
        tags=tags,
        expect="{launches: 1}",
        by_target=by_target,
    )
    (tmp_path / "case.yaml").write_text(document)
    status = main(["lint", str(tmp_path / "case.yaml")])
    shown = capsys.readouterr().out
    if problem is None:
        assert status == 0, shown
    else:
        assert status != 0
        assert problem in shown, shown
