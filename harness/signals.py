"""
SIGTERM stops a run the way Ctrl-C does.

CI runners and ``timeout`` stop a job with SIGTERM, whose default action
kills the process on the spot: no ``finally`` runs, so the fakes, adaptors
and real CLIs the harness started (each in a process group of its own) and
its temporary folders would outlive it.  Turned into ``KeyboardInterrupt``,
SIGTERM unwinds the run like Ctrl-C: every child group is killed, every
temporary folder removed, the previous reports are kept, and the exit
status is 2.  The signal is also passed on to this process's children, so
that pytest-xdist workers stop their case at once instead of finishing it.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import tempfile
import time
import types
from collections.abc import Iterator
from pathlib import Path

#: The stop signals this process has received, in order.
RECEIVED: list[int] = []

#: A stop signal again within this many seconds is the same stop arriving twice
#: (an xdist worker gets the group's SIGTERM and its parent's forward).
ECHO_SECONDS = 1.0

_first: list[float] = []
_holding = 0
_pending: list[int] = []


def lost_in(frame: object) -> bool:
    """
    Whether an exception raised in ``frame`` would be printed and dropped
    rather than unwind the run: importlib's module-lock callbacks (weakref
    callbacks, run whenever a lock is freed) and finalizers.  A stop signal
    landing there is raised again for the next frame instead.
    """
    code = getattr(frame, "f_code", None)
    if not isinstance(code, types.CodeType):
        return False
    return code.co_filename.startswith("<frozen importlib") or code.co_name == "__del__"


def _stops(signum: int, frame: object) -> bool:
    """Note a stop signal; whether it is to unwind the run now."""
    if lost_in(frame):
        signal.raise_signal(signum)
        return False
    if _holding:
        _pending.append(signum)
        return False
    now = time.monotonic()
    echo = bool(_first) and now - _first[0] < ECHO_SECONDS
    RECEIVED.append(signum)
    _first[:] = _first or [now]
    # An echo would land in the unwinding of the first and cut a clean-up short.
    return not echo


def _interrupt(signum: int, frame: object) -> None:
    if _stops(signum, frame):
        _forward(signum)
        raise KeyboardInterrupt(f"signal {signal.Signals(signum).name}")


def _noted(signum: int, frame: object) -> None:
    # Ctrl-C reaches the whole process group from the terminal: nothing to pass on.
    if _stops(signum, frame):
        signal.default_int_handler(signum, frame)  # type: ignore[arg-type]


@contextlib.contextmanager
def held() -> Iterator[None]:
    """
    SIGINT and SIGTERM wait until the block is done, then are delivered.

    The signals are blocked in this thread, and a handler of this module that
    runs meanwhile (the kernel may hand the signal to another thread, whose
    mask is its own) keeps it for the end of the block.
    """
    global _holding  # noqa: PLW0603 - one process, one count of held blocks
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
    _holding += 1
    try:
        yield
    finally:
        _holding -= 1
        # Taken before the mask is lifted: a signal delivered then may unwind this block.
        kept = _pending[:1] if not _holding else []
        if not _holding:
            _pending.clear()
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)
        if kept:
            signal.raise_signal(kept[0])


def interrupted() -> bool:
    """
    Whether a stop signal has reached this process.

    The run's exit status says so even when what unwinds the run fails on
    the way (pytest's own report of a ``KeyboardInterrupt`` can itself
    raise, from a frame without a line number, and end as an internal error).
    """
    return bool(RECEIVED)


def _forward(signum: int) -> None:
    me = str(os.getpid())
    try:
        names = os.listdir("/proc")  # not a glob, which fails on a process that just ended
    except OSError:
        return
    for name in names:
        if not name.isdigit():
            continue
        try:
            fields = Path("/proc", name, "stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if fields[1] == me:  # the parent's pid comes after the state
            with contextlib.suppress(OSError):
                os.kill(int(name), signum)


def terminate_gracefully() -> None:
    """
    Make SIGTERM a ``KeyboardInterrupt``, where nobody else has claimed the
    signal, and note SIGINT where Python's own handler has it.
    """
    # Python finds its temporary folder by writing a probe file with a bare
    # random name and removing it; an interrupt in between would leave the
    # probe in the user's TMPDIR, so the folder is found once, here, held.
    with held():
        tempfile.gettempdir()
    # What `harness.__main__` claimed while the command loaded is ours to take over.
    starting = getattr(sys.modules.get("harness.__main__"), "starting", None)
    if signal.getsignal(signal.SIGTERM) in (signal.SIG_DFL, starting):
        signal.signal(signal.SIGTERM, _interrupt)
    if signal.getsignal(signal.SIGINT) in (signal.default_int_handler, starting):
        signal.signal(signal.SIGINT, _noted)
