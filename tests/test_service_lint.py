"""
Broken service-api scenario files: one clear line each, pointing at the field.

The same rules as the agent-cli table (tests/test_lint.py), for the mistakes an
author of a Throng or T3 scenario makes; plus the registry and the scenario
JSON Schema agreeing on which seams exist.
"""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

import pytest

from harness.catalogue import seam
from harness.cli import main
from tests.lintcheck import assert_one_clear_line

ROOT = Path(__file__).resolve().parents[1]

THRONG = """\
id: a-throng-scenario
title: A good Throng scenario
description: The base each broken case changes in one place.
clauses: [THR-06]
seam: service-api
request:
  service: throng
  manifest: {agent: {platform: claude, output_format: {type: json_schema, schema: {}}}}
  turn: {a2a: v1}
provider:
  steps: [init, {structured_output: {}}, result]
expect:
  status: 202
  turn: completed
  launches: 1
  parts: [{text: '{}'}, {data: {}, mediaType: application/json}]
"""

MANIFEST_LINE = THRONG.splitlines(keepends=True)[7]
PUBLISHED = "  launches: 1\n  parts: [{text: '{}'}, {data: {}, mediaType: application/json}]\n"

T3 = """\
id: a-t3-scenario
title: A good T3 scenario
description: The base each broken case changes in one place.
clauses: [T3-04]
seam: service-api
request:
  service: t3
  agent: codex
  result_schema: {type: object}
provider:
  steps: [thread.started, turn.started, {agent_message: '{}'}, turn.completed]
expect:
  status: completed
  typed_result: {value: {}}
  launches: 1
"""


def _broken(base: str, old: str, new: str) -> str:
    assert old in base, old
    return base.replace(old, new, 1)


CASES = [
    # (name, document, line, field, message fragment)
    (
        "unknown-service",
        _broken(THRONG, "service: throng", "service: thrung"),
        7,
        "request.service",
        "is not one of",
    ),
    (
        "throng-unknown-key",
        _broken(THRONG, "  turn: {a2a: v1}", "  turn: {a2a: v1}\n  agent: claude"),
        10,
        "request.agent",
        "unknown field 'agent'",
    ),
    (
        "throng-missing-manifest",
        _broken(
            THRONG,
            MANIFEST_LINE,
            "",
        ),
        6,
        "request.manifest",
        "required field is missing",
    ),
    ("bad-a2a", _broken(THRONG, "a2a: v1", "a2a: v2"), 9, "request.turn.a2a", "is not one of"),
    (
        "unknown-claude-event",
        _broken(THRONG, "steps: [init,", "steps: [boot,"),
        11,
        "provider.steps[0]",
        "unknown claude event 'boot'",
    ),
    (
        "turn-without-provider",
        _broken(THRONG, "provider:\n  steps: [init, {structured_output: {}}, result]\n", ""),
        1,
        "provider",
        "the turn needs a fake agent",
    ),
    (
        "provider-without-turn",
        _broken(
            _broken(THRONG, "  turn: {a2a: v1}\n", ""),
            "  turn: completed\n" + PUBLISHED,
            "  launches: 0\n",
        ),
        9,
        "provider",
        "no turn runs",
    ),
    (
        "turn-expectation-without-turn",
        _broken(
            _broken(
                _broken(THRONG, "  turn: {a2a: v1}\n", ""),
                "provider:\n  steps: [init, {structured_output: {}}, result]\n",
                "",
            ),
            PUBLISHED,
            "",
        ),
        11,
        "expect.turn",
        "request.turn is not given",
    ),
    (
        "throng-follow-ups",
        _broken(THRONG, "result]\n", "result]\n  follow_ups: [{steps: [init]}]\n"),
        12,
        "provider.follow_ups",
        "runs one turn",
    ),
    (
        "bad-status",
        _broken(THRONG, "status: 202", "status: accepted"),
        13,
        "expect.status",
        "is not of type 'integer'",
    ),
    (
        "t3-expect-key-on-throng",
        _broken(THRONG, "turn: completed", "typed_result: null"),
        14,
        "expect.typed_result",
        "unknown field 'typed_result'",
    ),
    (
        "overlapping-options",
        _broken(
            THRONG,
            "  turn: completed",
            "  turn: completed\n  options: {outputFormat: {}}\n  options_unset: [outputFormat]",
        ),
        16,
        "expect.options_unset",
        "'outputFormat' is also expected in 'options'",
    ),
    (
        "unknown-agent",
        _broken(T3, "agent: codex", "agent: gemini"),
        8,
        "request.agent",
        "is not one of",
    ),
    (
        "unknown-codex-event",
        _broken(T3, "turn.started,", "turn.begun,"),
        11,
        "provider.steps[1]",
        "unknown codex event 'turn.begun'",
    ),
    (
        "no-fake-for-opencode",
        _broken(T3, "agent: codex", "agent: opencode"),
        10,
        "provider",
        "no fake agent CLI",
    ),
    (
        "wait-with-follow-ups",
        _broken(
            T3,
            "  result_schema: {type: object}",
            "  result_schema: {type: object}\n  wait: true\n  follow_ups: [again]",
        ),
        11,
        "request.follow_ups",
        "do not combine wait and follow_ups",
    ),
    (
        "too-many-follow-up-scripts",
        _broken(
            T3, "turn.completed]\n", "turn.completed]\n  follow_ups: [{steps: [thread.started]}]\n"
        ),
        12,
        "provider.follow_ups",
        "more follow-up scripts",
    ),
    (
        "typed-result-not-wrapped",
        _broken(T3, "typed_result: {value: {}}", "typed_result: {}"),
        14,
        "expect.typed_result.value",
        "required field is missing",
    ),
    (
        "bad-capability",
        _broken(T3, "status: completed", "capabilities: {cursor: 1}"),
        13,
        "expect.capabilities.cursor",
        "is not of type 'boolean'",
    ),
]


@pytest.mark.parametrize(
    ("document", "line", "field", "fragment"),
    [pytest.param(*case[1:], id=case[0]) for case in CASES],
)
def test_one_clear_line(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    document: str,
    line: int,
    field: str,
    fragment: str,
) -> None:
    assert_one_clear_line(tmp_path, capsys, document, line, field, fragment)


@pytest.mark.parametrize("base", [THRONG, T3], ids=["throng", "t3"])
def test_the_bases_are_good(tmp_path: Path, base: str) -> None:
    path = tmp_path / "good.yaml"
    path.write_text(base)
    assert main(["lint", str(path)]) == 0


def test_every_registered_seam_has_its_schema_fragment() -> None:
    text = resources.files("harness").joinpath("schemas/scenario.schema.json").read_text()
    schema = json.loads(text)
    dispatch = {
        branch["if"]["properties"]["seam"]["const"]: branch["then"]["$ref"]
        for branch in schema["$defs"]["scenario"]["allOf"]
    }
    seam.get("agent-cli")  # load the built-in seams
    registered = {name: f"#/$defs/{kind.schema_def}" for name, kind in seam.SEAMS.items()}
    assert dispatch == registered
    for ref in dispatch.values():
        assert ref.removeprefix("#/$defs/") in schema["$defs"]


def test_a_seam_without_a_kind_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    seam.get("agent-cli")  # load the built-in seams, then take one away
    monkeypatch.delitem(seam.SEAMS, "model-api")
    path = tmp_path / "model.yaml"
    path.write_text((ROOT / "scenarios" / "model-api" / "codex" / "happy.yaml").read_text())
    assert main(["lint", str(path)]) == 4
    out = capsys.readouterr().out
    assert "seam: seam 'model-api' has no loader yet" in out
