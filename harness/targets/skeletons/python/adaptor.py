#!/usr/bin/env python3
"""
__NAME__: an adaptor for the structured-output harness, in Python (standard
library only). Written by `harness init adaptor --lang python`.

Run it against the harness's catalogue from the folder you ran init in:

    __RUN__

It speaks the harness's JSON-lines protocol on stdin/stdout (one request a
line, one reply a line; log to stderr) and drives the agent CLI each request
names. Under the harness, `provider.executables` names a fake CLI to run in
place of the real one and `provider.env` tells it what to print; in
production, run the real CLI (the command `CLIS` names, on PATH): see `launch`
and `CLIS`, where the CLI call is made.

What it does today: runs without a schema, decoding the CLI's assistant text
as one JSON value, and reports execution failures. A request with a schema is
answered `skipped`; add schema intake, negotiation and validation in `run`
where it says so (docs/adaptors.md, docs/outcome.md). Cases for the
`schema_type` feature are skipped by the harness, because IMPLEMENTATION does
not announce it.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

#: Each CLI (the request's driver): its command on PATH in production, its arguments
#: after the executable and before the prompt, and which of `READERS` reads its output.
#: Written by `harness init` from the harness's registry of agent CLIs.
CLIS: dict[str, tuple[str, list[str], str]] = {}  # __CLIS__

IMPLEMENTATION = {
    "name": "__NAME__",
    "version": "0.1.0",
    "language": "python",
    "drivers": list(CLIS),
    "features": [],
}


class Failed(Exception):
    """The provider run failed: `cause` is the outcome's execution_error cause."""

    def __init__(self, cause: str, message: str, text: str | None = None) -> None:
        super().__init__(message)
        self.cause, self.text = cause, text


@dataclass(frozen=True)
class Finished:
    stdout: bytes
    returncode: int | None  # None: killed at the deadline


def launch(argv: list[str], provider: dict[str, Any], timeout: float) -> Finished:
    """Run the CLI in its own process group, so the deadline kills what it started too."""
    with subprocess.Popen(
        argv,
        env={**os.environ, **provider["env"]},
        cwd=provider["work"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        start_new_session=True,
    ) as process:
        try:
            stdout, _ = process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.communicate()
            return Finished(b"", None)
    return Finished(stdout, process.returncode)


def read_codex(stdout: str) -> tuple[str | None, Any]:
    """`codex exec --json`: the completed agent messages, and the turn's last event."""
    messages, terminal, failure = [], None, None
    # JSON lines end at "\n" only: splitlines() would also cut at U+2028 inside a string.
    for number, line in enumerate(stdout.split("\n"), 1):
        if not line.lstrip().startswith("{"):
            continue  # blank lines, and notes Codex prints between its events
        event = loads(line, f"line {number}")
        kind, item = event.get("type"), event.get("item")
        if kind == "item.completed" and isinstance(item, dict) and item["type"] == "agent_message":
            messages.append(item["text"])
        elif kind in ("turn.completed", "turn.failed"):
            terminal = event
        if kind in ("turn.failed", "error"):  # an error poisons the turn, whatever follows
            failure = failure or json.dumps(event.get("error") or event.get("message"))
    text = "\n\n".join(m.strip() for m in messages if m.strip()) or None
    if failure is not None:
        raise Failed("turn_failed", failure, text)
    return text, terminal


def read_result(stdout: str) -> tuple[str | None, Any]:
    """Claude Code, Cursor, CodeBuddy: one result record (CodeBuddy: an array of records)."""
    if not stdout.strip():
        return None, None
    document = loads(stdout, "stdout")
    record = document[-1] if isinstance(document, list) and document else document
    if not isinstance(record, dict) or record.get("type") != "result":
        return None, None
    text = record.get("result") if isinstance(record.get("result"), str) else None
    if record.get("subtype") != "success":
        raise Failed("turn_failed", f"result subtype {record.get('subtype')!r}", text)
    if record.get("is_error"):
        raise Failed("api_error", text or "the CLI reported an API error", text)
    return text, record


#: How a CLI's batch output is read: Codex's JSON lines, or a Claude-style result.
READERS: dict[str, Callable[[str], tuple[str | None, Any]]] = {
    "codex": read_codex,
    "result": read_result,
}


def loads(text: str, where: str) -> Any:
    """Exactly one JSON value (NaN and Infinity are not JSON), else a malformed protocol."""
    try:
        return json.loads(text, parse_constant=_not_json)
    except ValueError as error:
        raise Failed("malformed_protocol", f"{where} is not JSON: {error}") from None


def _not_json(constant: str) -> None:
    raise ValueError(f"{constant} is not JSON")


def outcome(**fields: Any) -> dict[str, Any]:
    """The canonical outcome (docs/outcome.md); `value` present means a value was decoded."""
    has_value = "value" in fields
    error = fields.get("error")
    return {
        "status": "error" if error else "ok",
        "error": error,
        "cause": fields.get("cause"),
        "message": fields.get("message"),
        "value": fields.get("value"),
        "has_value": has_value,
        "text": fields.get("text"),
        "mechanism": None,
        "diagnostics": [],
        "raw": fields.get("raw"),
        "stdout": fields.get("stdout"),
    }


def run(request: dict[str, Any], provider: dict[str, Any]) -> dict[str, Any]:
    """One run request: the outcome, or a skip for what this adaptor does not do yet."""
    if request["schema"] is not None:
        # Add structured output here: check the schema, pass it to the CLI (codex
        # --output-schema FILE, claude --json-schema TEXT, or in the prompt), then
        # validate the candidate and apply request["on_invalid"].
        return {"skipped": True, "reason": "__NAME__ does not implement schemas yet"}
    driver = request["driver"]
    # In production: the CLI on PATH, CLIS[driver][0] (cursor-agent for cursor).
    executable = provider["executables"][driver]
    _, args, reader = CLIS[driver]
    finished = launch([executable, *args, request["prompt"]], provider, request["timeout"])
    stdout = finished.stdout.decode("utf-8", errors="replace")
    try:
        if finished.returncode is None:
            raise Failed("timeout", f"no answer within {request['timeout']}s")
        if finished.returncode < 0:
            raise Failed("signal", f"the CLI was killed by signal {-finished.returncode}")
        if stdout != finished.stdout.decode("utf-8", errors="surrogateescape"):  # a U+FFFD
            raise Failed("malformed_protocol", "stdout is not UTF-8")
        text, raw = READERS[reader](stdout)
        if finished.returncode != 0:
            raise Failed("nonzero_exit", f"the CLI exited with {finished.returncode}", text)
        if raw is None:
            raise Failed("missing_terminal", "the CLI ended without its final event", text)
    except Failed as failed:
        return outcome(
            error="execution_error",
            cause=failed.cause,
            message=str(failed),
            text=failed.text,
            stdout=stdout,
        )
    # Without a schema, Decode parses the trimmed assistant text as one JSON value.
    try:
        value = json.loads((text or "").strip(), parse_constant=_not_json)
    except ValueError as error:
        message = f"cannot decode the text as JSON: {error}"
        return outcome(error="decode_error", message=message, text=text, raw=raw, stdout=stdout)
    return outcome(value=value, text=text, raw=raw, stdout=stdout)


def serve() -> None:
    for line in sys.stdin:
        if not line.strip():
            continue
        message = json.loads(line)
        seq, command = message.get("seq"), message.get("cmd")
        if command == "stop":
            return
        if command == "start":
            reply = {"ready": True, "version": 1, "implementation": IMPLEMENTATION}
        elif command == "run":
            try:
                answer = run(message["request"], message["provider"])
                reply = answer if answer.get("skipped") else {"outcome": answer}
            except Exception as error:  # noqa: BLE001  (one broken case must not end the rest)
                print(f"{message.get('scenario')}: {error!r}", file=sys.stderr)
                reply = {"errored": True, "message": f"{type(error).__name__}: {error}"}
        else:
            reply = {"errored": True, "message": f"unknown command {command!r}"}
        print(json.dumps({"seq": seq, **reply}), flush=True)


if __name__ == "__main__":
    serve()
