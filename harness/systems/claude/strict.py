"""
Claude Code's strict wire schema: derived from the caller's schema, or not at all.

When its ``tengu_structured_output_strict`` gate is on, Claude Code tries to
turn the ``--json-schema`` document into a schema the API can decode against
with ``strict: true`` (LOOP-09).  Only a small keyword subset survives the
conversion; anything else is a *silent* fallback: the StructuredOutput tool
then carries the original schema without ``strict``, and the local validator
(which always uses the original schema) is unchanged.  The rules here are the
ones seed 004 lists for 2.1.235; no capture pins them, because the gate is
remote and the published binary cannot be given it offline.

`derive` is pure: a schema in, a `Derived` (the strict schema, or the reason
for falling back) out.
"""

from __future__ import annotations

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
    counter = [MAX_NODES]
    try:
        if not isinstance(schema, dict) or _kind(schema) != "object":
            raise _Fallback("the root is not an object schema")
        return Derived(_node(schema, 0, counter))
    except _Fallback as why:
        return Derived(None, str(why))


def _kind(node: dict[str, Any]) -> str | None:
    kind = node.get("type")
    if kind is None and "properties" in node:
        return "object"
    return kind if isinstance(kind, str) else None


def _node(node: object, depth: int, counter: list[int]) -> dict[str, Any]:
    counter[0] -= 1
    if counter[0] < 0:
        raise _Fallback(f"more than {MAX_NODES} schema nodes")
    if depth > MAX_DEPTH:
        raise _Fallback(f"nested deeper than {MAX_DEPTH}")
    if not isinstance(node, dict):
        raise _Fallback("a subschema is not an object")
    unknown = sorted(set(node) - KEYWORDS)
    if unknown:
        raise _Fallback(f"unsupported keyword {unknown[0]}")
    if "anyOf" in node:
        return _any_of(node, depth, counter)
    out: dict[str, Any] = {k: node[k] for k in ("$schema", "title", "description") if k in node}
    kind = node.get("type")
    if kind is not None:
        if not isinstance(kind, str):
            raise _Fallback("type is a list of types")
        out["type"] = kind
    if "enum" in node:
        out["enum"] = _enum(node["enum"])
    if "const" in node:
        out["const"] = node["const"]
    if _kind(node) == "object":
        out.update(_object(node, depth, counter))
    elif "properties" in node or "required" in node or "additionalProperties" in node:
        raise _Fallback("object keywords on a schema that is not an object")
    if "items" in node:
        if kind != "array":
            raise _Fallback("items on a schema that is not an array")
        if not isinstance(node["items"], dict):
            raise _Fallback("items is not a single schema (tuple items)")
        out["items"] = _node(node["items"], depth + 1, counter)
    return out


def _any_of(node: dict[str, Any], depth: int, counter: list[int]) -> dict[str, Any]:
    extra = sorted(set(node) - ANYOF_COMPANIONS - {"anyOf"})
    if extra:
        raise _Fallback(f"anyOf beside {extra[0]}")
    branches = node["anyOf"]
    if not isinstance(branches, list) or not branches:
        raise _Fallback("anyOf is not a non-empty list")
    out: dict[str, Any] = {k: node[k] for k in ("$schema", "title", "description") if k in node}
    out["anyOf"] = [_node(branch, depth + 1, counter) for branch in branches]
    return out


def _object(node: dict[str, Any], depth: int, counter: list[int]) -> dict[str, Any]:
    properties = node.get("properties")
    if not isinstance(properties, dict):
        raise _Fallback("an object schema without properties")
    if node.get("additionalProperties", False) is not False:
        raise _Fallback("additionalProperties is not false")
    required = node.get("required", [])
    if not isinstance(required, list) or not all(isinstance(r, str) for r in required):
        raise _Fallback("required is not a list of strings")
    if len(set(required)) != len(required):
        raise _Fallback("required repeats a name")
    dangling = [name for name in required if name not in properties]
    if dangling:
        raise _Fallback(f"required names {dangling[0]!r}, which is not a property")
    out: dict[str, Any] = {
        "properties": {k: _node(v, depth + 1, counter) for k, v in properties.items()}
    }
    if "required" in node:
        out["required"] = list(required)
    out["additionalProperties"] = False
    return out


def _enum(values: object) -> list[object]:
    if not isinstance(values, list) or not values:
        raise _Fallback("enum is not a non-empty list")
    if any(isinstance(v, (dict, list)) for v in values):
        raise _Fallback("enum holds an object or an array")
    keys = [(type(v).__name__, v) for v in values]
    if len(set(keys)) != len(keys):
        raise _Fallback("enum repeats a value")
    return list(values)
