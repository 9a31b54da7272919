#!/usr/bin/env python3
"""
The published Claude Agent SDK for Python as a target of the harness.

    harness run scenarios \
        --target "claude-agent-sdk=cmd:python examples/sdk-shims/claude_agent_sdk_shim.py"

It speaks the JSON-lines target protocol (``start``, ``run``..., ``stop``;
see ``harness/targets/serve.py``) and answers each ``run`` for the ``claude`` driver
by calling ``claude_agent_sdk.query()`` with ``cli_path`` pointed at the
harness's ``fake-claude``.  The SDK is the system under test, so this shim
does what a typical SDK user's code does and nothing more:

* the schema document is parsed with ``json.loads`` (the SDK takes a dict;
  text that does not parse never reaches it) and passed as
  ``output_format={"type": "json_schema", "schema": ...}``;
* ``ResultMessage.structured_output`` is the value, taken as the SDK gives
  it: the shim never revalidates it against the schema;
* ``is_error`` results and the SDK's exceptions (``ResultError``,
  ``ProcessError``, ``CLIJSONDecodeError``...) become ``execution_error``
  with the closest canonical cause;
* without a schema, the result text is parsed as JSON, as a user would.

Requests the SDK has no way to express are answered ``skipped`` with the
reason.  Anything else unexpected is reported as the shim's own error.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import IO, Any

import anyio
import claude_agent_sdk
from claude_agent_sdk import (
    ClaudeAgentOptions,
    ClaudeSDKError,
    CLIConnectionError,
    CLIJSONDecodeError,
    PermissionResultAllow,
    PermissionResultDeny,
    ProcessError,
    ResultError,
    ResultMessage,
    ToolPermissionContext,
    query,
)

PROTOCOL_VERSION = 1
IMPLEMENTATION = {
    "name": "claude-agent-sdk",
    "version": claude_agent_sdk.__version__,
    "language": "python",
    "homepage": "https://github.com/anthropics/claude-agent-sdk-python",
    "drivers": ["claude"],
    "features": ["native"],
}
_FAILURE_CAUSES = {"error_max_structured_output_retries": "max_structured_output_retries"}
_STDERR_LINES = 5


def skip_reason(request: dict[str, Any]) -> str | None:
    """Why the SDK cannot express `request` at all (None when it can)."""
    if request["driver"] != "claude":
        return f"claude-agent-sdk drives Claude Code only, not {request['driver']}"
    if request.get("schema_type") is not None:
        return (
            "schema_type: the SDK takes a JSON Schema dict in output_format; it derives no "
            "schema from a type"
        )
    if request.get("descriptor") is not None:
        return (
            "descriptor: the SDK has no capability descriptor to override; output_format always "
            "reaches the CLI as --json-schema (native), and it never negotiates prompt validation"
        )
    if request.get("on_invalid") == "return":
        return (
            "on_invalid=return: the SDK has no invalid-output policy; it never validates "
            "structured_output itself and has no switch that returns an invalid value instead of "
            "failing the run"
        )
    if request.get("schema_name") is not None or request.get("schema_description") is not None:
        return (
            "schema_name/schema_description: output_format carries only type and schema; the SDK "
            "has no name or description to send"
        )
    return None


def outcome(**fields: Any) -> dict[str, Any]:
    has_value = "value" in fields
    return {
        "status": "error" if fields.get("error") else "ok",
        "error": fields.get("error"),
        "cause": fields.get("cause"),
        "message": fields.get("message"),
        "value": fields.get("value"),
        "has_value": has_value,
        "text": fields.get("text"),
        "mechanism": fields.get("mechanism"),
        "diagnostics": fields.get("diagnostics", []),
        "raw": fields.get("raw"),
    }


async def _deny(
    tool: str, tool_input: dict[str, Any], context: ToolPermissionContext
) -> PermissionResultAllow | PermissionResultDeny:
    # approval=ask: the harness has no human at hand, so every tool call is refused.
    return PermissionResultDeny(message=f"no human available to approve {tool}")


def _cause(subtype: str | None) -> str:
    """The canonical cause of an error result, read the way the SDK documents it."""
    if subtype == "success":  # is_error on a "success": the API call failed
        return "api_error"
    return _FAILURE_CAUSES.get(subtype or "", "turn_failed")


def _message(result: ResultMessage) -> str:
    errors = [str(e) for e in (result.errors or []) if str(e).strip()]
    return "; ".join(errors) or (result.result or "").strip() or result.subtype


async def run_case(request: dict[str, Any], provider: dict[str, Any]) -> dict[str, Any]:
    """One run request, as a typical SDK user would write it."""
    mechanism = None
    output_format = None
    if request["schema"] is not None:
        try:
            schema = json.loads(request["schema"])
        except ValueError as error:
            return outcome(error="invalid_output_schema", message=f"schema is not JSON: {error}")
        output_format = {"type": request["schema_format"], "schema": schema}
        mechanism = "native"
    stderr: list[str] = []
    ask = request["approval"] == "ask"
    options = ClaudeAgentOptions(
        cli_path=provider["executables"]["claude"],
        output_format=output_format,
        env=dict(provider["env"]),
        cwd=provider["work"],
        stderr=stderr.append,
        permission_mode="default" if ask else None,
        can_use_tool=_deny if ask else None,
    )
    if request.get("mutate_schema_after_build") and output_format is not None:
        # The caller reuses its schema dict after building the options (SCH-07).
        output_format["schema"] = {"type": "string", "description": "mutated after build"}

    def failed(cause: str, message: str, text: str | None = None) -> dict[str, Any]:
        tail = "\n".join(stderr[-_STDERR_LINES:])
        full = f"{message}\nstderr: {tail}" if tail else message
        return outcome(
            error="execution_error", cause=cause, message=full, text=text, mechanism=mechanism
        )

    result: ResultMessage | None = None
    try:
        with anyio.fail_after(request["timeout"]):
            async for received in query(prompt=request["prompt"], options=options):
                if isinstance(received, ResultMessage):
                    result = received
    except TimeoutError:
        return failed("timeout", f"no result within {request['timeout']} s")
    except ResultError as error:  # an is_error result, then the CLI's nonzero exit
        return failed(_cause(error.subtype), str(error), error.result)
    except ProcessError as error:
        code = error.exit_code
        text = None if result is None else result.result
        if code is not None and code < 0:
            return failed("signal", f"{error} (signal {-code})", text)
        return failed("nonzero_exit", str(error), text)
    except CLIJSONDecodeError as error:
        return failed("malformed_protocol", str(error))
    except CLIConnectionError as error:
        return failed("missing_terminal", f"{type(error).__name__}: {error}")
    except ClaudeSDKError as error:  # MessageParseError: a message the SDK cannot read
        return failed("malformed_protocol", f"{type(error).__name__}: {error}")

    if result is None:
        return failed("missing_terminal", "the SDK yielded no ResultMessage")
    if result.is_error or result.subtype != "success":  # an error result, yet exit 0
        return failed(_cause(result.subtype), _message(result), result.result)
    common = {"text": result.result, "mechanism": mechanism}
    if output_format is None:
        try:
            return outcome(value=json.loads((result.result or "").strip()), **common)
        except ValueError as error:
            return outcome(error="decode_error", message=f"result is not JSON: {error}", **common)
    if result.structured_output is None:
        return outcome(
            error="policy_violation",
            message="the ResultMessage has no structured_output",
            diagnostics=[{"path": "", "message": "no structured output candidate"}],
            **common,
        )
    return outcome(value=result.structured_output, **common)


def answer(message: dict[str, Any]) -> dict[str, Any]:
    seq = message.get("seq")
    command = message.get("cmd")
    if command == "start":
        return {
            "seq": seq,
            "ready": True,
            "version": PROTOCOL_VERSION,
            "implementation": IMPLEMENTATION,
        }
    if command != "run":
        return {"seq": seq, "errored": True, "message": f"unknown command {command!r}"}
    reason = skip_reason(message["request"])
    if reason is not None:
        return {"seq": seq, "skipped": True, "reason": reason}
    found = anyio.run(run_case, message["request"], message["provider"])
    return {"seq": seq, "outcome": found}


#: How much of an unexpected error's text goes back to the harness.
_MESSAGE_KEEP = 2000


def _said(error: Exception) -> str:
    """
    An unexpected error as the harness reports it, the same on every run: a
    decode error's repr holds the CLI's whole output (ids and times included)
    and its position depends on how the SDK's reads fell, so neither is kept.
    """
    if isinstance(error, UnicodeDecodeError):
        byte = error.object[error.start : error.end]
        return f"UnicodeDecodeError: {error.encoding} cannot decode {byte!r}: {error.reason}"
    return f"{type(error).__name__}: {error}"[:_MESSAGE_KEEP]


def serve(stdin: IO[str], stdout: IO[str], log: Callable[[str], None]) -> int:
    """Answer protocol messages until ``stop`` or end of input."""
    for line in stdin:
        if not line.strip():
            continue
        message = json.loads(line)
        if message.get("cmd") == "stop":
            return 0
        try:
            reply = answer(message)
        except Exception as error:  # noqa: BLE001 - reported to the harness, never raised
            log(f"scenario {message.get('scenario')}: {type(error).__name__}: {error}")
            said = _said(error)
            reply = {"seq": message.get("seq"), "errored": True, "message": said}
        stdout.write(json.dumps(reply) + "\n")
        stdout.flush()
    return 0


def main() -> int:
    def log(text: str) -> None:
        print(f"[claude-agent-sdk-shim] {text}", file=sys.stderr, flush=True)

    return serve(sys.stdin, sys.stdout, log)


if __name__ == "__main__":
    sys.exit(main())
