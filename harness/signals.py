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
from pathlib import Path


def _interrupt(signum: int, frame: object) -> None:
    _forward(signum)
    raise KeyboardInterrupt(f"signal {signal.Signals(signum).name}")


def _forward(signum: int) -> None:
    me = str(os.getpid())
    for entry in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = entry.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if fields[1] == me:  # the parent's pid comes after the state
            with contextlib.suppress(OSError):
                os.kill(int(entry.parent.name), signum)


def terminate_gracefully() -> None:
    """Make SIGTERM a ``KeyboardInterrupt``, where nobody else has claimed the signal."""
    if signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
        signal.signal(signal.SIGTERM, _interrupt)
