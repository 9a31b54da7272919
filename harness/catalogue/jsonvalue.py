"""
Exact JSON handling shared by the loader, the pipeline and the reports.

Adaptors are judged on whether a value survives byte-for-byte, so parsing here
is strict: exactly one JSON value, no ``NaN`` or ``Infinity``, integers kept
as arbitrary-precision ``int`` (9007199254740993 must not become a float).
"""

from __future__ import annotations

import json
from typing import Any, Final

#: Any value that can appear in a JSON document.
JSON = Any


class JSONError(ValueError):
    """A document is not exactly one JSON value."""


def _reject_constant(name: str) -> Any:
    raise JSONError(f"{name} is not valid JSON")


_DECODER: Final = json.JSONDecoder(parse_constant=_reject_constant)


def parse_exact(text: str) -> JSON:
    """
    Parse ``text`` as exactly one JSON value, surrounding whitespace allowed.

    Raises `JSONError` naming what is wrong: empty, malformed or trailing data.
    """
    stripped = text.strip(" \t\r\n")
    if not stripped:
        raise JSONError("empty document")
    try:
        value, end = _DECODER.raw_decode(stripped)
    except json.JSONDecodeError as error:
        raise JSONError(f"malformed JSON: {error.msg} at offset {error.pos}") from None
    if end != len(stripped):
        raise JSONError(f"trailing data after the JSON value at offset {end}")
    return value


def dumps(value: JSON) -> str:
    """Compact JSON that keeps key order and non-ASCII text as it is."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def canonical(value: JSON) -> str:
    """Key-sorted, indented JSON for reports and diffs: stable across runs."""
    return json.dumps(value, ensure_ascii=False, sort_keys=True, indent=2)
