"""
Claude Code's try at compacting a conversation that outgrew a request (B-48).

After a 413 later in a session the CLI asks the model to summarise the
conversation before it goes on: the conversation up to its last answer, the
CLI's compaction instructions appended to the user message that ends it.
Those instructions are several thousand characters of the CLI's own prose;
the project does not copy them, it knows them by length and digest (a fact
of each release, read from the binary's requests to the fake API).  The
reference model sends `INSTRUCTIONS` in their place, and the differential
shows a real request's instructions the same way when their digest is
known (`masked`), so a release that changes them still shows as different.

Only the path on which the summary requests fail as the first did is
modelled: a 413 each, sent twice, then ``compact_error: media_unstrippable``
and the 413's ending.  A summary the model gives (the compacted conversation
that goes on after a ``system/compact_boundary``) is not.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

#: The instructions' digests (sha256 of their UTF-8 text) and lengths, per the
#: releases that send them (probed on 2.1.328).
KNOWN: dict[str, int] = {
    "63e2bfb4ded280d5057a66d8a034ef352a73960d97d955b990e78f04f0db1fb0": 6361,
}
#: What stands for them in the reference's requests and in the differential.
INSTRUCTIONS = "<Claude Code's compaction instructions>"
#: How many times a summary request is sent when it gets a 413 too.
SUMMARY_REQUESTS = 2
#: The status line's error once the summary requests failed so.
UNSTRIPPABLE = "media_unstrippable"


def summary_messages(messages: list[dict[str, Any]], caching: bool) -> list[dict[str, Any]] | None:
    """
    The messages of a summary request, from those of the request that got the
    413: everything before its last answer, the instructions as a text block
    of the user message that then ends it (a line break at the seam after a
    text), the cache mark on the message before that one.  None when there is
    no earlier answer to keep apart.
    """
    answers = [i for i, m in enumerate(messages) if m["role"] == "assistant"]
    if len(answers) < 2:
        return None
    kept: list[dict[str, Any]] = json.loads(json.dumps(messages[: answers[-1]]))
    for message in kept:
        if isinstance(message["content"], list):
            for block in message["content"]:
                block.pop("cache_control", None)
    last = kept[-1]
    if last["role"] != "user":
        return None
    blocks = (
        [{"type": "text", "text": last["content"]}]
        if isinstance(last["content"], str)
        else last["content"]
    )
    if blocks and blocks[-1].get("type") == "text":
        blocks[-1]["text"] += "\n"
    last["content"] = [*blocks, {"type": "text", "text": INSTRUCTIONS}]
    before = kept[-2]
    if caching:
        if isinstance(before["content"], str):
            before["content"] = [{"type": "text", "text": before["content"]}]
        before["content"][-1]["cache_control"] = {"type": "ephemeral"}
    return kept


def masked(value: object) -> object:
    """``value`` with each text that is a known release's instructions shown as `INSTRUCTIONS`."""
    if isinstance(value, str):
        known = KNOWN.get(hashlib.sha256(value.encode()).hexdigest()) if len(value) > 1000 else None
        return INSTRUCTIONS if known == len(value) else value
    if isinstance(value, list):
        return [masked(v) for v in value]
    if isinstance(value, dict):
        return {k: masked(v) for k, v in value.items()}
    return value
