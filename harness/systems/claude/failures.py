"""
What Claude Code does with an HTTP error from the model API, per status (probed).

Claude Code 2.1.328, against the fake API (docs/model-api.md):

- **400 and 422**, whatever the message or ``x-should-retry``: the request is
  sent again with fewer beta features, six requests in all, with no
  ``api_retry`` line; an answer at any step ends the cascade.
- **404**: one more request without streaming; a second 404 in a row ends the run
  naming the model (a 404 after an answer is sent again unstreamed too, probed
  on 2.1.328).
- **401, 408, 409, 429, 5xx, 529**, and any status whose ``x-should-retry``
  is ``true``: retried with ``api_retry`` lines, ``CLAUDE_CODE_MAX_RETRIES``
  times (10 by default, 15 at most), unless ``x-should-retry: false``; a
  third 529 in a row hands over to ``--fallback-model`` or, on an Opus
  model, ends the run (other models' 529s are retried like any 5xx).
- With ``--fallback-model`` armed (once per turn, and not the model in use):
  a 5xx other than 529 hands over at once, and an error the CLI does not
  send again (a 400 after its recoveries, a 418, a second 404) is tried on
  the fallback model as a last resort, except 401, 403, 407, 413, 429 and a
  404 while streaming (`NO_LAST_RESORT`).
- **403, 413** and the other 4xx: not retried.

From 2.1.311 the 400/422 cascade is a ladder of recoveries (`Recoveries`,
B-33 of docs/versions.md): each error sends the request again without the
next feature still on, the thinking-token-count beta, then the thinking
display, then tool search; dropping tool search starts the model call over
(the first two are tried again) and tells the model so in a system message
(`TOOL_SEARCH_GONE`).  A feature whose resend was answered stays off for the
session; tool search stays off once dropped.  Six requests for an error that
persists from the first, fewer later in a session.

A prompt too long for the model's context window (a 400, 413 or 422 whose
message says so, `too_long`) is not sent again in the first exchange of a
session, which cannot be compacted: the run ends at once in the CLI's words
(`too_long_ending`), naming the API's figures and the CLI's estimate of the
conversation (B-39; up to 2.1.327 it is sent once more first).  Later in a
session the CLI tries to compact the conversation first: after a 413 with a
single answer in the session it gives up at once (`Loop.failed`, two status
lines); with more it summarises them in requests of its own (`compaction`, B-48).

When the retries are spent, each kind ends the run in its own words and
with its own ``error`` field (`ending`).  The loop (`harness.systems.claude.loop`)
applies these rules; this module only decides.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any

#: Requests made in all while the API answers 400 or 422.
CASCADE_REQUESTS = 6
CASCADE = frozenset({400, 422})
#: Retries when CLAUDE_CODE_MAX_RETRIES is unset, and the most it may ask for.
DEFAULT_RETRIES, MOST_RETRIES = 10, 15
#: Consecutive 529s after which the CLI stops retrying one model.
OVERLOADS = 3
_RETRIED = frozenset({401, 408, 409, 429})
#: The ``error`` of an api_retry line, by status (others: server_error).
_RETRY_KINDS = {401: "authentication_failed", 429: "rate_limit", 529: "overloaded"}
SERVER_TAIL = (
    ". This is a server-side issue, usually temporary \u2014 try again in a moment. "
    "If it persists, check your inference gateway ({gateway})."
)
TOO_LARGE = (
    "Request too large (max 32MB). Accumulated images and attachments in the conversation "
    "pushed the request over the limit. Remove older images or compact the conversation."
)
NO_MODEL = (
    "There's an issue with the selected model ({model}). It may not exist or you may not "
    "have access to it. Run --model to pick a different model."
)


#: What an error's message says when the prompt outgrew the context window (read in
#: the binary: either phrase anywhere, in any case).
TOO_LONG_PHRASES = ("prompt is too long", "input is too long for requested model")
#: The API's figures in such a message, as the binary reads them.
_TOO_LONG_FIGURES = re.compile(r"prompt is too long[^0-9]*(\d+)\s*tokens?\s*>\s*(\d+)", re.I)
#: The statuses on which the binary was seen to end so (probed: 400, 413 and 422).
TOO_LONG_STATUSES = frozenset({400, 413, 422})
TOO_LONG = "Prompt is too long"
#: The share of the API's count at which the conversation is "most of it".
_MOST = 0.8
_NO_FIGURES = (
    " \u00b7 this conversation is a single exchange and cannot be compacted \u2014 the request "
    "size comes mostly from system prompt, tool definitions, or attachments."
)
_OWN_CONTENT = (
    " \u00b7 the request is ~{actual} tokens (limit {limit}) and this conversation's own content "
    "is most of it. A single-exchange conversation cannot be compacted; start with less "
    "content (smaller files or pasted text)."
)
_OVERHEAD = (
    " \u00b7 the request is ~{actual} tokens (limit {limit}) but this conversation is only "
    "~{estimate} tokens \u2014 the rest is system prompt, tool definitions, and attachment "
    "content. A single-exchange conversation cannot be compacted; reduce attached "
    "files/tools or start with less context."
)


@dataclass(frozen=True)
class Failure:
    """One HTTP error answer, as the CLI reads it."""

    status: int
    #: The body's ``error.type``; None when the body is not the API's JSON.
    kind: str | None
    message: str
    should_retry: str | None
    request_id: str | None
    retry_after: str | None = None


@dataclass(frozen=True)
class Ending:
    """The run's last words after a failure: the synthetic message and the result's fields."""

    text: str
    error: str
    terminal_reason: str = "api_error"


def retries(raw: int | float | None) -> int:
    """CLAUDE_CODE_MAX_RETRIES as the CLI applies it (``raw`` as its integer reader gave it)."""
    if raw is None or raw < 0:
        return DEFAULT_RETRIES
    return int(min(raw, MOST_RETRIES))


#: The back-off before retry N: 500 ms doubling, at most 32 s, plus up to a quarter more.
FIRST_DELAY_MS, LONGEST_DELAY_MS = 500, 32_000


def delay_base_ms(attempt: int, retry_after: str | None) -> int:
    """The back-off before retry ``attempt`` (1-based) without its jitter."""
    if retry_after is not None and retry_after.strip().isdigit() and int(retry_after) > 0:
        return int(retry_after) * 1000  # the server's wish replaces the doubling
    return int(min(FIRST_DELAY_MS * 2 ** max(attempt - 1, 0), LONGEST_DELAY_MS))


def retried(failure: Failure) -> bool:
    """Whether an api_retry follows (budget permitting)."""
    if failure.should_retry == "true":
        return True
    if failure.should_retry == "false":
        return False
    return failure.status in _RETRIED or failure.status >= 500


#: Statuses an armed ``--fallback-model`` is not tried for when the CLI gives up on them.
NO_LAST_RESORT = frozenset({401, 403, 404, 407, 413, 429})
#: Model families whose consecutive 529s end the run (or hand over) after `OVERLOADS`
#: even without a fallback model; other models' 529s are retried like any 5xx (probed).
OVERLOAD_FAMILIES = ("opus", "fable", "mythos")


def server_error(status: int) -> bool:
    """A 5xx other than 529: with a fallback model armed, it hands over at once."""
    return 500 <= status < 600 and status != 529


def counts_overloads(model: str) -> bool:
    return any(family in model for family in OVERLOAD_FAMILIES)


def retry_kind(status: int) -> str:
    return _RETRY_KINDS.get(status, "server_error")


def _server(failure: Failure, gateway: str, _model: str) -> Ending:
    tail = SERVER_TAIL.format(gateway=gateway)
    return Ending(f"API Error: {failure.status} {failure.message}{tail}", "server_error")


def _unauthorized(failure: Failure, gateway: str, model: str) -> Ending:
    if "x-api-key" in failure.message:  # the API's word for a key it does not know
        return Ending("Invalid API key \u00b7 Fix external API key", "authentication_failed")
    return _forbidden(failure, gateway, model)


def _forbidden(failure: Failure, gateway: str, model: str) -> Ending:
    text = f"Failed to authenticate. API Error: {failure.status} {failure.message}"
    return Ending(text, "authentication_failed")


def _not_found(failure: Failure, gateway: str, model: str) -> Ending:
    return Ending(NO_MODEL.format(model=model), "model_not_found")


def _too_large(failure: Failure, gateway: str, model: str) -> Ending:
    return Ending(TOO_LARGE, "invalid_request", "image_error")


def _rate_limited(failure: Failure, gateway: str, model: str) -> Ending:
    return Ending(f"API Error: Request rejected (429) \u00b7 {failure.message}", "rate_limit")


def _other(failure: Failure, gateway: str, model: str) -> Ending:
    return Ending(f"API Error: {failure.status} {failure.message}", "unknown")


_ENDINGS = {
    401: _unauthorized,
    403: _forbidden,
    404: _not_found,
    413: _too_large,
    429: _rate_limited,
}


def ending(failure: Failure, gateway: str, model: str) -> Ending:
    """How the run ends on ``failure`` (``gateway``: the API's host:port, ``model``: asked for)."""
    if failure.status >= 500:
        return _server(failure, gateway, model)
    return _ENDINGS.get(failure.status, _other)(failure, gateway, model)


def too_long(failure: Failure) -> bool:
    """Whether the error says the prompt is too long for the model (B-39)."""
    message = failure.message.lower()
    return failure.status in TOO_LONG_STATUSES and any(p in message for p in TOO_LONG_PHRASES)


def estimate_tokens(text: str) -> int:
    """The CLI's estimate of a text's tokens: its UTF-16 length over four, rounded half up."""
    units = len(text.encode("utf-16-le")) // 2
    return math.floor(units / 4 + 0.5)


def too_long_ending(failure: Failure, conversation: int) -> Ending:
    """
    The run's end on a prompt too long in the first exchange (B-39): the API's
    figures and ``conversation``, the CLI's estimate of the conversation's tokens,
    say where the bulk is.  A 413 ends with the bare words, as an image error.
    """
    if failure.status == 413:
        return Ending(TOO_LONG, "invalid_request", "image_error")
    found = _TOO_LONG_FIGURES.search(failure.message)
    if found is None:
        tail = _NO_FIGURES
    else:
        actual, limit = int(found[1]), int(found[2])
        shape = _OWN_CONTENT if conversation >= actual * _MOST else _OVERHEAD
        tail = shape.format(actual=actual, limit=limit, estimate=conversation)
    return Ending(TOO_LONG + tail, "invalid_request", "prompt_too_long")


def message_fields(failure: Failure) -> dict[str, Any]:
    """What the synthetic error message carries beside its text."""
    fields: dict[str, Any] = {"request_id": failure.request_id, "is_api_error_message": True}
    fields["api_error_status"] = failure.status
    if failure.kind is not None:
        fields["api_error_type"] = failure.kind
    return fields


#: The recovery of the ladder that drops tool search for the session (B-33).
TOOL_SEARCH = "tool search"
#: The system message the CLI adds to the conversation when it drops tool search.
TOOL_SEARCH_GONE = (
    "ToolSearch is no longer available. Tools listed earlier as deferred that are still "
    "available are declared in full: call them directly."
)


@dataclass
class Recoveries:
    """
    Where a session stands on the ladder of 400/422 recoveries (B-33).

    The binary keeps one small state machine per recovery (idle, resent,
    spent); only their order and what survives an answer show on the wire,
    which is what this keeps: ``dropped`` for the session, ``tried`` in the
    model call under way.
    """

    ladder: tuple[str, ...]
    dropped: set[str] = field(default_factory=set)
    tried: list[str] = field(default_factory=list)

    def next(self) -> str | None:
        """The recovery a 400 or 422 now gets, taken; None when none is left (the run ends)."""
        taken = self.dropped | self.off | set(self.tried)
        step = next((f for f in self.ladder if f not in taken), None)
        if step == TOOL_SEARCH:
            self.off.add(step)
            self.tried.clear()  # the model call is made again, every other recovery open
        elif step is not None:
            self.tried.append(step)
        return step

    #: Dropped in the model call under way and not yet healed by an answer (tool search).
    off: set[str] = field(default_factory=set)

    def answered(self) -> None:
        """
        A request went through: the feature its resend left out stays off (an
        earlier one of the same call was refused again, so it comes back), and
        so does tool search if it was dropped.
        """
        if self.tried:
            self.dropped.add(self.tried[-1])
        self.dropped |= self.off
        self.off.clear()
        self.tried.clear()

    def restart(self) -> None:
        """A new model call (the fallback model's) before any answer: all open again."""
        self.off.clear()
        self.tried.clear()
