"""
Constant parts of Claude Code 2.1.328's output, as the reference captures show them.

Kept apart from the rendering logic so the values can be checked against a
new capture at a glance when the reference CLI version moves.
"""

from __future__ import annotations

import json

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from collections.abc import Set as AbstractSet

VERSION = "2.1.328"
DEFAULT_MODEL = "claude-opus-5-5"
DEFAULT_FALLBACK = "claude-sonnet-5"
#: The aliases ANTHROPIC_MODEL may name, and the model each sends (probed on the binary;
#: ``opusplan`` is Opus in plan mode only, so a ``-p`` run sends Sonnet).
MODEL_ALIASES = {
    "opus": "claude-opus-5-5",
    "best": "claude-opus-5-5",
    "sonnet": "claude-sonnet-5-5",
    "opusplan": "claude-sonnet-5-5",
    "haiku": "claude-haiku-5-5",
    "fable": "claude-fable-5-2",
}
#: The suffix asking for the long context window: never part of the model id sent.
LONG_CONTEXT = "[1m]"
#: The model ids 2.1.328 knows (read in the binary): others are sent, with a notice.
KNOWN_MODELS = frozenset({
    "claude-3-5-haiku", "claude-3-5-sonnet", "claude-3-7-sonnet", "claude-fable-5",
    "claude-fable-5-1", "claude-fable-5-2", "claude-haiku-4-5", "claude-haiku-5-5",
    "claude-mythos-5", "claude-mythos-5-1", "claude-mythos-5-2", "claude-opus-4-0",
    "claude-opus-4-1", "claude-opus-4-5", "claude-opus-4-6", "claude-opus-4-7",
    "claude-opus-4-8", "claude-opus-5", "claude-opus-5-5", "claude-sonnet-4-0",
    "claude-sonnet-4-5", "claude-sonnet-4-6", "claude-sonnet-5", "claude-sonnet-5-5",
})  # fmt: skip
#: Model ids the CLI still knows but sends its default model for.
RETIRED_MODELS = frozenset({"claude-opus-4-0", "claude-opus-4-1"})
UNRECOGNIZED_MODEL = "[claude-code:unrecognized_model]"

# fmt: off
TOOLS = [
    "Task", "Bash", "CronCreate", "CronDelete", "CronList", "Edit", "EnterWorktree",
    "ExitWorktree", "ListAgents", "Monitor", "NotebookEdit", "Read", "ReportFindings",
    "ScheduleWakeup", "SendMessage", "Skill", "StructuredOutput", "TaskStop", "ToolSearch",
    "WebFetch", "WebSearch", "Workflow", "Write",
]

SKILLS = [
    "deep-research", "dataviz", "update-config", "verify", "debug", "code-review", "simplify",
    "batch", "fewer-permission-prompts", "doctor", "loop", "claude-api", "workflow-authoring",
    "run", "run-skill-generator", "plugin-authoring",
]

SLASH_COMMANDS = [
    *SKILLS,
    "agents", "auto-mode-setup", "autocompact", "clear", "color", "compact", "config",
    "output-style", "context", "effort", "fast", "focus", "heapdump", "init", "mcp", "model",
    "__remote-workflow", "workflow-launch-exec", "reload-plugins", "reload-skills", "rename",
    "security-review", "usage", "insights", "recap", "goal", "list-agents", "team-onboarding",
]

TERMINAL_SLASH_COMMANDS = ["doctor", "color", "focus", "reload-plugins"]
AGENTS = ["claude", "Explore", "general-purpose", "Plan", "statusline-setup"]
PLUGINS = [
    {"name": name, "path": "builtin", "source": f"{name}@builtin"}
    for name in ("cc-plugin-agents-md", "cc-plugin-privacy", "cc-plugin-plugin-authoring")
]

CAPABILITIES = [
    "interrupt_receipt_v1", "interrupt_cancel_queued_v1", "interrupt_send_now_v1",
    "interrupt_requeue_taken_v1", "msg_lifecycle_v1", "request_marker_lists_v1",
    "ask_user_question_unanswered_v1", "lifecycle_wakeup_source_v1", "sdk_mcp_tools_list_changed",
    "sdk_mcp_manifests", "mcp_read_resource_v1", "mcp_tool_ui_meta_v1", "ui_surface_v1",
    "mcp_call_result_not_for_model_v1", "mcp_call_check_permissions_v1", "voice_call_talk_line_v1",
    "withdrawn_files_note_v2", "ui_pane_widget_v1", "reload_plugins_refuse_if_busy_v1",
    "silent_resend_files_v1",
]
# fmt: on

ENFORCE_REMINDER = (
    "[structured-output-enforce] You MUST call the StructuredOutput tool to complete this "
    "request. Call this tool now."
)
TOOL_ACCEPTED = "Structured output provided successfully"
DEFAULT_REJECTION = "Output does not match required schema: root: must match the schema"
MIDSTREAM_ERROR = "API Error: Server error mid-response. The response above may be incomplete."

# The fake model API in the captures answers every request with 10 input and
# 5 output tokens; the fakes keep that so costs line up with the captures.
INPUT_TOKENS = 10
OUTPUT_TOKENS = 5

# Dollars per million tokens (input, output).  The captures pin Opus 5.5 at
# 0.00014 USD and Sonnet 5 at half that for one such message; the per-token
# split is a guess that reproduces both sums exactly.
PRICES = {"opus": (4, 20), "sonnet": (2, 10), "haiku": (1, 5)}

SUBAGENT_STATS = {
    "spawned": 0,
    "requested": {"background": 0, "foreground": 0, "unset": 0},
    "started_in_background": 0,
    "max_depth": 0,
    "spawned_by_subagents": 0,
    "completed": 0,
    "failed": 0,
    "killed": {"parent": 0, "user": 0, "system": 0},
    "refused": {"depth_limit": 0, "concurrency_limit": 0, "budget": 0},
    "by_type": {},
}

TERMINAL_REASONS = {
    "success": "completed",
    "error_max_structured_output_retries": "structured_output_retry_exhausted",
    "error_max_turns": "max_turns",
    "error_max_budget_usd": "budget_exhausted",
    "error_during_execution": "model_error",
}


def display_name(model: str) -> str:
    """
    ``claude-opus-5-5`` -> ``Opus 5.5``, as the model_fallback notice and the
    refusal name a model: the family first (``claude-3-7-sonnet`` -> ``Sonnet
    3.7``), a whole version without ``.0`` (``Sonnet 4``), a dated snapshot's
    date left out, the case of the id not kept; an id outside Claude's naming
    as it is (probed on 2.1.328).
    """
    if not model.lower().startswith("claude-"):
        return model
    parts = model.lower().removeprefix("claude-").split("-")
    if len(parts) > 1 and len(parts[-1]) == 8 and parts[-1].isdigit():
        parts = parts[:-1]  # a dated snapshot id
    if parts and parts[0].isdigit():  # the 3.x ids put the version first
        parts = [*parts[-1:], *parts[:-1]]
    if not parts or not parts[0]:
        return model
    version = ".".join(parts[1:]).removesuffix(".0")
    return " ".join([parts[0].capitalize(), version]).strip()


def message_cost(model: str) -> float:
    family = next((name for name in PRICES if name in model), "sonnet")
    per_input, per_output = PRICES[family]
    # The same expression order as the CLI, so the float sums match the captures.
    return INPUT_TOKENS / 1e6 * per_input + OUTPUT_TOKENS / 1e6 * per_output


def max_output_tokens(model: str) -> int:
    return 128000 if "opus" in model else 64000


def refusal_text(model: str, message_id: str, name: str | None = None) -> str:
    """The synthetic message (and result) of a refusal with no fallback model."""
    name = display_name(model) if name is None else name
    return (
        f"API Error: {name}'s safeguards flagged this message "
        "(https://www.anthropic.com/legal/aup). This sometimes happens with safe, normal "
        f"conversations. Claude Code can't respond to this message with {name}.\n\n"
        "Try rephrasing the request in a new session or change your model.\n\n"
        "Learn more: https://support.claude.com/en/articles/8106465\n\n"
        f"Message ID: {message_id}"
    )


#: The meta user message after a refusal stop the CLI continues from (once per turn).


def short_refusal_text(model: str, message_id: str, name: str | None = None) -> str:
    """The refusal's message for the models that word it briefly (their cards say which)."""
    return (
        f"API Error: {display_name(model) if name is None else name} can't help with this. "
        "Start a new session to "
        "continue.\n\nLearn more: https://www.anthropic.com/legal/aup\n\n"
        f"Message ID: {message_id}"
    )


REFUSAL_NOTICE = (
    "Your response above was stopped by a safety classifier \u2014 this is not a tool or API "
    "error. The rest of it was withheld, and tool calls in it that had not finished did not "
    "run. Do not produce that content again, even reworded."
)
CONTINUING = "continuing once with that noted"

#: The synthetic user message after a stream that broke before any call (resumed up to 3 times).
CUT_OFF_NOTICE = (
    "Your response above was cut off mid-stream. Resume directly from where it stops \u2014 "
    "no apology, no recap. If none of it survived, answer the request from the start."
)

#: The synthetic message after three 529s with no fallback model (a custom base URL named).
REPEATED_OVERLOADS = (
    "API Error: Repeated 529 Overloaded errors. The API is at capacity \u2014 this is usually "
    "temporary. Try again in a moment. If it persists, check your inference gateway ({gateway})."
)

#: The synthetic user message after an answer stopped by max_tokens (resumed up to 3 times).
MAX_TOKENS_NOTICE = (
    "Output token limit hit. Resume directly \u2014 no apology, no recap of what you were "
    "doing. Pick up mid-thought if that is where the cut happened. Break remaining work into "
    "smaller pieces."
)
#: ... and the run's end when the fourth answer is cut as well.
#: ``limit`` is the run's output token limit: CLAUDE_CODE_MAX_OUTPUT_TOKENS when it
#: sets one, else the model's own (probed).
MAX_TOKENS_ERROR = (
    "API Error: Claude's response exceeded the {limit} output token maximum. To configure this "
    "behavior, set the CLAUDE_CODE_MAX_OUTPUT_TOKENS environment variable."
)
#: The synthetic user message after an answer with no content at all (once per turn).
NO_OUTPUT_NOTICE = (
    "[Your previous response had no visible output. Please continue and produce a "
    "user-visible response.]"
)


def chosen_model(
    setting: str | None,
    aliases: Mapping[str, str] = MODEL_ALIASES,
    known: AbstractSet[str] = KNOWN_MODELS,
) -> str | None:
    """
    The model id the CLI sends for an ANTHROPIC_MODEL setting, or None when it
    is unset or empty (the default model then).  Probed on 2.1.328: the value is
    trimmed; an alias, in any case and with or without the long-context suffix,
    becomes its model; any other name is sent as written, except that the
    suffix is cut out wherever it appears and, with it, a model the CLI knows
    (in any case) is sent as it spells it.  Other releases have other
    ``aliases`` and ``known`` models (their profile's).
    """
    if not setting:
        return None
    name = setting.strip()
    lowered = name.lower()
    alias = aliases.get(_without_suffix(lowered))
    if alias is not None:
        return alias
    if _without_suffix(lowered) in RETIRED_MODELS:
        return None  # the default model instead (probed on 2.1.235 and 2.1.328)
    if LONG_CONTEXT not in lowered:
        return name
    bare = _without_suffix(name)
    return bare.lower() if bare.lower() in known else bare


def unrecognized_model(
    setting: str | None,
    aliases: Mapping[str, str] = MODEL_ALIASES,
    known: AbstractSet[str] = KNOWN_MODELS,
) -> str | None:
    """
    The line the CLI prints on stderr when ANTHROPIC_MODEL names neither an
    alias nor a model it knows (in any case); a name with the long-context
    suffix is shown with the suffix at its end, in lower case.
    """
    if not setting:
        return None
    name = setting.strip()
    bare = _without_suffix(name.lower())
    if bare in aliases or _extends(bare, known):
        return None
    if LONG_CONTEXT in name.lower():
        name = name[: -len(LONG_CONTEXT)] if name.lower().endswith(LONG_CONTEXT) else name
        name += LONG_CONTEXT
    shown = json.dumps(
        {"model": name, "query_source": "sdk"}, ensure_ascii=False, separators=(",", ":")
    )
    return f"{UNRECOGNIZED_MODEL} {shown}"


def _without_suffix(name: str) -> str:
    out, at = [], 0
    lowered = name.lower()
    while (found := lowered.find(LONG_CONTEXT, at)) >= 0:
        out.append(name[at:found])
        at = found + len(LONG_CONTEXT)
    return "".join(out) + name[at:]


def _extends(name: str, known: AbstractSet[str]) -> bool:
    """
    Whether the CLI recognises ``name``: a model it knows, or one extending such an
    id (a dated snapshot, ``claude-opus-5-5`` on a release that knows ``claude-opus-5``;
    probed on 2.1.235 and 2.1.328).
    """
    return name in known or any(name.startswith(f"{k}-") for k in known)
