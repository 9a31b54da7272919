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
PLACEHOLDERS = ("<probe>", "<home>", "<cwd>", "<socket>", "<work>")


def compare_to_capture(
    actual_stdout: bytes, capture_stdout: bytes, volatile: frozenset[str] = VOLATILE
) -> list[str]:
    """Human-readable differences; an empty list means the output is faithful."""
    actual_lines = actual_stdout.splitlines()
    capture_lines = capture_stdout.splitlines()
    problems: list[str] = []
    if actual_stdout.endswith(b"\n") != capture_stdout.endswith(b"\n") and capture_stdout:
        problems.append("the final newline differs")
    if len(actual_lines) != len(capture_lines):
        problems.append(f"{len(actual_lines)} lines, the capture has {len(capture_lines)}")
    for number, (mine, theirs) in enumerate(zip(actual_lines, capture_lines, strict=False), 1):
        problems.extend(
            f"line {number}: {problem}" for problem in _compare_line(mine, theirs, volatile)
        )
    return problems


def _compare_line(mine: bytes, theirs: bytes, volatile: frozenset[str]) -> list[str]:
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
    _compare(actual, expected, "$", problems, volatile)
    return problems


def _compare(
    actual: object,
    expected: object,
    path: str,
    problems: list[str],
    volatile: frozenset[str] = VOLATILE,
) -> None:
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
            if key in volatile or (synthetic and key == "id"):
                _compare_volatile(actual[key], expected[key], child, problems)
            else:
                _compare(actual[key], expected[key], child, problems, volatile)
    elif isinstance(expected, list):
        if not isinstance(actual, list):
            problems.append(f"{path}: {jsonvalue.kind(actual)} != array")
            return
        if len(actual) != len(expected):
            problems.append(f"{path}: {len(actual)} items != {len(expected)}")
        for index, (mine, theirs) in enumerate(zip(actual, expected, strict=False)):
            _compare(mine, theirs, f"{path}[{index}]", problems, volatile)
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


#: CodeBuddy's ids besides the common ones: upstream completion and call ids, the
#: gateway's message, trace and request ids, and the links between history items.
CODEBUDDY_VOLATILE = VOLATILE | {
    "id",
    "messageId",
    "traceId",
    "conversationRequestId",
    "callId",
    "tool_use_id",
    "parentId",
    "sessionId",
    "parent_tool_use_id",
}
#: What stands for the vendor's system reminders in a CodeBuddy prompt item.
REMINDER = "<vendor system reminder>"


def compare_codebuddy(actual_stdout: bytes, capture_stdout: bytes) -> list[str]:
    """
    `compare_to_capture` for CodeBuddy Code: its ids are volatile
    (`CODEBUDDY_VOLATILE`); ``_requestId``, which the real CLI puts on some
    records of a run and not others, must be the last key where present and
    is otherwise ignored; the system reminders in the prompt item of the json
    array are vendor prose neither side has to reproduce.
    """
    if capture_stdout.lstrip().startswith(b"["):
        problems = []
        mine_lines, their_lines = actual_stdout.count(b"\n"), capture_stdout.count(b"\n")
        if mine_lines != their_lines:
            problems.append(f"{mine_lines} lines, the capture has {their_lines}")
        try:
            actual = _without_reminders(json.loads(actual_stdout))
        except ValueError as error:
            return [*problems, f"not one JSON document: {error}"]
        expected = _without_reminders(json.loads(capture_stdout))
        _compare(actual, expected, "$", problems, CODEBUDDY_VOLATILE)
        return problems
    mine, problems = _request_ids_last(actual_stdout)
    theirs, _ = _request_ids_last(capture_stdout)
    return problems + compare_to_capture(mine, theirs, CODEBUDDY_VOLATILE)


def _request_ids_last(stdout: bytes) -> tuple[bytes, list[str]]:
    lines, problems = [], []
    for number, line in enumerate(stdout.splitlines(keepends=True), 1):
        try:
            record = json.loads(line)
        except ValueError:
            lines.append(line)
            continue
        if isinstance(record, dict) and "_requestId" in record:
            if list(record)[-1] != "_requestId":
                problems.append(f"line {number}: _requestId is not the last key")
            del record["_requestId"]
            lines.append(json.dumps(record, ensure_ascii=False).encode() + b"\n")
            continue
        lines.append(line)
    return b"".join(lines), problems


def _without_reminders(document: object) -> object:
    if isinstance(document, list) and document and isinstance(document[0], dict):
        content = document[0].get("content")
        if isinstance(content, list):
            for part in content[:-1]:
                if isinstance(part, dict) and "text" in part:
                    part["text"] = REMINDER
    return document
