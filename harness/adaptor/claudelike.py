"""
Drivers for the CLIs that end with a Claude-style ``result`` record.

Claude Code (CLA-01..05), CodeBuddy (CBY-01) and Cursor (CUR-01) all print
either one final ``result`` object (``--output-format json``; CodeBuddy may
wrap its history and the result in one array) or JSON lines ending with it
(``stream-json``).  They differ in flags, in how strict a successful terminal
must be, and in whether ``structured_output`` exists at all.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

from harness.adaptor.drivers import Malformed, Parsed, json_lines, process_failure, register
from harness.adaptor.intake import Schema
from harness.adaptor.launch import Finished
from harness.adaptor.negotiate import Plan
from harness.catalogue.jsonvalue import JSONError, dumps, parse_exact
from harness.catalogue.scenario import Json

_FAILURE_CAUSES = {"error_max_structured_output_retries": "max_structured_output_retries"}


def _records(stdout: bytes, plan: Plan) -> list[dict[str, Any]]:
    if plan.transport == "batch":
        try:
            whole = parse_exact(stdout.decode("utf-8"))
        except (JSONError, UnicodeDecodeError):
            pass
        else:
            if isinstance(whole, dict):
                return [whole]
            if isinstance(whole, list) and all(isinstance(r, dict) for r in whole):
                if not whole:
                    raise Malformed("empty JSON array")
                return whole
            raise Malformed("output is neither a result object nor an array of records")
    return list(json_lines(stdout, allow_prose=False))


class _ResultDriver:
    """Shared reading of a result-terminated transcript."""

    name: ClassVar[str]
    native_schema: ClassVar[bool] = True
    strict_success: ClassVar[bool] = False
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

    def parse(self, finished: Finished, plan: Plan) -> Parsed:
        early = process_failure(finished)
        if early is not None:
            return early
        try:
            records = _records(finished.stdout, plan)
            results = [i for i, r in enumerate(records) if r.get("type") == "result"]
            if len(results) > 1:
                raise Malformed(f"{len(results)} result records")
            if results and results[0] != len(records) - 1:
                raise Malformed("records after the result record")
            if not results:
                if finished.returncode != 0:
                    return Parsed(
                        cause="nonzero_exit",
                        message=f"provider exited with status {finished.returncode}",
                    )
                return Parsed(cause="missing_terminal", message="no result record")
            return self._terminal(records[-1], finished)
        except Malformed as error:
            return Parsed(cause="malformed_protocol", message=str(error))

    def _terminal(self, result: dict[str, Any], finished: Finished) -> Parsed:
        subtype = result.get("subtype")
        is_error = result.get("is_error")
        text = result.get("result") if isinstance(result.get("result"), str) else None
        raw = Json.of(result)
        if subtype != "success":
            errors = result.get("errors")
            message = "; ".join(map(str, errors)) if isinstance(errors, list) else str(subtype)
            cause = _FAILURE_CAUSES.get(str(subtype), "turn_failed")
            return Parsed(text=text, raw=raw, cause=cause, message=message)
        if self.strict_success:
            self._require(result)
        if is_error is True:
            status = result.get("api_error_status")
            return Parsed(
                text=text, raw=raw, cause="api_error", message=text or f"API error {status}"
            )
        if is_error is not False and is_error is not None:
            raise Malformed("is_error is not a boolean")
        if finished.returncode != 0:
            return Parsed(
                text=text,
                raw=raw,
                cause="nonzero_exit",
                message=f"provider exited with status {finished.returncode}",
            )
        return Parsed(text=text, raw=raw, candidate=self._candidate(result))

    def _require(self, result: dict[str, Any]) -> None:
        for key, ok in (
            ("is_error", isinstance(result.get("is_error"), bool)),
            ("result", isinstance(result.get("result"), str)),
            ("session_id", isinstance(result.get("session_id"), str) and result["session_id"]),
        ):
            if not ok:
                raise Malformed(f"{self.name} successful terminal result is missing required {key}")

    def _candidate(self, result: dict[str, Any]) -> str | None:
        if not self.native_schema or result.get("structured_output") is None:
            return None
        return dumps(result["structured_output"])


@register
class Claude(_ResultDriver):
    """Claude Code: ``--json-schema`` in, ``structured_output`` out."""

    name: ClassVar[str] = "claude"


@register
class CodeBuddy(_ResultDriver):
    """CodeBuddy: Claude's shape, stricter successes, string candidates allowed."""

    name: ClassVar[str] = "codebuddy"
    strict_success: ClassVar[bool] = True
    extra_flags: ClassVar[tuple[str, ...]] = ("-y",)

    def _candidate(self, result: dict[str, Any]) -> str | None:
        value = result.get("structured_output")
        if isinstance(value, str):
            try:
                return dumps(parse_exact(value))
            except JSONError:
                return value
        return super()._candidate(result)


@register
class Cursor(_ResultDriver):
    """Cursor: no schema flag and no structured_output; prompt validation only."""

    name: ClassVar[str] = "cursor"
    native_schema: ClassVar[bool] = False
    stream_flags: ClassVar[tuple[str, ...]] = ()
