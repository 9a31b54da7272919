"""The strict wire schema (LOOP-09): what is derived, and why a schema falls back."""

from __future__ import annotations

import pytest

from harness.systems.claude.strict import MAX_DEPTH, derive

DIAGNOSIS = {
    "type": "object",
    "properties": {
        "cause": {"type": "string"},
        "fixes": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["cause", "fixes"],
}


def test_a_schema_in_the_subset_is_derived_with_every_object_closed() -> None:
    derived = derive({"title": "d", **DIAGNOSIS})
    assert derived.ok
    assert derived.schema == {"title": "d", **DIAGNOSIS, "additionalProperties": False}


def test_anyof_with_only_annotations_beside_it_is_kept() -> None:
    schema = {"type": "object", "properties": {"v": {"description": "x", "anyOf": [{"const": 1}]}}}
    derived = derive(schema)
    assert derived.schema is not None
    assert derived.schema["properties"]["v"] == {"description": "x", "anyOf": [{"const": 1}]}


def _nested(depth: int) -> dict[str, object]:
    node: dict[str, object] = {"type": "string"}
    for _ in range(depth):
        node = {"type": "object", "properties": {"n": node}}
    return node


@pytest.mark.parametrize(
    ("schema", "reason"),
    [
        ({"type": "array", "items": {"type": "string"}}, "the root is not an object schema"),
        ({"type": "object", "properties": {"c": {"type": "string", "minLength": 1}}}, "minLength"),
        ({"type": "object", "properties": {"c": {"type": "string", "format": "email"}}}, "format"),
        ({"type": "object"}, "without properties"),
        ({"type": "object", "properties": {}, "additionalProperties": True}, "not false"),
        ({"type": "object", "properties": {"a": {}}, "required": ["a", "a"]}, "repeats"),
        ({"type": "object", "properties": {"a": {}}, "required": ["b"]}, "'b'"),
        ({"type": "object", "properties": {"t": {"type": "array", "items": [{}]}}}, "tuple"),
        ({"type": "object", "properties": {"e": {"enum": []}}}, "non-empty"),
        ({"type": "object", "properties": {"e": {"enum": [1, 1]}}}, "repeats a value"),
        ({"type": "object", "properties": {"e": {"enum": [{"a": 1}]}}}, "object or an array"),
        (
            {"type": "object", "properties": {"v": {"type": "string", "anyOf": [{}]}}},
            "anyOf beside",
        ),
        ({"type": "object", "properties": {"v": {"type": ["string", "null"]}}}, "list of types"),
        (_nested(MAX_DEPTH + 1), f"deeper than {MAX_DEPTH}"),
    ],
)
def test_a_schema_outside_the_subset_falls_back_with_its_reason(
    schema: dict[str, object], reason: str
) -> None:
    derived = derive(schema)
    assert not derived.ok
    assert derived.schema is None
    assert derived.reason is not None
    assert reason in derived.reason
