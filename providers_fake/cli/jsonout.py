"""
JSON text the way the real CLIs print it.

Claude Code, CodeBuddy and Cursor are JavaScript programs: their lines come
from ``JSON.stringify``, which writes numbers differently from Python's
``json`` module (``0.00007`` rather than ``7e-05``, ``1`` rather than
``1.0``).  Costs in the captures depend on that, so the fakes serialise
through `dumps_js`.  Codex is Rust (serde_json); its lines hold only strings
and integers, where both serialisers agree, so it shares the same writer.

Integers are the one deliberate departure: JavaScript would round those past
2**53, but a script's integers are written exactly, because scenarios use
them to check that adaptors decode big numbers without loss.  A scenario
that wants the rounding the real CLI applies writes the rounded value.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence

_LONE_SURROGATE = re.compile(
    r"[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]"
)


def _encode_string(text: str) -> str:
    """A JSON string as JSON.stringify writes it: a lone surrogate as its escape (ES2019)."""
    encoded = json.encoder.encode_basestring(text)
    return _LONE_SURROGATE.sub(lambda found: f"\\u{ord(found[0]):04x}", encoded)


def js_number(value: float) -> str:
    """Format a number as ECMAScript's Number::toString does."""
    if not math.isfinite(value):
        return "null"  # JSON.stringify turns NaN and the infinities into null
    if value == 0:
        return "0"
    sign = "-" if value < 0 else ""
    mantissa, _, exp_text = repr(abs(float(value))).partition("e")
    whole, _, fraction = mantissa.partition(".")
    digits = (whole + fraction).lstrip("0")
    # `point` counts the digits before the decimal point once leading zeros go.
    point = len(whole) + (int(exp_text) if exp_text else 0)
    point -= len(whole + fraction) - len((whole + fraction).lstrip("0"))
    digits = digits.rstrip("0") or "0"
    count = len(digits)
    if count <= point <= 21:
        return sign + digits + "0" * (point - count)
    if 0 < point <= 21:
        return sign + digits[:point] + "." + digits[point:]
    if -6 < point <= 0:
        return sign + "0." + "0" * -point + digits
    exponent = point - 1
    exp_sign = "+" if exponent >= 0 else "-"
    head = digits[0] if count == 1 else digits[0] + "." + digits[1:]
    return f"{sign}{head}e{exp_sign}{abs(exponent)}"


def loads_js(text: str) -> object:
    """
    A JSON text as ``JSON.parse`` holds it: every number a double, so an integer
    past 2**53 is rounded (``9007199254740993`` reads as ``9007199254740992``),
    and an integral one below 1e21 prints back as an integer.
    """
    return json.loads(text, parse_int=_js_integer, parse_constant=_no_constant)


def _js_integer(text: str) -> int | float:
    """As JSON.stringify prints the double back: 2**63 as 9223372036854776000."""
    number = float(text)
    return int(js_number(number)) if abs(number) < 1e21 else number


def _no_constant(name: str) -> object:
    raise ValueError(f"{name} is not JSON to JSON.parse")


def dumps_js(value: object, indent: int = 0) -> str:
    """
    JSON with JavaScript number formatting, keys in insertion order: compact, or
    as ``JSON.stringify(value, null, indent)`` lays it out (``": "`` after a key,
    an empty object or array kept as ``{}`` or ``[]``).
    """
    parts: list[str] = []
    _write(value, parts, " " * indent, "")
    return "".join(parts)


def _write(value: object, parts: list[str], unit: str = "", level: str = "") -> None:
    """`value` into `parts`, indented by `unit` a level (none: compact) from `level`."""
    if isinstance(value, str):
        parts.append(_encode_string(value))
    elif value is None:
        parts.append("null")
    elif value is True:
        parts.append("true")
    elif value is False:
        parts.append("false")
    elif isinstance(value, int):
        parts.append(str(value))
    elif isinstance(value, float):
        parts.append(js_number(value))
    elif isinstance(value, dict):
        members = [(_encode_string(str(key)), item) for key, item in value.items()]
        _members("{}", members, parts, unit, level)
    elif isinstance(value, (list, tuple)):
        _members("[]", [(None, item) for item in value], parts, unit, level)
    else:
        raise TypeError(f"cannot serialise {type(value).__name__} as JSON")


def _members(
    brackets: str,
    members: Sequence[tuple[str | None, object]],
    parts: list[str],
    unit: str,
    level: str,
) -> None:
    """An object's or an array's members between `brackets`, as `_write` lays them out."""
    parts.append(brackets[0])
    inner = level + unit
    for index, (key, item) in enumerate(members):
        parts.append("," if index else "")
        parts.append("\n" + inner if unit else "")
        if key is not None:
            parts.append(key + (": " if unit else ":"))
        _write(item, parts, unit, inner)
    if unit and members:
        parts.append("\n" + level)
    parts.append(brackets[1])


def dumps_py(value: object) -> str:
    """Compact JSON as Python writes it, for verbatim ``line`` steps."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def line_bytes(text: str) -> bytes:
    """One output line; lone surrogates become JSON escapes instead of crashing."""
    return (text + "\n").encode("utf-8", "backslashreplace")
