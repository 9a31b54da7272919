"""
A child's exit and its peak memory: ``wait4``'s ``ru_maxrss``.

`resource.getrusage(RUSAGE_CHILDREN)` is the peak over every child the test
process ever waited for; ``wait4`` gives this one child's (the largest
resident set among it and the descendants it waited for), so a fault test
can hold the harness it started to the 300 MiB of issue 22.
"""

from __future__ import annotations

import os
import subprocess
import threading
import time

#: The ceiling a harness run must stay under whatever its children and targets do.
LIMIT_MIB = 300


def finish(process: subprocess.Popen[bytes], timeout: float) -> tuple[bytes, float]:
    """
    Read ``process``'s stdout to its end and reap it within ``timeout``
    (killing it past that): its output and its peak resident set in MiB.
    """
    chunks: list[bytes] = []

    def read() -> None:
        assert process.stdout is not None
        fd = process.stdout.fileno()
        while chunk := os.read(fd, 65536):
            chunks.append(chunk)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    deadline = time.monotonic() + timeout
    while True:
        pid, status, usage = os.wait4(process.pid, os.WNOHANG)
        if pid == process.pid:
            break
        if time.monotonic() > deadline:
            process.kill()
            pid, status, usage = os.wait4(process.pid, 0)
            break
        time.sleep(0.02)
    process.returncode = os.waitstatus_to_exitcode(status)
    reader.join(timeout=5)
    if process.stdout is not None:
        process.stdout.close()
    return b"".join(chunks), usage.ru_maxrss / 1024  # KiB on Linux
