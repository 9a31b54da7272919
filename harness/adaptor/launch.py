"""
How the reference pipeline starts a provider: the launcher seam.

`Subprocess` really runs the fake CLI, so exit codes, signals and hangs are
real; every child gets its own process group, a timeout, and is always
killed and reaped.  `InProcess` replays the same script through
``providers_fake.replay`` without a process, with virtual time, and must give
identical outcomes: the catalogue is run both ways in the tests.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sysconfig
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import providers_fake
from harness.adaptor import custody
from harness.catalogue.agents import AGENT_CLIS
from harness.exceptions import MissingExecutable

#: CLI name → executable name of its fake.
EXECUTABLES: Mapping[str, str] = {cli.name: cli.fake for cli in AGENT_CLIS}
_CLI_OF = {exe: cli for cli, exe in EXECUTABLES.items()}


@dataclass(frozen=True)
class Finished:
    """How a provider process ended and what it printed."""

    stdout: bytes
    stderr: bytes
    returncode: int
    timed_out: bool = False

    @property
    def signal(self) -> int | None:
        return -self.returncode if self.returncode < 0 and not self.timed_out else None


class Launcher(Protocol):
    """Runs a provider command to completion or timeout."""

    def launch(
        self, argv: Sequence[str], env: Mapping[str, str], timeout: float, cwd: Path
    ) -> Finished: ...


def find_executable(cli: str) -> str:
    """The installed fake for ``cli``: beside this interpreter, else on PATH."""
    name = EXECUTABLES[cli]
    scripts = Path(sysconfig.get_path("scripts"))
    candidate = scripts / name
    if candidate.is_file():
        return str(candidate)
    for folder in os.environ.get("PATH", "").split(os.pathsep):
        if folder and (Path(folder) / name).is_file():
            return str(Path(folder) / name)
    raise MissingExecutable(name, f"{scripts} and PATH")


class Subprocess:
    """A real child process per launch."""

    def launch(
        self, argv: Sequence[str], env: Mapping[str, str], timeout: float, cwd: Path
    ) -> Finished:
        process = subprocess.Popen(
            list(argv),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=dict(env),
            cwd=cwd,
            # A group of its own, swept with its descendants on the way out.  Not a
            # PID namespace: a fake must die by its own signal, as scenarios script,
            # and bubblewrap would turn that into an exit status.
            start_new_session=True,
        )
        try:
            stdout, stderr = process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            custody.end(process)
            stdout, stderr = process.communicate()
            return Finished(stdout, stderr, process.returncode, timed_out=True)
        finally:
            custody.end(process)
        return Finished(stdout, stderr, process.returncode)


class InProcess:
    """Replay the fake's script in this process, with virtual time."""

    def launch(
        self, argv: Sequence[str], env: Mapping[str, str], timeout: float, cwd: Path
    ) -> Finished:
        cli = _CLI_OF[Path(argv[0]).name]
        replay = providers_fake.replay(cli, list(argv[1:]), env)
        out: list[bytes] = []
        err: list[bytes] = []
        elapsed = 0.0
        for chunk in replay.chunks:
            if chunk[0] == "stdout":
                out.append(chunk[1])
            elif chunk[0] == "stderr":
                err.append(chunk[1])
            elif chunk[0] == "sleep":
                elapsed += chunk[1]
                if elapsed >= timeout:
                    return Finished(b"".join(out), b"".join(err), -signal.SIGKILL, timed_out=True)
            else:
                return Finished(b"".join(out), b"".join(err), -signal.SIGKILL, timed_out=True)
        code = -replay.signal if replay.signal is not None else replay.exit_code
        return Finished(b"".join(out), b"".join(err), code)
