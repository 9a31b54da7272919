"""
Which semantic event might have printed a record: guesses, each checked by rendering.

For every record kind of every wire (`PROPOSERS`, one entry per CLI) the
events that print such a record are proposed with arguments read off the
record, plainest first (a bare event name before one with an argument, the
argument before a longer one).  Nothing here decides: `Stage.fits` keeps the
first proposal whose rendering reproduces the transcript.  Two kinds need
more than one look:

* a terminal ``result`` has arguments for what the fake cannot derive
  (``subtype``, ``errors``, ...); they are added from the differences
  between a trial rendering and the record, then ``extra``/``drop`` for
  fields the fake computes otherwise (usage of a real run, say);
* a lone result (``--output-format json``) hides the conversation before
  it: its message count (per model), turns and outcome are read back from
  the result, and a conversation that prints exactly that result is tried.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from harness.catalogue import agents
from harness.record.matcher import Stage, Step
from harness.record.transcript import Record
from providers_fake.cli import codebuddy as codebuddy_fake
from providers_fake.cli.claude import data as claude_data
from providers_fake.cli.jsonout import dumps_js

Candidate = tuple[list[Step], int]
Proposer = Callable[[Sequence[Record], int, list[Step], Stage], Iterator[Candidate]]

#: Result fields the fakes take as arguments, in the order they are tried.
_RESULT_FIELDS = (
    "subtype",
    "is_error",
    "result",
    "structured_output",
    "errors",
    "api_error_status",
    "api_error_type",
    "stop_reason",
    "terminal_reason",
)
#: How many fields ``extra``/``drop`` may set before a verbatim line reads better.
_MOST_EXTRA = 6
_ABSENT = "__absent__"
#: The fakes' usage per message (providers_fake.cli.claude.data): what a count is read from.
_TOKENS_IN = claude_data.INPUT_TOKENS


def _kind(value: Any) -> tuple[object, object]:
    if not isinstance(value, dict):
        return (None, None)
    return value.get("type"), value.get("subtype")


def _block(value: Any) -> dict[str, Any]:
    message = value.get("message") if isinstance(value, dict) else None
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, list) and content and isinstance(content[0], dict):
        return content[0]
    return {}


def _value(records: Sequence[Record], index: int) -> Any:
    return records[index].value if index < len(records) else None


# -- Claude Code (and CodeBuddy, which prints the same conversation) ---------------------------


def claude(
    records: Sequence[Record], i: int, chosen: list[Step], stage: Stage
) -> Iterator[Candidate]:
    value = records[i].value
    kind = _kind(value)
    if kind == ("system", "init"):
        # How many records the event prints is the CLI's (CodeBuddy: init, status, a snapshot).
        yield from _init(value, stage, agents.get(stage.driver).init_records)
    elif kind[0] == "assistant":
        yield from _assistant(records, i)
    elif kind[0] == "user":
        text = _block(value).get("text")
        if value.get("isSynthetic") and isinstance(text, str):
            yield ["enforce_reminder"], 1
            yield [{"enforce_reminder": text}], 1
    elif kind == ("system", "api_retry"):
        fields = {
            "attempt": value.get("attempt"),
            "status": value.get("error_status"),
            "error": value.get("error"),
            "delay_ms": value.get("retry_delay_ms"),
            "max_retries": value.get("max_retries"),
        }
        yield [{"api_retry": fields}], 1
    elif kind == ("system", "model_fallback"):
        fields = {
            "from": value.get("original_model"),
            "to": value.get("fallback_model"),
            "trigger": value.get("trigger"),
            "content": value.get("content"),
        }
        yield [{"model_fallback": fields}], 1
    elif kind == ("system", "thinking_tokens"):
        yield from _thinking(records, i)
    elif kind == ("system", "model_refusal_no_fallback"):
        after = _value(records, i + 1)
        if isinstance(after, dict) and "refused_message_id" in after:
            fields = {
                "message_id": after["refused_message_id"],
                "model": value.get("original_model"),
            }
            yield [{"refusal": fields}], 2
    elif kind == ("system", "informational"):
        after = _value(records, i + 1)
        if isinstance(after, dict) and "refused_message_id" in after:
            yield [{"refusal_continue": {"message_id": after["refused_message_id"]}}], 2
    elif kind == ("system", "model_refusal_fallback"):
        fields = {"from": value.get("original_model"), "to": value.get("fallback_model")}
        yield [{"refusal_fallback": fields}], 1
    elif kind[0] == "result":
        yield from result(records, i, chosen, stage, hidden=_claude_conversations)


def codebuddy(
    records: Sequence[Record], i: int, chosen: list[Step], stage: Stage
) -> Iterator[Candidate]:
    """
    CodeBuddy Code 2.117.0 (docs/codebuddy.md): on stream-json Claude's
    records in its own shapes, a StructuredOutput result whose text (not
    ``is_error``) says whether the input was taken, a snapshot alone for a
    re-ask; on json the array's session items.
    """
    value = records[i].value
    kind = _kind(value)
    if kind == ("system", "init"):
        # CodeBuddy's init event prints its records: init, status, a file-history snapshot.
        yield from _init(value, stage, agents.get(stage.driver).init_records)
        return
    if kind == ("message", None) and isinstance(value, dict) and value.get("role") == "user":
        yield ["init"], 2  # the json array: the prompt message, then a snapshot
        return
    if kind == ("file-history-snapshot", None):
        yield ["enforce_reminder"], 1
        yield ["recovery"], 1  # a tool it lacks: the request again, the same turn
        return
    if kind == ("function_call", None):
        yield from _codebuddy_calls(records, i, "function_call", _item_call)
        yield from _codebuddy_call(records, i)
        return
    if kind == ("message", None) and isinstance(value, dict):
        parts = value.get("content")
        texts = (
            [p.get("text") for p in parts if isinstance(p, dict)] if isinstance(parts, list) else []
        )
        if len(texts) == 1 and isinstance(texts[0], str):
            yield [{"text": texts[0]}], 1
            yield [{"unprinted_answer": texts[0]}], 1
        return
    if kind == ("assistant", None):
        block = _block(value)
        if block.get("type") == "tool_use" and block.get("name") == "StructuredOutput":
            yield from _codebuddy_calls(records, i, "assistant", _record_call)
            answer = _block(_value(records, i + 1))
            yield from _codebuddy_verdict(
                block.get("input"), _codebuddy_text(answer.get("content"))
            )
            return
        if not value.get("message", {}).get("usage", {}).get("output_tokens"):
            text = block.get("text")
            if isinstance(text, str):
                yield [{"api_error_message": {"text": text}}], 1
    yield from claude(records, i, chosen, stage)


def _codebuddy_call(records: Sequence[Record], i: int) -> Iterator[Candidate]:
    """A json-array ``function_call`` and its ``function_call_result``."""
    call, answer = records[i].value, _value(records, i + 1)
    if not isinstance(answer, dict) or call.get("name") != "StructuredOutput":
        return
    try:
        taken = json.loads(call.get("arguments") or "null")
    except ValueError:
        return
    output = answer.get("output")
    text = output.get("text") if isinstance(output, dict) else None
    yield from _codebuddy_verdict(taken, text)


#: One StructuredOutput call of a run of them: (call id, input, message id) or None.
_Call = tuple[str, object, object] | None


def _record_call(value: Any) -> _Call:
    """A stream-json assistant record holding one StructuredOutput call."""
    block = _block(value)
    if block.get("type") != "tool_use" or block.get("name") != "StructuredOutput":
        return None
    return str(block.get("id")), block.get("input"), value.get("message", {}).get("id")


def _item_call(value: Any) -> _Call:
    """A json-array ``function_call`` item to StructuredOutput."""
    if not isinstance(value, dict) or value.get("name") != "StructuredOutput":
        return None
    try:
        taken = json.loads(value.get("arguments") or "null")
    except ValueError:
        return None
    return str(value.get("callId")), taken, value.get("id")


def _result_text(value: Any) -> object:
    if isinstance(value, dict) and value.get("type") == "function_call_result":
        output = value.get("output")
        return output.get("text") if isinstance(output, dict) else None
    return _codebuddy_text(_block(value).get("content"))


def _codebuddy_calls(
    records: Sequence[Record], i: int, kind: str, read: Callable[[Any], _Call]
) -> Iterator[Candidate]:
    """Several calls of one message, then their results: ``structured_output_calls``."""
    calls: list[tuple[str, object, object]] = []
    while i + len(calls) < len(records):
        value = records[i + len(calls)].value
        call = read(value) if _kind(value)[0] == kind else None
        if call is None or (calls and call[2] != calls[0][2]):
            break
        calls.append(call)
    if len(calls) < 2:
        return
    shown: list[dict[str, Any]] = []
    for number, (call_id, value, _) in enumerate(calls):
        text = _result_text(_value(records, i + len(calls) + number))
        if not isinstance(text, str):
            return
        item: dict[str, Any] = {"id": call_id, "input": value}
        if text != codebuddy_fake.TOOL_ACCEPTED:
            item["error"] = text
        shown.append(item)
    yield [{"structured_output_calls": shown}], 2 * len(calls)


def _codebuddy_verdict(value: object, text: object) -> Iterator[Candidate]:
    if not isinstance(text, str):
        return
    if text == codebuddy_fake.TOOL_ACCEPTED:
        yield [{"structured_output": value}], 2
    else:
        yield [{"structured_output_rejected": {"input": value, "error": text}}], 2


def _codebuddy_text(content: object) -> str | None:
    if isinstance(content, list) and len(content) == 1 and isinstance(content[0], dict):
        text = content[0].get("text")
        return text if isinstance(text, str) else None
    return None


def _init(value: dict[str, Any], stage: Stage, count: int) -> Iterator[Candidate]:
    yield ["init"], count
    if isinstance(value.get("model"), str):
        yield [{"init": value["model"]}], count


def _assistant(records: Sequence[Record], i: int) -> Iterator[Candidate]:
    value = records[i].value
    block = _block(value)
    if value.get("is_api_error_message") or value.get("message", {}).get("model") == "<synthetic>":
        text = block.get("text")
        if isinstance(text, str):
            yield [{"api_error_message": text}], 1
            extra = {
                k: v
                for k, v in value.items()
                if k not in ("type", "message", "parent_tool_use_id", "session_id", "uuid",
                             "timestamp", "error", "is_api_error_message", "__timestamp",
                             "_requestId")
            }  # fmt: skip
            fields: dict[str, Any] = {"text": text, "error": value.get("error")}
            if extra:
                fields["extra"] = extra
            yield [{"api_error_message": fields}], 1
        return
    kind = block.get("type")
    if kind == "text" and isinstance(block.get("text"), str):
        yield [{"text": block["text"]}], 1
    elif kind == "tool_use":
        answer = _block(_value(records, i + 1))
        if answer.get("type") != "tool_result":
            return
        content = answer.get("content")
        if block.get("name") == "StructuredOutput":
            if answer.get("is_error") is True:
                error = content if isinstance(content, str) else None
                yield (
                    [{"structured_output_rejected": {"input": block.get("input"), "error": error}}],
                    2,
                )
            else:
                yield [{"structured_output": block.get("input")}], 2
        else:
            after = _value(records, i + 1)
            use = after.get("tool_use_result") if isinstance(after, dict) else None
            output = use.get("stdout") if isinstance(use, dict) else None
            fields = {
                "name": block.get("name"),
                "input": block.get("input"),
                "output": output if isinstance(output, str) else "",
                "is_error": answer.get("is_error") is True,
            }
            yield [{"tool": fields}], 2


def _thinking(records: Sequence[Record], i: int) -> Iterator[Candidate]:
    """thinking_tokens lines, then the thinking block: the deltas are read off the estimates."""
    end = i
    estimates: list[int] = []
    while _kind(_value(records, end)) == ("system", "thinking_tokens"):
        estimate = records[end].value.get("estimated_tokens")
        if not isinstance(estimate, int):
            return
        estimates.append(estimate)
        end += 1
    block = _block(_value(records, end))
    text = block.get("thinking")
    if block.get("type") != "thinking" or not isinstance(text, str):
        return
    # The fake estimates ceil(characters / 4) after each delta: cut the text at 4 x estimate.
    cuts = [min(len(text), 4 * e) for e in estimates[:-1]] + [len(text)]
    pieces = [text[a:b] for a, b in zip([0, *cuts], cuts, strict=False)]
    fields = {"thinking": text, "signature": block.get("signature"), "deltas": pieces}
    yield [{"thinking": fields}], end - i + 1


# -- the terminal result ----------------------------------------------------------------------

Hidden = Callable[[dict[str, Any]], Iterator[list[Step]]]


def result(
    records: Sequence[Record], i: int, chosen: list[Step], stage: Stage, *, hidden: Hidden
) -> Iterator[Candidate]:
    """The result event with the arguments that make it print this record (see the module doc)."""
    value = records[i].value
    before: list[list[Step]] = []
    if not chosen and i == 0:
        before += list(hidden(value))  # nothing printed before it: a json-mode result
    before.append([])
    found = [(p, _result_fields(value, [*chosen, *p], stage)) for p in before]
    # A conversation that explains the figures reads better than figures set by hand.
    found.sort(key=lambda pair: pair[1] is not None and ("extra" in pair[1] or "drop" in pair[1]))
    for prefix, fields in found:
        if fields is not None:
            yield [*prefix, {"result": fields} if fields else "result"], 1


def _differs(record: dict[str, Any], got: dict[str, Any], key: str) -> bool:
    if key not in record:
        return key == "structured_output" and key in got
    return key not in got or dumps_js(got[key]) != dumps_js(record[key])


def _result_fields(
    record: dict[str, Any], steps: list[Step], stage: Stage
) -> dict[str, Any] | None:
    """
    Arguments for `record`, one field at a time in `_RESULT_FIELDS` order (a subtype
    often brings its own is_error, errors and terminal reason), then ``extra``/``drop``.
    """
    fields: dict[str, Any] = {}
    for _ in range(len(_RESULT_FIELDS) + 1):
        got = stage.last([*steps, {"result": fields}])
        if not isinstance(got, dict) or got.get("type") != record.get("type"):
            return None
        key = next((k for k in _RESULT_FIELDS if _differs(record, got, k)), None)
        if key is None or key in fields:
            break
        fields[key] = record.get(key, _ABSENT)
    got = stage.last([*steps, {"result": fields}])
    if not isinstance(got, dict):
        return None
    # Fields the fake computes differently (a real run's usage and cost): set or drop them.
    keys = stage.keys
    extra = {
        k: v for k, v in record.items()
        if k not in keys and k not in fields and (k not in got or dumps_js(got[k]) != dumps_js(v))
    }  # fmt: skip
    drop = [k for k in got if k not in record and k not in keys]
    if len(extra) + len(drop) > _MOST_EXTRA:
        return None
    if extra:
        fields["extra"] = extra
    if drop:
        fields["drop"] = drop
    return fields


def _claude_conversations(record: dict[str, Any]) -> Iterator[list[Step]]:
    """Conversations that end in `record`, from its per-model message counts and its turns."""
    models: list[str | None] = []
    per_model = record.get("modelUsage")
    usage = record.get("usage")
    counts: list[tuple[str | None, object]] = (
        [(m, f.get("inputTokens") if isinstance(f, dict) else None) for m, f in per_model.items()]
        if isinstance(per_model, dict)
        else [(None, usage.get("input_tokens") if isinstance(usage, dict) else None)]
    )  # CodeBuddy reports one usage for all its messages
    for model, tokens in counts:
        if not isinstance(tokens, int) or tokens % _TOKENS_IN:
            return
        models += [model] * (tokens // _TOKENS_IN)
    turns = record.get("num_turns")
    if not isinstance(turns, int) or turns < 1:
        return
    users = turns - 1
    subtype = record.get("subtype")
    last: list[Step] = []
    if subtype == "success" and "structured_output" in record and models:
        last, users = [{"structured_output": record["structured_output"]}], users - 1
    elif subtype == "error_max_structured_output_retries" and models:
        errors = record.get("errors")
        text = (
            errors[0] if isinstance(errors, list) and errors and isinstance(errors[0], str) else ""
        )
        why = text.partition("last StructuredOutput error: ")[2] or None
        last, users = [{"structured_output_rejected": {"input": {}, "error": why}}], users - 1
    elif models:
        said = record.get("result")
        last = [{"text": said if isinstance(said, str) else ""}]
    earlier = len(models) - (1 if last else 0)
    if earlier < 0 or users < 0:
        return
    rejection = (
        last[0]
        if last and "structured_output_rejected" in last[0]
        else {"structured_output_rejected": {"input": {}}}
    )
    for prose_first in (subtype == "success" and "structured_output" not in record, True, False):
        middle = _middle(earlier, users, rejection, prose_first=prose_first)
        if middle is not None:
            steps = ["init", *middle, *last]
            yield _with_models(steps, models, name_first=False)
            yield _with_models(steps, models, name_first=True)


def _middle(messages: int, users: int, rejection: Step, *, prose_first: bool) -> list[Step] | None:
    """`messages` model messages and `users` user lines, as rejected calls and prose stops."""
    if prose_first:
        prose = min(messages, users)
        rejected = 0
    else:
        rejected = min(messages, users)
        prose = min(messages - rejected, users - rejected)
    reminders = users - rejected - prose
    texts = messages - rejected - prose
    if reminders or texts > 1:
        return None  # two texts in a row would be one message; a lone reminder cannot be told
    steps: list[Step] = [rejection] * rejected
    for _ in range(prose):
        steps += [{"text": ""}, "enforce_reminder"]
    empty: Step = {"text": ""}
    return steps + [empty] * texts


def _with_models(steps: list[Step], models: list[str | None], *, name_first: bool) -> list[Step]:
    """Each message's model: init's (named, or the default), then a fallback where it changes."""
    if not models or models[0] is None:
        return steps
    out: list[Step] = []
    message = 0
    current: str | None = models[0]
    for step in steps:
        if step == "init":
            out.append({"init": current} if name_first else "init")
            continue
        if _is_message(step):
            model = models[min(message, len(models) - 1)]
            if model != current:
                out.append({"model_fallback": {"from": current, "to": model}})
                current = model
            message += 1
        out.append(step)
    return out


def _is_message(step: Step) -> bool:
    return isinstance(step, dict) and next(iter(step)) in (
        "text",
        "structured_output",
        "structured_output_rejected",
    )


# -- Codex ------------------------------------------------------------------------------------


def codex(
    records: Sequence[Record], i: int, chosen: list[Step], stage: Stage
) -> Iterator[Candidate]:
    value = records[i].value
    kind = value.get("type")
    item = value.get("item") if isinstance(value.get("item"), dict) else {}
    if kind in ("thread.started", "turn.started"):
        yield [kind], 1
    elif kind == "item.completed" and item.get("type") == "error":
        yield ["warning"], 1
        yield [{"warning": item.get("message")}], 1
    elif kind == "item.completed" and item.get("type") == "agent_message":
        yield [{"agent_message": item.get("text")}], 1
    elif kind == "item.started" and item.get("type") == "agent_message":
        yield [{"agent_message.started": item.get("text")}], 1
    elif kind == "item.completed" and item.get("type") == "reasoning":
        yield [{"reasoning": item.get("text")}], 1
    elif kind == "error":
        yield ["error"], 1
        yield [{"error": value.get("message")}], 1
    elif kind == "turn.completed":
        yield ["turn.completed"], 1
        yield [{"turn.completed": value.get("usage")}], 1
    elif kind == "turn.failed":
        error = value.get("error")
        yield ["turn.failed"], 1
        if isinstance(error, dict):
            yield [{"turn.failed": error.get("message")}], 1


# -- Cursor -----------------------------------------------------------------------------------


def cursor(
    records: Sequence[Record], i: int, chosen: list[Step], stage: Stage
) -> Iterator[Candidate]:
    value = records[i].value
    kind = _kind(value)
    if kind == ("system", "init"):
        yield from _init(value, stage, 1)
    elif kind[0] in ("user", "assistant"):
        text = _block(value).get("text")
        if isinstance(text, str):
            if kind[0] == "user":
                yield ["user"], 1
            yield [{str(kind[0]): text}], 1
    elif kind[0] == "result":
        yield from result(records, i, chosen, stage, hidden=_cursor_fragments)


def _cursor_fragments(record: dict[str, Any]) -> Iterator[list[Step]]:
    """A json-mode result: the assistant fragments it joined (their count is in its usage)."""
    usage = record.get("usage")
    tokens = usage.get("outputTokens") if isinstance(usage, dict) else None
    text = record.get("result")
    if isinstance(tokens, int) and tokens % 7 == 0 and tokens and isinstance(text, str):
        empty: Step = {"assistant": ""}
        yield [{"assistant": text}, *[empty] * (tokens // 7 - 1)]


#: A proposer per wire; a CLI's is its wire's (`AgentCli.wire`).
_BY_WIRE: Mapping[agents.Wire, Proposer] = {"claude": claude, "codex": codex, "cursor": cursor}
#: Records that part from their wire's (`agents.AgentCli.records`) have proposers of their own.
_BY_RECORDS: Mapping[str, Proposer] = {"session-items": codebuddy}
PROPOSERS: Mapping[str, Proposer] = {
    cli.name: _BY_WIRE[cli.wire] if cli.records is None else _BY_RECORDS[cli.records]
    for cli in agents.AGENT_CLIS
}
