"""
Claude Code's validator, asked over JSON lines: the Ajv the binary bundles, under Node.

Claude Code 2.1.328 validates each StructuredOutput call with Ajv 8.18.0 and
words every error its own way; the reference model must give the same
verdicts, messages and order, and read numbers, strings, regular
expressions and environment integers as the binary's JavaScript does.
Approximating that in Python gave the wrong answer on two cases in five
(numbers past 2**53, ``multipleOf`` precision, Ajv's order, the CLI's input
rewriting, Unicode property classes in ``pattern``), so the reference asks
the same library instead: ``ajv/worker.mjs``, with the package pinned in
``ajv/package-lock.json`` and installed by ``make`` (``npm ci``).

One long-lived worker serves the process (one per pytest-xdist worker).
Every answer is awaited under a watchdog: Node has no backtracking budget
for regular expressions (the binary's JavaScriptCore has one and then
reports no match), so a catastrophic ``pattern`` would otherwise hang the
run; past `WATCHDOG` seconds the worker is killed and the case errors with
the reason.  The worker never outlives the harness: it reads its requests
from a pipe and ends when the pipe closes, the harness closes it at exit,
and on Linux the kernel kills it if the harness dies first.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import json
import os
import select
import shutil
import signal
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.exceptions import ValidationTimedOut, ValidatorUnavailable

PACKAGE = Path(__file__).resolve().parent / "ajv"
WORKER = PACKAGE / "worker.mjs"
#: The Ajv the binary bundles (found by probing it: docs/model-api.md).
AJV_VERSION = "8.18.0"
INSTALL = "make ajv (or: npm ci --prefix harness/systems/claude/ajv)"
#: Seconds one answer may take before the worker is killed and the case errors.
WATCHDOG = 10.0
#: The largest answer line accepted from the worker.
MAX_ANSWER = 64 * 1024 * 1024
_PR_SET_PDEATHSIG = 1


@dataclass(frozen=True)
class Schema:
    """A ``--json-schema`` argument the CLI accepted, as it goes on the wire."""

    #: The schema as JavaScript re-serializes it (numbers and key order are JavaScript's).
    wire: dict[str, Any]
    #: Ajv's strict-mode warnings, which the CLI prints on stderr and then goes on.
    warnings: tuple[str, ...]


@dataclass(frozen=True)
class Refusal:
    """Why the CLI refuses a schema before the run, and Ajv's warnings until then."""

    reason: str
    warnings: tuple[str, ...]


@dataclass(frozen=True)
class Verdict:
    """A StructuredOutput call as the CLI prepared and judged it."""

    #: The tool_result text for a rejected call; None when the call is accepted.
    error: str | None
    #: The input after the CLI's rewriting: what the conversation carries.
    prepared: object
    #: What was validated (the prepared input spread into an object): the result's object.
    validated: object


def _die_with_parent() -> None:
    # Runs in the child before exec: the kernel kills the worker if the harness dies.
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


class _Worker:
    """The one Node process of this harness process, started on first use."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._process: subprocess.Popen[bytes] | None = None
        self._pending = b""

    def ask(self, request: dict[str, object], watchdog: float = WATCHDOG) -> dict[str, Any]:
        with self._lock:
            process = self._process if self._process and self._alive() else self._start()
            assert process.stdin is not None
            line = json.dumps(request, ensure_ascii=False, allow_nan=False) + "\n"
            try:
                process.stdin.write(line.encode("utf-8", "surrogatepass"))
                process.stdin.flush()
            except OSError as error:
                self._stop()
                raise ValidatorUnavailable(f"the validator worker died: {error}") from error
            answer = self._read(process, watchdog, request)
        reply: dict[str, Any] = json.loads(answer)
        if "fault" in reply:
            raise ValidatorUnavailable(f"the validator worker could not answer: {reply['fault']}")
        return reply

    def _alive(self) -> bool:
        return self._process is not None and self._process.poll() is None

    def _start(self) -> subprocess.Popen[bytes]:
        node = shutil.which("node")
        installed = PACKAGE / "node_modules" / "ajv" / "package.json"
        try:
            version = json.loads(installed.read_text()).get("version")
        except (OSError, ValueError):
            version = None
        if node is None or version != AJV_VERSION:
            what = (
                "Node.js is not on PATH" if node is None else f"ajv@{AJV_VERSION} is not installed"
            )
            raise ValidatorUnavailable(
                f"the reference model of Claude Code validates with the Ajv the binary bundles, "
                f"under Node, and {what}; run `{INSTALL}` "
                "(`harness doctor` checks every prerequisite)"
            )
        self._pending = b""
        self._process = subprocess.Popen(
            [node, str(WORKER)],
            cwd=PACKAGE,
            env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")},
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            preexec_fn=_die_with_parent,  # noqa: PLW1509 - the harness starts no threads that fork
        )
        return self._process

    def _read(self, process: subprocess.Popen[bytes], watchdog: float, asked: object) -> bytes:
        assert process.stdout is not None
        deadline = time.monotonic() + watchdog
        while b"\n" not in self._pending:
            left = deadline - time.monotonic()
            ready = select.select([process.stdout], [], [], max(left, 0))[0] if left > 0 else []
            if not ready:
                self._stop()
                raise ValidationTimedOut(watchdog, _what(asked))
            chunk = os.read(process.stdout.fileno(), 1 << 20)
            if not chunk or len(self._pending) > MAX_ANSWER:
                self._stop()
                raise ValidatorUnavailable("the validator worker ended without an answer")
            self._pending += chunk
        line, _, self._pending = self._pending.partition(b"\n")
        return line

    def _stop(self) -> None:
        process, self._process = self._process, None
        if process is None:
            return
        for stream in (process.stdin, process.stdout):
            with contextlib.suppress(OSError):
                if stream is not None:
                    stream.close()
        with contextlib.suppress(ProcessLookupError):
            process.kill()
        process.wait()

    def close(self) -> None:
        with self._lock:
            self._stop()


def _what(request: object) -> str:
    op = request.get("op") if isinstance(request, dict) else None
    return {"compile": "compiling the schema", "check": "validating a StructuredOutput call"}.get(
        str(op), "answering"
    )


_WORKER = _Worker()
atexit.register(_WORKER.close)


def compile_schema(text: str, *, formats: bool = False) -> Schema | Refusal:
    """
    The schema as the CLI takes it, or the reason it refuses it before the run
    (printed as ``Error: --json-schema is not a valid JSON Schema: REASON``).
    ``text`` must already be a JSON object (the CLI's earlier checks).
    ``formats`` turns format checks on with no format known, as CodeBuddy Code's
    Ajv has them: a schema naming any ``format`` is then refused.
    """
    reply = _WORKER.ask({"op": "compile", "schema": text, "formats": formats})
    warnings = tuple(str(w) for w in reply["warnings"])
    if "refused" in reply:
        return Refusal(str(reply["refused"]), warnings)
    return Schema(json.loads(reply["schema"]), warnings)


def check(
    schema_text: str,
    input_text: str,
    *,
    params: bool = True,
    precision: int | None = 6,
    annotated: bool = True,
    raw: bool = False,
    formats: bool = False,
) -> Verdict:
    """
    One StructuredOutput call (its input as the JSON text the API streamed).
    ``params``, ``precision`` and ``annotated`` are what releases differ in
    (the detail the CLI adds to each error, Ajv's multipleOfPrecision, whether
    a property of annotations only takes a value's JSON text; B-02, B-16 and
    B-38 of docs/versions.md); the defaults are the pinned release's.  ``raw``
    validates the input as it came, not rewritten as Claude Code rewrites it
    (CodeBuddy Code judges a number or an array as it is: ``root: must be object``);
    ``formats`` is `compile_schema`'s.
    """
    request = {"op": "check", "schema": schema_text, "input": input_text}
    options = {
        "params": params,
        "precision": precision,
        "annotated": annotated,
        "raw": raw,
        "formats": formats,
    }
    reply = _WORKER.ask({**request, **options})
    return Verdict(reply["error"], json.loads(reply["prepared"]), json.loads(reply["validated"]))


def normalized(value_text: str) -> object:
    """A JSON value as the CLI holds it after ``JSON.parse`` (numbers, key order)."""
    return json.loads(_WORKER.ask({"op": "normalize", "json": value_text})["json"])


def env_int(raw: str | None) -> int | float | None:
    """An integer environment setting as the CLI reads it; None means unset."""
    value = _WORKER.ask({"op": "env_int", "value": raw})["value"]
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def shutdown() -> None:
    """Stop the worker now (it is started again on the next question)."""
    _WORKER.close()
