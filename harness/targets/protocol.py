"""
The JSON-lines target protocol: adaptors in any language, over a subprocess.

One long-lived process serves many scenarios.  The harness writes one JSON
object per line on the adaptor's stdin (``start``, then ``run`` per
scenario, then ``stop``) and reads one reply line per request on its stdout,
each carrying the request's ``seq``.  The messages are defined by the JSON
Schemas under ``harness/schemas/protocol``.

Whatever the adaptor does wrong (dies, hangs past the deadline, answers with
the wrong ``seq`` or with garbage) raises `AdaptorFailed` for that scenario
with the tail of its stderr attached; the process is killed, reaped, and
started afresh for the next scenario, so the run goes on.
"""

from __future__ import annotations

import contextlib
import json
import os
import selectors
import shlex
import subprocess
import threading
import time
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any, NoReturn

import jsonschema
from referencing import Registry, Resource

from harness.adaptor import custody
from harness.adaptor.environment import adaptor_environment
from harness.adaptor.pipeline import Provider
from harness.catalogue import agents
from harness.catalogue.jsonvalue import JSONError, parse_exact
from harness.catalogue.outcome import Outcome
from harness.catalogue.scenario import Request, Seam
from harness.exceptions import BadTargetSpec, HarnessError, TargetNotStarted
from harness.targets.announce import Implementation

VERSION = 1
#: Grace beyond the request's own timeout before an adaptor counts as hung.
GRACE = 5.0
START_TIMEOUT = 20.0
#: How often a wait for a reply checks that the adaptor is still alive.
_EXIT_CHECK = 0.2
_STDERR_TAIL = 2000
#: How much of an adaptor's stderr is held at any time.
_STDERR_KEEP = 64 * 1024


@dataclass(frozen=True)
class AdaptorFailed(HarnessError):
    """The adaptor broke the protocol for one scenario; recorded as errored."""

    reason: str
    stderr: str = ""

    def __str__(self) -> str:
        tail = self.stderr.strip()
        return self.reason + (f"\nstderr (tail):\n{tail}" if tail else "")


@dataclass(frozen=True)
class Skipped(HarnessError):
    """
    A case that cannot run on this target: the adaptor declined it (for example
    an unsupported driver: ``by="target"``), the scenario itself says why a
    target of this kind cannot be put in its situation (``by="scenario"``), or
    the run did not allow what the case needs (``by="harness"``).  Baselines
    account for the first kind only; the others are the same for every target.
    """

    reason: str
    by: str = "target"

    def __str__(self) -> str:
        return self.reason


@cache
def validators() -> dict[str, jsonschema.Draft202012Validator]:
    """
    Message name → validator, with the outcome schema resolvable by reference
    and the driver enums filled in from the registry (`agents.fill_enums`).
    """
    root = resources.files("harness").joinpath("schemas")
    documents = {"outcome": json.loads(root.joinpath("outcome.schema.json").read_text())}
    for name in ("start", "started", "run", "ran", "stop"):
        text = root.joinpath(f"protocol/{name}.json").read_text()
        documents[name] = agents.fill_enums(json.loads(text))  # the drivers, from the registry
    registry: Registry[Any] = Registry().with_resources(
        (doc["$id"], Resource.from_contents(doc)) for doc in documents.values()
    )
    return {
        name: jsonschema.Draft202012Validator(doc, registry=registry)
        for name, doc in documents.items()
    }


def problems(kind: str, message: Any) -> list[str]:
    """Schema violations of one protocol message, as readable lines."""
    lines = []
    for found in validators()[kind].iter_errors(message):
        error = found
        while error.context:
            # For a failed oneOf, the deepest error is inside the branch that was meant.
            error = max(error.context, key=lambda e: len(e.absolute_path))
        lines.append(f"{'/'.join(map(str, error.absolute_path)) or '<root>'}: {error.message}")
    return sorted(lines)


class _Tail:
    """
    The last bytes an adaptor wrote to stderr, read as they come.

    An adaptor lives for the whole run and may write without end; only a
    bounded tail is kept (for the report of the scenario that fails).
    """

    def __init__(self, fd: int, keep: int = _STDERR_KEEP) -> None:
        self.keep = keep
        self.data = bytearray()
        self.lock = threading.Lock()
        self.drain = custody.Drain(fd, self._take)

    def _take(self, chunk: bytes) -> None:
        with self.lock:
            self.data += chunk
            del self.data[: max(0, len(self.data) - self.keep)]

    def text(self) -> str:
        with self.lock:
            return bytes(self.data[-_STDERR_TAIL:]).decode("utf-8", "replace")


@dataclass
class _Process:
    process: subprocess.Popen[bytes]
    stderr: _Tail
    buffer: bytes = b""

    def tail(self) -> str:
        return self.stderr.text()


@dataclass
class ProtocolAdaptor:
    """
    A target reached through the JSON-lines protocol.

    With ``check`` every message in both directions is validated against the
    protocol schemas and a violation errors the scenario; without it only
    what the harness needs is checked (the reply's seq and its outcome).
    """

    name: str
    argv: tuple[str, ...]
    check: bool = False
    grace: float = GRACE
    kind: str = "cmd"
    seams: frozenset[Seam] = frozenset({Seam.AGENT_CLI})
    #: What the adaptor said of itself in its start reply.
    announcement: Implementation | None = None
    #: Why the adaptor could not be started, once it could not: its cases are not run.
    not_started: str | None = None
    _live: _Process | None = None
    _seq: int = 0
    _budget: float = 0.0

    @classmethod
    def from_spec(cls, spec: str, command: str, *, check: bool = False) -> ProtocolAdaptor:
        try:
            argv = tuple(shlex.split(command))
        except ValueError as error:  # an unbalanced quote
            raise BadTargetSpec(spec, f"cannot split the command: {error}") from None
        if not argv:
            raise BadTargetSpec(spec, "names no command")
        return cls(spec, argv, check=check)

    # -- lifecycle -----------------------------------------------------------

    def _start(self) -> _Process:
        env = adaptor_environment()
        try:
            process = subprocess.Popen(
                custody.contained(self.argv, env.get("PATH")),  # nothing it starts outlives it
                bufsize=0,  # raw pipes: closing one never flushes into a full pipe
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=env,
                start_new_session=True,  # a group of its own: its children go with it
            )
        except OSError as error:
            raise AdaptorFailed(f"cannot start {shlex.join(self.argv)}: {error}") from None
        assert process.stderr is not None
        live = _Process(process, _Tail(process.stderr.fileno()))
        self._live = live
        self._seq = 0
        reply = self._exchange({"cmd": "start", "seq": 0, "version": VERSION}, START_TIMEOUT)
        if self.check:
            self._validate("started", reply)
        if reply.get("ready") is not True or reply.get("version") != VERSION:
            self._fail(f"adaptor refused protocol version {VERSION}: {json.dumps(reply)}")
        try:
            self.announcement = Implementation.from_json(reply.get("implementation"))
        except ValueError as error:
            self._fail(f"the start reply's {error}: {json.dumps(reply)[:200]}")
        return live

    def _kill(self) -> None:
        live, self._live = self._live, None
        if live is None:
            return
        process = live.process
        # The whole group and namespace, even when the adaptor itself has exited:
        # a child it left behind (holding its pipes, say) must not outlive it.
        custody.end(process)
        live.stderr.drain.stop()
        for stream in (process.stdin, process.stdout):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()

    def close(self) -> None:
        """Ask the adaptor to stop, then make sure it is gone."""
        live = self._live
        if live is not None and live.process.poll() is None:
            try:
                self._send({"cmd": "stop", "seq": self._seq + 1}, 2)
                live.process.wait(timeout=2)
            except (AdaptorFailed, subprocess.TimeoutExpired):
                pass
        self._kill()

    # -- messages ------------------------------------------------------------

    def _fail(self, reason: str) -> NoReturn:
        live = self._live
        # Killed first: what the adaptor wrote just before it failed may still be in
        # the pipe, and `_kill` waits for the reader to meet its end.
        self._kill()
        raise AdaptorFailed(reason, live.tail() if live is not None else "")

    def _validate(self, kind: str, message: Any) -> None:
        found = problems(kind, message)
        if found:
            self._fail(f"protocol check: {kind} message invalid: " + "; ".join(found))

    def _send(self, message: dict[str, Any], timeout: float = START_TIMEOUT) -> None:
        live = self._live
        assert live is not None
        assert live.process.stdin is not None
        data = json.dumps(message).encode() + b"\n"
        try:
            custody.write_within(live.process.stdin.fileno(), data, time.monotonic() + timeout)
        except TimeoutError:
            self._fail(f"adaptor did not read its input within {timeout:.1f} s")
        except OSError:
            self._fail(self._death("while the harness was writing to it"))

    def _death(self, when: str) -> str:
        assert self._live is not None
        try:
            # Closing stdout usually means dying; give the exit a moment to land.
            code: int | None = self._live.process.wait(timeout=1)
        except subprocess.TimeoutExpired:
            code = None
        if code is None:
            return f"adaptor closed its stdout {when}"
        how = f"signal {-code}" if code < 0 else f"status {code}"
        return f"adaptor exited with {how} {when}"

    def _read_line(self, deadline: float) -> bytes:
        live = self._live
        assert live is not None
        assert live.process.stdout is not None
        fd = live.process.stdout.fileno()
        with selectors.DefaultSelector() as selector:
            selector.register(fd, selectors.EVENT_READ)
            while b"\n" not in live.buffer:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    self._fail(f"adaptor did not answer within {self._budget:.1f} s")
                if not selector.select(min(remaining, _EXIT_CHECK)):
                    # A child of the adaptor may hold its stdout open after the
                    # adaptor died: the exit, not the deadline, is what happened.
                    if live.process.poll() is not None:
                        self._fail(self._death("before answering"))
                    continue
                chunk = os.read(fd, 65536)
                if not chunk:
                    self._fail(self._death("before answering"))
                live.buffer += chunk
        line, _, live.buffer = live.buffer.partition(b"\n")
        return line

    def _exchange(self, message: dict[str, Any], timeout: float) -> dict[str, Any]:
        self._budget = timeout
        if self.check:
            self._validate(str(message["cmd"]), message)
        self._send(message, timeout)
        line = self._read_line(time.monotonic() + timeout)
        try:
            reply = parse_exact(line.decode("utf-8"))
        except (UnicodeDecodeError, JSONError) as error:
            shown = line[:200].decode("utf-8", "replace")
            self._fail(f"adaptor answered with a line that is not JSON ({error}): {shown!r}")
        if not isinstance(reply, dict):
            self._fail(f"adaptor answered with a non-object: {line[:200]!r}")
        if reply.get("seq") != message["seq"]:
            self._fail(f"adaptor answered seq {reply.get('seq')!r} to seq {message['seq']}")
        return reply

    # -- the target ----------------------------------------------------------

    def announced(self) -> Implementation | None:
        return self.announcement

    def _ready(self) -> Implementation:
        """
        The adaptor, started if it is not running (again, after a crash).  An
        adaptor that cannot be started is not tried again: every later case
        would wait for the same failure.
        """
        if self.not_started is not None:
            raise TargetNotStarted(self.name, self.not_started)
        if self._live is None or self._live.process.poll() is not None:
            restart = self.announcement is not None
            self._kill()
            try:
                self._start()
            except AdaptorFailed as failure:
                self.not_started = ("on restart: " if restart else "") + str(failure)
                raise TargetNotStarted(self.name, self.not_started) from None
        assert self.announcement is not None
        return self.announcement

    def run(self, request: Request, provider: Provider, scenario_id: str) -> Outcome:
        why = self._ready().declines(request)
        if why is not None:
            raise Skipped(why)
        self._seq += 1
        message = {
            "cmd": "run",
            "seq": self._seq,
            "scenario": scenario_id,
            "request": request.to_json(),
            "provider": provider.to_json(),
        }
        reply = self._exchange(message, request.timeout + self.grace)
        if self.check:
            self._validate("ran", reply)
        if reply.get("skipped") is True:
            raise Skipped(str(reply.get("reason", "skipped by the adaptor")))
        if reply.get("errored") is True:
            raise AdaptorFailed(f"adaptor reported an error: {reply.get('message')}")
        outcome = reply.get("outcome")
        found = problems("outcome", outcome)
        if found:
            self._fail("adaptor answered with an invalid outcome: " + "; ".join(found))
        return Outcome.from_json(outcome)  # type: ignore[arg-type]
