"""
A set of report files replaces the previous set as one, and leaves nothing
beside it.

`render.write` stages each file beside its final name (``.NAME.PID.*.tmp``)
and renames them all with the stop signals held; a run killed outright
(SIGKILL, a power cut) can leave staged files, and the next run into the
folder removes those whose writer is gone.  Nothing else is ever written
there: no second folder (``reports.before/``), no probe that outlives its check.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable
from pathlib import Path


def umask() -> int:
    """The process's umask (read by setting it, then set back)."""
    mask = os.umask(0)
    os.umask(mask)
    return mask


#: The end of a report staged beside its final name, and the start of a probe's name.
STAGED, PROBE = ".tmp", ".harness-probe"


def clear_leftovers(folder: Path, names: Iterable[str]) -> list[Path]:
    """
    Remove what a run killed outright left in ``folder`` (a report staged
    beside one of ``names``, or a probe), and return it: only files whose
    writer (its pid is in the name) is no longer running, so that a run
    writing beside this one keeps its own.
    """
    removed = []
    prefixes = (*(f".{name}." for name in names), f"{PROBE}.")
    try:
        entries = list(folder.iterdir())
    except OSError:
        return []
    for path in entries:
        if not path.name.startswith(prefixes) or not path.name.endswith(STAGED):
            continue
        prefix = next(p for p in prefixes if path.name.startswith(p))
        pid = path.name[len(prefix) :].split(".", 1)[0]
        if pid.isdigit() and not _running(int(pid)) and path.is_file() and not path.is_symlink():
            path.unlink(missing_ok=True)
            removed.append(path)
    return removed


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's
    return True


def check_writable(folder: Path, names: Iterable[str]) -> str | None:
    """
    Why reports cannot be written into ``folder``, or None when they can;
    what a killed run left staged there goes first (`clear_leftovers`).
    """
    try:
        folder.mkdir(parents=True, exist_ok=True)
        clear_leftovers(folder, names)
        with tempfile.NamedTemporaryFile(
            dir=folder, prefix=f"{PROBE}.{os.getpid()}.", suffix=STAGED
        ):
            pass
    except OSError as error:
        return error.strerror or str(error)
    return None
