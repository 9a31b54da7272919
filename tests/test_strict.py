"""
The strict wire schema (LOOP-09): what is derived, and why a schema falls back.

The derivation sits behind a remote feature gate that no offline run of the
binary can turn on (tests/test_offline_reach.py), so no scenario on the
`real` target shows it.  Its witness is the binary's own routine instead:
`test_derivation_agrees_with_the_binary_routine` runs 2.1.328's derivation,
read out of the installed binary at test time (tests/oracles/), on the same
schemas as `harness.systems.claude.strict.derive` and compares the answers.
"""

from __future__ import annotations

import json
import random
import subprocess
from pathlib import Path
from typing import Any

import pytest

from harness.systems.claude.strict import MAX_DEPTH, derive
from tests.realbin import real_binary

ORACLE = Path(__file__).resolve().parent / "oracles" / "claude_routines.mjs"

DIAGNOSIS = {
    "type": "object",
    "properties": {
        "cause": {"type": "string"},
        "fixes": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["cause", "fixes"],
}


#: Schemas inside the strict subset that the tests below derive by hand; the oracle test
#: asks the binary's routine about each of them too.
TITLED: dict[str, Any] = {"title": "d", **DIAGNOSIS}
ANNOTATED_ANYOF: dict[str, Any] = {
    "type": "object",
    "properties": {"v": {"description": "x", "anyOf": [{"const": 1}]}},
}
SCALAR_LIST: dict[str, Any] = {"type": "object", "properties": {"v": {"type": ["string", "null"]}}}


def test_a_schema_in_the_subset_is_derived_with_every_object_closed() -> None:
    derived = derive(TITLED)
    assert derived.ok
    closed = {
        "title": "d",
        "type": "object",
        "required": ["cause", "fixes"],
        "properties": {
            "cause": {"type": "string"},
            "fixes": {"type": "array", "items": {"type": "string"}},
        },
        "additionalProperties": False,
    }
    assert json.dumps(derived.schema) == json.dumps(closed)  # the binary's key order too


def test_anyof_with_only_annotations_beside_it_is_kept() -> None:
    derived = derive(ANNOTATED_ANYOF)
    assert derived.schema is not None
    assert derived.schema["properties"]["v"] == {"description": "x", "anyOf": [{"const": 1}]}


def test_a_list_of_scalar_types_is_kept() -> None:
    derived = derive(SCALAR_LIST)
    assert derived.schema is not None
    assert derived.schema["properties"]["v"] == {"type": ["string", "null"]}


def _nested(depth: int) -> dict[str, object]:
    node: dict[str, object] = {"type": "string"}
    for _ in range(depth):
        node = {"type": "object", "properties": {"n": node}}
    return node


#: Schemas outside the strict subset, each with the reason it falls back; the oracle test
#: asks the binary's routine about every one of them too.
FALLBACKS: list[tuple[dict[str, object], str]] = [
    ({"type": "array", "items": {"type": "string"}}, "root_not_object"),
    ({"type": "object", "properties": {"c": {"minLength": 1, "type": "string"}}}, "keyword"),
    ({"type": "object", "properties": {"c": {"type": "string", "format": "email"}}}, "keyword"),
    ({"type": "object"}, "no_properties"),
    ({"type": "object", "properties": {}, "additionalProperties": True}, "additional_prop"),
    ({"type": "object", "properties": {"a": {}}, "required": ["a", "a"]}, "invalid_required"),
    ({"type": "object", "properties": {"a": {}}, "required": ["b"]}, "invalid_required"),
    ({"type": "object", "properties": {"a": {}}}, "missing_type"),
    ({"type": "object", "properties": {"t": {"type": "array", "items": [{}]}}}, "items"),
    ({"type": "object", "properties": {"e": {"enum": []}}}, "unsupported_enum"),
    ({"type": "object", "properties": {"e": {"enum": [1, 1.0]}}}, "unsupported_enum"),
    ({"type": "object", "properties": {"e": {"enum": [{"a": 1}]}}}, "unsupported_enum"),
    ({"type": "object", "properties": {"e": {"const": [1]}}}, "unsupported_const"),
    ({"type": "object", "properties": {"v": {"type": "string", "anyOf": [{}]}}}, "keyword"),
    ({"type": "object", "properties": {"v": {"type": ["object", "null"]}}}, "unsupported_type"),
    ({"properties": {"v": {"type": "string"}}}, "mismatched_keywords"),
    (_nested(MAX_DEPTH), "max_depth"),
]


@pytest.mark.parametrize(("schema", "reason"), FALLBACKS)
def test_a_schema_outside_the_subset_falls_back_with_its_reason(
    schema: dict[str, object], reason: str
) -> None:
    derived = derive(schema)
    assert not derived.ok
    assert derived.schema is None
    assert derived.reason is not None
    assert reason in derived.reason


# -- the binary's own routine as the oracle ----------------------------------------------------

_LEAVES: list[Any] = [
    {"type": "string"},
    {"type": "integer"},
    {"type": "number"},
    {"type": "boolean"},
    {"type": "null"},
    {"type": ["string", "null"]},
    {"type": ["integer", "integer"]},
    {"type": ["object", "null"]},
    {"type": []},
    {"type": "strin"},
    {"enum": ["a", "b"]},
    {"enum": [1, 1.0]},
    {"enum": [1, "1", None, True]},
    {"enum": []},
    {"enum": [[1]]},
    {"const": "x"},
    {"const": None},
    {"const": {"a": 1}},
    {"type": "string", "minLength": 1},
    {"type": "string", "format": "email"},
    {"type": "string", "description": 5},
    {"type": "string", "title": "t", "description": "d"},
    {},
    {"description": "only"},
    True,
    "string",
]


def _schema(rng: random.Random, depth: int) -> Any:
    roll = rng.random()
    if depth > 3 or roll < 0.35:
        return rng.choice(_LEAVES)
    if roll < 0.6:
        names = rng.sample(["a", "b", "c", "0", "__proto__"], rng.randint(0, 3))
        node: dict[str, Any] = {"type": "object"}
        if rng.random() < 0.9:
            node["properties"] = {n: _schema(rng, depth + 1) for n in names}
        if names and rng.random() < 0.6:
            node["required"] = rng.sample(names, rng.randint(1, len(names)))
        if rng.random() < 0.15:
            node["required"] = [*node.get("required", []), "zz"]
        if rng.random() < 0.3:
            node["additionalProperties"] = rng.choice([False, True, {}])
        if rng.random() < 0.1:
            node["$schema"] = "http://json-schema.org/draft-07/schema#"
        return node
    if roll < 0.75:
        node = {"type": "array", "items": _schema(rng, depth + 1)}
        if rng.random() < 0.1:
            node["items"] = [_schema(rng, depth + 1)]
        if rng.random() < 0.1:
            del node["items"]
        return node
    if roll < 0.85:
        node = {"anyOf": [_schema(rng, depth + 1) for _ in range(rng.randint(0, 3))]}
        if rng.random() < 0.3:
            node[rng.choice(["description", "type", "$schema"])] = "object"
        return node
    return {"type": rng.choice(["string", "object"]), "properties": {"x": {"type": "string"}}}


def _schemas() -> list[Any]:
    rng = random.Random(20_328)
    made = [_schema(rng, 0) for _ in range(400)]
    made += [{"type": "object", "properties": {"a": _schema(rng, 1)}} for _ in range(200)]
    made += [_nested(MAX_DEPTH - 1), _nested(MAX_DEPTH), {"type": "object", "properties": {}}]
    # Every schema a test above derives by hand, so each of their answers is the binary's.
    made += [TITLED, ANNOTATED_ANYOF, SCALAR_LIST, *(schema for schema, _ in FALLBACKS)]
    return made


def test_derivation_agrees_with_the_binary_routine() -> None:
    binary = real_binary("claude").resolve()
    schemas = _schemas()
    feed = "".join(json.dumps({"routine": "strict", "schema": s}) + "\n" for s in schemas)
    done = subprocess.run(
        ["node", str(ORACLE), str(binary)],
        input=feed,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    answers = [json.loads(line) for line in done.stdout.split("\n") if line]
    assert len(answers) == len(schemas)
    differ = []
    for reply in answers:
        assert "fault" not in reply, reply
        # The reference derives from the schema as the binary holds it (`validator.Schema`).
        schema, answer = reply["asked"], reply["answer"]
        derived = derive(schema)
        mine: dict[str, object] = (
            {"ok": True, "schema": derived.schema} if derived.ok else {"ok": False}
        )
        if not derived.ok:
            mine["reason"] = derived.reason
        if json.dumps(mine) != json.dumps(answer):  # key order included
            differ.append((schema, mine, answer))
    assert differ == []
    assert sum(a["answer"]["ok"] for a in answers) > 30  # both outcomes are well represented
