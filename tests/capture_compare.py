"""
Field-for-field comparison of a fake's stdout with a real CLI capture.

"Faithful" means: the same lines, the same keys in the same order at every
depth, and the same values, except where a value cannot be reproduced
(ids, clocks, durations, machine paths).  Those volatile fields must still be
present, in place, and of the same JSON type, so a fake cannot pass by
dropping a key or printing a number where the CLI prints a string.
"""

from __future__ import annotations

import json

from harness.catalogue import jsonvalue

VOLATILE = frozenset(
    {
        "uuid",
        "session_id",
        "thread_id",
        "timestamp",
        "duration_ms",
        "duration_api_ms",
        "ttft_ms",
        "ttft_stream_ms",
        "time_to_request_ms",
        "first_content_frame_ms",
        "cwd",
        "memory_paths",
        "original_cwd",
        "messaging_socket_path",
        "__timestamp",
        "_requestId",
    }
)
# Placeholders the capture tool wrote over machine-specific paths.
PLACEHOLDERS = ("<probe>", "<home>", "<cwd>", "<socket>")


def compare_to_capture(actual_stdout: bytes, capture_stdout: bytes) -> list[str]:
    """Human-readable differences; an empty list means the output is faithful."""
    actual_lines = actual_stdout.splitlines()
    capture_lines = capture_stdout.splitlines()
    problems: list[str] = []
    if actual_stdout.endswith(b"\n") != capture_stdout.endswith(b"\n") and capture_stdout:
        problems.append("the final newline differs")
    if len(actual_lines) != len(capture_lines):
        problems.append(f"{len(actual_lines)} lines, the capture has {len(capture_lines)}")
    for number, (mine, theirs) in enumerate(zip(actual_lines, capture_lines, strict=False), 1):
        problems.extend(f"line {number}: {problem}" for problem in _compare_line(mine, theirs))
    return problems


def _compare_line(mine: bytes, theirs: bytes) -> list[str]:
    try:
        expected = json.loads(theirs)
    except ValueError:
        return [] if mine == theirs else [f"text {mine!r} != {theirs!r}"]
    try:
        actual = json.loads(mine)
    except ValueError as error:
        return [f"not JSON ({error}): {mine[:120]!r}"]
    problems: list[str] = []
    if isinstance(expected, dict) and isinstance(actual, dict):
        for key in ("type", "subtype"):
            if actual.get(key) != expected.get(key):
                problems.append(f"{key} {actual.get(key)!r} != {expected.get(key)!r}")
        if problems:
            return problems  # a different kind of line: field noise would hide that
    _compare(actual, expected, "$", problems)
    return problems


def _compare(actual: object, expected: object, path: str, problems: list[str]) -> None:
    if isinstance(expected, dict):
        if not isinstance(actual, dict):
            problems.append(f"{path}: {jsonvalue.kind(actual)} != object")
            return
        if list(actual) != list(expected):
            problems.append(f"{path}: keys {list(actual)} != {list(expected)}")
        synthetic = expected.get("model") == "<synthetic>"
        for key in expected:
            if key not in actual:
                continue
            child = f"{path}.{key}"
            if key in VOLATILE or (synthetic and key == "id"):
                _compare_volatile(actual[key], expected[key], child, problems)
            else:
                _compare(actual[key], expected[key], child, problems)
    elif isinstance(expected, list):
        if not isinstance(actual, list):
            problems.append(f"{path}: {jsonvalue.kind(actual)} != array")
            return
        if len(actual) != len(expected):
            problems.append(f"{path}: {len(actual)} items != {len(expected)}")
        for index, (mine, theirs) in enumerate(zip(actual, expected, strict=False)):
            _compare(mine, theirs, f"{path}[{index}]", problems)
    elif isinstance(expected, str) and any(mark in expected for mark in PLACEHOLDERS):
        _compare_volatile(actual, expected, path, problems)
    elif jsonvalue.kind(actual) != jsonvalue.kind(expected) or actual != expected:
        problems.append(f"{path}: {actual!r} != {expected!r}")


def _compare_volatile(actual: object, expected: object, path: str, problems: list[str]) -> None:
    """Any value will do, as long as it has the capture's shape."""
    if isinstance(expected, dict) and isinstance(actual, dict):
        if list(actual) != list(expected):
            problems.append(f"{path}: keys {list(actual)} != {list(expected)}")
        return
    if jsonvalue.kind(actual) != jsonvalue.kind(expected):
        problems.append(
            f"{path}: {jsonvalue.kind(actual)} != {jsonvalue.kind(expected)} (volatile field)"
        )


#: The schema each capture was taken with, where it was not the diagnosis schema.
CAPTURE_SCHEMAS = {
    "claude-schema-not-json": "not json",
    "claude-schema-array": '[{"type":"object"}]',
    "claude-schema-invalid": '{"type":"foo"}',
    "claude-schema-top-array": '{"type":"array","items":{"type":"integer"}}',
    "claude-schema-format-email": json.dumps(
        {
            "type": "object",
            "properties": {"email": {"type": "string", "format": "email"}},
            "required": ["email"],
        }
    ),
}
