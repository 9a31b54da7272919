"""
The driver seam: how the reference adaptor talks to one agent CLI.

A driver turns a negotiated plan into argv, and a finished process into a
`Parsed` value: the assistant text, the raw terminal payload, the native
candidate (only from a clean, successful terminal) or the failure cause.
Drivers register themselves by name; the pipeline never branches on a CLI.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Protocol

from harness.adaptor.intake import Schema
from harness.adaptor.launch import Finished
from harness.adaptor.negotiate import Plan
from harness.catalogue import jsonvalue
from harness.catalogue.contracts import Contract
from harness.catalogue.lines import JSON_SPACE
from harness.catalogue.scenario import Json


@dataclass(frozen=True)
class Parsed:
    """What a driver made of a provider run."""

    text: str | None = None
    raw: Json | None = None
    candidate: str | None = None
    cause: str | None = None
    message: str = ""


class Driver(Protocol):
    """Builds the command line for a plan and reads what the CLI printed."""

    name: ClassVar[str]
    #: Whether the CLI has a rich (streaming) transport beside its batch one;
    #: negotiation prefers it (seed 001), whatever the consumer's call.
    rich: ClassVar[bool]

    def argv(
        self, exe: str, plan: Plan, schema: Schema | None, prompt: str, work: Path
    ) -> list[str]: ...

    def parse(self, finished: Finished, plan: Plan, contract: Contract) -> Parsed:
        """Read the run as ``contract`` (the SDK release whose rules it follows) says."""
        ...


#: The factories of the drivers.  A driver is built each time it is asked for
#: (`get`), never once at import: what builds it (the Claude-wire drivers are
#: made from the agent registry's records) runs with the run, so a change to it,
#: such as a mutant of `harness mutants`, is in force for the next run.
_REGISTRY: list[Callable[[], Driver]] = []


def register(factory: Callable[[], Driver]) -> Callable[[], Driver]:
    """Class decorator (or any factory of a driver): make its driver available under its name."""
    name = factory().name
    if any(known().name == name for known in _REGISTRY):
        raise TypeError(f"driver {name!r} registered twice")
    _REGISTRY.append(factory)
    return factory


def get(name: str) -> Driver:
    """The driver called ``name``, built afresh (its name read from the driver itself)."""
    for factory in _REGISTRY:
        driver = factory()
        if driver.name == name:
            return driver
    raise KeyError(name)


class Malformed(ValueError):
    """The provider's output broke its own protocol."""


def json_lines(stdout: bytes, *, allow_prose: bool) -> Iterator[dict[str, Any]]:
    """
    Decode stdout as JSON lines; raise `Malformed` on the first bad line.

    With ``allow_prose``, lines that do not start with ``{`` are transcript
    text, not protocol (Codex prints such lines); otherwise they are errors.
    """
    try:
        text = stdout.decode("utf-8")
    except UnicodeDecodeError as error:
        # The line, not the byte offset: offsets move with the paths a CLI prints.
        where = stdout[: error.start].count(b"\n") + 1
        raise Malformed(f"stdout is not UTF-8 on line {where}") from None
    for number, line in enumerate(text.split("\n"), start=1):
        stripped = line.strip(JSON_SPACE)  # not str.strip(): U+2028 is no JSON space
        if not stripped:
            continue
        if allow_prose and not stripped.startswith("{"):
            continue
        try:
            event = jsonvalue.loads(stripped)
        except json.JSONDecodeError as error:
            raise Malformed(f"line {number} is not JSON: {error.msg}") from None
        except ValueError as error:  # nested too deep
            raise Malformed(f"line {number} is not JSON we read: {error}") from None
        if not isinstance(event, dict):
            raise Malformed(f"line {number} is not a JSON object")
        yield event


def process_failure(finished: Finished) -> Parsed | None:
    """Failures visible without reading stdout: a timeout or a signal."""
    if finished.timed_out:
        return Parsed(cause="timeout", message="provider timed out and was killed")
    if finished.signal is not None:
        return Parsed(cause="signal", message=f"provider died by signal {finished.signal}")
    return None
