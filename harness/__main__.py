"""
The ``harness`` command's first line: the console script
(``harness.__main__:main``) and ``python -m harness`` start here, not in
`harness.cli`.

Importing the CLI takes a while (argparse, the commands' table, the agent
registry), and a SIGINT landing in an import would otherwise end as a
``KeyboardInterrupt`` traceback.  So this module, which imports nothing
but ``sys`` and the C half of ``signal`` (``signal`` itself builds enums on
import, time enough for a signal to land in), claims SIGINT and SIGTERM
before anything else of the harness loads; an interrupt while the CLI
loads is then the line and the status every interrupt gets, and
`harness.signals` takes the signals over once the CLI runs.  After the
command returns, a late signal (while the interpreter shuts down, where
Python could only print an "Exception ignored" traceback) says the same
line and ends the process at once.

What cannot be covered is the interpreter's own start-up before this
module runs (docs/safety.md measures it): until then Python answers.
"""

import os
import sys

# The C module: nothing to build, so it loads in microseconds.
_signal = __import__("_signal")

#: The status of an interrupted command (`harness.exitcodes.INTERRUPTED`, not
#: imported: this module loads nothing of the harness before its handlers).
INTERRUPTED = 2
LINE = "harness: interrupted\n"


def starting(signum: int, frame: object) -> None:
    """
    SIGINT or SIGTERM while the command loads: nothing is started yet, so
    nothing needs undoing; `main` turns it into the one line.  Inside
    importlib's own frames (a module lock's weakref callback prints and drops
    what is raised there) or a finalizer the signal is raised again for the
    next frame, as `harness.signals.lost_in` does once the command runs (this
    module may not import it).
    """
    code = getattr(frame, "f_code", None)
    if code is not None and (
        code.co_filename.startswith("<frozen importlib") or code.co_name == "__del__"
    ):
        _signal.raise_signal(signum)
        return
    raise KeyboardInterrupt


def _late(signum: int, frame: object) -> None:
    # The command has returned and cleaned up: say so and go, without running
    # the shutdown in which Python would report the interrupt as a traceback.
    for stream in (sys.stdout, sys.stderr):
        try:  # noqa: SIM105 - contextlib loads more than this module may
            stream.flush()
        except (OSError, ValueError):
            pass
    try:
        sys.stderr.write(LINE)
        sys.stderr.flush()
    except (OSError, ValueError):
        pass
    os._exit(INTERRUPTED)


def _claim() -> list[int]:
    # Only where nobody else has: a shell that started the command with SIGINT
    # ignored (a background job) keeps it ignored.
    claimed = []
    for signum, default in (
        (_signal.SIGINT, _signal.default_int_handler),
        (_signal.SIGTERM, _signal.SIG_DFL),
    ):
        if _signal.getsignal(signum) == default:
            _signal.signal(signum, starting)
            claimed.append(signum)
    return claimed


def main() -> int:
    """The ``harness`` command; its exit status is one of `harness.exitcodes`."""
    claimed = _claim()
    late = _late
    try:
        from harness.cli import main as command  # noqa: PLC0415 - after the handlers

        return command()
    except KeyboardInterrupt:
        late = _signal.SIG_IGN  # a second one while the line is written: the same end
        for signum in claimed:
            _signal.signal(signum, late)
        sys.stderr.write(LINE)
        return INTERRUPTED
    finally:
        for signum in claimed:
            _signal.signal(signum, late)


if __name__ == "__main__":
    # ``python -m harness`` runs this file as ``__main__``; `harness.signals` looks
    # for `starting` under the module's own name, so that is the copy that runs.
    from harness.__main__ import main as command

    sys.exit(command())
