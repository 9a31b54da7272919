"""
The rules of CodeBuddy Code's loop (harness.systems.codebuddy) against every capture
of the real binary: how the run ended, how many requests it made, what its result held.
"""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import pytest

from harness.systems.codebuddy import HORIZON, Ending, predict
from providers_fake.api.script import Script
from tests import codebuddy_captures as captures


def _accepts(schema_text: str) -> Any:
    """The schema's judgement, or none when it is no JSON Schema (the CLI then takes anything)."""
    try:
        schema = json.loads(schema_text)
        jsonschema.Draft7Validator.check_schema(schema)
    except (ValueError, jsonschema.SchemaError):
        return lambda value: True
    validator = jsonschema.Draft7Validator(schema)
    return validator.is_valid


def _last_record(name: str) -> dict[str, Any]:
    text = (captures.FOLDER / f"{name}.stdout").read_text()
    if text.startswith("["):
        return json.loads(text)[-1]  # type: ignore[no-any-return]
    lines = [json.loads(line) for line in text.splitlines() if line.startswith("{")]
    return lines[-1] if lines else {}


@pytest.mark.parametrize("name", sorted(captures.CASES))
def test_the_rules_predict_the_capture(name: str) -> None:
    case = captures.CASES[name]
    meta = json.loads((captures.FOLDER / f"{name}.meta.json").read_text())
    turns = case.args[case.args.index("--max-turns") + 1] if "--max-turns" in case.args else None
    got = predict(
        Script.from_json(case.script), _accepts(case.schema), None if turns is None else int(turns)
    )
    assert (got.ending is Ending.WAITS) == meta["timed_out"], got
    if got.rule == "C-02":  # never ends: the capture made as many as its timeout allowed
        assert got.requests == HORIZON
        assert meta["requests_made"] > 50
        return
    assert got.requests == meta["requests_made"], got
    if got.ending is Ending.WAITS:
        return
    last = _last_record(name)
    if case.output_format == "text":
        assert (captures.FOLDER / f"{name}.stdout").read_text() == f"{got.result}\n"
        return
    assert (last["type"], last["subtype"]) == ("result", got.subtype)
    assert last.get("result") == got.result
    assert ("structured_output" in last) == (got.structured_output is not None)
    if got.structured_output is not None:
        assert last["structured_output"] == got.structured_output[0]


def test_a_cut_stream_ends_as_aborted_after_the_next_answer() -> None:
    """C-06, seen by tests/test_fake_chat.py on the binary: a cut, a valid call, a text."""
    script = Script.from_json([{"tool": {}, "truncate_after": 4}, {"tool": {}}, {"text": "Done."}])
    got = predict(script, lambda value: True)
    assert (got.subtype, got.errors, got.requests, got.rule) == (
        "error_during_execution",
        ("aborted",),
        3,
        "C-06",
    )
