"""
Exact JSON handling shared by the loader, the pipeline and the reports.

Adaptors are judged on whether a value survives byte-for-byte, so parsing here
is strict: exactly one JSON value, no ``NaN`` or ``Infinity``, integers kept
as arbitrary-precision ``int`` (9007199254740993 must not become a float).
"""

from __future__ import annotations

import json
import math
import re
from typing import Any, Final

#: Any value that can appear in a JSON document.
JSON = Any


class JSONError(ValueError):
    """A document is not exactly one JSON value."""


def _reject_constant(name: str) -> Any:
    raise JSONError(f"{name} is not valid JSON")


def _finite_float(text: str) -> float:
    number = float(text)
    if not math.isfinite(number):  # 1e999 is valid JSON text but no JSON number survives it
        raise JSONError(f"{text} is out of range for a JSON number")
    return number


_DECODER: Final = json.JSONDecoder(parse_constant=_reject_constant, parse_float=_finite_float)

#: The deepest JSON read from outside (a target, a transcript, a cache, a
#: stream): checked on the text before it is parsed, so that neither the
#: parser nor anything that walks the value later recurses without bound.
MAX_DEPTH = 128
_STRINGS = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_NOT_BRACKETS = re.compile(r"[^\[\]{}]+")
_BYTE_STRINGS = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_BYTE_NOT_BRACKETS = re.compile(rb"[^\[\]{}]+")


_PARENTHESES: Final = str.maketrans("[{]}", "(())")


def deeper_than(text: str | bytes, limit: int = MAX_DEPTH) -> bool:
    """
    Whether the arrays and objects of JSON ``text`` nest deeper than
    ``limit``, read off the text without parsing it: brackets inside strings
    do not count, and each round drops the innermost pairs (so a flat
    document costs a few passes in C, a deep one at most ``limit + 1``).
    Text that is not JSON may count as deeper than it is; it fails anyway.
    """
    if isinstance(text, bytes):
        if text.count(b"[") + text.count(b"{") <= limit:
            return False  # too few brackets to nest that deep
        found = _BYTE_NOT_BRACKETS.sub(b"", _BYTE_STRINGS.sub(b"", text)).decode("ascii")
    else:
        if text.count("[") + text.count("{") <= limit:
            return False
        found = _NOT_BRACKETS.sub("", _STRINGS.sub("", text))
    brackets = found.translate(_PARENTHESES)
    for _ in range(limit):
        if not brackets:
            return False
        inner = brackets.replace("()", "")
        if inner == brackets:
            return True  # unbalanced: not JSON, and the parser will say so
        brackets = inner
    return bool(brackets)


def loads(text: str | bytes, **options: Any) -> JSON:
    """
    ``json.loads`` for text from outside: `JSONError` (a `ValueError`) for
    what nests deeper than `MAX_DEPTH`, as for anything else it cannot read.
    """
    if deeper_than(text):
        raise JSONError(f"nested deeper than {MAX_DEPTH} levels")
    try:
        return json.loads(text, **options)
    except RecursionError:
        raise JSONError(f"nested deeper than {MAX_DEPTH} levels") from None


def non_finite(value: JSON, path: str = "") -> str | None:
    """
    The JSON pointer of the first NaN or infinity in ``value``, else None.

    Python values from targets (an adaptor called in process, a JSON parser
    that took ``NaN``) can hold numbers no JSON document can, and a report
    that printed one would not be JSON any more.
    """
    if isinstance(value, float) and not math.isfinite(value):
        return path or "/"
    if isinstance(value, dict):
        items: list[tuple[str, Any]] = [(str(k), v) for k, v in value.items()]
    elif isinstance(value, list):
        items = [(str(i), v) for i, v in enumerate(value)]
    else:
        return None
    for key, item in items:
        found = non_finite(item, f"{path}/{key.replace('~', '~0').replace('/', '~1')}")
        if found is not None:
            return found
    return None


def parse_exact(text: str) -> JSON:
    """
    Parse ``text`` as exactly one JSON value, surrounding whitespace allowed.

    Raises `JSONError` naming what is wrong: empty, malformed or trailing data.
    """
    stripped = text.strip(" \t\r\n")
    if not stripped:
        raise JSONError("empty document")
    if deeper_than(stripped):
        raise JSONError(f"nested deeper than {MAX_DEPTH} levels")
    try:
        value, end = _DECODER.raw_decode(stripped)
    except json.JSONDecodeError as error:
        raise JSONError(f"malformed JSON: {error.msg} at offset {error.pos}") from None
    except RecursionError:
        raise JSONError(f"nested deeper than {MAX_DEPTH} levels") from None
    if end != len(stripped):
        raise JSONError(f"trailing data after the JSON value at offset {end}")
    return value


def dumps(value: JSON) -> str:
    """Compact JSON that keeps key order and non-ASCII text as it is."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def canonical(value: JSON) -> str:
    """Key-sorted, indented JSON for reports and diffs: stable across runs."""
    return json.dumps(value, ensure_ascii=False, sort_keys=True, indent=2)


def kind(value: object) -> str:
    """
    The JSON type of a parsed value, in JavaScript's words (``null``,
    ``boolean``, ``number``, ``string``, ``array``, ``object``): what a
    binary written in JavaScript reports, and what two values must share to
    be the same kind of JSON.
    """
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"
