"""
Every reader of real or reference output splits lines as the binaries do.

A JSON line ends at "\\n" only and an event-stream line at CR, LF or CRLF
only; ``str.splitlines()`` (and httpx's ``iter_lines``) also end a line at
U+2028, U+2029, U+0085 and more, which a model's answer may hold raw.  Each
reader gets one event whose string holds every such character (and an
escaped NUL and lone surrogate) and must give that string back whole.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from harness import net
from harness.adaptor.drivers import json_lines as driver_lines
from harness.catalogue.lines import json_lines, sse_lines
from harness.record.answers import sse_events
from harness.record.transcript import frame
from harness.seams.model_api.values import parse_lines
from harness.systems import codex
from harness.systems.claude.run import ClaudeRun
from harness.systems.claude.wire import read_answer
from harness.targets.workspace import _records
from providers_fake.api.realcli import session_id
from providers_fake.cli.streamin import first_user_message

#: Each character str.splitlines() ends a line at, and JSON keeps inside a string.
SEPARATORS = ["\u2028", "\u2029", "\x85", "\x1c", "\x1d", "\x1e", "\x0b", "\x0c"]
#: Inside a JSON string these are written escaped: NUL and a lone surrogate.
ESCAPED = ["\x00", "\udfff", "\ud800"]  # low before high: no pair
TEXTS = [f"before{c}after" for c in SEPARATORS + ESCAPED] + ["".join(SEPARATORS + ESCAPED)]
IDS = [f"U+{ord(c):04X}" for c in SEPARATORS + ESCAPED] + ["all"]


def _json(value: Any) -> str:
    """JSON as the CLIs print it: non-ASCII raw, what JSON must escape escaped."""
    text = json.dumps(value, ensure_ascii=False)
    # A lone surrogate cannot be written raw in UTF-8: JSON escapes it.
    return "".join(f"\\u{ord(c):04x}" if 0xD800 <= ord(c) <= 0xDFFF else c for c in text)


def _bytes(text: str) -> bytes:
    return text.encode("utf-8")


@pytest.mark.parametrize("text", TEXTS, ids=IDS)
def test_json_line_readers_keep_the_line_whole(text: str) -> None:
    event = {"type": "result", "result": text, "session_id": "s-1"}
    stdout = _bytes(_json({"type": "system"}) + "\n" + _json(event) + "\n")
    assert json_lines(stdout.decode()) == [_json({"type": "system"}), _json(event)]
    assert parse_lines(stdout) == ({"type": "system"}, event)
    assert ClaudeRun(0, stdout, "").lines == [{"type": "system"}, event]
    assert list(driver_lines(stdout, allow_prose=False)) == [{"type": "system"}, event]
    assert session_id(stdout) == "s-1"
    transcript = frame(stdout.decode())
    assert [r.text for r in transcript.records] == json_lines(stdout.decode())
    if not any(0xD800 <= ord(c) <= 0xDFFF for c in text):  # YAML cannot carry those: kept as text
        assert [r.value for r in transcript.records] == [{"type": "system"}, event]


@pytest.mark.parametrize("text", TEXTS, ids=IDS)
def test_the_fakes_and_the_records_keep_the_line_whole(text: str, tmp_path: Path) -> None:
    user = {"type": "user", "message": {"role": "user", "content": text}}
    assert first_user_message(_json({"type": "control_request"}) + "\n" + _json(user)) == text
    records = tmp_path / "records.jsonl"
    record: dict[str, Any] = {"cli": "codex", "argv": ["exec", text], "env": {}, "stdin": None}
    records.write_bytes(_bytes(_json(record) + "\n"))
    (call,) = _records(records, tmp_path)
    assert text in call.argv


def _sse(events: list[tuple[str, dict[str, Any]]], end: str) -> bytes:
    return _bytes("".join(f"event: {n}{end}data: {_json(d)}{end}{end}" for n, d in events))


def _claude_stream(text: str) -> list[tuple[str, dict[str, Any]]]:
    return [
        ("message_start", {"type": "message_start", "message": {"id": "msg_1"}}),
        ("content_block_start", {"type": "content_block_start", "index": 0,
                                 "content_block": {"type": "text", "text": ""}}),
        ("content_block_delta", {"type": "content_block_delta", "index": 0,
                                 "delta": {"type": "text_delta", "text": text}}),
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        ("message_delta", {"type": "message_delta", "delta": {"stop_reason": "end_turn"}}),
        ("message_stop", {"type": "message_stop"}),
    ]  # fmt: skip


@pytest.mark.parametrize("end", ["\n", "\r\n", "\r"], ids=["LF", "CRLF", "CR"])
@pytest.mark.parametrize("text", TEXTS, ids=IDS)
def test_event_stream_readers_end_lines_at_cr_lf_crlf_only(text: str, end: str) -> None:
    body = _sse(_claude_stream(text), end)
    # Delivered in small pieces, so that a CR and its LF can arrive apart.
    pieces = [body[i : i + 7] for i in range(0, len(body), 7)]
    response = net.Response(200, stream=pieces)
    answer = read_answer(response)
    assert not answer.truncated
    assert answer.last_text == text
    lines = list(sse_lines(p.decode("utf-8", "surrogatepass") for p in [body]))
    assert sum(line.startswith("data:") for line in lines) == 6
    done = {"type": "response.output_item.done", "item": {"type": "message", "text": text}}
    events = list(codex._sse(sse_lines([_sse([("x", done)], end).decode()])))
    assert events == [done]
    recorded = sse_events(_sse(_claude_stream(text), end))
    assert [e.name for e in recorded] == [n for n, _ in _claude_stream(text)]
    if not any(0xD800 <= ord(c) <= 0xDFFF for c in text):  # YAML cannot carry those
        assert [e.data for e in recorded] == [d for _, d in _claude_stream(text)]


def test_a_data_line_that_is_not_json_is_skipped_as_codex_does() -> None:
    done = {"type": "response.completed"}
    lines = sse_lines([f"data: not json\n\ndata: {json.dumps(done)}\n\n"])
    assert list(codex._sse(lines)) == [done]
