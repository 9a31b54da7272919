"""
The rules of CodeBuddy Code's loop (harness.systems.codebuddy) against every capture
of the real binary: how the run ended, how many requests it made, what its result held.
"""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import pytest

from harness.systems.codebuddy import HORIZON, Ending, Loop, Step, predict, rebuilt
from harness.systems.codebuddy_run import ToolSchema
from harness.systems.profiles import CodeBuddyProfile
from providers_fake.api.script import HttpError, Script
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


def _taking(value: object) -> bool:
    return isinstance(value, dict) and "cause" in value


@pytest.mark.parametrize(
    ("steps", "options", "expected"),
    [
        # C-01: the result's text is the first turn's on stream-json (probed: First.).
        ([{"text": f"T{i}"} for i in range(5)], {}, ("success", "T0", 4, "C-03")),
        # ... and the last one on json and text.
        ([{"text": f"T{i}"} for i in range(5)], {"last_result": True},
         ("success", "T3", 4, "C-03")),
        # C-03: no re-ask on text.
        ([{"text": "P"}], {"reasks": 0}, ("success", "P", 1, "C-03")),
        # C-04 in the first turn: the result's text is the last; a re-ask forgets the error.
        ([{"tool": {}, "tool_name": "Deploy"}, {"text": "A"}, {"text": "B"}], {},
         ("success", "B", 5, "C-03")),
        # ... after an accepted call, the turn's end is error_during_execution.
        ([{"tool": {"cause": "c"}}, {"tool": {}, "tool_name": "Deploy"}, {"text": "D"}], {},
         ("error_during_execution", None, 3, "C-04")),
        # ... and on json or text without one too (no re-ask forgets it).
        ([{"tool": {}, "tool_name": "Deploy"}, {"text": "D"}], {"forgets": False},
         ("error_during_execution", None, 2, "C-04")),
        # ... and on stream-json when no re-ask follows (a schema that is no object).
        ([{"tool": {}, "tool_name": "Deploy"}, {"text": "D"}], {"reasks": 0},
         ("error_during_execution", None, 2, "C-04")),
        # Once recovered in the first turn, the result's text is the one before the last.
        ([{"tool": {}, "tool_name": "Deploy"}, *({"text": t} for t in "ABCD")], {},
         ("success", "C", 5, "C-03")),
        ([{"tool": {}, "tool_name": "Deploy"}, {"text": "A"}, {"tool": {"cause": "c"}},
          {"text": "B"}], {}, ("success", "A", 4, "C-01")),
        ([{"tool": {}, "tool_name": "Deploy"}, {"text": "A"}, {"text": "B"},
          {"tool": {"cause": "c"}}, {"text": "C"}], {}, ("success", "B", 5, "C-01")),
        # An error of a re-ask's turn never ends the run, even before an accepted call
        # (probed on stream-json and json, an unknown tool and a cut).
        ([{"text": "P0"}, {"tool": {}, "tool_name": "Nope"}, {"tool": {"cause": "c"}},
          {"text": "P1"}], {}, ("success", "P0", 4, "C-01")),
        ([{"text": "P0"}, {"tool": {}, "tool_name": "Nope"}, {"tool": {"cause": "c"}},
          {"text": "P1"}], {"forgets": False, "last_result": True}, ("success", "P1", 4, "C-01")),
        ([{"text": "P0"}, {"text": "x", "truncate_after": 1}, {"tool": {"cause": "c"}},
          {"text": "P1"}], {}, ("success", "P0", 4, "C-01")),
        # An error of the last re-ask's turn is forgotten (probed on stream-json and json).
        ([*({"text": f"P{i}"} for i in range(3)), {"tool": {}, "tool_name": "Nope"},
          {"text": "P3"}], {}, ("success", "P0", 5, "C-03")),
        ([*({"text": f"P{i}"} for i in range(3)), {"tool": {}, "tool_name": "Nope"},
          {"text": "P3"}], {"forgets": False, "last_result": True}, ("success", "P3", 5, "C-03")),
        # C-06: a cut before a prose answer recovers like C-04 (the run succeeds).
        ([{"text": "x", "truncate_after": 1}, {"text": "A"}], {}, ("success", "A", 5, "C-03")),
    ],
)  # fmt: skip
def test_the_rules_walk_scripts_the_captures_do_not_cover(
    steps: list[object], options: dict[str, Any], expected: tuple[object, ...]
) -> None:
    """Cases read off probes and fuzz rounds of the binary (docs/codebuddy.md)."""
    loop = Loop(**options)
    script = Script.from_json(steps)
    ending = None
    for index in range(20):
        assert loop.ask() is None
        step = script.step_for(index)
        assert step is not None
        assert not isinstance(step, HttpError)
        if step.truncate_after is not None:
            loop.cut()
        elif step.tools and step.tools[0].name != "StructuredOutput":
            loop.unknown(step.tools[0].name)
        elif step.tools:
            loop.calls([(call.input, _taking(call.input)) for call in step.tools])
        elif loop.text("".join(step.texts)) is Step.END:
            ending = loop.ending
            break
    assert ending is not None
    assert (ending.subtype, ending.result, ending.requests, ending.rule) == expected


def _call(ids: str, text: str | None = None) -> list[dict[str, object]]:
    """An assistant message of one call per id (with `text`), then the calls' results."""
    function = {"name": "StructuredOutput", "arguments": "{}"}
    message: dict[str, object] = {"role": "assistant"}
    if text is not None:
        message["content"] = [{"type": "text", "text": text, "annotations": []}]
    message["tool_calls"] = [{"id": i, "type": "function", "function": function} for i in ids]
    results: list[dict[str, object]] = [
        {"role": "tool", "content": f"r{i}", "tool_call_id": i} for i in ids
    ]
    return [message, *results]


def test_a_restarted_request_sends_one_message_per_call() -> None:
    """C-08, probed: after a re-ask, an unknown tool or a cut, each call is a message of its own."""
    said: dict[str, object] = {"role": "assistant", "content": [{"type": "text", "text": "x"}]}
    reask: dict[str, object] = {"role": "user", "content": "again"}
    got = rebuilt([*_call("ab", "Hi."), said, reask])
    assert got == [*_call("a", "Hi."), *_call("b"), said, reask]
    assert rebuilt([*_call("abc"), *_call("d")]) == [
        *_call("a"),
        *_call("b"),
        *_call("c"),
        *_call("d"),
    ]


def test_a_message_of_one_call_is_sent_again_as_it_was() -> None:
    said: dict[str, object] = {"role": "assistant", "content": "x"}
    conversation = [*_call("a", "Hi."), *_call("b"), said]
    assert rebuilt(conversation) == conversation
    assert rebuilt([]) == []


def _judged(schema: object, value: object) -> str | None:
    """The tool result CodeBuddy's reference sends for a call (None: accepted)."""
    text = json.dumps(schema)
    return ToolSchema.of(text, CodeBuddyProfile.of(None)).verdict(json.dumps(value))


def test_a_schema_naming_a_format_judges_nothing() -> None:
    """Probed: CodeBuddy's Ajv checks formats and knows none, so the schema does not compile."""
    named = {"type": "object", "properties": {"id": {"type": "string", "format": "date-time"}}}
    assert _judged(named, 5) is None
    assert _judged({**named, "properties": {"id": {"type": "string"}}}, 5) == (
        "Output does not match required schema: root: must be object"
    )


def test_multiple_of_is_judged_on_the_exact_quotient() -> None:
    """Probed: 0.3 is refused as a multiple of 0.1 (no multipleOfPrecision), 0.5 is taken."""
    schema = {"type": "object", "properties": {"n": {"type": "number", "multipleOf": 0.1}}}
    assert _judged(schema, {"n": 0.3}) == (
        "Output does not match required schema: /n: must be multiple of 0.1"
    )
    assert _judged(schema, {"n": 0.5}) is None


@pytest.mark.parametrize(
    ("text", "reasks"),
    [("{}", True), ("[]", True), ('[{"type": "object"}]', True), ("true", False), ("5", False),
     ("null", False), ('"s"', False), ("not json", False), ("NaN", False), ("[NaN]", False)],
)  # fmt: skip
def test_only_a_schema_that_is_an_object_or_an_array_is_re_asked(text: str, reasks: bool) -> None:
    """C-03, probed: prose is re-asked only when the --json-schema parses as an object or array
    (NaN is no JSON to JSON.parse)."""
    assert ToolSchema.of(text, CodeBuddyProfile.of(None)).reasks is reasks


def test_the_parameters_are_the_schema_as_json_parse_reads_it() -> None:
    """Found by seeds 312, 313: an integer past 2**53 goes to the model rounded."""
    text = '{"type": "object", "properties": {"a": {"const": 9007199254740993}}}'
    sent = ToolSchema.of(text, CodeBuddyProfile.of(None)).parameters
    assert sent == {"type": "object", "properties": {"a": {"const": 9007199254740992}}}
