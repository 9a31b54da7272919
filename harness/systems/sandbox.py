"""
Commands a scenario makes a system run, confined.

A model-api scenario can script a model that asks Claude Code to run a Bash
command, and both the real binary and its reference model then run it for
real (LOOP-16 depends on the side effect).  A catalogue is untrusted input,
so the harness runs such cases only when the user opts in
(``--allow-exec``), and even then never with the harness's own privileges:
the command runs under bubblewrap when the machine has it (a read-only view
of the file system with only the case's folder writable, no network, its
own PID namespace so that nothing it starts outlives it, an environment
built from scratch), otherwise in a process group of its own that is killed
with it, with the environment given and nothing inherited.  Its output is
read through a bounded buffer and its time is bounded too.

`isolation` tells which of the two a run used, so the reports can say it.
"""

from __future__ import annotations

import os
import resource
import select
import shutil
import subprocess
import time
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from harness.adaptor import custody

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

#: What a confined command may keep of its output (stdout and stderr as written).
KEEP_BYTES = 256 * 1024
#: The largest file a confined command may write (RLIMIT_FSIZE).
FILE_LIMIT = 64 * 1024 * 1024
#: The address space a confined command may use (RLIMIT_AS).
MEMORY_LIMIT = 2 * 1024 * 1024 * 1024

BUBBLEWRAP, PROCESS_GROUP = "bubblewrap", "process group"


@dataclass(frozen=True)
class CommandRun:
    """What a confined command did."""

    #: Its output, stdout and stderr interleaved in write order, cut at `KEEP_BYTES`.
    output: bytes
    #: How many bytes it wrote in all, kept or not.
    size: int
    #: Its exit status (negative: the signal that ended it); None when killed at its deadline.
    exit_code: int | None
    timed_out: bool
    isolation: str


@cache
def _bubblewrap() -> str | None:
    """The bwrap executable, if it is there and can make a sandbox on this machine."""
    found = shutil.which("bwrap")
    if found is None:
        return None
    probe = [found, *_jail_arguments(Path("/")), "--", "true"]
    try:
        done = subprocess.run(probe, capture_output=True, timeout=10, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return found if done.returncode == 0 else None


def isolation() -> str:
    """How confined commands run on this machine: `BUBBLEWRAP` or `PROCESS_GROUP`."""
    return BUBBLEWRAP if _bubblewrap() else PROCESS_GROUP


#: What of the machine a confined command sees, read-only: the system's
#: programs and libraries, and of /etc only what name lookup, TLS and the
#: dynamic linker read.  Never the user's home, nor the rest of /etc.
SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/opt")
SYSTEM_ETC = (
    "alternatives", "ca-certificates", "ca-certificates.conf", "gai.conf", "group",
    "host.conf", "hosts", "ld.so.cache", "ld.so.conf", "ld.so.conf.d", "localtime",
    "mime.types", "nsswitch.conf", "os-release", "passwd", "pki", "resolv.conf", "ssl",
)  # fmt: skip


def _jail_arguments(folder: Path, network: bool = False) -> list[str]:
    arguments = [
        "--dev", "/dev",
        "--proc", "/proc",
        "--tmpfs", "/tmp",  # noqa: S108 - a private, empty /tmp inside the sandbox
        "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
        "--die-with-parent", "--new-session",
    ]  # fmt: skip
    for system in SYSTEM:
        arguments += ["--ro-bind-try", system, system]
    for name in SYSTEM_ETC:
        arguments += ["--ro-bind-try", f"/etc/{name}", f"/etc/{name}"]
    if not network:
        arguments.append("--unshare-net")
    if folder != Path("/"):
        # The working directory stays the caller's (bwrap keeps it when it is inside).
        arguments += ["--bind", str(folder), str(folder)]
    return arguments


def jail(argv: Sequence[str], folder: Path, env: Mapping[str, str], *, network: bool) -> list[str]:
    """
    ``argv`` wrapped so that it sees the system's programs, what ``argv``
    itself needs (its install folder, the folders of its ``PATH``) and
    ``folder``, writes only under ``folder``, and sees only ``env``;
    without bubblewrap, run under the custody shim (`custody.reaped`).
    ``network`` keeps the host's network (a real CLI must reach the
    loopback fake API).
    """
    bwrap = _bubblewrap()
    if bwrap is None:  # a process group, under the custody shim where it can claim orphans
        return custody.reaped(argv, env.get("PATH"))
    settings = [item for name, value in env.items() for item in ("--setenv", name, value)]
    seen = _needs(argv, env)
    return [bwrap, *_jail_arguments(folder, network), *seen, "--clearenv", *settings, "--", *argv]


def _needs(argv: Sequence[str], env: Mapping[str, str]) -> list[str]:
    """
    Read-only binds for what the program needs beyond the system: its install
    folder (the one holding ``node_modules``, else its own), and the folders
    on its ``PATH`` (where its interpreter is), but never a folder that holds
    the user's home or the root.
    """
    roots: set[Path] = set()
    if argv and Path(argv[0]).is_absolute():
        program = Path(argv[0])
        root = next((p for p in program.parents if p.name == "node_modules"), None)
        roots.add(program.parent if root is None else root.parent)
    for entry in env.get("PATH", "").split(os.pathsep):
        if entry and Path(entry).is_absolute() and Path(entry).is_dir():
            roots.add(Path(entry))
    home = Path.home().resolve()
    binds: list[str] = []
    for root in sorted(roots):
        real = root.resolve()
        if real == Path("/") or real == home or real in home.parents:
            continue
        if any(real == Path(system) or Path(system) in real.parents for system in SYSTEM):
            continue  # seen already
        binds += ["--ro-bind", str(real), str(root)]
    return binds


def _limits() -> None:
    # Runs in the child before exec: a confined command cannot fill the disk or the memory.
    resource.setrlimit(resource.RLIMIT_FSIZE, (FILE_LIMIT, FILE_LIMIT))
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def run(command: str, folder: Path, env: Mapping[str, str], timeout: float) -> CommandRun:
    """
    ``bash -c command`` in ``folder`` with exactly ``env``, confined (see the
    module docstring), killed with everything it started at ``timeout``.
    """
    argv = jail(["bash", "-c", command], folder, env, network=False)
    process = subprocess.Popen(
        argv,
        cwd=folder,
        env=dict(env),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
        preexec_fn=_limits,  # noqa: PLW1509 - the harness starts no threads that fork
    )
    assert process.stdout is not None
    kept, size, timed_out = bytearray(), 0, False
    deadline = time.monotonic() + timeout
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                timed_out = True
                break
            # A background child may hold the pipe open after the command ended:
            # once the command is gone, only what is already written is read.
            done = process.poll() is not None
            ready, _, _ = select.select([process.stdout], [], [], 0 if done else min(left, 0.05))
            if not ready:
                if done:
                    break
                continue
            chunk = os.read(process.stdout.fileno(), 65536)
            if not chunk:
                break
            size += len(chunk)
            kept += chunk[: max(0, KEEP_BYTES - len(kept))]
    finally:
        # Whatever the command left running in its group, tree or namespace goes with it.
        custody.end(process)
        process.stdout.close()
    code = None if timed_out else process.returncode
    return CommandRun(bytes(kept), size, code, timed_out, isolation())
