"""
The wire side of the reference model of Claude Code: what it sends, what it reads.

`tool_definition` and `request_body` shape ``POST /v1/messages`` as the real
CLI does (the StructuredOutput tool, the cache mark on the last block);
`read_answer` reads the SSE stream into the blocks that completed, noting an
SSE ``error`` (the mid-stream case) apart from a connection that closed
before ``message_stop`` (retried whole), and keeps each tool call's input as
the JSON text that streamed (the CLI parses it with JavaScript's number
semantics); `read_message` reads the one JSON message of a request sent
without streaming; `failure_of` reads a plain HTTP error.  The loop that
decides what to do with them is `harness.systems.claude.loop`.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, cast

from harness import net
from harness.catalogue import jsonvalue
from harness.catalogue.lines import sse_lines
from harness.systems.claude.failures import Failure
from providers_fake.cli.claude import data

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping, Sequence

TOOL_NAME = "StructuredOutput"
TOOL_DESCRIPTION = (
    "Use this tool to return your final response in the requested structured format. "
    "You MUST call this tool exactly once at the end of your response to provide the "
    "structured output."
)
_EPHEMERAL = {"type": "ephemeral"}
#: The values by which the CLI reads a boolean environment setting as on.
TRUTHY = frozenset({"1", "true", "yes", "on"})
HEADERS = {"anthropic-version": "2023-06-01", "x-api-key": "reference-model"}
SENT = {**HEADERS, "content-type": "application/json"}


def env_on(value: str | None) -> bool:
    """A boolean environment setting as the CLI reads it (trimmed, any case)."""
    return value is not None and value.strip().lower() in TRUTHY


def encoded(body: Mapping[str, Any]) -> bytes:
    """
    A request body as the CLI sends it: UTF-8, where a lone surrogate (from an
    escape in the schema, say) becomes U+FFFD (probed), and Python's encoder
    would fail.
    """
    text = json.dumps(body, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return _LONE_SURROGATE.sub("\ufffd", text).encode()


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def tool_definition(
    schema: Mapping[str, Any], strict: Mapping[str, Any] | None = None
) -> dict[str, object]:
    """The StructuredOutput tool; with a strict schema, that one goes on the wire instead."""
    if strict is None:
        return {"name": TOOL_NAME, "description": TOOL_DESCRIPTION, "input_schema": dict(schema)}
    return {
        "name": TOOL_NAME,
        "description": TOOL_DESCRIPTION,
        "input_schema": dict(strict),
        "strict": True,
    }


def request_body(  # noqa: PLR0917 - one call site, each argument a different thing
    model: str,
    effort: str,
    prompt: str,
    history: Sequence[dict[str, Any]],
    tool: dict[str, object],
    resumed: Sequence[dict[str, Any]] = (),
    *,
    stream: bool = True,
    caching: bool = True,
    tail: str | None = None,
) -> dict[str, object]:
    """
    The Messages API body of one request; ``tail`` is a text block after the
    cache mark of the last message, sent with this request only (B-35).
    """
    messages = joined(
        [
            *(json.loads(json.dumps(m)) for m in resumed),
            asked(prompt, resumed=bool(resumed)),
            *(json.loads(json.dumps(m)) for m in history),
        ]
    )
    last = messages[-1]
    # The last message goes as blocks when it carries the cache mark or a tail; a
    # user message always does, a system note without the mark stays a string
    # (DISABLE_PROMPT_CACHING; probed on 2.1.235, 2.1.328 and 2.1.332).
    if isinstance(last["content"], str) and (caching or tail is not None or last["role"] == "user"):
        last["content"] = [{"type": "text", "text": last["content"]}]
    if caching:  # DISABLE_PROMPT_CACHING leaves the last block without the mark (probed)
        messages[-1]["content"][-1]["cache_control"] = dict(_EPHEMERAL)
    if tail is not None:
        messages[-1]["content"].append({"type": "text", "text": tail})
    return {
        "model": model,
        "messages": messages,
        "system": [{"type": "text", "text": "You are Claude Code, Anthropic's official CLI."}],
        "tools": [tool],
        "metadata": {"user_id": "reference-model"},
        "max_tokens": 32000,
        "thinking": {"type": "adaptive"},
        "context_management": {"edits": []},
        "output_config": {"effort": effort},
        "stream": stream,
    }


def joined(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """
    The conversation with each run of user messages sent as one, as the CLI
    sends it (probed): an empty answer leaves no assistant message, so the
    nudge after it follows the note or results before it.  String contents
    become text blocks, and a text block followed by a text block gets a
    line break at the seam, whatever it ends with.
    """
    out: list[dict[str, Any]] = []
    notes = _Notes()
    for message in messages:
        last = out[-1] if out else None
        if message["role"] == NOTE:
            notes.place(out, message["content"])
            continue
        if last is None or last["role"] != "user" or message["role"] != "user":
            out.append(message)
            continue
        before, after = _blocks(last["content"]), _blocks(message["content"])
        seam = before[-1] if before else None
        added = bool(seam and after and seam.get("type") == "text")
        added = added and after[0].get("type") == "text"
        if added:
            seam["text"] = f"{seam['text']}\n"  # type: ignore[index]  # even after one there
        last["content"] = [*before, *after]
        notes.joined = (last, len(before), added)
    return out


#: The role of a note placed on the wire (`_place_note`), never sent as such.
NOTE = "note"


@dataclass
class _Notes:
    """Where `NOTE` messages go as `joined` meets them (`place`)."""

    #: System messages made of notes, which later notes in a row join.
    made: list[dict[str, Any]] = field(default_factory=list)
    #: The last user message joined to the one before: that message, the index of
    #: the joined message's first block, and whether the seam added a line break.
    joined: tuple[dict[str, Any], int, bool] | None = None

    def place(self, out: list[dict[str, Any]], text: str) -> None:
        """
        A note for a model that takes notes in a tool result (`models.IN_RESULT`),
        already wrapped: appended to the last tool result of the user message
        before it, after the user's prompt joined to those results too (a
        resumed turn's prompt follows the earlier turn's results in one message;
        probed on 2.1.328 with the token note and ToolSearch's).  Without such a
        result, a text block of that user message before the last message joined
        to it (a resumed turn's prompt, the enforce reminder), ending in a line
        break, and with no seam's line break before it (probed on 2.1.328); after
        anything else, a system message of its own, the notes in a row joined by
        a blank line.
        """
        last = out[-1] if out else None
        if last is not None and last["role"] == "user":
            blocks = _blocks(last["content"])
            results = [b for b in blocks if b.get("type") == "tool_result"]
            if results and isinstance(results[-1].get("content"), str):
                block = results[-1]
                noted = {**block, "content": f"{block['content']}\n\n{text}"}
                last["content"] = [noted if b is block else b for b in blocks]
                return
            at, seam = len(blocks) - 1, False
            if self.joined is not None and self.joined[0] is last:
                _, at, seam = self.joined
            if seam:  # the note comes between the texts the seam's break was for
                blocks[at - 1] = {**blocks[at - 1], "text": blocks[at - 1]["text"][:-1]}
            blocks.insert(at, {"type": "text", "text": f"{text}\n"})
            last["content"] = blocks
            # The line break is the seam's: a note placed after this one takes it
            # (probed on 2.1.328 with the task tools' reminder and the token note).
            self.joined = (last, at + 1, True)
            return
        if last is not None and any(last is m for m in self.made):
            last["content"] = f"{last['content']}\n\n{text}"
            return
        made = {"role": "system", "content": text}
        self.made.append(made)
        out.append(made)


def _blocks(content: object) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return list(cast("list[dict[str, Any]]", content))


@dataclass
class Answer:
    """One 200 answer, as far as the stream got."""

    blocks: list[dict[str, Any]] = field(default_factory=list)
    stop_reason: str | None = None
    midstream_error: bool = False
    #: The connection closed before ``message_stop``: the CLI retries the request whole.
    truncated: bool = False
    message_id: str = "msg_0"
    #: The last text block, blank or not: a run that ends on this answer's prose has it
    #: as its result even when it is not shown.
    last_text: str | None = None
    #: The last text block after a tool call, blank or not (a blank one is the result
    #: of a run its call ended: probed, anthropics/claude-code#36033).
    text_after_call: str | None = None

    def take(self, block: dict[str, Any]) -> None:
        """
        A completed block; a blank text block is neither shown nor sent back
        (probed), but an empty one is kept, marked `EMPTY`: some releases send
        it back (B-37).
        """
        text = block.get("text")
        if block.get("type") == "text" and isinstance(text, str):
            self.last_text = text
            if any(b.get("type") == "tool_use" for b in self.blocks):
                self.text_after_call = text
            if text == "":
                self.blocks.append({**block, EMPTY: True})
                return
            if not text.strip():
                return
        self.blocks.append(block)


#: The mark of an empty text block among an answer's blocks (never sent as such).
EMPTY = "harness-empty"


def shown(block: dict[str, Any]) -> bool:
    """Whether a block is something the user sees: a text that is not empty, or a call."""
    return block["type"] in ("text", "tool_use") and not block.get(EMPTY)


def _sse_events(lines: Iterator[str]) -> Iterator[tuple[str, dict[str, Any]]]:
    name, data_lines = "", cast("list[str]", [])
    for line in lines:
        if not line:
            if data_lines:
                yield name, jsonvalue.loads("\n".join(data_lines))
            name, data_lines = "", cast("list[str]", [])
        elif line.startswith("event:"):
            name = line[6:].strip()
        elif line.startswith("data:"):
            data_lines.append(line[5:].strip())
    if data_lines:
        yield name, jsonvalue.loads("\n".join(data_lines))


def read_answer(response: net.Response) -> Answer:
    answer = Answer()
    partial: dict[int, str] = {}
    open_blocks: dict[int, dict[str, Any]] = {}
    stopped = False
    try:
        for kind, event in _sse_events(sse_lines(response.iter_text())):
            if kind == "error" or event.get("type") == "error":
                answer.midstream_error = True
                return answer
            if kind == "message_start":
                answer.message_id = str(event.get("message", {}).get("id", answer.message_id))
            elif kind == "message_stop":
                stopped = True
            elif kind == "content_block_start":
                open_blocks[event["index"]] = dict(event["content_block"])
                partial[event["index"]] = ""
            elif kind == "content_block_delta":
                delta, block = event["delta"], open_blocks[event["index"]]
                if delta["type"] == "text_delta":
                    block["text"] = block.get("text", "") + delta["text"]
                elif delta["type"] == "input_json_delta":
                    partial[event["index"]] += delta["partial_json"]
                elif delta["type"] == "thinking_delta":
                    block["thinking"] = block.get("thinking", "") + delta["thinking"]
                    block.setdefault("deltas", []).append(delta["thinking"])
                elif delta["type"] == "signature_delta":
                    block["signature"] = delta["signature"]
            elif kind == "content_block_stop":
                block = open_blocks.pop(event["index"])
                if block["type"] == "tool_use":
                    block["raw"] = partial[event["index"]] or "{}"
                    block["input"] = jsonvalue.loads(block["raw"])
                answer.take(block)
            elif kind == "message_delta":
                answer.stop_reason = event["delta"].get("stop_reason")
    except net.TimeoutException:
        raise  # not a broken stream: the caller's time is up
    except (net.TransportError, ValueError, KeyError):
        pass
    answer.truncated = not stopped
    return answer


def read_message(response: net.Response, reparses: bool = False) -> Answer:
    """
    A non-streamed answer: one JSON message (a body that is not one is a cut
    answer).  With ``reparses`` a call's input given as a JSON string is read
    as the CLI reads it (`reparsed`, B-46).
    """
    answer = Answer()
    try:
        response.read()
        message = response.json()
        answer.message_id = str(message.get("id", answer.message_id))
        answer.stop_reason = message.get("stop_reason")
        for block in message["content"]:
            kept = dict(block)
            if kept.get("type") == "tool_use":
                given = kept.get("input", {})
                if reparses and isinstance(given, str):
                    kept["input"] = given = reparsed(given)
                kept["raw"] = json.dumps(given)
            answer.take(kept)
    except net.TimeoutException:
        raise
    except (net.TransportError, ValueError, KeyError, TypeError, AttributeError):
        answer.truncated = True  # a body cut off is a cut answer, as a cut stream is
    return answer


#: Where the CLI keeps a call's input it could not read as JSON (read in 2.1.328).
UNPARSED = "__unparsedToolInput"
#: How much of such an input the wrapper keeps, in UTF-16 code units.
UNPARSED_KEPT = 2048


def reparsed(text: str) -> object:
    """
    A call's input that a non-streamed answer gave as a JSON string, as the
    CLI holds it (B-46, read in 2.1.328 and probed): the string read as JSON;
    ``{}`` for ``null`` or an empty string; anything else that is not JSON
    kept in the `UNPARSED` wrapper with its length, both in UTF-16 code units.
    """
    try:
        value = json.loads(text, parse_constant=_not_json)
    except ValueError:
        if text.strip() == "null" or not text:
            return {}
        return {UNPARSED: {"raw": js_cut(text, UNPARSED_KEPT), "len": js_length(text)}}
    return {} if value is None else value


def unparsed(value: object) -> tuple[str, int] | None:
    """The text and length an `UNPARSED` wrapper holds, if ``value`` is one."""
    if not isinstance(value, dict) or set(value) != {UNPARSED}:
        return None
    inner = value[UNPARSED]
    if not isinstance(inner, dict) or not isinstance(inner.get("raw"), str):
        return None
    length = inner.get("len")
    return (inner["raw"], length) if isinstance(length, int) else None


def js_length(text: str) -> int:
    """``text.length`` in JavaScript: UTF-16 code units."""
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def js_cut(text: str, units: int) -> str:
    """The first ``units`` UTF-16 code units of ``text``, never half a surrogate pair."""
    encoded = text.encode("utf-16-le", "surrogatepass")
    if len(encoded) <= 2 * units:
        return text
    head = encoded[: 2 * units]
    if 0xD800 <= int.from_bytes(head[-2:], "little") <= 0xDBFF:
        head = head[:-2]
    return head.decode("utf-16-le", "surrogatepass")


def _not_json(name: str) -> object:
    raise ValueError(f"{name} is not JSON")


def failure_of(response: net.Response) -> Failure:
    """A plain HTTP error: its status, the API error's type and message, its retry hints."""
    kind: str | None = None
    message = response.text
    try:
        error = response.json().get("error")
    except (ValueError, AttributeError):
        error = None
    if isinstance(error, dict):
        kind = str(error["type"]) if "type" in error else None
        message = str(error.get("message", message))
    headers = response.headers
    return Failure(
        response.status_code,
        kind,
        message,
        headers.get("x-should-retry"),
        headers.get("request-id"),
        headers.get("retry-after"),
    )


def has_tool_results(message: dict[str, Any]) -> bool:
    """Whether a message carries tool results (after which older releases add a token note)."""
    content = message.get("content")
    return isinstance(content, list) and any(b.get("type") == "tool_result" for b in content)


def calls(messages: Sequence[dict[str, Any]]) -> int:
    return sum(
        1
        for message in messages
        if message["role"] == "assistant"
        for block in message["content"]
        if block.get("type") == "tool_use" and block.get("name") == TOOL_NAME
    )


#: What a resumed session's transcript holds after a turn that ended on a tool
#: result (an acknowledged StructuredOutput call, say): the CLI closes it with
#: this assistant text before the next prompt.
NO_RESPONSE = "No response requested."


def asked(prompt: str, *, resumed: bool) -> dict[str, Any]:
    """
    The prompt's message.  A resumed turn's prompt goes as plain string content
    (a block only while it is last and carries the cache mark); the first
    turn's is a block list (where the CLI also puts its reminders).
    """
    if resumed:
        return {"role": "user", "content": prompt}
    return {"role": "user", "content": [{"type": "text", "text": prompt}]}


def closed(
    before: Sequence[dict[str, Any]],
    turn: Sequence[dict[str, Any]],
    continued: bool = False,
    ends_on_record: bool = False,
    joins_failed: bool = False,
) -> list[dict[str, Any]]:
    """
    A finished turn's messages (``turn``, after the session's ``before`` and
    this turn's prompt) as the next turn of the session sends them.
    ``continued``: releases up to 2.1.280 add `CONTINUE` beside the tool
    results of a turn that ended on them (B-23).  A turn that ended on tool
    results is closed with `NO_RESPONSE`, unless its transcript ended on the
    record of the tools it was asked with (``ends_on_record``, B-44): the
    binary only closes a transcript that ends on a message, so the next
    prompt joins those results' message (B-40); likewise, with
    ``joins_failed``, after a turn whose last request failed (the message it
    carried stays unanswered).  Notes the loop queued for a request it did
    not make (the quiet notice after the answer that spent the last attempt)
    are not kept.
    """
    turn = list(turn)
    while turn and turn[-1]["role"] in ("system", NOTE):
        turn.pop()  # a note for a request the turn never made is not kept (B-40)
    # Notes placed as the model's card says land where they went on the wire.
    out = joined([json.loads(json.dumps(m)) for m in (*before, *turn)])
    if out and out[-1]["role"] == "user":
        results = has_tool_results(out[-1])
        if continued and results:
            out[-1]["content"].append({"type": "text", "text": CONTINUE})
        # A turn whose last request failed ends on a message nobody answered (its
        # prompt, a reminder): the next prompt joins it, as it joins results the
        # transcript's record of the tools followed.
        if not ((ends_on_record and results) or joins_failed):
            out.append({"role": "assistant", "content": [{"type": "text", "text": NO_RESPONSE}]})
    return out


def answered_before(resumed: Sequence[dict[str, Any]]) -> bool:
    """
    Whether a session's earlier turns hold a complete answer of the model (not
    the binary's own `NO_RESPONSE`, not a broken stream's part the next
    message resumed): the transcript has recorded its tools then (B-44).
    """
    return any(
        m["role"] == "assistant"
        and m["content"] != [{"type": "text", "text": NO_RESPONSE}]
        and not (at + 1 < len(resumed) and resumed[at + 1]["content"] == data.CUT_OFF_NOTICE)
        for at, m in enumerate(resumed)
    )


#: What releases up to 2.1.280 add to the tool results a resumed turn ended on.
CONTINUE = "Continue from where you left off."
