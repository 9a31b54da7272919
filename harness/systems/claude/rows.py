"""
Rows of the Claude Code profile about the session around the loop: the tools'
words, the notes to the model, and the models a release names and knows.

Kept apart from `harness.systems.claude.profile` (which builds the table from
these and its own rows) to keep each module short; every row cites the note of
docs/versions.md that found it (B-25 onwards), each bisected on the installed
releases (2.1.235 to 2.1.332) with the catalogue's scenarios or single probes.
"""

from __future__ import annotations

from harness.systems.profiles import Entry, entry
from providers_fake.cli.claude import data

_B = "docs/versions.md"

#: The aliases of ANTHROPIC_MODEL per range of releases (B-29, probed on each release
#: named): each range changes the previous one's table where it says.
_ALIASES_235 = (
    ("opus", "claude-opus-5"),
    ("best", "claude-opus-5"),
    ("sonnet", "claude-sonnet-5"),
    ("opusplan", "claude-sonnet-5"),
    ("haiku", "claude-haiku-4-5-20251001"),
    ("fable", "claude-fable-5"),
)


def _changed(table: tuple[tuple[str, str], ...], **moved: str) -> tuple[tuple[str, str], ...]:
    return tuple((alias, moved.get(alias, model)) for alias, model in table)


_ALIASES_259 = _changed(_ALIASES_235, fable="claude-fable-5-1")
_ALIASES_277 = _changed(_ALIASES_259, best="claude-fable-5-1")
_ALIASES_280 = _changed(_ALIASES_277, opus="claude-opus-5-5")
_ALIASES_284 = _changed(_ALIASES_280, sonnet="claude-sonnet-5-5", opusplan="claude-sonnet-5-5")
_ALIASES_300 = _changed(_ALIASES_284, haiku="claude-haiku-5-5")
#: From 2.1.325 the pinned table (best: claude-opus-5-5, fable: claude-fable-5-2).
_ALIASES_325 = tuple(data.MODEL_ALIASES.items())

#: The pinned release's known model ids that older ones do not know yet (B-29, static:
#: the id's string is absent from the binary; probed where a scenario reaches it).
_UNKNOWN_235 = (
    "claude-fable-5-1", "claude-fable-5-2", "claude-haiku-5-5", "claude-mythos-5-1",
    "claude-mythos-5-2", "claude-opus-5-5", "claude-sonnet-5-5",
)  # fmt: skip
_UNKNOWN_259 = ("claude-fable-5-2", "claude-haiku-5-5", "claude-mythos-5-2", "claude-opus-5-5",
                "claude-sonnet-5-5")  # fmt: skip
_UNKNOWN_280 = ("claude-fable-5-2", "claude-haiku-5-5", "claude-mythos-5-2", "claude-sonnet-5-5")
_UNKNOWN_284 = ("claude-fable-5-2", "claude-haiku-5-5", "claude-mythos-5-2")
_UNKNOWN_300 = ("claude-fable-5-2", "claude-mythos-5-2")

#: The CLI's estimate of the tokens it attaches to a session's first exchange (B-39),
#: from each release probed on until the next: (range, tokens, releases probed).  The
#: figure moves with what a release attaches; between probed releases it is a guess.
_ATTACHED_PROBED = (
    ("<2.1.246", 1511, "2.1.235, 2.1.240"),
    (">=2.1.246,<2.1.258", 1625, "2.1.246"),
    (">=2.1.258,<2.1.270", 1795, "2.1.258"),
    (">=2.1.270,<2.1.276", 2070, "2.1.270"),
    (">=2.1.276,<2.1.280", 2082, "2.1.276, 2.1.278"),
    (">=2.1.280,<2.1.300", 2117, "2.1.280, 2.1.281, 2.1.282"),
    (">=2.1.300,<2.1.315", 2459, "2.1.300"),
    (">=2.1.315,<2.1.325", 2457, "2.1.315"),
    (">=2.1.325,<2.1.328", 2482, "2.1.325"),
    (">=2.1.328", 2501, "2.1.328, 2.1.332"),
)
_ATTACHED = tuple(
    entry("attached_tokens", versions, tokens, f"B-39 ({_B}): probed on {probed}")
    for versions, tokens, probed in _ATTACHED_PROBED
)

ROWS: tuple[Entry, ...] = (
    entry(
        "quiet_notice",
        "<2.1.280",
        False,
        f"B-25 ({_B}): no note that the user has not heard from the model, up to 2.1.278",
    ),
    entry(
        "quiet_notice",
        ">=2.1.280",
        True,
        f"B-25 ({_B}): after five quiet answers the model is told so, from 2.1.280",
    ),
    entry(
        "cwd_notes",
        "<2.1.268",
        False,
        f"B-26 ({_B}): a cd inside the project carries over unannounced up to 2.1.267",
    ),
    entry(
        "cwd_notes",
        ">=2.1.268",
        True,
        f"B-26 ({_B}): 2.1.268 tells the model '# Environment update' after such a cd",
    ),
    entry(
        "asks_approval",
        "<2.1.281",
        False,
        f"B-27 ({_B}): a write or redirection 'was blocked. For security, ...', up to 2.1.280",
    ),
    entry(
        "asks_approval",
        ">=2.1.281",
        True,
        f"B-27 ({_B}): 2.1.281 says it 'needs approval', inside or outside the project",
    ),
    entry(
        "case_hint",
        "<2.1.282",
        False,
        f"B-28 ({_B}): a misspelt tool's case gets no hint up to 2.1.281",
    ),
    entry(
        "case_hint",
        ">=2.1.282",
        True,
        f"B-28 ({_B}): 2.1.282 adds 'Tool names are case-sensitive: call X instead.'",
    ),
    entry(
        "missing_as_unknown",
        "<2.1.260",
        False,
        f"B-32 ({_B}): 'The required parameter `X` is missing' up to 2.1.259",
    ),
    entry(
        "missing_as_unknown",
        ">=2.1.260,<2.1.285",
        True,
        f"B-32 ({_B}): 'The parameter `X` type is expected as `T` but provided as `unknown`', "
        "2.1.260-2.1.284",
    ),
    entry(
        "missing_as_unknown",
        ">=2.1.285",
        False,
        f"B-32 ({_B}): 'is missing' again from 2.1.285",
    ),
    entry(
        "model_aliases",
        "<2.1.259",
        _ALIASES_235,
        f"B-29 ({_B}): the aliases of 2.1.235 and 2.1.250",
    ),
    entry(
        "model_aliases",
        ">=2.1.259,<2.1.277",
        _ALIASES_259,
        f"B-29 ({_B}): fable is claude-fable-5-1 (2.1.259-2.1.275)",
    ),
    entry(
        "model_aliases",
        ">=2.1.277,<2.1.280",
        _ALIASES_277,
        f"B-29 ({_B}): best is claude-fable-5-1 (2.1.277, 2.1.278)",
    ),
    entry(
        "model_aliases",
        ">=2.1.280,<2.1.284",
        _ALIASES_280,
        f"B-29 ({_B}): opus is claude-opus-5-5 (2.1.280-2.1.283)",
    ),
    entry(
        "model_aliases",
        ">=2.1.284,<2.1.300",
        _ALIASES_284,
        f"B-29 ({_B}): sonnet and opusplan are claude-sonnet-5-5 (2.1.284-2.1.290)",
    ),
    entry(
        "model_aliases",
        ">=2.1.300,<2.1.325",
        _ALIASES_300,
        f"B-29 ({_B}): haiku is claude-haiku-5-5 (2.1.300-2.1.319)",
    ),
    entry(
        "model_aliases",
        ">=2.1.325",
        _ALIASES_325,
        f"B-29 ({_B}): best is claude-opus-5-5, fable claude-fable-5-2 (2.1.325-2.1.332)",
    ),
    entry(
        "unknown_models",
        "<2.1.259",
        _UNKNOWN_235,
        f"B-29 ({_B}): static, 2.1.235 and 2.1.250",
    ),
    entry(
        "unknown_models",
        ">=2.1.259,<2.1.280",
        _UNKNOWN_259,
        f"B-29 ({_B}): static, 2.1.259-2.1.278 know claude-fable-5-1 and claude-mythos-5-1",
    ),
    entry(
        "unknown_models",
        ">=2.1.280,<2.1.284",
        _UNKNOWN_280,
        f"B-29 ({_B}): 2.1.280 knows claude-opus-5-5 (probed)",
    ),
    entry(
        "unknown_models",
        ">=2.1.284,<2.1.300",
        _UNKNOWN_284,
        f"B-29 ({_B}): 2.1.284 knows claude-sonnet-5-5 (probed)",
    ),
    entry(
        "unknown_models",
        ">=2.1.300,<2.1.325",
        _UNKNOWN_300,
        f"B-29 ({_B}): static, 2.1.300-2.1.319 know claude-haiku-5-5",
    ),
    entry(
        "unknown_models",
        ">=2.1.325",
        (),
        f"B-29 ({_B}): static, from 2.1.325 every model the pinned release knows",
    ),
    entry(
        "sends_empty_text",
        "<2.1.277",
        True,
        f"B-37 ({_B}): an empty text block goes back in the answer's message (2.1.235, "
        "2.1.258, 2.1.270, 2.1.276)",
    ),
    entry(
        "sends_empty_text",
        ">=2.1.277",
        False,
        f"B-37 ({_B}): left out from 2.1.277 (2.1.277, 2.1.278, 2.1.280, 2.1.282, 2.1.328, "
        "2.1.332)",
    ),
    entry(
        "converts_annotated",
        "<2.1.246",
        False,
        f"B-38 ({_B}): a property of annotations only keeps a string value (2.1.235-2.1.245)",
    ),
    entry(
        "converts_annotated",
        ">=2.1.246",
        True,
        f"B-38 ({_B}): from 2.1.246 it takes the JSON text of any other value",
    ),
    entry(
        "announces_model",
        "<2.1.328",
        False,
        f"B-34 ({_B}): no such note on 2.1.235 (2.1.236-2.1.327 not probed)",
    ),
    entry(
        "announces_model",
        ">=2.1.328",
        True,
        f"B-34 ({_B}): 'You are powered by the model named ...' after a fallback "
        "(2.1.328, 2.1.332)",
    ),
    # B-39: a prompt too long in the first exchange ends the run in the CLI's words,
    # naming its estimate of the conversation: the prompt's tokens and those of what
    # the release attaches to it (bisected on 12 releases).
    entry(
        "too_long_requests",
        "<2.1.282",
        2,
        f"B-39 ({_B}): up to 2.1.281 a prompt too long is sent once more before the run ends",
    ),
    entry(
        "too_long_requests",
        ">=2.1.282",
        1,
        f"B-39 ({_B}): from 2.1.282 the run ends after the first request",
    ),
    *_ATTACHED,
    entry(
        "joins_lone_answer",
        "<2.1.300",
        False,
        f"B-40 ({_B}): a resumed turn after an earlier turn answered once is sent with "
        "'No response requested.' first (2.1.276-2.1.282; 2.1.283-2.1.299 not probed)",
    ),
    entry(
        "joins_lone_answer",
        ">=2.1.300",
        True,
        f"B-40 ({_B}): from 2.1.300 the new prompt joins the results of an earlier turn "
        "whose transcript ended on its record of the tools (B-44: one answer, the "
        "session's first; 2.1.300, 2.1.315, 2.1.325, 2.1.328, 2.1.332)",
    ),
    entry(
        "joins_failed_turn",
        "<2.1.282",
        False,
        f"B-40 ({_B}): after a turn whose last request failed, 'No response requested.' "
        "comes first (2.1.235, which joins after a reminder: not modelled)",
    ),
    entry(
        "joins_failed_turn",
        ">=2.1.282",
        True,
        f"B-40 ({_B}): the new prompt joins the unanswered message of a turn whose last "
        "request failed (2.1.282, 2.1.328)",
    ),
    # B-46: a call's input that an unstreamed answer gives as a JSON string.
    entry(
        "reparses_string_input",
        "<2.1.328",
        False,
        f"B-46 ({_B}): probed on 2.1.328 only; earlier releases are taken to spread it",
    ),
    entry(
        "reparses_string_input",
        ">=2.1.328",
        True,
        f"B-46 ({_B}): an unstreamed call's string input is read as JSON, or kept unparsed",
    ),
    # B-47: the task tools' reminder.
    entry(
        "task_reminder",
        "<2.1.328",
        False,
        f"B-47 ({_B}): probed on 2.1.328 only; earlier releases are taken not to send it",
    ),
    entry(
        "task_reminder",
        ">=2.1.328",
        True,
        f"B-47 ({_B}): ten answer rows without TaskCreate or TaskUpdate bring a reminder",
    ),
    # B-48: the summary requests of a compaction after a 413.
    entry(
        "summarises",
        "<2.1.328",
        False,
        f"B-48 ({_B}): probed on 2.1.328 only; earlier releases are taken to end on the 413",
    ),
    entry(
        "summarises",
        ">=2.1.328",
        True,
        f"B-48 ({_B}): a 413 with two answers or more brings two summary requests first",
    ),
    # B-43: what the text output prints when the attempts run out (bisected on 2.1.258,
    # 2.1.259, 2.1.260, 2.1.261, 2.1.263 and 2.1.270).
    entry(
        "text_names_error",
        "<2.1.260",
        False,
        f"B-43 ({_B}): up to 2.1.259 text output prints a fixed line for spent attempts",
    ),
    entry(
        "text_names_error",
        ">=2.1.260",
        True,
        f"B-43 ({_B}): from 2.1.260 text output prints the result's first error",
    ),
)
