"""
Errors that stop the harness itself.

Non-conformance is never an exception here: a failing, errored or skipped case
is a value in a report.  These exceptions are for the few situations in which
the harness cannot go on at all, and each one carries the fields a user needs
to act on it without reading a traceback.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Problem:
    """
    One thing wrong with one scenario file, pinned to where it is.

    Rendered as ``file:line:col: field: message`` so editors can jump to it.
    """

    file: str
    line: int
    column: int
    field: str
    message: str

    def __str__(self) -> str:
        field = self.field or "<document>"
        return f"{self.file}:{self.line}:{self.column}: {field}: {self.message}"


class HarnessError(Exception):
    """Base class: the harness cannot continue."""


# -- HTTP transport errors (`harness.net`) ---------------------------------------------
# Not harness errors: a request that failed is data for its caller (a model run
# killed, a service case errored, a recording cut).  The names and the tree are
# httpx's, whose subset `harness.net` replaced, so a reason naming the class reads
# as before.


class HTTPError(Exception):
    """A request of `harness.net` failed; ``request`` is the one that did, when known."""

    def __init__(self, message: str, *, request: object = None) -> None:
        super().__init__(message)
        self.request = request


class TransportError(HTTPError):
    """The exchange itself failed: no connection, too slow, or broken off."""


class TimeoutException(TransportError):
    """A wait (or the whole exchange) took longer than its timeout."""


class ConnectTimeout(TimeoutException):
    """The connection was not made in time."""


class ReadTimeout(TimeoutException):
    """The answer (status line, headers or body) did not come in time."""


class WriteTimeout(TimeoutException):
    """The request could not be sent in time."""


class NetworkError(TransportError):
    """The socket failed."""


class ConnectError(NetworkError):
    """No connection: refused, unresolvable, or a TLS handshake that failed."""


class ReadError(NetworkError):
    """The connection failed while the answer was read."""


class WriteError(NetworkError):
    """The connection failed while the request was sent."""


class ProtocolError(TransportError):
    """The exchange broke HTTP's rules."""


class RemoteProtocolError(ProtocolError):
    """The server did: closed before a whole answer, or sent something that is not HTTP."""


class UnsupportedProtocol(TransportError):
    """A URL whose scheme is neither http nor https (or names no host)."""


@dataclass(frozen=True)
class InvalidScenarios(HarnessError):
    """
    Scenario files, or a file read beside them (the equivalent mutants), were
    rejected; the problems say where and why, one ``file:line:col`` line each.
    """

    problems: tuple[Problem, ...]

    def __str__(self) -> str:
        return "\n".join(str(each) for each in self.problems)


@dataclass(frozen=True)
class NoSuchTarget(HarnessError):
    """A ``--target`` named a kind that no registered target provides."""

    name: str
    known: tuple[str, ...]

    def __str__(self) -> str:
        return f"unknown target {self.name!r} (known: {', '.join(self.known)})"


@dataclass(frozen=True)
class BadTargetSpec(HarnessError):
    """A ``--target`` of a known kind whose argument cannot be used."""

    spec: str
    why: str

    def __str__(self) -> str:
        return f"target {self.spec!r}: {self.why}"


@dataclass(frozen=True)
class InstallFailed(HarnessError):
    """A version of a real CLI a target names could not be installed."""

    what: str
    why: str

    def __str__(self) -> str:
        return f"cannot install {self.what}: {self.why}"


@dataclass(frozen=True)
class TargetNotStarted(HarnessError):
    """
    A target could not be started at all (its command is missing, it died or
    hung before answering ``start``, it refused the protocol version): one
    failure of the target, and none of its cases run.
    """

    target: str
    reason: str

    def __str__(self) -> str:
        return f"{self.target} did not start: {self.reason}"


@dataclass(frozen=True)
class ReservedTargetName(HarnessError):
    """A ``name=spec`` target took a name the harness keeps for itself."""

    name: str
    why: str

    def __str__(self) -> str:
        return f"target name {self.name!r} is reserved: {self.why}"


@dataclass(frozen=True)
class MissingExecutable(HarnessError):
    """A fake provider executable is not installed where the harness looks."""

    name: str
    searched: str

    def __str__(self) -> str:
        return f"cannot find executable {self.name!r} (searched {self.searched})"


@dataclass(frozen=True)
class InvalidAnswer(HarnessError):
    """A target answered with something that is not a canonical outcome."""

    target: str
    problems: tuple[str, ...]

    def __str__(self) -> str:
        return f"{self.target} answered with an invalid outcome: {'; '.join(self.problems)}"


@dataclass(frozen=True)
class CannotWrite(HarnessError):
    """
    ``harness record`` or ``harness import`` cannot make a scenario of what it was given.

    ``where`` names the file (with line and column when known) or the
    argument at fault, so the message reads as one ``where: field: message``
    line; nothing is written when this is raised.
    """

    where: str
    field: str
    message: str

    def __str__(self) -> str:
        return (
            f"{self.where}: {self.field}: {self.message}"
            if self.field
            else (f"{self.where}: {self.message}")
        )


@dataclass(frozen=True)
class WouldOverwrite(HarnessError):
    """
    ``harness init`` was pointed at a path that already holds something: it
    writes only into a new or empty folder, so nothing of the user's is lost,
    and nothing is written.
    """

    path: str
    why: str

    def __str__(self) -> str:
        return f"{self.path}: {self.why}; harness init writes into a new or empty folder only"


@dataclass(frozen=True)
class ServiceFailed(HarnessError):
    """
    A service under test could not be talked to for one scenario.

    Down, too slow, or answering with something that is not JSON: the case
    is recorded as ``errored`` with this reason and the run goes on.
    """

    reason: str

    def __str__(self) -> str:
        return self.reason


@dataclass(frozen=True)
class ValidatorUnavailable(HarnessError):
    """
    The reference model of Claude Code cannot reach its validator (Node and
    the pinned Ajv, `harness.systems.claude.validator`): each case that needs
    it is errored with this reason, which names the command that installs it.
    """

    reason: str

    def __str__(self) -> str:
        return self.reason


@dataclass(frozen=True)
class ValidationTimedOut(HarnessError):
    """
    One answer of Claude Code's validator took longer than its watchdog: a
    ``pattern`` that backtracks catastrophically, most likely.  The binary's
    regular-expression engine gives up after a backtracking budget and
    reports no match; Node has no such budget, so the case is errored with
    this reason rather than left to hang.
    """

    seconds: float
    doing: str

    def __str__(self) -> str:
        return (
            f"Claude Code's validator spent more than {self.seconds:g}s {self.doing} and was "
            "stopped (a pattern that backtracks catastrophically? the binary gives up after a "
            "backtracking budget and reports no match; Node has no such budget)"
        )


class Unreadable(HarnessError):
    """
    A file read where a regular file is expected is not one (a FIFO, a
    device) or is larger than allowed; the message says which.
    """
