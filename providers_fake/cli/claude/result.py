"""
The terminal ``result`` record of Claude Code (and the rules CodeBuddy shares).

Claude Code builds its result from several objects, so the key order depends
on the outcome: a plain success, a success flagged ``is_error`` (an API
error), and an ``error_*`` subtype each have their own order in the
captures.  Usage follows two quirks the captures show: ``usage`` leaves out
the message whose tool result ended an ``error_*`` run, while ``modelUsage``
and the cost count every message; and with no message counted ``usage``
comes out of a different constructor, with ``output_tokens_details`` first.
"""

from __future__ import annotations

from providers_fake.cli.base import finalize
from providers_fake.cli.claude import data
from providers_fake.cli.ids import Ids
from providers_fake.cli.jsonout import dumps_js
from providers_fake.cli.types import ScriptError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

ABSENT = "__absent__"


class ResultState:
    """What the run so far says about the result."""

    def __init__(self) -> None:
        self.messages: list[str] = []  # the model of each real assistant message
        self.user_lines = 0  # tool results and reminders; each starts another turn
        self.accepted: tuple[object] | None = None  # the accepted StructuredOutput input
        self.last_text: str | None = None
        self.last_block: str | None = None
        self.synthetic = False
        self.rejections = 0
        self.last_rejection: str | None = None
        #: The model stopped with "refusal" and no fallback took over: the terminal reason
        #: ("completed" when the refused message had delivered its object, else "api_error").
        self.refused: str | None = None

    @property
    def num_turns(self) -> int:
        return 1 + self.user_lines


def outcome(fields: dict[str, object], refused: bool = False) -> tuple[str, bool]:
    subtype = fields.get("subtype", "success")
    if not isinstance(subtype, str):
        raise ScriptError("event 'result': 'subtype' must be a string")
    is_error = fields.get("is_error", subtype != "success" or refused)
    if not isinstance(is_error, bool):
        raise ScriptError("event 'result': 'is_error' must be a boolean")
    return subtype, is_error


def result_text(state: ResultState, fields: dict[str, object]) -> str:
    if "result" in fields:
        text = fields["result"]
        if not isinstance(text, str):
            raise ScriptError("event 'result': 'result' must be a string")
        return text
    if state.accepted is not None:
        return dumps_js(state.accepted[0])
    return state.last_text or ""


def structured(state: ResultState, fields: dict[str, object]) -> tuple[object] | None:
    """The structured_output value, wrapped so that a JSON null stays distinguishable."""
    if "structured_output" in fields:
        value = fields["structured_output"]
        return None if value == ABSENT else (value,)
    return state.accepted


def errors(
    state: ResultState,
    subtype: str,
    fields: dict[str, object],
    env: Mapping[str, str],
    max_turns: str | None,
) -> list[object]:
    given = fields.get("errors")
    if given is not None:
        if not isinstance(given, list):
            raise ScriptError("event 'result': 'errors' must be a list")
        return given
    explain = _ERRORS.get(subtype)
    return [] if explain is None else [explain(state, env, max_turns)]


def _retries_exhausted(state: ResultState, env: Mapping[str, str], max_turns: str | None) -> str:
    # The CLI names its limit (an integer override, zero included), not the calls it saw.
    override = env.get("MAX_STRUCTURED_OUTPUT_RETRIES", "").strip()
    limit = override if override.lstrip("-").isdigit() else None
    attempts = limit or state.rejections or 5
    message = f"Failed to provide valid structured output after {attempts} attempts"
    if state.last_rejection:
        message += f" — last StructuredOutput error: {state.last_rejection}"
    return message


def _turns_exhausted(state: ResultState, env: Mapping[str, str], max_turns: str | None) -> str:
    return f"Reached maximum number of turns ({max_turns or state.num_turns - 1})"


# The ``errors`` entry an ``error_*`` result carries by default; other subtypes carry none.
_ERRORS: dict[str, Callable[[ResultState, Mapping[str, str], str | None], str]] = {
    "error_max_structured_output_retries": _retries_exhausted,
    "error_max_turns": _turns_exhausted,
}


def stop_reason(state: ResultState, fields: dict[str, object]) -> object:
    if "stop_reason" in fields:
        return fields["stop_reason"]
    if state.refused is not None:
        return "refusal"
    if state.synthetic and state.accepted is None:
        return "stop_sequence"  # the synthetic error message is the last word
    if state.last_block is not None:
        return "tool_use" if state.last_block == "tool_use" else "end_turn"
    return "stop_sequence" if state.synthetic else "end_turn"


def _usage(messages: int) -> dict[str, object]:
    tail: dict[str, object] = {
        "server_tool_use": {"web_search_requests": 0, "web_fetch_requests": 0},
        "service_tier": "standard",
        "cache_creation": {"ephemeral_1h_input_tokens": 0, "ephemeral_5m_input_tokens": 0},
        "inference_geo": "",
        "iterations": [],
        "speed": "standard",
        "fallback_credit": None,
    }
    details = {"output_tokens_details": {"thinking_tokens": 0}}
    counts = {
        "input_tokens": data.INPUT_TOKENS * messages,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
        "output_tokens": data.OUTPUT_TOKENS * messages,
    }
    head = {**details, **counts} if messages == 0 else {**counts, **details}
    return {**head, **tail}


def _model_usage(models: list[str]) -> tuple[dict[str, object], float]:
    usage: dict[str, dict[str, object]] = {}
    costs: dict[str, float] = {}
    total: float = 0
    for model in models:
        cost = data.message_cost(model)
        total += cost
        costs[model] = costs.get(model, 0) + cost
        count = models.count(model)
        usage[model] = {
            "inputTokens": data.INPUT_TOKENS * count,
            "outputTokens": data.OUTPUT_TOKENS * count,
            "cacheReadInputTokens": 0,
            "cacheCreationInputTokens": 0,
            "webSearchRequests": 0,
            "costUSD": costs[model],
            "contextWindow": 1000000,
            "maxOutputTokens": data.max_output_tokens(model),
            "thinkingTokens": 0,
            "cacheCreationEphemeral5mInputTokens": 0,
            "cacheCreationEphemeral1hInputTokens": 0,
            "canonicalModel": model,
            "provider": "firstParty",
            "costBasis": "list",
        }
    return dict(usage), total


def build_result(
    state: ResultState,
    fields: dict[str, object],
    *,
    session_id: str,
    ids: Ids,
    stream: bool,
    env: Mapping[str, str],
    max_turns: str | None,
) -> dict[str, object]:
    subtype, is_error = outcome(fields, state.refused is not None)
    failed = subtype != "success"
    counted = len(state.messages) - (1 if failed and state.messages else 0)
    model_usage, total_cost = _model_usage(state.messages)
    api_ms = 0 if not state.messages else 25 + 30 * len(state.messages) + ids.below(30)
    request_ms = 85 + ids.below(50)
    stream_ms = request_ms + 10 + ids.below(10)
    frame_ms = stream_ms + ids.below(2)
    ttft_ms = frame_ms + ids.below(3)
    duration_ms = max(ids.elapsed_ms(), ttft_ms) + 15 + ids.below(30)
    common: dict[str, object] = {
        "stop_reason": stop_reason(state, fields),
        "session_id": session_id,
        "total_cost_usd": total_cost,
        "usage": _usage(counted),
        "modelUsage": model_usage,
        "permission_denials": [],
        "terminal_reason": fields.get(
            "terminal_reason", state.refused or _terminal_reason(subtype, is_error)
        ),
        "fast_mode_state": "off",
        "fast_mode_disabled_reason": "sdk_opt_in_required",
        "subagent_stats": _copy(data.SUBAGENT_STATS),
        "safety_stops": 0 if state.refused is None else 1,
    }
    record: dict[str, object]
    if failed:
        record = {"is_error": is_error, "duration_api_ms": api_ms, "num_turns": state.num_turns}
        record.update(common)
        record["subtype"] = subtype
        record["errors"] = errors(state, subtype, fields, env, max_turns)
    else:
        record = {"duration_api_ms": api_ms, **common}
        record.update(is_error=is_error, num_turns=state.num_turns, subtype=subtype)
        record["api_error_status"] = fields.get("api_error_status")
        if "api_error_type" in fields:
            record["api_error_type"] = fields["api_error_type"]
        record["result"] = result_text(state, fields)
        value = structured(state, fields)
        if value is not None:
            record["structured_output"] = value[0]
    timed = not failed and bool(state.messages) and state.refused is None
    if timed:
        record["ttft_ms"] = ttft_ms
    record.update(type="result", duration_ms=duration_ms, uuid=ids.uuid4())
    if timed:
        record.update(ttft_stream_ms=stream_ms, time_to_request_ms=request_ms)
        record["first_content_frame_ms"] = frame_ms
    record.update(queued_turn_count=0, result_index=0)
    if stream:
        record["model_usage_since_last_result"] = _copy(model_usage)
    return finalize(record, fields)


def _terminal_reason(subtype: str, is_error: bool) -> str:
    if subtype == "success" and is_error:
        return "api_error"
    return data.TERMINAL_REASONS.get(subtype, "model_error")


# What ``--output-format text`` prints for a result without result text, by subtype.
_TEXT_MODE_ERRORS = {
    "error_max_structured_output_retries": (
        "Error: Failed to provide valid structured output after maximum retries"
    ),
    "error_max_turns": "Error: Reached max turns ({turns})",
    "error_max_budget_usd": "Error: Exceeded USD budget",
}


def text_mode_line(record: dict[str, object], max_turns: str | None) -> str:
    """What ``--output-format text`` prints for a result."""
    if "result" in record and isinstance(record["result"], str):
        return record["result"]
    subtype = record.get("subtype")
    # A script's ``extra`` may make the subtype anything; only the known strings have a line.
    line = _TEXT_MODE_ERRORS.get(subtype) if isinstance(subtype, str) else None
    if line is None:
        return "Execution error"
    return line.format(turns=max_turns or record.get("num_turns"))


def _copy(value: object) -> object:
    if isinstance(value, dict):
        return {key: _copy(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_copy(item) for item in value]
    return value
