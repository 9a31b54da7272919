"""
The reference adaptor behind the JSON-lines target protocol (``harness serve``).

It proves the protocol carries everything an adaptor needs: the catalogue
gives the same outcomes through this process as in process.  It is also a
readable example for authors of adaptors in other languages.
"""

from __future__ import annotations

import json
import sys
from importlib.metadata import version
from pathlib import Path
from typing import IO, Any

from harness.adaptor import pipeline
from harness.adaptor.environment import adaptor_environment
from harness.adaptor.launch import Subprocess
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


def serve(stdin: IO[str], stdout: IO[str]) -> int:
    """Answer protocol messages until ``stop`` or end of input."""
    for line in stdin:
        if not line.strip():
            continue
        try:
            message = json.loads(line)
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
    return serve(sys.stdin, sys.stdout)
