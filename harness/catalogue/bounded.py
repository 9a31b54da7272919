"""
Reading a file the harness did not write, bounded.

A path that should name a regular file may name a FIFO (whose open blocks
until someone writes), a device such as ``/dev/zero`` (endless), or a file
swapped for one of those between a check and the open.  `read_regular`
opens without blocking, checks the open file itself, and reads at most one
byte past the limit, so none of them can hold the harness or its memory.
"""

from __future__ import annotations

import os
import stat

from harness.exceptions import Unreadable

TYPE_CHECKING = False
if TYPE_CHECKING:
    from harness.catalogue.yamlpos import PathLike


def read_regular(path: PathLike, limit: int) -> bytes:
    """
    The bytes of the regular file at ``path``, at most ``limit`` of them;
    raise `Unreadable` ("not a regular file", "larger than N bytes") or the
    `OSError` of the open.
    """
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise Unreadable("not a regular file")
        if info.st_size > limit:
            raise Unreadable(f"file is larger than {limit} bytes")
        os.set_blocking(fd, True)
        chunks, size = [], 0
        while size <= limit:
            chunk = os.read(fd, min(1 << 20, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    finally:
        os.close(fd)
    if size > limit:
        raise Unreadable(f"file is larger than {limit} bytes")
    return b"".join(chunks)
