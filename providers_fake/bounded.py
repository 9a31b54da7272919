"""
What the fakes read, bounded.

A fake is started by adaptors other people wrote, with files and stdin they
chose: a schema path naming a FIFO would block it for ever, ``/dev/zero``
on stdin would fill the memory.  Files are opened without blocking and must
be regular; stdin and files are read up to a limit.  (The fakes stand apart
from the harness, so this is theirs, not `harness.catalogue.bounded`.)
"""

from __future__ import annotations

import errno
import os
import stat

#: The most a fake reads from one file or from stdin (a prompt, a schema, a script).
LIMIT = 16 * 1024 * 1024


class TooLarge(OSError):
    """More than `LIMIT` bytes: an `OSError`, so callers report it as they do any read error."""

    def __init__(self, limit: int = LIMIT) -> None:
        super().__init__(errno.EFBIG, f"larger than {limit} bytes")


def read_file(path: str | os.PathLike[str], limit: int = LIMIT) -> bytes:
    """
    The bytes of the regular file at ``path``; `OSError` for a missing or
    unreadable one, a FIFO, a device or a folder (``EINVAL``, "not a regular
    file"), or one over ``limit`` (`TooLarge`).
    """
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR))
        if not stat.S_ISREG(info.st_mode):
            raise OSError(errno.EINVAL, "not a regular file")
        os.set_blocking(fd, True)
        return read_fd(fd, limit)
    finally:
        os.close(fd)


def read_fd(fd: int, limit: int = LIMIT) -> bytes:
    """Everything to the end of ``fd``, or `TooLarge` past ``limit`` bytes."""
    chunks: list[bytes] = []
    size = 0
    while True:
        chunk = os.read(fd, 1 << 20)
        if not chunk:
            return b"".join(chunks)
        size += len(chunk)
        if size > limit:
            raise TooLarge(limit)
        chunks.append(chunk)
