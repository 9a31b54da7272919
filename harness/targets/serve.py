"""
The reference adaptor behind the JSON-lines target protocol (``harness serve``).

It proves the protocol carries everything an adaptor needs: the catalogue
gives the same outcomes through this process as in process.  It is also a
readable example for authors of adaptors in other languages.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from importlib.metadata import version
from pathlib import Path
from typing import IO, Any

from harness.adaptor import pipeline
from harness.adaptor.environment import adaptor_environment
from harness.adaptor.launch import Subprocess
from harness.catalogue import jsonvalue
from harness.catalogue.agents import DRIVERS
from harness.catalogue.scenario import Request

IMPLEMENTATION = {
    "name": "harness-reference",
    "version": version("structured-output-harness"),
    "language": "python",
    "drivers": list(DRIVERS),
    "features": ["native", "prompt", "schema_type"],
}


def _answer(message: dict[str, Any]) -> dict[str, Any] | None:
    seq = message.get("seq")
    command = message.get("cmd")
    if command == "start":
        return {"seq": seq, "ready": True, "version": 1, "implementation": IMPLEMENTATION}
    if command == "run":
        where = message["provider"]
        provider = pipeline.Provider(
            executables=where["executables"],
            env={**adaptor_environment(), **where["env"]},
            work=Path(where["work"]),
        )
        request = Request.from_json(message["request"])
        outcome = pipeline.run(request, provider, Subprocess()).to_json()
        # The harness measures launches itself from the fake's records.
        outcome.pop("launches")
        outcome.pop("calls")
        return {"seq": seq, "outcome": outcome}
    if "problem" in message:
        return {"seq": seq, "errored": True, "message": f"protocol error: {message['problem']}"}
    return {"seq": seq, "errored": True, "message": f"unknown command {command!r}"}


#: The longest protocol line read; a longer one is skipped, never held.
MAX_LINE = 16 * 1024 * 1024


def lines(stdin: IO[bytes], limit: int = MAX_LINE) -> Iterator[bytes | None]:
    """
    The lines of ``stdin`` (ended by "\\n" only, as the protocol says), each
    without its end; None for one longer than ``limit``, which is read past
    in bounded pieces rather than held.
    """
    while True:
        line = stdin.readline(limit + 1)
        if not line:
            return
        if len(line) <= limit or line.endswith(b"\n"):
            yield line.rstrip(b"\n")
            continue
        while line and not line.endswith(b"\n"):
            line = stdin.readline(limit)
        yield None


def serve(stdin: IO[bytes], stdout: IO[str]) -> int:
    """Answer protocol messages until ``stop`` or end of input."""
    for line in lines(stdin, MAX_LINE):
        if line is None:
            message: Any = {"cmd": None, "problem": f"a line longer than {MAX_LINE} bytes"}
        elif not line.strip(b" \t\r"):
            continue
        else:
            try:
                message = jsonvalue.loads(line)
            except ValueError as error:
                message = {"cmd": None, "problem": f"a line that is not JSON ({error})"}
        if not isinstance(message, dict):
            message = {"cmd": None, "problem": f"a JSON {type(message).__name__}, not an object"}
        if message.get("cmd") == "stop":
            return 0
        try:
            reply = _answer(message)
        except Exception as error:  # noqa: BLE001  (reported to the harness, not raised)
            reply = {"seq": message.get("seq"), "errored": True, "message": repr(error)}
        stdout.write(json.dumps(reply) + "\n")
        stdout.flush()
    return 0


def main() -> int:
    return serve(sys.stdin.buffer, sys.stdout)
