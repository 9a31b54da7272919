"""
Drivers for the CLIs that end with a Claude-style ``result`` record.

Claude Code (CLA-01..06), CodeBuddy (CBY-01) and Cursor (CUR-01) all print
either one final ``result`` object (``--output-format json``, the batch
transport; CodeBuddy may wrap its history and the result in one array) or
JSON lines ending with it (``stream-json``, the rich transport).  They
differ in flags, in whether ``structured_output`` exists at all, and in what
their assistant text is.

Where seed 001 is silent the reading follows the published Go SDK's
parsers (agent-dance/agent-adaptor @ b07349b77fc4ca9043031b0dfaf6266328425f60,
``claude/parser.go``, ``cursor/parser.go``): a successful terminal must carry
a boolean ``is_error``, a string ``result`` and a non-empty ``session_id``;
every record has a ``type``; one session per run; a top-level ``error``
record is a failed terminal; nothing may follow the terminal.
docs/seed-001.md lists each point and whether the catalogue enforces it.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any, ClassVar

from harness.adaptor.drivers import Malformed, Parsed, json_lines, process_failure, register
from harness.adaptor.intake import Schema
from harness.adaptor.launch import Finished
from harness.adaptor.negotiate import Plan
from harness.catalogue.agents import AGENT_CLIS, AgentCli
from harness.catalogue.contracts import DOCUMENTED, Contract, RecordShapes
from harness.catalogue.jsonvalue import JSONError, dumps, parse_exact
from harness.catalogue.scenario import Json

_FAILURE_CAUSES = {"error_max_structured_output_retries": "max_structured_output_retries"}
#: Record types that end a run; anything after one is a broken protocol.
_TERMINALS = frozenset({"result", "error"})


class _ResultDriver:
    """Shared reading of a result-terminated transcript."""

    name: ClassVar[str]
    rich: ClassVar[bool] = True
    native_schema: ClassVar[bool] = True
    #: Whether its json transport may print one array of records (`AgentCli.json_array`).
    array_document: ClassVar[bool] = False
    #: Cursor prints plain transcript lines between its records.
    allow_prose: ClassVar[bool] = False
    extra_flags: ClassVar[tuple[str, ...]] = ()
    #: Claude Code refuses stream-json without --verbose; Cursor has no such flag.
    stream_flags: ClassVar[tuple[str, ...]] = ("--verbose",)

    def argv(
        self, exe: str, plan: Plan, schema: Schema | None, prompt: str, work: Path
    ) -> list[str]:
        fmt = "stream-json" if plan.transport == "rich" else "json"
        argv = [exe, "-p", "--output-format", fmt]
        if fmt == "stream-json":
            argv += self.stream_flags
        if schema is not None and plan.mechanism == "native":
            argv += ["--json-schema", schema.text]
        return [*argv, *self.extra_flags, prompt]

    def _records(self, stdout: bytes, plan: Plan) -> list[dict[str, Any]]:
        if plan.transport == "batch":
            try:
                whole = parse_exact(stdout.decode("utf-8"))
            except (JSONError, UnicodeDecodeError):
                pass  # not one document: newline-delimited records, read below
            else:
                if isinstance(whole, dict):
                    return [whole]
                if not isinstance(whole, list) or not self.array_document:
                    raise Malformed(f"{self.name} printed a JSON {type(whole).__name__}")
                if not whole or not all(isinstance(r, dict) for r in whole):
                    raise Malformed("the JSON array is empty or holds a non-object")
                return whole
        return list(json_lines(stdout, allow_prose=self.allow_prose))

    def parse(self, finished: Finished, plan: Plan, contract: Contract) -> Parsed:
        early = process_failure(finished)
        if early is not None:
            return early
        shapes = self._shapes(contract)
        try:
            records = self._records(finished.stdout, plan)
            _check_protocol(records, lambda record: self._ends(record, contract), shapes)
            text = self._text(records, contract)
            if records and self._ends(records[-1], contract):
                return self._terminal(records[-1], finished, text, shapes)
            if finished.returncode != 0:
                return Parsed(
                    text=text,
                    cause="nonzero_exit",
                    message=f"provider exited with status {finished.returncode}",
                )
            return Parsed(text=text, cause="missing_terminal", message="no result record")
        except Malformed as error:
            return Parsed(cause="malformed_protocol", message=str(error))

    def _shapes(self, contract: Contract) -> RecordShapes:
        """The record shapes it reads: the documented ones (Cursor's are the contract's)."""
        return DOCUMENTED

    def _ends(self, record: dict[str, Any], contract: Contract) -> bool:
        """Whether ``record`` is a terminal: a ``result`` or ``error`` record."""
        return record.get("type") in _TERMINALS

    def _text(self, records: list[dict[str, Any]], contract: Contract) -> str | None:
        """The assistant text, by the contract's ``result_text`` rule (`_RESULT_TEXT`)."""
        return _RESULT_TEXT[contract.result_text](records)

    def _terminal(
        self, record: dict[str, Any], finished: Finished, text: str | None, shapes: RecordShapes
    ) -> Parsed:
        raw = Json.of(record)
        if _kind(record, shapes) in shapes.failures:
            message = record.get("message")
            return Parsed(
                text=text,
                raw=raw,
                cause="turn_failed",
                message=message if isinstance(message, str) else "provider error record",
            )
        subtype = record.get("subtype")
        # The seed-era Cursor parser reads no subtype: a result succeeds unless is_error.
        if shapes.success_subtype is not None and subtype != shapes.success_subtype:
            errors = record.get("errors")
            message = "; ".join(map(str, errors)) if isinstance(errors, list) else str(subtype)
            cause = _FAILURE_CAUSES.get(str(subtype), "turn_failed")
            return Parsed(text=text, raw=raw, cause=cause, message=message)
        self._require(record, shapes.required)
        if record.get("is_error") is True:
            # The CLI's own words (the result string), whatever the contract takes as text.
            result, status = record.get("result"), record.get("api_error_status")
            return Parsed(
                text=text, raw=raw, cause="api_error", message=result or f"API error {status}"
            )
        if finished.returncode != 0:
            return Parsed(
                text=text,
                raw=raw,
                cause="nonzero_exit",
                message=f"provider exited with status {finished.returncode}",
            )
        return Parsed(text=text, raw=raw, candidate=self._candidate(record))

    def _require(self, result: dict[str, Any], keys: tuple[str, ...]) -> None:
        """Each of ``keys`` (the shapes' ``required``) present on a successful terminal."""
        for key in keys:
            if not _REQUIRED[key](result.get(key)):
                raise Malformed(f"{self.name} successful terminal result is missing required {key}")

    def _candidate(self, result: dict[str, Any]) -> str | None:
        value = result.get("structured_output")
        if not self.native_schema or value is None:
            return None
        if isinstance(value, str):
            # JSON text holding the value is the value (the SDK's reading); a
            # string that is not JSON text is a string value (the SDK would
            # see no candidate: see claude-string-structured-output-plain).
            try:
                return dumps(parse_exact(value))
            except JSONError:
                pass
        return dumps(value)


#: What each field a successful terminal may be required to carry must be.
_REQUIRED: dict[str, Callable[[object], bool]] = {
    "is_error": lambda value: isinstance(value, bool),
    "result": lambda value: isinstance(value, str),
    "session_id": lambda value: isinstance(value, str) and bool(value),
}


def _kind(record: dict[str, Any], shapes: RecordShapes) -> str | None:
    """A record's kind: the first of the shapes' ``kind_keys`` holding a non-empty string."""
    for key in shapes.kind_keys:
        value = record.get(key)
        if isinstance(value, str) and value:
            return value
    return None


def _check_protocol(
    records: list[dict[str, Any]], ends: Callable[[dict[str, Any]], bool], shapes: RecordShapes
) -> None:
    """Every record typed (where the shapes ask it), one session, nothing after the terminal."""
    session: str | None = None
    for index, record in enumerate(records):
        kind = _kind(record, shapes)
        if kind is None and shapes.kindless_malformed:
            raise Malformed(f"record {index + 1} has no type")
        if ends(record) and index != len(records) - 1:
            raise Malformed(f"a record follows the {kind} record")
        current = record.get("session_id")
        if isinstance(current, str) and current:
            if session is not None and current != session:
                raise Malformed("session_id changed during the run")
            session = current


def _driver_of(cli: AgentCli) -> type[_ResultDriver]:
    """
    The driver of a CLI on Claude Code's wire, configured by its record: Claude Code
    (``--json-schema`` in, ``structured_output`` out), CodeBuddy (the same, plus
    ``-y``; its json transport may print one array of records), and any CLI added
    to the registry with this wire, which so needs no driver of its own.
    """
    attributes = {
        "__doc__": f"{cli.name}: Claude Code's wire, as its record says.",
        "__module__": __name__,
        "name": cli.name,
        "native_schema": cli.descriptor.native,
        "array_document": cli.json_array,
        "extra_flags": cli.flags,
    }
    return type(f"{cli.name.title()}Driver", (_ResultDriver,), attributes)


def _build(cli: AgentCli) -> _ResultDriver:
    """The driver of ``cli``, its class made from the record each time it is asked for."""
    return _driver_of(cli)()


for _cli in AGENT_CLIS:
    if _cli.wire == "claude":
        register(partial(_build, _cli))


@register
class Cursor(_ResultDriver):
    """
    Cursor: no schema flag and no structured_output; prompt validation only.

    Its assistant text and its terminals are the contract's (`_CURSOR_TEXT`,
    `_CURSOR_ENDS`): by the v1 SDK (``cursor/parser.go`` @
    b07349b77fc4ca9043031b0dfaf6266328425f60) the text is the assistant
    fragments concatenated, the successful terminal's ``result`` only when
    there are none (``buildOutput``), and only ``result/success`` ends a run: a
    ``result`` of another subtype, or an ``error`` record, is an unknown record
    (``handlePayload``).
    Plain lines between records are transcript, and an assistant record
    without a content list is malformed (``handleMessage``).  Which record
    shapes it reads is the contract's too (`RecordShapes`): the seed-era
    parser also read fragment records, text at a record's top level, other
    terminal kinds and the kind under ``event`` or ``kind``.
    """

    name: ClassVar[str] = "cursor"
    native_schema: ClassVar[bool] = False
    allow_prose: ClassVar[bool] = True
    stream_flags: ClassVar[tuple[str, ...]] = ()

    def _shapes(self, contract: Contract) -> RecordShapes:
        return contract.cursor_shapes

    def _ends(self, record: dict[str, Any], contract: Contract) -> bool:
        return _CURSOR_ENDS[contract.cursor_terminal](record, contract.cursor_shapes)

    def _text(self, records: list[dict[str, Any]], contract: Contract) -> str | None:
        return _CURSOR_TEXT[contract.cursor_text](records, contract.cursor_shapes)


def _first_string(record: dict[str, Any], keys: tuple[str, ...]) -> str:
    """The first of ``keys`` whose value is a non-empty string, verbatim; else empty."""
    for key in keys:
        value = record.get(key)
        if isinstance(value, str) and value:
            return value
    return ""


def _texts(record: dict[str, Any], shapes: RecordShapes, *, strict: bool) -> list[str]:
    """
    The text blocks of one assistant record: its ``message.content``, or where the
    shapes allow text at the top level, a top-level ``content`` list first and a
    ``text`` or ``message`` string last (seed-era ``handleAssistant``, which reads
    the top level only; the documented ``message.content`` is read beside it so the
    profile reads today's records too).  ``strict``: a record with none of
    these is malformed, unless the shapes allow top-level text (then it has none).
    """
    content = record.get("content") if shapes.top_level_text else None
    if not isinstance(content, list):
        message = record.get("message")
        content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, list):
        return [
            b["text"]
            for b in content
            if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)
        ]
    if shapes.top_level_text:
        return [_first_string(record, ("text", "message"))]
    if strict:
        raise Malformed("an assistant record without a message content list")
    return []


def _pieces(
    records: list[dict[str, Any]], shapes: RecordShapes, *, strict: bool = True
) -> list[str]:
    """
    The assistant text of a run piece by piece, in order: each text block of an
    assistant record, and each run of fragment records (the shapes' ``delta``
    kinds: their ``delta``, ``text`` or ``message`` string, verbatim) joined into
    one piece where the next assistant record or the end closes it (seed-era
    ``handleAssistantDelta``, ``flushDeltaLocked``).  Pieces may be blank: the
    join drops them, and they add nothing to a concatenation.
    """
    pieces: list[str] = []
    run: list[str] = []
    for record in records:
        kind = _kind(record, shapes)
        if kind in shapes.delta:
            run.append(_first_string(record, ("delta", "text", "message")))
        elif kind in shapes.assistant:
            pieces += ["".join(run), *_texts(record, shapes, strict=strict)]
            run = []
    return [*pieces, "".join(run)]


def _joined(texts: list[str]) -> str | None:
    """Each text trimmed, blank ones dropped, a blank line between them (the seed-era join)."""
    kept = [text.strip() for text in texts if text.strip()]
    return "\n\n".join(kept) if kept else None


def _result_string(records: list[dict[str, Any]]) -> str | None:
    """The last record's ``result`` string (``claude/parser.go`` @ b07349b7 ``buildOutput``)."""
    result = records[-1].get("result") if records else None
    return result if isinstance(result, str) else None


def _fragments(records: list[dict[str, Any]], shapes: RecordShapes) -> str | None:
    """Cursor's fragments concatenated; with none, the successful terminal's ``result``."""
    joined = "".join(_pieces(records, shapes))
    if joined:
        return joined
    return _result_string(records) if records and _is_success(records[-1], shapes) else None


def _is_success(record: dict[str, Any], shapes: RecordShapes) -> bool:
    return _kind(record, shapes) in shapes.results and record.get("subtype") == "success"


#: The text of a run on Claude Code's wire, by the contract's ``result_text`` rule.
_RESULT_TEXT: dict[str, Callable[[list[dict[str, Any]]], str | None]] = {
    "result": _result_string,
    # claude/parser.go @ e7709de6f4e2458f2011171c877e8ce3bf8897d1 buildOutput
    "assistant": lambda records: _joined(_pieces(records, DOCUMENTED, strict=False)),
}
#: Cursor's text, by the contract's ``cursor_text`` rule, on the contract's shapes.
_CURSOR_TEXT: dict[str, Callable[[list[dict[str, Any]], RecordShapes], str | None]] = {
    "fragments": _fragments,
    # cursor/parser.go @ e7709de6f4e2458f2011171c877e8ce3bf8897d1 buildOutput
    "messages": lambda records, shapes: _joined(_pieces(records, shapes)),
}
#: Which Cursor records end a run, by the contract's ``cursor_terminal`` rule.
_CURSOR_ENDS: dict[str, Callable[[dict[str, Any], RecordShapes], bool]] = {
    "success": _is_success,
    # cursor/parser.go @ e7709de6f4e2458f2011171c877e8ce3bf8897d1 handlePayload
    "any": lambda record, shapes: _kind(record, shapes) in shapes.results | shapes.failures,
}
