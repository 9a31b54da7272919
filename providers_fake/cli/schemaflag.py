"""
Claude Code's checks of ``--json-schema``, with its wording.

The real CLI runs on Bun: ``JSON.parse`` errors carry JavaScriptCore's text
(``JSON Parse error: Unexpected identifier "not"``), and the schema is then
checked against the draft-07 meta-schema by Ajv, whose errors are joined
with ``", "``.  Both are approximated here for the common mistakes (a bare
word, truncated input, a misspelt ``type``, a keyword of the wrong kind) so
that adaptors see the same first line of stderr as with the real program.

Before the meta-schema, the CLI bounds the document (SCH-10): more than
100,000 JSON values or nesting deeper than 10,000 is "schema too large", and
a truthy ``$async`` is refused, as Ajv would compile an async validator.
"""

from __future__ import annotations

import json
import sys
from contextlib import contextmanager

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator

#: Claude Code's pre-compilation budget: JSON values visited, and nesting depth.
MAX_NODES, MAX_DEPTH = 100_000, 10_000

_TYPES = ("array", "boolean", "integer", "null", "number", "object", "string")
# Keywords whose value is itself a schema, a list of schemas, or a map of schemas.
_SCHEMA_KEYS: tuple[str, ...] = ("additionalItems", "additionalProperties", "contains", "else")
_SCHEMA_KEYS += ("if", "not", "propertyNames", "then")
_LIST_KEYS = ("allOf", "anyOf", "oneOf")
_MAP_KEYS = ("$defs", "definitions", "dependencies", "patternProperties", "properties")
_COUNT_KEYS = ("maxItems", "maxLength", "maxProperties", "minItems", "minLength", "minProperties")
_NUMBER_KEYS = ("exclusiveMaximum", "exclusiveMinimum", "maximum", "minimum", "multipleOf")


def check(text: str) -> tuple[object, str | None]:
    """The parsed schema and the stderr line the real CLI prints (None if it is accepted)."""
    try:
        with _deep_enough():
            value = json.loads(text, parse_constant=_reject_constant)
    except ValueError as error:
        reason = _jsc(text, error)
        return None, f"Error: --json-schema is not valid JSON: JSON Parse error: {reason}\n"
    if not isinstance(value, dict):
        return value, "Error: --json-schema must be a JSON object\n"
    if too_large(value):
        return value, "Error: --json-schema is not a valid JSON Schema: schema too large\n"
    if _truthy(value.get("$async")):
        message = "$async schemas are not supported"
        return value, f"Error: --json-schema is not a valid JSON Schema: {message}\n"
    problems: list[str] = []
    with _deep_enough():
        _meta(value, "data", problems)
    if problems:
        return value, f"Error: --json-schema is not a valid JSON Schema: {', '.join(problems)}\n"
    return value, None


def parse_quietly(text: str) -> object:
    """The schema for the launch record: the JSON value, or None if it is not JSON."""
    try:
        with _deep_enough():
            return json.loads(text, parse_constant=_reject_constant)
    except ValueError:
        return None


def too_large(value: object) -> bool:
    """More than `MAX_NODES` values, or a value nested deeper than `MAX_DEPTH`."""
    budget = MAX_NODES
    pending: list[tuple[object, int]] = [(value, 0)]
    while pending:
        node, depth = pending.pop()
        budget -= 1
        if budget < 0 or depth > MAX_DEPTH:
            return True
        if isinstance(node, dict):
            pending.extend((child, depth + 1) for child in node.values())
        elif isinstance(node, list):
            pending.extend((child, depth + 1) for child in node)
    return False


def _truthy(value: object) -> bool:
    # JavaScript's Boolean(): only false, 0, "", null (and absent) are false.
    return value is not None and value is not False and value not in {0, ""}


@contextmanager
def _deep_enough() -> Iterator[None]:
    # Python's parser recurses once per level; the CLI's budget allows 10,000 levels.
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old, 3 * MAX_DEPTH))
    try:
        yield
    finally:
        sys.setrecursionlimit(old)


def _reject_constant(name: str) -> object:
    raise ValueError(f"bare {name}")


def _jsc(text: str, error: ValueError) -> str:
    """JavaScriptCore's wording for the first thing JSON.parse would stumble on."""
    position = error.pos if isinstance(error, json.JSONDecodeError) else _first_bare_word(text)
    while position < len(text) and text[position] in " \t\r\n":
        position += 1
    if position >= len(text):
        return "Unexpected EOF"
    char = text[position]
    if char.isalpha() or char in "_$":
        end = position
        while end < len(text) and (text[end].isalnum() or text[end] in "_$"):
            end += 1
        return f'Unexpected identifier "{text[position:end]}"'
    message = error.msg if isinstance(error, json.JSONDecodeError) else ""
    if message.startswith("Unterminated string"):
        return "Unterminated string"
    if message.startswith("Expecting property name"):
        return "Property name must be a string literal"
    if message.startswith("Extra data"):
        return "Unable to parse JSON string"
    return f"Unrecognized token '{char}'"


def _first_bare_word(text: str) -> int:
    for word in ("NaN", "Infinity", "-Infinity"):
        found = text.find(word)
        if found >= 0:
            return found + (1 if word.startswith("-") else 0)
    return 0


def _meta(schema: object, path: str, problems: list[str]) -> None:
    if isinstance(schema, bool):
        return
    if not isinstance(schema, dict):
        problems.append(f"{path} must be object,boolean")
        return
    if "type" in schema:
        _check_type(schema["type"], f"{path}/type", problems)
    for key in _SCHEMA_KEYS:
        if key in schema:
            _meta(schema[key], f"{path}/{key}", problems)
    for key in _LIST_KEYS:
        if key in schema:
            _schema_list(schema[key], f"{path}/{key}", problems)
    for key in _MAP_KEYS:
        if key in schema:
            _schema_map(schema[key], f"{path}/{key}", problems, key == "dependencies")
    if "items" in schema:
        _check_items(schema["items"], f"{path}/items", problems)
    if "required" in schema:
        _string_list(schema["required"], f"{path}/required", problems)
    if "enum" in schema and not isinstance(schema["enum"], list):
        problems.append(f"{path}/enum must be array")
    for key in _COUNT_KEYS:
        if key in schema and not _is_count(schema[key]):
            problems.append(f"{path}/{key} must be integer")
    for key in _NUMBER_KEYS:
        value = schema.get(key)
        if key in schema and (isinstance(value, bool) or not isinstance(value, (int, float))):
            problems.append(f"{path}/{key} must be number")


def _check_type(value: object, path: str, problems: list[str]) -> None:
    # The meta-schema says anyOf: [one simple type name, a non-empty array of them].
    if isinstance(value, str) and value in _TYPES:
        return
    if isinstance(value, list) and value:
        bad = [index for index, item in enumerate(value) if item not in _TYPES]
        if not bad:
            return
        problems.append(f"{path} must be equal to one of the allowed values")
        problems.extend(f"{path}/{i} must be equal to one of the allowed values" for i in bad)
    else:
        problems.append(f"{path} must be equal to one of the allowed values")
        if isinstance(value, list):
            problems.append(f"{path} must NOT have fewer than 1 items")
        else:
            problems.append(f"{path} must be array")
    problems.append(f"{path} must match a schema in anyOf")


def _check_items(value: object, path: str, problems: list[str]) -> None:
    if isinstance(value, list):
        for index, item in enumerate(value):
            _meta(item, f"{path}/{index}", problems)
        return
    if isinstance(value, (dict, bool)):
        _meta(value, path, problems)
        return
    problems.append(f"{path} must be object,boolean")
    problems.append(f"{path} must be array")
    problems.append(f"{path} must match a schema in anyOf")


def _schema_list(value: object, path: str, problems: list[str]) -> None:
    if not isinstance(value, list):
        problems.append(f"{path} must be array")
        return
    for index, item in enumerate(value):
        _meta(item, f"{path}/{index}", problems)


def _schema_map(value: object, path: str, problems: list[str], dependencies: bool) -> None:
    if not isinstance(value, dict):
        problems.append(f"{path} must be object")
        return
    for key, item in value.items():
        if dependencies and isinstance(item, list):
            _string_list(item, f"{path}/{key}", problems)
        else:
            _meta(item, f"{path}/{key}", problems)


def _string_list(value: object, path: str, problems: list[str]) -> None:
    if not isinstance(value, list):
        problems.append(f"{path} must be array")
        return
    for index, item in enumerate(value):
        if not isinstance(item, str):
            problems.append(f"{path}/{index} must be string")


def _is_count(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0
