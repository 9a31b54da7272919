"""The Claude model's summary requests after a 413 (B-48) and how the differential shows them."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest

from harness.systems.claude import compaction

CONVERSATION: list[dict[str, Any]] = [
    {"role": "user", "content": [{"type": "text", "text": "Diagnose the build failure."}]},
    {"role": "assistant", "content": [{"type": "text", "text": "Looking."}]},
    {"role": "user", "content": [{"type": "text", "text": "[enforce] call it"}]},
    {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "S", "input": {}}]},
    {
        "role": "user",
        "content": [
            {"type": "tool_result", "tool_use_id": "t", "content": "no", "cache_control": {}}
        ],
    },
]


def test_a_summary_request_keeps_the_conversation_before_the_last_answer() -> None:
    messages = compaction.summary_messages(CONVERSATION, caching=True)
    assert messages is not None
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]
    assert messages[-1]["content"] == [
        {"type": "text", "text": "[enforce] call it\n"},
        {"type": "text", "text": compaction.INSTRUCTIONS},
    ]
    assert messages[1]["content"][-1]["cache_control"] == {"type": "ephemeral"}
    assert CONVERSATION[2]["content"][0]["text"] == "[enforce] call it"  # not changed in place


def test_without_prompt_caching_no_message_carries_the_mark() -> None:
    messages = compaction.summary_messages(CONVERSATION, caching=False)
    assert messages is not None
    assert "cache_control" not in str(messages)


def test_a_conversation_with_one_answer_has_nothing_to_summarise() -> None:
    assert compaction.summary_messages(CONVERSATION[:3], caching=True) is None


def test_known_instructions_are_shown_by_a_placeholder(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    made_up = "Summarise this conversation. " * 50
    digest = hashlib.sha256(made_up.encode()).hexdigest()
    monkeypatch.setitem(compaction.KNOWN, digest, len(made_up))
    changed = made_up.replace("this", "that")
    shown = compaction.masked([{"content": [{"text": made_up}, {"text": changed}]}, "short"])
    assert shown == [{"content": [{"text": compaction.INSTRUCTIONS}, {"text": changed}]}, "short"]
