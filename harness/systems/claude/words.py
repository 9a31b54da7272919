"""
What a release of Claude Code says: the texts the model writes whose wording or
presence depends on the release (`ClaudeProfile`) or on the model (`models`).

The profile says *which* behaviour a release has; this module turns that into
the words the loop sends to the model or prints (docs/versions.md names each
row: B-01, B-09, ...).
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from harness.systems.claude import models, wire
from harness.systems.claude.profile import ClaudeProfile
from providers_fake.cli.claude import data

#: The variables under which the CLI skips its connectivity check (B-01, from the binary).
NO_PRECONNECT = (
    "HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy",
    "ANTHROPIC_UNIX_SOCKET", "CLAUDE_CODE_CLIENT_CERT", "CLAUDE_CODE_CLIENT_KEY",
    "CLAUDE_CODE_USE_BEDROCK", "CLAUDE_CODE_USE_VERTEX", "CLAUDE_CODE_USE_FOUNDRY",
)  # fmt: skip
#: The notice of 2.1.285-2.1.301 to a session whose requests go through a gateway (B-12).
BILLING_NOTICE = (
    "We're changing auto mode to no longer charge for classifier requests in Claude Code. "
    "However, this session isn't eligible because your requests go through {gateway}, which "
    "isn't compatible with this update. Nothing breaks: auto mode keeps working, and its "
    "classifier requests are billed as before. To fix it and access the new version of auto "
    "mode, ask your gateway to implement: "
    "https://code.claude.com/docs/en/auto-mode-classifier-billing"
)
#: The context budget the token notes count down from (B-14).
TOKEN_BUDGET = 15_000_000


def sends_connectivity_check(profile: ClaudeProfile, env: Mapping[str, str]) -> bool:
    """Whether the run starts with ``HEAD /api/hello`` (B-01)."""
    return profile.preconnect and not any(env.get(name) for name in NO_PRECONNECT)


def refusal_text(
    profile: ClaudeProfile, model: str, message_id: str, long_context: bool = False
) -> str:
    """
    The synthetic message a refusal ends the run with, as the release words it
    and the model's card says (B-09): briefly, or naming a support article;
    ``long_context`` when the model runs as the 1M-context default (B-07).
    """
    known = models.stem(model, profile.known_models())
    found = None if known is None else models.CARDS[known]
    # A model the release does not know is named as the one whose card it takes
    # (2.1.235 calls claude-sonnet-5-5 Sonnet 5, probed).
    named = model if known is None or known == model.lower() else known
    name = data.display_name(named) if found is not None else model  # no card: the id
    brief = profile.brief_uncarded_refusal if found is None else found.article is None
    if brief:
        text = data.short_refusal_text(named, message_id, name)
    else:
        text = data.refusal_text(named, message_id, name)
        article = found.article if found is not None else models.DEFAULT_ARTICLE
        text = text.replace(f"articles/{models.DEFAULT_ARTICLE}", f"articles/{article}")
    if long_context:  # the default model, not named by the user, on old releases (B-07)
        text = text.replace(name, profile.display_name(name))
    if not profile.refusal_continues:  # the releases that end at once name no message
        text = text.removesuffix(f"\n\nMessage ID: {message_id}")
    return text


def max_tokens_error(profile: ClaudeProfile, limit: int | str) -> str:
    """
    The run's end after four answers cut by the output limit, naming the limit:
    CLAUDE_CODE_MAX_OUTPUT_TOKENS when it sets one, else the model's ceiling.
    """
    return data.MAX_TOKENS_ERROR.format(limit=limit)


def wrapped(profile: ClaudeProfile, text: str) -> str:
    """A recovery or refusal note as it goes on the wire (B-15)."""
    return reminder(text) if profile.wraps_notes else text


def token_text(tokens_left: int) -> str:
    """The token note the CLI writes after tool results (B-14)."""
    return f"<total_tokens>{tokens_left} tokens left</total_tokens>"


def reminder(text: str) -> str:
    """A note as the CLI wraps it for the models that take it so (`models`)."""
    return f"<system-reminder>\n{text}\n</system-reminder>"


def input_type_error(profile: ClaudeProfile, value: object) -> str | None:
    """
    The generic tool-input check of releases before 2.1.260 (B-04): a
    StructuredOutput input that is an array, a string, a number or a boolean is
    refused before the schema is consulted, naming its JSON type; ``null``
    passes and is validated as ``{}`` (probed on 2.1.235).
    """
    if not profile.checks_input_type or value is None or isinstance(value, dict):
        return None
    kind = _JSON_TYPES.get(type(value), "object")
    return (
        "<tool_use_error>InputValidationError: StructuredOutput failed due to the following "
        f"issue:\nThe parameter `` type is expected as `object` but provided as `{kind}`"
        "</tool_use_error>"
    )


_JSON_TYPES: dict[type, str] = {
    list: "array", str: "string", int: "number", float: "number", bool: "boolean",
}  # fmt: skip
#: The pinned default model, whose article ``data.refusal_text`` names.
DEFAULT_MODEL = data.DEFAULT_MODEL


#: How much of an input it could not read the CLI shows, in UTF-16 code units (B-46).
UNPARSED_SHOWN = 200


def unparsed_error(name: str, raw: str) -> str | None:
    """
    The tool result of a call whose input the CLI could not read as JSON (the
    `wire.UNPARSED` wrapper, B-46): its first 200 code units and its length.
    """
    found = wire.unparsed(json.loads(raw)) if wire.UNPARSED in raw else None
    if found is None:
        return None
    text, length = found
    shown = wire.js_cut(text, UNPARSED_SHOWN)
    return (
        f"<tool_use_error>InputValidationError: {name} was called with input that could not "
        f"be parsed as JSON.\nYou sent (first {wire.js_length(shown)} of {length} bytes): "
        f"{shown}\nCommon causes: unescaped backslashes in file paths (use / or \\\\), "
        "unescaped control characters, or truncated output. Retry with valid JSON."
        "</tool_use_error>"
    )


def shortened(text: str, units: int) -> str:
    """``text`` cut to ``units`` UTF-16 code units plus an ellipsis, as the CLI cuts strings."""
    if wire.js_length(text) <= units:
        return text
    return wire.js_cut(text, units) + "\u2026"


#: How a run ends when a stream is cut once more after its retries (B-41, probed).
CONNECTION_LOST = (
    "API Error: Connection to the API was lost (ECONNRESET). This is usually temporary \u2014 "
    "try again."
)
