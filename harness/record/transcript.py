"""
A CLI's saved stdout, read as the records a fake must print again.

Three framings cover what the four CLIs print: JSON lines (stream-json,
``codex exec --json``, and ``--output-format json`` which is one line),
one JSON array on one line (CodeBuddy's ``--output-format json``: the
history then the result), and anything else (a pretty-printed document,
plain text), which can only be replayed as it is.  Each record keeps its
exact text, so a replay can be held to the bytes, and its parsed value.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.catalogue import jsonvalue, yamlpos
from harness.catalogue.bounded import read_regular
from harness.exceptions import CannotWrite, Unreadable

#: Bounds on a transcript: the size of a scenario file (what it becomes), and lines.
MAX_BYTES = yamlpos.MAX_BYTES
MAX_LINES = 100_000
#: Nesting deeper than this is kept as text: the scenario file holds a value a few
#: levels down and the loader refuses YAML deeper than `yamlpos.MAX_DEPTH`.
MAX_DEPTH = yamlpos.MAX_DEPTH - 36


@dataclass(frozen=True)
class Record:
    """One line (or array element): its text and, when it is JSON, its value."""

    text: str
    value: Any = None
    is_json: bool = False
    #: Whether the line ended with a newline (the last one may not).
    newline: bool = True


@dataclass(frozen=True)
class Transcript:
    """The records of a saved stdout and how they were framed."""

    records: tuple[Record, ...]
    #: ``lines``, ``array`` (one JSON array on one line) or ``text`` (replayed as is).
    framing: str
    raw: str

    @property
    def single_result(self) -> bool:
        """One JSON object of type result: what ``--output-format json`` prints."""
        return (
            self.framing == "lines"
            and len(self.records) == 1
            and isinstance(self.records[0].value, dict)
            and self.records[0].value.get("type") == "result"
        )


def parse(value: str | bytes) -> tuple[Any, bool]:
    """
    JSON text as (value, True), or (None, False) when it is not JSON, nests too
    deep, or holds a lone surrogate (``"\\ud800"``), which YAML cannot carry.
    """
    try:
        parsed = jsonvalue.loads(value)
    except (ValueError, RecursionError):
        return None, False
    return (parsed, True) if depth(parsed) <= MAX_DEPTH and writable(parsed) else (None, False)


def writable(value: Any) -> bool:
    """Whether every string in `value` can be written as UTF-8 (so as YAML)."""
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def depth(value: Any) -> int:
    """How deeply `value` nests arrays and objects (counted without recursing)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict):
            item = list(item.values())
        if isinstance(item, list):
            deepest = max(deepest, level)
            stack.extend((child, level + 1) for child in item)
    return deepest


def read(path: Path) -> Transcript:
    try:
        data = read_regular(path, MAX_BYTES)
    except Unreadable as error:
        raise CannotWrite(str(path), "", str(error)) from None
    except OSError as error:
        raise CannotWrite(str(path), "", f"cannot read: {error.strerror or error}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        # A scenario is YAML, which has no way to say a byte that is not UTF-8.
        line = data.count(b"\n", 0, error.start) + 1
        column = error.start - (data.rfind(b"\n", 0, error.start) + 1) + 1
        raise CannotWrite(
            f"{path}:{line}:{column}", "", "not UTF-8, so no scenario can print it again"
        ) from None
    return frame(text, str(path))


def frame(text: str, name: str = "<transcript>") -> Transcript:
    lines = text.split("\n")
    if len(lines) > MAX_LINES:
        raise CannotWrite(name, "", f"more than {MAX_LINES} lines")
    last_newline = lines[-1] == ""
    if last_newline:
        lines.pop()
    whole, ok = parse(text)
    # One array of records, on one line or indented (CodeBuddy's --output-format json).
    array = ok and isinstance(whole, list) and all(isinstance(v, dict) for v in whole)
    if last_newline and text.startswith("[") and array:
        elements = tuple(Record(json.dumps(v), v, True) for v in whole)
        return Transcript(elements, "array", text)
    if ok and "\n" in text.rstrip("\n"):
        # One document over several lines: no CLI event prints that, keep it whole.
        return Transcript((Record(text, whole, True, False),), "text", text)
    records: list[Record] = []
    for number, line in enumerate(lines):
        value, is_json = parse(line) if line.strip() else (None, False)
        newline = number < len(lines) - 1 or last_newline
        records.append(Record(line, value, is_json, newline))
    return Transcript(tuple(records), "lines", text)
