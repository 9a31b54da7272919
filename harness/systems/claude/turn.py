"""
What one run of the Claude Code model was given, and the counters of its turn.

`Settings` is fixed when the run starts (flags, environment, the release's
profile); `Turn` is what the loop (`harness.systems.claude.loop`) counts as it
goes: attempts, retries, recoveries, which notes it has sent.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from harness.systems.claude import validator
from harness.systems.claude.profile import ClaudeProfile


@dataclass
class Settings:
    """What the run was given beyond the prompt and schema."""

    env: Mapping[str, str]
    schema: validator.Schema
    schema_text: str
    fallback: str | None = None
    refusal_fallback: str | None = None
    gates: Mapping[str, bool] = field(default_factory=dict)
    #: The session's earlier turns (a ``--resume``), sent before this turn's prompt.
    resumed: tuple[dict[str, Any], ...] = ()
    #: How the CLI names a custom ANTHROPIC_BASE_URL in its error messages (host:port).
    gateway: str = "api.anthropic.com"
    #: Seconds until the caller kills the run, if it ever does, counted on the
    #: model's waits only (back-offs, answers held back): the model's own work
    #: takes no time, as the harness counts a real binary's (no verdict depends
    #: on how fast the machine is).
    timeout: float | None = None
    #: What differs in the release modelled (`harness.systems.claude.profile`).
    profile: ClaudeProfile = field(default_factory=ClaudeProfile.of)
    #: Whether the run was told its model (ANTHROPIC_MODEL, ``--model``): the default
    #: model runs with the 1M-context beta only when it was not (B-07).
    model_chosen: bool = False
    #: ``--max-turns N``: the answers the run may get before it must stop asking.
    max_turns: int | None = None

    def long_context(self, model: str) -> bool:
        """Whether ``model`` runs as the 1M-context variant of the default (B-07)."""
        profile = self.profile
        return profile.long_context and not self.model_chosen and model == profile.default_model


@dataclass
class Turn:
    """The loop's counters for one turn."""

    model: str
    #: The ``--fallback-model`` still to try (once, and never the model in use).
    fallback: str | None
    #: StructuredOutput attempts this turn may make (MAX_STRUCTURED_OUTPUT_RETRIES).
    allowed: float
    #: API retries allowed (CLAUDE_CODE_MAX_RETRIES).
    budget: int
    effort: str = "medium"
    failures: int = 0  # failing requests retried
    overloads: int = 0  # consecutive 529s towards the fallback model
    cascade: int = 0  # 400s answered with fewer beta features
    too_long: int = 0  # requests refused as a prompt too long (B-39)
    plain: bool = False  # a 404 was retried without streaming
    cuts: int = 0  # streams cut before message_stop, retried whole
    cut_unseen: bool = False  # the retry after the last counted one was made (B-41)
    rejected: int = 0  # StructuredOutput calls rejected this turn
    retracted: int = 0  # StructuredOutput calls tombstoned by a refusal fallback
    last_rejection: str | None = None
    resumes: int = 0  # prose streams resumed after an SSE error
    cut_offs: int = 0  # answers resumed after the output token limit
    nudged: bool = False  # an empty answer was answered with a nudge
    quiet: int = 0  # answers in a row with calls and no prose for the user
    nudged_quiet: bool = False  # the model was told the user has not heard from it
    reminded: bool = False  # the enforce reminder was sent
    continued: bool = False  # a refusal stop was continued
    resumed_unseen: bool = False  # the last answer was resumed with a note not shown (B-06)
