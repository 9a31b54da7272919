"""
What Claude Code prints beyond the structured-output loop: refusals, other tools, thinking.

A refusal stop is continued once with a note to the model (system/informational
and a synthetic user line), then ends the run with a synthetic API-error
message after system/model_refusal_no_fallback; with a refusal fallback armed
the refused answer is retracted instead.  A tool other than StructuredOutput
(``Bash``, say) is an assistant line and a user line with its result, and
leaves the structured-output state alone.  A thinking block is announced by a
system/thinking_tokens line per streamed delta (a running estimate of four
characters a token), then printed as its own assistant line.  The renderer calls these with
itself, so that the record shapes stay where CodeBuddy can override them.
"""

from __future__ import annotations

from providers_fake.cli.base import str_field
from providers_fake.cli.claude import data
from providers_fake.cli.types import ScriptError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from providers_fake.cli.claude.render import ClaudeRenderer


def refusal(renderer: ClaudeRenderer, fields: dict[str, object]) -> None:
    """The model stopped with ``refusal`` and no fallback is armed: the run ends in error."""
    default_id = f"msg_{max(renderer.requests - 1, 0)}"
    message_id = str_field("refusal", fields, "message_id", default_id)
    model = str_field("refusal", fields, "model", renderer.model)
    renderer._close_message()
    ids = renderer.ids
    renderer.emit(
        {
            "type": "system",
            "subtype": "model_refusal_no_fallback",
            "uuid": ids.uuid4(),
            "original_model": model,
            "request_id": None,
            "api_refusal_category": None,
            "api_refusal_explanation": None,
            "refused_user_message_uuid": ids.uuid4(),
            "content": "",
            "session_id": renderer.session_id,
        }
    )
    # The results of the refused message's rejected calls come between the line and
    # the refusal's message (probed on 2.1.328 and 2.1.332).
    results = fields.get("results", [])
    if not isinstance(results, list) or not all(isinstance(r, dict) for r in results):
        raise ScriptError("event 'refusal': 'results' must be a list of tool_result fields")
    for result in results:
        tool_result(renderer, result)
    shown = fields.get("message", True)
    if not isinstance(shown, bool):
        raise ScriptError("event 'refusal': 'message' must be a boolean")
    if not shown:
        return  # the run ends otherwise (its attempts spent): no message of the refusal's
    text = str_field("refusal", fields, "text", data.refusal_text(model, message_id))
    record = renderer.synthetic_record(text, "invalid_request")
    message = record["message"]
    if isinstance(message, dict):
        message["stop_reason"] = "refusal"
    record["refused_message_id"] = message_id
    renderer.emit(record)
    state = renderer.state
    state.last_text, state.synthetic = text, True
    # An object the refused message had delivered is withdrawn; the terminal says so.
    state.refused = "completed" if state.accepted is not None else "api_error"
    state.accepted = None


def refusal_continue(renderer: ClaudeRenderer, fields: dict[str, object]) -> None:
    """A refusal stop the CLI continues from once, telling the model why."""
    message_id = str_field("refusal_continue", fields, "message_id", "msg_0")
    notice = fields.get("notice", True)
    if not isinstance(notice, bool):
        raise ScriptError("event 'refusal_continue': 'notice' must be a boolean")
    renderer._close_message()
    name = data.display_name(renderer.model)
    said = f"{name}'s safeguards stopped the response above \u00b7 {data.CONTINUING}"
    if notice:  # the releases that continue but print no notice leave it out
        renderer.emit(
            {
                "type": "system",
                "subtype": "informational",
                "content": said,
                "level": "notice",
                "uuid": renderer.ids.uuid4(),
                "session_id": renderer.session_id,
            }
        )
    record = renderer.reminder_record(data.REFUSAL_NOTICE)
    record["refused_message_id"] = message_id
    renderer.emit(record)
    renderer.state.user_lines += 1


def refusal_fallback(renderer: ClaudeRenderer, fields: dict[str, object]) -> None:
    """A refusal retried on the armed fallback model: the refused answer is retracted."""
    original = str_field("refusal_fallback", fields, "from", renderer.model)
    fallback = str_field("refusal_fallback", fields, "to", renderer.fallback_model)
    renderer._close_message()
    renderer.emit(
        {
            "type": "system",
            "subtype": "model_refusal_fallback",
            "uuid": renderer.ids.uuid4(),
            "direction": "retry",
            "original_model": original,
            "fallback_model": fallback,
            "content": f"Retried with {data.display_name(fallback)}",
            "session_id": renderer.session_id,
        }
    )
    renderer.state.accepted = None  # the retracted object must not reach the result
    renderer.model = fallback


def tool(renderer: ClaudeRenderer, fields: dict[str, object]) -> None:
    """
    A call of another tool and its result: ``{name, input, output, is_error}``.

    The output is what the tool printed (``(NAME completed with no output)`` when
    it printed nothing, as the CLI says for Bash).
    """
    name = str_field("tool", fields, "name", "Bash")
    output = str_field("tool", fields, "output", "")
    failed = fields.get("is_error", False)
    if not isinstance(failed, bool):
        raise ScriptError("event 'tool': 'is_error' must be a boolean")
    tool_id = renderer.tool_call(name, fields.get("input", {}))
    renderer._close_message()
    content = output or f"({name} completed with no output)"
    block = {"tool_use_id": tool_id, "type": "tool_result", "content": content, "is_error": failed}
    ids = renderer.ids
    ids.advance(4, 16)
    renderer.emit(
        {
            "type": "user",
            "message": {"role": "user", "content": [block]},
            "parent_tool_use_id": None,
            "session_id": renderer.session_id,
            "uuid": ids.uuid4(),
            "timestamp": ids.iso(),
            "tool_use_result": {
                "stdout": output,
                "stderr": "",
                "interrupted": False,
                "isImage": False,
                "noOutputExpected": False,
            },
            "tool_result_meta": [
                {
                    "id": tool_id,
                    "permission_decision": {
                        "decision": "accept",
                        "source": "config",
                        "reason_type": "rule",
                    },
                }
            ],
        }
    )
    renderer.state.user_lines += 1


def tool_use(renderer: ClaudeRenderer, fields: dict[str, object]) -> None:
    """
    A tool_use block alone: ``{name, input, id}``.  The CLI runs calls while the
    answer streams, so a call's line and its result's line need not be next to
    each other; `tool_result` prints the result when it is in, and both leave
    the answer's message open (its later blocks share its id) until
    ``answer_end``.
    """
    name = str_field("tool_use", fields, "name", "Bash")
    given = fields.get("id")
    renderer.tool_call(name, fields.get("input", {}), given if isinstance(given, str) else None)


def tool_result(renderer: ClaudeRenderer, fields: dict[str, object]) -> None:
    """
    The user line answering a call: ``{block, tool_use_result, meta}`` as the
    CLI shapes them, plus ``structured_output`` (an accepted object) or
    ``rejection`` (a StructuredOutput error) for the result record.
    """
    block = fields.get("block")
    if not isinstance(block, dict):
        raise ScriptError("event 'tool_result': 'block' must be an object")
    ids = renderer.ids
    ids.advance(4, 16)
    record: dict[str, object] = {
        "type": "user",
        "message": {"role": "user", "content": [dict(block)]},
        "parent_tool_use_id": None,
        "session_id": renderer.session_id,
        "uuid": ids.uuid4(),
        "timestamp": ids.iso(),
        "tool_use_result": fields.get("tool_use_result", block.get("content")),
    }
    meta = fields.get("meta")
    if meta is not None:
        record["tool_result_meta"] = meta
    renderer.emit(record)
    state = renderer.state
    state.user_lines += 1
    if "structured_output" in fields:
        state.accepted = (fields["structured_output"],)
    rejection = fields.get("rejection")
    if isinstance(rejection, str):
        state.rejections += 1
        state.last_rejection = rejection


def permission_denied(renderer: ClaudeRenderer, fields: dict[str, object]) -> None:
    """The system line for a call the CLI's permission rules refused: ``{name, id, message}``."""
    record: dict[str, object] = {
        "type": "system",
        "subtype": "permission_denied",
        "tool_name": str_field("permission_denied", fields, "name", "Bash"),
        "tool_use_id": str_field("permission_denied", fields, "id", "toolu_0"),
        "message": str_field("permission_denied", fields, "message", ""),
    }
    for key in ("decision_reason_type", "decision_reason"):
        if key in fields:
            record[key] = fields[key]
    record.update(uuid=renderer.ids.uuid4(), session_id=renderer.session_id)
    renderer.emit(record)


#: Characters per token in the CLI's running estimate of a thinking block.
CHARS_PER_TOKEN = 4


def thinking(renderer: ClaudeRenderer, fields: dict[str, object]) -> None:
    """A thinking block: ``{thinking, signature, deltas}`` (the pieces it streamed in)."""
    text = str_field("thinking", fields, "thinking", "")
    signature = str_field("thinking", fields, "signature", f"sig_{renderer.requests}")
    deltas = fields.get("deltas", [text])
    if not isinstance(deltas, list) or not all(isinstance(d, str) for d in deltas):
        raise ScriptError("event 'thinking': 'deltas' must be a list of strings")
    seen = shown = 0
    for piece in deltas:
        seen += len(piece)
        estimate = -(-seen // CHARS_PER_TOKEN)
        renderer.emit(
            {
                "type": "system",
                "subtype": "thinking_tokens",
                "estimated_tokens": estimate,
                "estimated_tokens_delta": estimate - shown,
                "session_id": renderer.session_id,
                "uuid": renderer.ids.uuid4(),
            }
        )
        shown = estimate
    block: dict[str, object] = {"type": "thinking", "thinking": text, "signature": signature}
    extra: dict[str, object] = {"thinking_duration_ms": 1, "thinking_display": "updates"}
    renderer._assistant_block(block, extra)


def notice(renderer: ClaudeRenderer, fields: dict[str, object]) -> None:
    """
    A notice of the CLI's own (``{text, level}``), not of the conversation: a
    system/informational line in stream-json, a line on stderr otherwise.
    """
    text = str_field("notice", fields, "text", "")
    if renderer.mode != "stream-json":
        renderer.out.stderr((text + "\n").encode())
        return
    renderer._close_message()
    renderer.emit(
        {
            "type": "system",
            "subtype": "informational",
            "content": text,
            "isMeta": False,
            "level": str_field("notice", fields, "level", "warning"),
            "timestamp": renderer.ids.iso(),
            "uuid": renderer.ids.uuid4(),
            "session_id": renderer.session_id,
        }
    )


def compact_failed(renderer: ClaudeRenderer, fields: dict[str, object]) -> None:
    """
    The CLI's try at compacting the conversation after a 413 later in a
    session, given up before any request (``{error}``: ``too_few_groups``
    when the conversation holds a single answer): two system/status lines in
    stream-json, nothing otherwise (probed on 2.1.328).
    """
    if renderer.mode != "stream-json":
        return
    renderer._close_message()
    session = renderer.session_id
    compacting = {"status": "compacting", "compact_output_chars": 0}
    renderer.emit(
        {
            "type": "system",
            "subtype": "status",
            **compacting,
            "session_id": session,
            "uuid": renderer.ids.uuid4(),
        }
    )
    error = str_field("compact_failed", fields, "error", "too_few_groups")
    failed = {"status": None, "compact_result": "failed", "compact_error": error}
    renderer.emit(
        {
            "type": "system",
            "subtype": "status",
            **failed,
            "session_id": session,
            "uuid": renderer.ids.uuid4(),
        }
    )
