"""
Claude Code's strict wire schema: derived from the caller's schema, or not at all.

When its ``tengu_structured_output_strict`` gate is on, Claude Code tries to
turn the ``--json-schema`` document into a schema the API can decode against
with ``strict: true`` (LOOP-09).  Only a small keyword subset survives the
conversion; anything else is a *silent* fallback: the StructuredOutput tool
then carries the original schema without ``strict``, and the local validator
(which always uses the original schema) is unchanged.

The gate is remote and the published binary cannot be given it offline
(tests/test_offline_reach.py shows every offline way in ignored), so no run
shows the derivation.  Its rules here are those of 2.1.328's own routine,
and tests/test_strict.py holds this module to that routine: it locates the
routine in the installed binary and runs it under Node as an oracle, on the
same schemas (nothing of it is copied here).  A fallback's reason is the
name the binary reports it under (``unsupported_keyword``, ``max_depth``, ...).

`derive` is pure: a schema in, a `Derived` (the strict schema, or the reason
for falling back) out.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

#: Keywords a strict schema may use; any other one makes the derivation fall back.
KEYWORDS = frozenset(
    {
        "$schema",
        "type",
        "description",
        "title",
        "properties",
        "required",
        "additionalProperties",
        "items",
        "enum",
        "const",
        "anyOf",
    }
)
#: What a node holding ``anyOf`` may carry besides it.
ANYOF_COMPANIONS = frozenset({"$schema", "description", "title"})
TYPES = frozenset({"object", "array", "string", "integer", "number", "boolean", "null"})
#: Nesting levels a strict schema may have, and schema nodes in all.
MAX_DEPTH = 32
MAX_NODES = 100_000


@dataclass(frozen=True)
class Derived:
    """The strict schema, or why there is none (then ``schema`` is None)."""

    schema: dict[str, Any] | None
    reason: str | None = None

    @property
    def ok(self) -> bool:
        return self.schema is not None


class _Fallback(Exception):
    """Raised inside the walk; `derive` turns it into a `Derived` with a reason."""


def derive(schema: object) -> Derived:
    """The strict form of ``schema``; a fallback (with its reason) when it has none."""
    try:
        node = _node(schema, MAX_DEPTH, [MAX_NODES])
    except _Fallback as why:
        return Derived(None, str(why))
    if node.get("type") != "object":
        return Derived(None, "root_not_object")
    return Derived(node)


def _scalar(value: object) -> bool:
    """A value strict decoding can produce as a constant: null, a string, a finite number."""
    if isinstance(value, float):
        return math.isfinite(value)
    return value is None or isinstance(value, (str, int, bool))


def _same_key(value: object) -> tuple[str, object]:
    # JavaScript's Set: numbers compare by value (1 and 1.0 are one), strings apart.
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return (type(value).__name__, value)
    return ("number", float(value))  # type: ignore[arg-type]


def _node(node: object, depth: int, budget: list[int]) -> dict[str, Any]:
    if depth <= 0:
        raise _Fallback("max_depth")
    budget[0] -= 1
    if budget[0] < 0:
        raise _Fallback("max_nodes")
    if not isinstance(node, dict):
        raise _Fallback("not_object")
    if set(node) - KEYWORDS:
        raise _Fallback("unsupported_keyword")
    out: dict[str, Any] = {}
    for note in ("description", "title"):
        if note in node:
            if not isinstance(node[note], str):
                raise _Fallback("unsupported_keyword")
            out[note] = node[note]
    if "anyOf" in node:
        return _any_of(node, out, depth, budget)
    if "const" in node:
        if not _scalar(node["const"]):
            raise _Fallback("unsupported_const")
        out["const"] = node["const"]
    if "enum" in node:
        out["enum"] = _enum(node["enum"])
    kind = node.get("type")
    if "type" in node:
        out["type"] = _type(kind)
    if kind != "object" and any(k in node for k in ("properties", "required")):
        raise _Fallback("mismatched_keywords")
    if kind != "object" and "additionalProperties" in node:
        raise _Fallback("mismatched_keywords")
    if kind != "array" and "items" in node:
        raise _Fallback("mismatched_keywords")
    if kind == "object":
        out.update(_object(node, depth, budget))
    elif kind == "array":
        items = node.get("items")
        if items is None or isinstance(items, list):
            raise _Fallback("unsupported_items")
        out["items"] = _node(items, depth - 1, budget)
    elif "type" not in node and "enum" not in out and "const" not in out:
        raise _Fallback("missing_type")
    return out


def _any_of(
    node: dict[str, Any], out: dict[str, Any], depth: int, budget: list[int]
) -> dict[str, Any]:
    if set(node) - ANYOF_COMPANIONS - {"anyOf"}:
        raise _Fallback("unsupported_keyword")
    branches = node["anyOf"]
    if not isinstance(branches, list) or not branches:
        raise _Fallback("unsupported_keyword")
    out["anyOf"] = [_node(branch, depth - 1, budget) for branch in branches]
    return out


def _type(kind: object) -> object:
    if isinstance(kind, str):
        if kind not in TYPES:
            raise _Fallback("unsupported_type")
        return kind
    if isinstance(kind, list):
        simple = all(isinstance(k, str) and k in TYPES - {"object", "array"} for k in kind)
        if not kind or not simple or len(set(kind)) != len(kind):
            raise _Fallback("unsupported_type")
        return list(kind)
    raise _Fallback("unsupported_type")


def _enum(values: object) -> list[object]:
    if not isinstance(values, list) or not values or not all(_scalar(v) for v in values):
        raise _Fallback("unsupported_enum")
    if len({_same_key(v) for v in values}) != len(values):
        raise _Fallback("unsupported_enum")
    return list(values)


def _object(node: dict[str, Any], depth: int, budget: list[int]) -> dict[str, Any]:
    properties = node.get("properties")
    if not isinstance(properties, dict):
        raise _Fallback("no_properties")
    if "additionalProperties" in node and node["additionalProperties"] is not False:
        raise _Fallback("additional_properties")
    out: dict[str, Any] = {}
    if "required" in node:
        required = node["required"]
        if not isinstance(required, list) or not all(
            isinstance(r, str) and r in properties for r in required
        ):
            raise _Fallback("invalid_required")
        if len(set(required)) != len(required):
            raise _Fallback("invalid_required")
        out["required"] = list(required)
    out["properties"] = {k: _node(v, depth - 1, budget) for k, v in properties.items()}
    out["additionalProperties"] = False
    return out
