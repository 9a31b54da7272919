"""
The version profile of the Claude Code model: what differs between releases, as data.

Every row is a behaviour on a range of versions, with the evidence that showed
it: a note of docs/versions.md (B-01 ...), each from probes of the published
binaries (2.1.235 to 2.1.332, 47 of them) against the fake model API.  The
model (`harness.systems.claude.loop`) reads `ClaudeProfile` fields at the
points where it decides; nothing else in it depends on a version.  The rows
are exact where both neighbouring releases were run; versions never published
(2.1.244, 2.1.279, 2.1.313, ...) fall in whichever range is simplest.
"""

from __future__ import annotations

from dataclasses import dataclass

from harness.systems.claude.rows import ROWS
from harness.systems.profiles import Table, entry
from providers_fake.cli.claude import data

_B = "docs/versions.md"

CLAUDE = Table(
    "claude",
    "2.1.328",
    (
        entry("preconnect", "<2.1.290", True, f"B-01 ({_B}): HEAD /api/hello first, up to 2.1.289"),
        entry(
            "preconnect",
            ">=2.1.290",
            False,
            f"B-01 ({_B}): 2.1.290 skips it under CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC",
        ),
        entry(
            "feedback_params",
            "<2.1.260",
            False,
            f"B-02 ({_B}): retry feedback carries Ajv's bare messages up to 2.1.259",
        ),
        entry(
            "feedback_params",
            ">=2.1.260",
            True,
            f"B-02 ({_B}): 2.1.260 adds the params (('extra' is not allowed), (got 2), ...)",
        ),
        entry(
            "exhaustion_names_last_error",
            "<2.1.260",
            False,
            f"B-03 ({_B}): 'Failed to provide valid structured output after N attempts' alone",
        ),
        entry(
            "exhaustion_names_last_error",
            ">=2.1.260",
            True,
            f"B-03 ({_B}): 2.1.260 appends ' — last StructuredOutput error: ...'",
        ),
        entry(
            "checks_input_type",
            "<2.1.260",
            True,
            f"B-04 ({_B}): a non-object input gets the generic InputValidationError up to 2.1.259",
        ),
        entry(
            "checks_input_type",
            ">=2.1.260",
            False,
            f"B-04 ({_B}): from 2.1.260 Ajv judges every input, arrays included",
        ),
        entry(
            "refuses_async",
            "<2.1.260",
            False,
            f"B-05 ({_B}): an $async schema runs up to 2.1.259",
        ),
        entry(
            "refuses_async",
            ">=2.1.260",
            True,
            f"B-05 ({_B}): 2.1.260 refuses it before launch (static diff and catalogue)",
        ),
        entry(
            "shows_recovery_notes",
            "<2.1.269",
            False,
            f"B-06 ({_B}): resume notes sent but not printed nor counted up to 2.1.268, "
            "nor followed by the attempts-limit check",
        ),
        entry(
            "shows_recovery_notes",
            ">=2.1.269",
            True,
            f"B-06 ({_B}): 2.1.269 prints them as user lines, counts them in num_turns "
            "and checks the attempts limit after them",
        ),
        entry(
            "default_model",
            "<2.1.280",
            "claude-opus-5",
            f"B-07 ({_B}): first request's model up to 2.1.278",
        ),
        entry(
            "default_model",
            ">=2.1.280",
            "claude-opus-5-5",
            f"B-07 ({_B}): claude-opus-5-5 from 2.1.280 (2.1.279 never published)",
        ),
        entry(
            "long_context",
            "<2.1.285",
            True,
            f"B-07 ({_B}): the default model runs with the 1M-context beta up to 2.1.284",
        ),
        entry(
            "long_context",
            ">=2.1.285",
            False,
            f"B-07 ({_B}): 2.1.285 drops the 1M-context beta and the '(1M context)' name",
        ),
        entry(
            "output_ceilings",
            "<2.1.280",
            (),
            f"B-08 ({_B}): every model gets 64000 output tokens up to 2.1.278",
        ),
        entry(
            "output_ceilings",
            ">=2.1.280,<2.1.328",
            (("claude-opus-5-5", 128000),),
            f"B-08 ({_B}): claude-opus-5-5 gets 128000 from 2.1.280 (opus-5, sonnet-5: 64000)",
        ),
        entry(
            "output_ceilings",
            ">=2.1.328",
            (("claude-opus-5", 64000), ("claude-sonnet-5", 64000), ("claude-sonnet-4-5", 32000)),
            f"B-08 ({_B}): 2.1.328 and 2.1.332 give these their own, every other model 128000",
        ),
        entry(
            "default_ceiling",
            "<2.1.328",
            64000,
            f"B-08 ({_B}): a model the rows do not name gets 64000 (probed with the Opus models)",
        ),
        entry(
            "default_ceiling",
            ">=2.1.328",
            128000,
            f"B-08 ({_B}): 128000 for a model without its own (sonnet-5-5, haiku-5-5, a custom id)",
        ),
        entry(
            "refusal_continues",
            "<2.1.282",
            False,
            f"B-09 ({_B}): the first refusal stop ends the run up to 2.1.281",
        ),
        entry(
            "refusal_continues",
            ">=2.1.282",
            True,
            f"B-09 ({_B}): 2.1.282 continues once with a note (and names the Message ID)",
        ),
        entry(
            "refusal_notice",
            "<2.1.283",
            False,
            f"B-09 ({_B}): no system/informational line on a continued refusal up to 2.1.282",
        ),
        entry(
            "refusal_notice",
            ">=2.1.283",
            True,
            f"B-09 ({_B}): 2.1.283 prints '... safeguards stopped the response above'",
        ),
        entry(
            "refusal_keeps_object",
            "<2.1.302",
            True,
            f"B-10 ({_B}): a refusal after a valid call keeps its object up to 2.1.301",
        ),
        entry(
            "refusal_keeps_object",
            ">=2.1.302",
            False,
            f"B-10 ({_B}): 2.1.302 withdraws it",
        ),
        entry(
            "midstream_after_call",
            "<2.1.281",
            "error",
            f"B-11 ({_B}): an SSE error after a complete call ends in error up to 2.1.280",
        ),
        entry(
            "midstream_after_call",
            ">=2.1.281,<2.1.287",
            "success_early",
            f"B-11 ({_B}): success, the error line before the tool result, 2.1.281-2.1.286",
        ),
        entry(
            "midstream_after_call",
            ">=2.1.287,<2.1.290",
            "error",
            f"B-11 ({_B}): in error again 2.1.287-2.1.289",
        ),
        entry(
            "midstream_after_call",
            ">=2.1.290",
            "success",
            f"B-11 ({_B}): success, the error line after the tool result, from 2.1.290",
        ),
        entry(
            "billing_notice",
            "<2.1.285",
            False,
            f"B-12 ({_B}): no auto-mode billing notice up to 2.1.284",
        ),
        entry(
            "billing_notice",
            ">=2.1.285,<2.1.302",
            True,
            f"B-12 ({_B}): the notice on stderr / system/informational, 2.1.285-2.1.301",
        ),
        # B-24: the cascade of a 400 or 422 without the structured-outputs wording
        # (main's model-claude-400-cascade and -422-cascade, probed on the installed
        # releases 2.1.235, 2.1.260, 2.1.280, 2.1.282, 2.1.285, 2.1.302, 2.1.304, 2.1.310,
        # 2.1.311 and 2.1.319; each boundary lies between two probed releases).
        entry(
            "cascade_requests",
            "<2.1.282",
            ((400, 2), (422, 1)),
            f"B-24 ({_B}): a 400 is sent twice, a 422 once (2.1.235, 2.1.260, 2.1.280)",
        ),
        entry(
            "cascade_requests",
            ">=2.1.282,<2.1.285",
            ((400, 1), (422, 1)),
            f"B-24 ({_B}): neither is sent again (2.1.282)",
        ),
        entry(
            "cascade_requests",
            ">=2.1.285,<2.1.302",
            ((400, 2), (422, 1)),
            f"B-24 ({_B}): a 400 twice, a 422 once (2.1.285)",
        ),
        entry(
            "cascade_requests",
            ">=2.1.302,<2.1.304",
            ((400, 2), (422, 2)),
            f"B-24 ({_B}): both twice (2.1.302)",
        ),
        entry(
            "cascade_requests",
            ">=2.1.304,<2.1.311",
            ((400, 4), (422, 4)),
            f"B-24 ({_B}): both four times (2.1.304, 2.1.310)",
        ),
        entry(
            "cascade_requests",
            ">=2.1.311",
            ((400, 6), (422, 6)),
            f"B-24 ({_B}): both six times (2.1.311, 2.1.319, the pinned 2.1.328)",
        ),
        entry(
            "billing_notice",
            ">=2.1.302",
            False,
            f"B-12 ({_B}): gone from 2.1.302",
        ),
        entry(
            "bad_request_retries",
            "<2.1.282",
            ("fallback-credit beta",),
            f"B-13 ({_B}): a 400 is retried once without the fallback-credit beta",
        ),
        entry(
            "bad_request_retries",
            ">=2.1.282,<2.1.285",
            (),
            f"B-13 ({_B}): not retried, 2.1.282-2.1.284",
        ),
        entry(
            "bad_request_retries",
            ">=2.1.285,<2.1.302",
            ("safeguards",),
            f"B-13 ({_B}): retried once without the safeguards, 2.1.285-2.1.301",
        ),
        entry(
            "bad_request_retries",
            ">=2.1.302,<2.1.304",
            (),
            f"B-13 ({_B}): not retried, 2.1.302-2.1.303",
        ),
        entry(
            "bad_request_retries",
            ">=2.1.304,<2.1.310",
            ("tool search",),
            f"B-13 ({_B}): retried once without tool search, 2.1.304-2.1.309",
        ),
        entry(
            "bad_request_retries",
            ">=2.1.310,<2.1.311",
            ("thinking display", "tool search", "thinking display"),
            f"B-13 ({_B}): three retries on 2.1.310",
        ),
        entry(
            "bad_request_retries",
            ">=2.1.311",
            (
                "thinking-token-count beta",
                "thinking display",
                "tool search",
                "thinking-token-count beta",
                "thinking display",
            ),
            f"B-13 ({_B}): five retries (six requests) from 2.1.311",
        ),
        # B-33: from 2.1.311 a 400 or 422 takes the CLI down a ladder of recoveries,
        # each a feature the request is sent again without (read in the binary, probed
        # on 2.1.328 with the betas and thinking field of each request): the first two
        # are tried again after tool search goes, and stay off for the session only when
        # the resend without them was answered.
        entry(
            "bad_request_ladder",
            "<2.1.311",
            (),
            f"B-33 ({_B}): a count of requests instead (B-13, B-24)",
        ),
        entry(
            "bad_request_ladder",
            ">=2.1.311",
            ("thinking-token-count beta", "thinking display", "tool search"),
            f"B-33 ({_B}): the recoveries of a 400 or 422 (2.1.328; six requests from 2.1.311)",
        ),
        entry(
            "token_notes",
            "<2.1.314",
            True,
            f"B-14 ({_B}): a system message '<total_tokens>N tokens left</total_tokens>' "
            "after each tool result, up to 2.1.312",
        ),
        entry(
            "token_notes",
            ">=2.1.314",
            False,
            f"B-14 ({_B}): none from 2.1.314 (2.1.313 never published)",
        ),
        entry(
            "brief_uncarded_refusal",
            "<2.1.282",
            True,
            f"B-09 ({_B}): a model without a card refuses briefly on 2.1.235",
        ),
        entry(
            "brief_uncarded_refusal",
            ">=2.1.282",
            False,
            f"B-09 ({_B}): with the default article on 2.1.328 and 2.1.332 (placed with the "
            "continuation; the releases between not probed)",
        ),
        entry(
            "refusal_line_first",
            "<2.1.282",
            False,
            f"B-36 ({_B}): a refused answer's rejected results come first (2.1.235)",
        ),
        entry(
            "refusal_line_first",
            ">=2.1.282",
            True,
            f"B-36 ({_B}): the refusal line before them (2.1.328, 2.1.332; from B-09's release "
            "on, not probed between)",
        ),
        entry(
            "wraps_notes",
            "<2.1.331",
            False,
            f"B-15 ({_B}): recovery and refusal notes go to the API as plain text up to 2.1.330",
        ),
        entry(
            "wraps_notes",
            ">=2.1.331",
            True,
            f"B-15 ({_B}): 2.1.331 wraps them in <system-reminder> on the wire",
        ),
        entry(
            "resumes_broken_prose",
            "<2.1.246",
            False,
            f"B-22 ({_B}): prose cut by an SSE error ends the run at once up to 2.1.245",
        ),
        entry(
            "resumes_broken_prose",
            ">=2.1.246",
            True,
            f"B-22 ({_B}): from 2.1.246 the model is asked to resume, up to three times",
        ),
        entry(
            "continue_note",
            "<2.1.281",
            True,
            f"B-23 ({_B}): a turn that ended on a tool result is resumed with "
            "'Continue from where you left off.' beside it, up to 2.1.280",
        ),
        entry(
            "continue_note",
            ">=2.1.281",
            False,
            f"B-23 ({_B}): no such text from 2.1.281",
        ),
        entry(
            "multiple_of_precision",
            "<2.1.287",
            None,
            f"B-16 ({_B}): multipleOf checked as exact floats up to 2.1.286",
        ),
        entry(
            "multiple_of_precision",
            ">=2.1.287",
            6,
            f"B-16 ({_B}): Ajv's multipleOfPrecision: 6 from 2.1.287 (0.07 is a multiple of 0.01)",
        ),
        *ROWS,
    ),
)


@dataclass(frozen=True)
class ClaudeProfile:
    """What the Claude Code model does at ``version``; each field is a row of `CLAUDE`."""

    version: str
    preconnect: bool
    feedback_params: bool
    exhaustion_names_last_error: bool
    checks_input_type: bool
    refuses_async: bool
    shows_recovery_notes: bool
    default_model: str
    long_context: bool
    #: Models whose output ceiling is not `default_ceiling`, with theirs.
    output_ceilings: tuple[tuple[str, int], ...]
    default_ceiling: int
    refusal_continues: bool
    refusal_notice: bool
    refusal_keeps_object: bool
    midstream_after_call: str
    billing_notice: bool
    #: What each retry of a 400 strips; the run makes one request more than these.
    bad_request_retries: tuple[str, ...]
    #: Requests sent for a persistent 400 or 422 without the structured-outputs wording.
    cascade_requests: tuple[tuple[int, int], ...]
    #: The recoveries a 400 or 422 is answered with, in order (B-33); empty: the counts above.
    bad_request_ladder: tuple[str, ...]
    #: Every model hears the tokens left after tool results, not only those whose card says so.
    token_notes: bool
    #: A model the run fell back to is told which it is (B-34).
    announces_model: bool
    #: A refusal's line comes before its rejected calls' results (B-36).
    refusal_line_first: bool
    #: A refusal by a model without a card is worded briefly, not with an article (B-09).
    brief_uncarded_refusal: bool
    #: An empty text block of an answer is sent back with it (B-37).
    sends_empty_text: bool
    #: A property of annotations only takes a string value's JSON text (B-38).
    converts_annotated: bool
    #: Requests made for a prompt too long in the first exchange (B-39).
    too_long_requests: int
    #: The CLI's estimate of the tokens it attaches to the first exchange (B-39).
    attached_tokens: int
    #: Text output names the first error when the attempts run out (B-43).
    text_names_error: bool
    #: An unstreamed call's string input is read as JSON or kept unparsed (B-46).
    reparses_string_input: bool
    #: The task tools' reminder after ten answer rows without them (B-47).
    task_reminder: bool
    #: A 413 later in a session with two answers or more is summarised first (B-48).
    summarises: bool
    wraps_notes: bool
    multiple_of_precision: int | None
    resumes_broken_prose: bool
    continue_note: bool
    #: A resumed turn's prompt joins the only results of the turn before (B-40).
    joins_lone_answer: bool
    #: A resumed turn's prompt joins the unanswered message of a turn that failed (B-40).
    joins_failed_turn: bool
    quiet_notice: bool
    cwd_notes: bool
    asks_approval: bool
    case_hint: bool
    missing_as_unknown: bool
    #: ANTHROPIC_MODEL's aliases and the model each sends.
    model_aliases: tuple[tuple[str, str], ...]
    #: The pinned release's known models this one does not know.
    unknown_models: tuple[str, ...]

    @classmethod
    def of(cls, version: str | None = None) -> ClaudeProfile:
        """The profile of ``version`` (the pinned one by default)."""
        chosen = version or CLAUDE.pinned
        return cls(chosen, **CLAUDE.resolve(chosen))

    def output_ceiling(self, model: str) -> int:
        """The ``max_tokens`` a model gets, as B-08 found it per release."""
        return dict(self.output_ceilings).get(model, self.default_ceiling)

    def known_models(self) -> frozenset[str]:
        """The model ids the release knows (B-29)."""
        return data.KNOWN_MODELS - frozenset(self.unknown_models)

    def agent(self) -> str:
        """The AI_AGENT a command sees: it names the release (B-30)."""
        return f"claude-code_{self.version.replace('.', '-')}_agent"

    def display_name(self, base: str) -> str:
        """How the CLI names the default model running with the 1M-context beta (B-07)."""
        return f"{base} (1M context)" if self.long_context else base
