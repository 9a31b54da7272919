"""
The custody shim: ``python -I -S reaper.py PROGRAM [ARG...]`` runs PROGRAM
as its only child and, when PROGRAM ends, kills everything PROGRAM started.

Where bubblewrap cannot make a PID namespace, a child that double-forks and
calls ``setsid`` leaves both the process group and the tree below the
program: its parent exits, the kernel hands it to init, and nothing the
harness can find leads to it.  Linux lets a process claim such orphans
(``prctl(PR_SET_CHILD_SUBREAPER)``): they are handed to it instead, so they
stay below this shim, where `custody.end`'s ``/proc`` sweep finds them, and
where this shim itself finds them when PROGRAM exits.  That is a PID
namespace's rule, kept without one: when the program ends, what it started
ends with it.

The shim is transparent otherwise: it lets go of its own copies of the
standard streams (the program's end of file is the harness's), passes on
SIGTERM, SIGINT, SIGHUP and SIGQUIT, and exits as the program did, by the
same signal if it was killed by one.  Where ``prctl`` is not there (not
Linux, no libc to load), it becomes the program (``exec``) and custody is
the process group's alone, as `custody.how` says.  Standard library only,
run with ``-I -S``: it starts in a few milliseconds, before anything of the
harness or of the user's site could load.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import time
from pathlib import Path

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
#: Signals passed on to the program, as they would have reached it without the shim.
FORWARDED = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT)
#: How long the sweep waits for what it killed to be reaped (a process in the
#: kernel's uninterruptible sleep dies only when it wakes).
REAP_WITHIN = 5.0


def claim_orphans() -> bool:
    """Make this process a child subreaper (and tell it when its parent dies): Linux only."""
    try:
        import ctypes  # noqa: PLC0415 - only where it is needed

        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
            return False
        # bubblewrap's --die-with-parent: the harness gone, the shim hears SIGTERM.
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    except (ImportError, OSError, AttributeError):
        return False
    return True


def descendants(pid: int) -> list[int]:
    """Every live process below ``pid``, found through ``/proc``."""
    tree: dict[int, list[int]] = {}
    # listdir, not a glob: a glob stats each entry, and one that has just exited
    # raises ProcessLookupError from inside the glob.
    try:
        names = os.listdir("/proc")
    except OSError:
        names = []  # no /proc: nothing to find
    for name in names:
        if not name.isdigit():
            continue
        try:
            fields = Path("/proc", name, "stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if fields[0] != "Z":  # a zombie is dead already: only waiting to be reaped
            tree.setdefault(int(fields[1]), []).append(int(name))
    found, stack = [], [pid]
    while stack:
        for child in tree.get(stack.pop(), []):
            found.append(child)
            stack.append(child)
    return found


def sweep() -> None:
    """Kill everything below this process, and reap it (orphans come here to die)."""
    me = os.getpid()
    for _ in range(100):  # a fork between two looks is caught by the next
        below = descendants(me)
        if not below:
            break
        for pid in below:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + REAP_WITHIN
    while time.monotonic() < deadline:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            time.sleep(0.005)


def _exit_as(status: int) -> None:
    if os.WIFSIGNALED(status):
        signum = os.WTERMSIG(status)
        with contextlib.suppress(ImportError, OSError, ValueError):
            import resource  # noqa: PLC0415 - only for a program killed by a signal

            resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # its core, not the shim's
        with contextlib.suppress(OSError, ValueError):  # SIGKILL and SIGSTOP have no handler
            signal.signal(signum, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signum})
        os.kill(os.getpid(), signum)
        os._exit(128 + signum)  # a signal that does not kill (SIGCHLD, say)
    os._exit(os.waitstatus_to_exitcode(status))


def main(argv: list[str]) -> None:
    """Run ``argv`` in custody; never returns."""
    if not argv:
        sys.stderr.write("usage: reaper.py PROGRAM [ARG...]\n")
        os._exit(2)
    parent = os.getppid()
    if not claim_orphans():
        os.execvp(argv[0], argv)  # noqa: S606 - what the harness was asked to run
    held = set(FORWARDED)
    signal.pthread_sigmask(signal.SIG_BLOCK, held)  # none lands between fork and handlers
    child = os.fork()
    if child == 0:
        for signum in FORWARDED:
            signal.signal(signum, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, held)
        try:
            os.execvp(argv[0], argv)  # noqa: S606 - what the harness was asked to run
        except OSError as error:
            os.write(2, f"{argv[0]}: cannot run: {error.strerror}\n".encode())
            os._exit(127)

    def forward(signum: int, frame: object) -> None:
        if os.getppid() != parent:  # the harness is gone: so is everything it started
            sweep()
            os._exit(128 + signum)
        with contextlib.suppress(ProcessLookupError):
            os.kill(child, signum)

    for signum in FORWARDED:
        signal.signal(signum, forward)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, held)
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):  # the program's streams are its own: the shim holds none open
        os.dup2(null, fd)
    while True:
        pid, status = os.waitpid(-1, 0)  # orphans handed to the shim are reaped here too
        if pid == child:
            break
    for signum in FORWARDED:  # the program is reaped: its pid is nobody's to signal
        signal.signal(signum, signal.SIG_IGN)
    sweep()
    _exit_as(status)


if __name__ == "__main__":
    main(sys.argv[1:])
