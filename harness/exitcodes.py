"""
What the ``harness`` command's exit status means, and the line that says why.

CI reads the status before anything else, so each cause has its own code,
the same as pytest's where the two overlap (the run *is* a pytest session):

====  ==========================================================================
0     every case as expected (passed, skipped, or failing as its baseline lists)
1     a regression, a stale baseline or differential entry, or an unexplained
      disagreement between a reference model and the real CLI
2     interrupted (Ctrl-C, SIGTERM); the previous reports are kept
3     internal error: a bug in the harness
4     usage error: bad arguments, or a scenario, baseline or expectations file
      that cannot be read or is invalid
5     nothing selected (``-k``, ``--tag`` or ``--shard`` left no case)
141   the reader of the output went away (``harness show ID | head -3``):
      quiet, as a program killed by SIGPIPE is, which is what the shell shows
====  ==========================================================================

A run whose inputs are bad exits 4 even when cases also regressed: the
verdicts of a run with a broken baseline are not to be trusted.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager

OK = 0
FAILED = 1
INTERRUPTED = 2
INTERNAL = 3
USAGE = 4
NOTHING = 5
PIPE = 141

#: Each status in a few words: the start of the summary's last line.
MEANING = {
    OK: "all as expected",
    FAILED: "failed",
    INTERRUPTED: "interrupted",
    INTERNAL: "internal error",
    USAGE: "usage error",
    NOTHING: "nothing selected",
    PIPE: "the reader of the output went away",
}


def last_line(code: int, cause: str = "") -> str:
    """``harness: exit N: meaning[: cause]``, the line a run ends on."""
    meaning = MEANING.get(code, "unknown status")
    return f"harness: exit {code}: {meaning}" + (f": {cause}" if cause else "")


@contextmanager
def internal_errors() -> Iterator[None]:
    """
    An exception nobody handled is a bug of the harness: its traceback goes
    to stderr (the one place a traceback is right), then `SystemExit` with
    `INTERNAL`.
    """
    try:
        yield
    except (KeyboardInterrupt, SystemExit, BrokenPipeError):
        raise
    except Exception as error:  # noqa: BLE001  (the last net: any escape is a bug)
        import traceback  # noqa: PLC0415  (only a crash needs it)

        traceback.print_exc(file=sys.stderr)
        cause = f"{type(error).__name__}: {error} (a bug in the harness; please report it)"
        print(last_line(INTERNAL, cause), file=sys.stderr)
        raise SystemExit(INTERNAL) from None
