"""
Every process the harness starts ends with the run, detached or not.

A process group is not enough: a child that calls ``setsid`` (or
``setpgid``) leaves its parent's group, and killing the group misses it;
holding a pipe the harness reads, it would keep the harness waiting for an
end of file that never comes.  So the programs the harness does not know
(a ``cmd:`` adaptor, a real CLI) run in a PID namespace of their own where
bubblewrap can make one: when the namespace's first process dies, the
kernel kills everything else in it, whatever session or group it moved to.
(Its price: a program killed by signal N is seen to exit with 128 + N, as
bubblewrap reports it; the fakes, which scenarios make die by a signal and
which start nothing, run without it.)  Where bubblewrap cannot, a program
runs in a process group of its own under the custody shim (`reaper`), a
child subreaper: what double-forks out of the tree is handed to the shim
rather than to init, so it stays below the program's launch, the shim kills
it when the program ends, and `end` kills it with the rest (every
descendant found through ``/proc``, then the group).  Only where the shim
cannot claim orphans (not Linux) can a double-forked child escape, and
`how` says which of the three a run used.

The harness never blocks on a child either: pipes are read through
`drain`, which stops when told even if a descendant still holds the write
end, and written through `write_within`, which gives up at a deadline.
"""

from __future__ import annotations

import contextlib
import errno
import os
import selectors
import shutil
import signal
import subprocess
import sys
import threading
import time
from functools import cache
from pathlib import Path

from harness.adaptor.reaper import descendants

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

PID_NAMESPACE, SUBREAPER = "PID namespace", "process group under a subreaper"
PROCESS_GROUP = "process group"
#: The custody shim, run as a script by the interpreter running the harness.
REAPER = Path(__file__).with_name("reaper.py")

#: A shared view of the whole file system, in a PID namespace of its own.
_NAMESPACE = ["--dev-bind", "/", "/", "--proc", "/proc", "--unshare-pid", "--die-with-parent"]


@cache
def bubblewrap() -> str | None:
    """The bwrap executable, if it is there and can make a PID namespace here."""
    found = shutil.which("bwrap")
    if found is None:
        return None
    try:
        done = subprocess.run(
            [found, *_NAMESPACE, "--", "true"], capture_output=True, timeout=10, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return found if done.returncode == 0 else None


@cache
def subreaper() -> bool:
    """Whether the custody shim can claim orphans here (Linux's ``PR_SET_CHILD_SUBREAPER``)."""
    if not sys.platform.startswith("linux") or not REAPER.is_file():
        return False
    try:
        done = subprocess.run(
            [*_shim(), sys.executable, "-I", "-S", "-c", "import os; print(os.getppid())"],
            capture_output=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return False
    # Without the prctl the shim becomes the program, whose parent is then this process.
    return done.returncode == 0 and done.stdout.strip() != str(os.getpid()).encode()


def _shim() -> list[str]:
    return [sys.executable, "-I", "-S", str(REAPER)]


def how() -> str:
    """How the harness holds its children here: `PID_NAMESPACE`, `SUBREAPER`, `PROCESS_GROUP`."""
    if bubblewrap():
        return PID_NAMESPACE
    return SUBREAPER if subreaper() else PROCESS_GROUP


def contained(argv: Sequence[str], path: str | None = None) -> list[str]:
    """
    ``argv`` made to run in a PID namespace of its own, or without
    bubblewrap under the custody shim (unchanged where neither holds, or when
    it already runs under bubblewrap, which makes one).  Started with
    ``start_new_session=True``, `end` then ends it and everything it started.  A program that cannot
    be found on ``path`` (the child's ``PATH``) raises the `OSError` that
    starting it bare would, not an exit of bubblewrap.
    """
    bwrap = bubblewrap()
    if bwrap is None:
        return reaped(argv, path)
    if not argv or argv[0] == bwrap:
        return list(argv)
    _findable(argv[0], path)
    return [bwrap, *_NAMESPACE, "--", *argv]


def reaped(argv: Sequence[str], path: str | None = None) -> list[str]:
    """
    ``argv`` run under the custody shim, a child subreaper: whatever it
    double-forks away stays below it and ends with it (unchanged where the
    shim cannot claim orphans).  The `OSError` of a program not found, as
    `contained`.
    """
    if not argv or not subreaper():
        return list(argv)
    _findable(argv[0], path)
    return [*_shim(), *argv]


def _findable(program: str, path: str | None) -> None:
    if shutil.which(program, path=path) is None:
        code = errno.EACCES if os.path.exists(program) and os.sep in program else errno.ENOENT
        raise OSError(code, os.strerror(code), program)


def end(process: subprocess.Popen[bytes] | subprocess.Popen[str]) -> None:
    """
    Kill ``process``, its group and everything below it, and reap it.  Safe
    to call more than once and after the process exited by itself (its
    group and the children it left are still killed while it is unreaped).
    """
    if process.returncode is None:
        # Children first: once the leader dies, they are no longer below it.
        for _ in range(3):
            below = descendants(process.pid)
            if not below:
                break
            for pid in below:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)
    process.wait()


class Drain:
    """
    Reads a pipe to its end in a thread, handing each chunk to ``take``.

    `stop` ends the reading within a tick even when the other end is still
    held open (by a child that outlived the program), then closes the pipe:
    no close ever waits on a reader.
    """

    _TICK = 0.1

    def __init__(self, fd: int, take: Callable[[bytes], None]) -> None:
        self._fd = fd
        self._take = take
        self._stopping = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        with selectors.DefaultSelector() as selector:
            selector.register(self._fd, selectors.EVENT_READ)
            while not self._stopping.is_set():
                if not selector.select(self._TICK):
                    continue
                try:
                    chunk = os.read(self._fd, 65536)
                except OSError:
                    return
                if not chunk:
                    return
                self._take(chunk)

    def stop(self, grace: float = 1.0) -> None:
        """Read what is already there (for ``grace`` at most), then stop and close the pipe."""
        self.thread.join(timeout=grace)
        self._stopping.set()
        self.thread.join()
        with contextlib.suppress(OSError):
            os.close(self._fd)


def write_within(fd: int, data: bytes, deadline: float) -> None:
    """
    Write all of ``data`` to a pipe before ``deadline`` (``time.monotonic``),
    never blocking past it: `TimeoutError` when the reader does not take it
    in time, `BrokenPipeError` (an `OSError`) when nobody reads any more.
    """
    os.set_blocking(fd, False)
    view = memoryview(data)
    with selectors.DefaultSelector() as selector:
        selector.register(fd, selectors.EVENT_WRITE)
        while view:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError
            if not selector.select(left):
                continue
            try:
                written = os.write(fd, view)
            except BlockingIOError:
                continue
            view = view[written:]
