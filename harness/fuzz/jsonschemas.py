"""
JSON Schemas as users write them, and the values a model answers with.

Every choice is drawn from a curated pool, simplest first, rather than from
the whole space: hypothesis then shrinks towards the plain case, and the
pools hold what tells implementations apart (integers past 2^53, fractions
``multipleOf`` rounds, strings the binary re-decodes, ``__proto__``, keys
JavaScript orders differently, Unicode property classes in patterns,
keywords of other dialects).  Values are built from the schema so that a
good share validates, then mutated, so both the accepting and the refusing
paths are reached.

Only local ``$ref`` pointers are generated: a remote one would make an
implementation that resolves it reach the network, which a fuzz run must
never cause.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hypothesis import strategies as st

from harness.fuzz import world

Json = Any
#: ``draw`` as the helpers of the composite strategies below take it.
Draw = Callable[[st.SearchStrategy[Any]], Any]

#: Integers: small ones first, then the boundaries of doubles and of 64 bits.
INTEGERS: tuple[int, ...] = (
    0, 1, -1, 2, 3, 7, 10, 100, -42,
    2**31, 2**53, 2**53 + 1, -(2**53 + 1), 2**63, 2**64, 10**30,
)  # fmt: skip
#: Fractions and big doubles: what multipleOf and JSON.stringify treat their own way.
FLOATS: tuple[float, ...] = (
    0.5, 1.0, -0.0, 0.1, 0.3, 0.35, 0.7, 1.5, 2.5, 1e-7, 1.0000001, 3.14159, 1e21, 1e300,
)  # fmt: skip
#: Strings: plain, Unicode, escapes the CLI repairs, numbers and JSON as text, long ones.
STRINGS: tuple[str, ...] = (
    "x",
    "",
    "abc",
    "été",
    "日本語",
    "😀",
    "🇫🇷",
    "e\u0301",
    "\u200b",
    "İ",
    "line\nbreak",
    'quo"te',
    "back\\slash",
    "caf\\u00e9",
    "C:\\new\\u00e9",
    "null",
    "true",
    "5",
    "-3",
    "0.5",
    "7.0",
    "1e3",
    " 7 ",
    "[1, 2]",
    '{"a": 1}',
    "a" * 120,
    "é" * 300,
    "😀" * 64,
    "z" * 12000,
)
#: Property names, including ones JavaScript objects treat specially.
NAMES: tuple[str, ...] = (
    "a", "b", "cause", "fixes", "id", "n", "名前", "😀", "a b", "x-y",
    "0", "10", "2", "__proto__", "constructor", "$ref", "", "k" * 90,
)  # fmt: skip
TYPES = ("string", "integer", "number", "boolean", "object", "array", "null")
#: Patterns: ASCII, Unicode property classes, escapes JSC and Python read differently, broken.
PATTERNS = (
    "^[a-z]+$",
    "^\\p{L}+$",
    "^\\d{1,3}$",
    "\\w",
    "^[\\u4e00-\\u9fff]+$",
    "^\\S+@\\S+$",
    "^.{2}$",
    "^\\p{Emoji}$",
    "[\\-]",
    "^(a|b",
    "^\\x41",
    "(?i)abc",
)
FORMATS = ("email", "date-time", "uri", "uuid", "no-such-format")
MULTIPLES: tuple[float | int, ...] = (2, 0.1, 0.01, 2.5, 1e-7, 0.35)
SCHEMA_URIS = (
    "http://json-schema.org/draft-07/schema#",
    "http://json-schema.org/draft-07/schema",
    "https://json-schema.org/draft/2020-12/schema",
    "https://json-schema.org/draft/2019-09/schema",
    "http://json-schema.org/draft-04/schema#",
)
#: Keywords of other dialects (OpenAPI, 2019-09+, vendor extensions) and annotations.
FOREIGN: tuple[tuple[str, Json], ...] = (
    ("title", "T"),
    ("description", "d"),
    ("default", None),
    ("examples", [1]),
    ("$comment", "c"),
    ("nullable", True),
    ("x-foo", 1),
    ("discriminator", {"propertyName": "kind"}),
    ("unevaluatedProperties", False),
    ("dependentRequired", {"a": ["b"]}),
    ("prefixItems", [{"type": "string"}]),
    ("deprecated", True),
    ("readOnly", True),
)


def rarely(draw: Draw, one_in: int) -> bool:
    """True once in ``one_in`` draws, and False when shrunk: the plain case is the small one."""
    return bool(draw(st.integers(0, one_in - 1)) == one_in - 1)


#: A JSON scalar from the pools.
PRIMITIVES: st.SearchStrategy[Json] = st.one_of(
    st.sampled_from(STRINGS),
    st.sampled_from(INTEGERS),
    st.sampled_from(FLOATS),
    st.sampled_from((None, True, False)),
)
#: Any small JSON value: what a model answers when it ignores the schema.
ANY_JSON: st.SearchStrategy[Json] = st.recursive(
    PRIMITIVES,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(st.sampled_from(NAMES), inner, max_size=3),
    ),
    max_leaves=4,
)


# -- schemas ---------------------------------------------------------------------------


def _string(draw: Draw) -> dict[str, Json]:
    out: dict[str, Json] = {"type": "string"}
    for key, pool in (
        ("minLength", (1, 3, 0)),
        ("maxLength", (5, 1, 100)),
        ("pattern", PATTERNS),
        ("format", FORMATS),
    ):
        if draw(st.booleans()):
            out[key] = draw(st.sampled_from(pool))
    return out


def _number(draw: Draw) -> dict[str, Json]:
    out: dict[str, Json] = {"type": draw(st.sampled_from(("integer", "number")))}
    bounds = (*INTEGERS[:6], 2**53 + 1, 0.5, 1e21)
    for key in ("minimum", "maximum", "exclusiveMinimum", "multipleOf"):
        if draw(st.booleans()):
            out[key] = draw(st.sampled_from(MULTIPLES if key == "multipleOf" else bounds))
    return out


def _leaf(draw: Draw) -> dict[str, Json] | bool:
    kind = draw(st.integers(0, 9))
    if kind == 0:
        return {"type": draw(st.sampled_from(TYPES))}
    if kind == 1:
        return {}
    if kind == 2:
        return _string(draw)
    if kind == 3:
        return _number(draw)
    if kind == 4:
        return {"type": draw(st.lists(st.sampled_from(TYPES), min_size=1, max_size=3))}
    if kind == 5:
        return {"enum": draw(st.lists(PRIMITIVES, min_size=1, max_size=4))}
    if kind == 6:
        return {"const": draw(PRIMITIVES)}
    if kind == 7:
        return {"type": draw(st.sampled_from(TYPES)), "nullable": True}
    if kind == 8:
        return bool(draw(st.booleans()))
    key, value = draw(st.sampled_from(FOREIGN))
    return {"type": draw(st.sampled_from(TYPES)), key: value}


def subschema(draw: Draw, depth: int) -> dict[str, Json] | bool:
    """A schema for a value inside the root, ``depth`` levels deep at most."""
    kind = draw(st.integers(0, 6 if depth > 0 else 0))
    if kind == 0:
        return _leaf(draw)

    def inner() -> dict[str, Json] | bool:
        return subschema(draw, depth - 1)

    if kind == 1:
        return _object(draw, inner)
    if kind == 2:
        return _array(draw, inner)
    if kind in (3, 4):
        word = draw(st.sampled_from(("anyOf", "oneOf", "allOf")))
        return {word: [inner() for _ in range(draw(st.integers(1, 3)))]}
    if kind == 5:
        return {"not": inner()}
    out = {"if": inner(), "then": inner()}
    if draw(st.booleans()):
        out["else"] = inner()
    return out


Inner = Callable[[], "dict[str, Json] | bool"]


def _object(draw: Draw, inner: Inner) -> dict[str, Json]:
    names = draw(st.lists(st.sampled_from(NAMES), max_size=3, unique=True))
    out: dict[str, Json] = {"type": "object", "properties": {n: inner() for n in names}}
    required = draw(st.lists(st.sampled_from(NAMES), max_size=2, unique=True))
    if names and draw(st.booleans()):
        required = names[: draw(st.integers(1, len(names)))]
    if required:
        out["required"] = required
    extra = draw(st.integers(0, 4))
    if extra == 1:
        out["additionalProperties"] = False
    elif extra == 2:
        out["additionalProperties"] = inner()
    elif extra == 3:
        out["patternProperties"] = {"^[0-9]+$": inner()}
    elif extra == 4:
        out["propertyNames"] = {"maxLength": 2}
    if draw(st.booleans()):
        out["minProperties"] = draw(st.sampled_from((1, 2)))
    return out


def _array(draw: Draw, inner: Inner) -> dict[str, Json]:
    out: dict[str, Json] = {"type": "array"}
    shape = draw(st.integers(0, 2))
    if shape == 1:
        out["items"] = inner()
    elif shape == 2:
        out["items"] = [inner() for _ in range(draw(st.integers(1, 2)))]
        if draw(st.booleans()):
            out["additionalItems"] = False
    for key, pool in (("minItems", (1, 2)), ("maxItems", (2, 0)), ("uniqueItems", (True,))):
        if draw(st.booleans()):
            out[key] = draw(st.sampled_from(pool))
    return out


def root_schema(draw: Draw) -> Json:
    """
    A whole schema argument: mostly an object with properties, sometimes
    with ``$schema``, recursive ``$defs``, foreign keywords, or a root that
    is not an object schema at all.
    """
    kind = draw(st.integers(0, 9))
    if kind >= 8:
        return draw(
            st.sampled_from(
                ({}, {"type": "array", "items": {"type": "string"}}, {"type": "string"}, True, [1])
            )
        )
    names = draw(st.lists(st.sampled_from(NAMES), min_size=1, max_size=3, unique=True))
    depth = draw(st.integers(0, 2))
    props: dict[str, Json] = {n: subschema(draw, depth) for n in names}
    root: dict[str, Json] = {"type": "object", "properties": props}
    if draw(st.booleans()):
        root["required"] = names[: draw(st.integers(1, len(names)))]
    if draw(st.booleans()):
        root["additionalProperties"] = False
    if kind in (5, 6):
        _defs(draw, root, names[0])
    if kind == 7:
        key, value = draw(st.sampled_from(FOREIGN))
        root[key] = value
    if rarely(draw, 4):
        root = {"$schema": draw(st.sampled_from(SCHEMA_URIS)), **root}
    return root


def _defs(draw: Draw, root: dict[str, Json], name: str) -> None:
    """Definitions and local references: recursive, plain, through ``definitions``, dangling."""
    node = {
        "type": "object",
        "properties": {
            "value": {"type": "integer"},
            "children": {"type": "array", "items": {"$ref": "#/$defs/node"}},
        },
        "required": ["value"],
    }
    style = draw(st.integers(0, 3))
    if style == 0:
        root["$defs"] = {"node": node}
        root["properties"][name] = {"$ref": "#/$defs/node"}
    elif style == 1:
        root["definitions"] = {"word": {"type": "string", "minLength": 1}}
        root["properties"][name] = {"$ref": "#/definitions/word"}
    elif style == 2:
        root["properties"][name] = {"$ref": "#/$defs/missing"}
    else:
        root["properties"][name] = {"anyOf": [{"type": "null"}, {"$ref": "#"}]}


# -- values held against a schema ------------------------------------------------------


def instance(draw: Draw, schema: Json, root: Json = None, depth: int = 3) -> Json:
    """A value shaped by ``schema`` (valid often, not always), or any JSON at all."""
    root = schema if root is None else root
    if depth <= 0 or not isinstance(schema, dict) or rarely(draw, 8):
        return draw(ANY_JSON)
    if "const" in schema:
        return schema["const"]
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return draw(st.sampled_from(schema["enum"]))
    ref = schema.get("$ref")
    if isinstance(ref, str):
        return instance(draw, _resolve(root, ref), root, depth - 1)
    for word in ("anyOf", "oneOf", "allOf"):
        branches = schema.get(word)
        if isinstance(branches, list) and branches:
            return instance(draw, draw(st.sampled_from(branches)), root, depth - 1)
    return _typed(draw, schema, root, depth)


def _resolve(root: Json, ref: str) -> Json:
    if ref == "#":
        return root
    node = root
    for part in ref.removeprefix("#/").split("/"):
        node = node.get(part) if isinstance(node, dict) else None
    return node if isinstance(node, (dict, bool)) else {}


def _typed(draw: Draw, schema: dict[str, Json], root: Json, depth: int) -> Json:
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = draw(st.sampled_from(kind)) if kind else None
    if kind is None:
        kind = "object" if "properties" in schema else "array" if "items" in schema else None
    if kind == "object":
        props = schema.get("properties")
        props = props if isinstance(props, dict) else {}
        return {
            name: instance(draw, sub, root, depth - 1)
            for name, sub in props.items()
            if draw(st.integers(0, 4)) > 0
        }
    if kind == "array":
        items = schema.get("items", {})
        if isinstance(items, list):
            return [instance(draw, sub, root, depth - 1) for sub in items]
        return [instance(draw, items, root, depth - 1) for _ in range(draw(st.integers(0, 3)))]
    return draw(_POOLS.get(str(kind), PRIMITIVES))


_POOLS: dict[str, st.SearchStrategy[Json]] = {
    # Answers only (never a schema, which travels in argv): the world's string classes too.
    "string": st.one_of(st.sampled_from(STRINGS), st.sampled_from(STRINGS), world.WORLD_STRINGS),
    "integer": st.sampled_from(INTEGERS),
    "number": st.one_of(st.sampled_from(FLOATS), st.sampled_from(INTEGERS)),
    "boolean": st.booleans(),
    "null": st.none(),
}


def tool_input(draw: Draw, schema: Json) -> Json:
    """
    What a model passes to the StructuredOutput tool: a value built from the
    schema, the same with one thing broken, or no object at all.
    """
    value = instance(draw, schema)
    how = draw(st.integers(0, 6))
    if how <= 2 or not isinstance(value, dict):
        return value
    if how == 3 and value:
        broken = dict(value)
        broken.pop(draw(st.sampled_from(sorted(broken))))
        return broken
    if how == 4:
        return {**value, draw(st.sampled_from(NAMES)): draw(PRIMITIVES)}
    if how == 5 and value:
        name = draw(st.sampled_from(sorted(value)))
        return {**value, name: draw(PRIMITIVES)}
    return draw(st.sampled_from(("not an object", [value], 42, None)))
