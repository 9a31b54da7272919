"""
Files a scenario names beside itself (``schema_file``), read within bounds.

A catalogue is untrusted input, and what a scenario reads ends up in what
the harness sends and reports.  So a scenario may name only a relative path
that stays, once every symlink is resolved, inside the catalogue folder the
run was given (a file given on its own: its folder), and only a regular file
of at most `MAX_BYTES`.  Anything else is a problem of that scenario, at the
field that names it.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

#: The largest file a scenario may name (the catalogue's schemas are a few KB).
MAX_BYTES = 1024 * 1024


class FileRefused(ValueError):
    """A file a scenario names cannot be read; the message says why."""


@dataclass(frozen=True)
class Folder:
    """Where a scenario file is, and the catalogue folder its paths may reach."""

    path: Path
    root: Path

    def locate(self, relative: str) -> Path:
        """The file ``relative`` names, checked; raise `FileRefused`."""
        if Path(relative).is_absolute():
            raise FileRefused(f"{relative}: give a path relative to the scenario file")
        target = (self.path / relative).resolve()
        root = _resolved(self.root)
        if not target.is_relative_to(root):
            raise FileRefused(f"{relative}: outside the catalogue folder {self.root}")
        try:
            info = os.stat(target)
        except OSError:
            raise FileRefused(f"no such file: {self.path / relative}") from None
        if not stat.S_ISREG(info.st_mode):
            raise FileRefused(f"{relative}: not a regular file")
        if info.st_size > MAX_BYTES:
            raise FileRefused(f"{relative}: larger than {MAX_BYTES} bytes")
        return target

    def read(self, relative: str) -> bytes:
        """The bytes of the file ``relative`` names; raise `FileRefused`."""
        target = self.locate(relative)
        try:
            with open(target, "rb") as handle:
                data = handle.read(MAX_BYTES + 1)
        except OSError as error:
            raise FileRefused(f"{relative}: cannot read it: {error.strerror}") from None
        if len(data) > MAX_BYTES:
            raise FileRefused(f"{relative}: larger than {MAX_BYTES} bytes")
        return data


@lru_cache(maxsize=64)
def _resolved(root: Path) -> Path:
    """
    A catalogue folder, symlinks resolved: one per run, asked for every file
    a scenario names (the file itself is resolved each time, the folder once).
    """
    return root.resolve()
