"""
Contract profiles of the agent-cli seam: what differs between releases of the SDK, as data.

Seed 001 is the contract; where it is silent the catalogue follows the SDK that
implements it (docs/seed-001.md).  The SDK's releases do not all read a run
the same way: the seed-era parsers join every assistant message into the
text, the v1 parsers keep the last one (Codex) or the terminal ``result``
(Claude Code); the v1 Cursor parser ends a run only on ``result/success``
and reads only the documented record shapes, where the seed-era one also
read older ones.
An adaptor built against one release is right by that release, so each
release is a named profile here, as each CLI release is a row of a version
profile (`harness.systems.profiles`): the reference runs as any of them
(``--target reference:contract=b07349b7``), and a scenario whose verdict
differs by contract says so under ``by_contract`` as ``by_version`` does for
CLI releases.

A profile names its rules; the drivers of `harness.adaptor` keep one entry per
rule name (the code), so a rule is decided where the driver reads the run and
nothing compares profile names.  Record shapes are data the driver reads
(`RecordShapes`: which keys name a kind, which kinds carry text or end a
run).  The profile sits in the catalogue, the lowest layer, because the
scenario checks need its names.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

#: How the Codex text is made of the completed agent messages.
CodexText = Literal["joined", "last"]
#: What the text of a run on Claude Code's wire (Claude Code, CodeBuddy) is.
ResultText = Literal["result", "assistant"]
#: What Cursor's text is.
CursorText = Literal["fragments", "messages"]
#: Which Cursor ``result`` records end a run.
CursorTerminal = Literal["success", "any"]


@dataclass(frozen=True)
class RecordShapes:
    """
    The record shapes a parser of Claude Code's wire reads, as data: where a
    record's kind stands, which kinds carry assistant text or end a run, and
    what a successful terminal must hold.  The v1 parsers read one documented
    shape; the seed-era Cursor parser read older shapes and aliases beside it.
    """

    #: The keys that may name a record's kind; the first that holds a non-empty string wins.
    kind_keys: tuple[str, ...]
    #: Whether a record that names no kind is malformed (else an unknown record, read past).
    kindless_malformed: bool
    #: The kinds of assistant message records.
    assistant: frozenset[str]
    #: The kinds of assistant fragment records: their ``delta``, ``text`` or ``message``
    #: strings, verbatim, run together into one message until the next message or terminal.
    delta: frozenset[str]
    #: Whether an assistant record's text may stand at its top level (a ``content``
    #: list of blocks, else a ``text`` or ``message`` string) as well as in
    #: ``message.content``; with it, an assistant record holding none has no text,
    #: without it, that record is malformed.
    top_level_text: bool
    #: The kinds of result records (terminals that may succeed).
    results: frozenset[str]
    #: The kinds of failure records (terminals that never succeed).
    failures: frozenset[str]
    #: The ``subtype`` a successful result carries; None: the subtype is not read,
    #: a result succeeds unless ``is_error`` is true.
    success_subtype: str | None
    #: What a successful result must carry: ``is_error`` (a boolean), ``result`` (a
    #: string), ``session_id`` (a non-empty string).
    required: tuple[str, ...]


#: The documented shapes, as the v1 parsers read them (``claude/parser.go``,
#: ``cursor/parser.go`` @ b07349b77fc4ca9043031b0dfaf6266328425f60).
DOCUMENTED = RecordShapes(
    kind_keys=("type",),
    kindless_malformed=True,
    assistant=frozenset({"assistant"}),
    delta=frozenset(),
    top_level_text=False,
    results=frozenset({"result"}),
    failures=frozenset({"error"}),
    success_subtype="success",
    required=("is_error", "result", "session_id"),
)
#: The seed-era Cursor parser's shapes (``cursor/parser.go`` @
#: e7709de6f4e2458f2011171c877e8ce3bf8897d1 ``handlePayload``, ``handleAssistant``,
#: ``handleAssistantDelta``, ``handleResult``).
SEED_ERA_CURSOR = RecordShapes(
    kind_keys=("type", "event", "kind"),
    kindless_malformed=False,
    assistant=frozenset({"assistant", "assistant_message", "assistant.message", "message"}),
    delta=frozenset({"assistant.delta", "delta"}),
    top_level_text=True,
    results=frozenset({"result", "run.completed", "completion"}),
    failures=frozenset({"error", "run.failed"}),
    success_subtype=None,
    required=(),
)


@dataclass(frozen=True)
class Contract:
    """One reading of seed 001: the catalogue's own, or one SDK release's."""

    name: str
    #: The SDK commit it follows (full hash), or the seed for the catalogue's own reading.
    release: str
    #: One line for reports and ``harness docs``.
    summary: str
    #: ``joined``: each completed agent_message trimmed, blank ones dropped, a blank
    #: line between them; ``last``: the last completed agent_message as printed.
    codex_text: CodexText
    #: ``result``: the terminal's ``result`` string; ``assistant``: the assistant
    #: text blocks, each trimmed, blank ones dropped, a blank line between them.
    result_text: ResultText
    #: ``fragments``: the assistant text blocks concatenated, else a successful
    #: terminal's ``result``; ``messages``: the blocks trimmed and joined by a blank line.
    cursor_text: CursorText
    #: ``success``: only ``result/success`` ends a run, a ``result`` of another subtype
    #: or an ``error`` record is an unknown record; ``any``: every ``result`` or
    #: ``error`` record ends it.
    cursor_terminal: CursorTerminal
    #: The record shapes the Cursor driver reads.
    cursor_shapes: RecordShapes


#: The profiles by name; `CURRENT` is the default reference's.
CONTRACTS: dict[str, Contract] = {
    c.name: c
    for c in (
        Contract(
            name="seed-001",
            release="seed 001",
            summary="the catalogue's reading of seed 001 (the default): the seed where it "
            "speaks, the v1 SDK where it is silent",
            codex_text="joined",
            result_text="result",
            cursor_text="fragments",
            cursor_terminal="success",
            cursor_shapes=DOCUMENTED,
        ),
        Contract(
            name="b07349b7",
            release="b07349b77fc4ca9043031b0dfaf6266328425f60",
            summary="the SDK's v1 drivers and parsers: Codex keeps the last message",
            codex_text="last",
            result_text="result",
            cursor_text="fragments",
            cursor_terminal="success",
            cursor_shapes=DOCUMENTED,
        ),
        Contract(
            name="e7709de6",
            release="e7709de6f4e2458f2011171c877e8ce3bf8897d1",
            summary="the seed-era SDK: every text is its assistant messages joined, "
            "any Cursor result ends the run, and Cursor's older record shapes are read",
            codex_text="joined",
            result_text="assistant",
            cursor_text="messages",
            cursor_terminal="any",
            cursor_shapes=SEED_ERA_CURSOR,
        ),
    )
}
CURRENT = CONTRACTS["seed-001"]


def get(name: str) -> Contract:
    """The profile called ``name``; KeyError naming the known ones if none."""
    try:
        return CONTRACTS[name]
    except KeyError:
        raise KeyError(f"unknown contract {name!r}; known: {', '.join(CONTRACTS)}") from None
