"""
The console scripts: run `replay` and act out its chunks on this process.

Nothing here decides behaviour; the harness's in-process path interprets the
same chunks, so both must see identical output, timing and exit status.
"""

from __future__ import annotations

import functools
import os
import sys
import time

from providers_fake import CLIS, replay
from providers_fake.bounded import TooLarge, read_fd
from providers_fake.cli.replay import stdin_use
from providers_fake.cli.types import Replay

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from providers_fake.cli.streamin import Conversation


def _perform(result: Replay, conversation: Conversation | None = None) -> int:
    for chunk in result.chunks:
        if chunk[0] == "sleep":
            time.sleep(chunk[1])
        elif chunk[0] == "hang":
            while True:  # a wedged CLI: only a signal ends it
                time.sleep(3600)
        else:
            fd = 1 if chunk[0] == "stdout" else 2
            _write_all(fd, chunk[1])
    if result.signal is not None:
        _die_by(result.signal)
    if conversation is not None and result.exit_code == 0:
        # Like the real CLI: the session ends with stdin.  A run scripted to exit
        # nonzero is a crash, and a crashing process waits for nobody: an SDK that
        # keeps stdin open until a result (the TypeScript Agent SDK) sees it exit.
        conversation.read(to_end=True)
    return result.exit_code


def _die_by(signal_number: int) -> None:
    import contextlib  # noqa: PLC0415 - only the rare signal scripts pay for these
    import signal  # noqa: PLC0415

    # SIGKILL and SIGSTOP cannot be caught, so they need (and allow) no reset.
    with contextlib.suppress(OSError, ValueError):
        signal.signal(signal_number, signal.SIG_DFL)
    os.kill(os.getpid(), signal_number)
    time.sleep(1)  # the signal may be delivered just after kill returns


def _write_all(fd: int, data: bytes) -> None:
    # Raw writes: nothing is buffered, so a later hang or signal cannot lose output.
    view = memoryview(data)
    try:
        while view:
            view = view[os.write(fd, view) :]
    except BrokenPipeError:
        pass  # the reader went away, as readers of real CLIs sometimes do


def _run(cli: str) -> int:
    try:
        argv = sys.argv[1:]
        conversation = None
        stdin = None
        # Like the real CLIs: a prompt is read from stdin only when none was given and
        # stdin is not a terminal (a closed stdin counts as no input).
        use = None if sys.stdin is None or os.isatty(0) else stdin_use(cli, argv)
        if use == "converse":
            # An SDK keeps stdin open: read up to its prompt, answering as it goes.
            from providers_fake.cli.streamin import Conversation  # noqa: PLC0415 - SDKs only

            conversation = Conversation()
            stdin = conversation.read()
        elif use == "read":
            stdin = _read_stdin()
        return _perform(replay(cli, argv, os.environ, stdin), conversation)
    except TooLarge as error:
        # No prompt is that long; better one line than the memory filled (/dev/zero).
        print(f"fake {cli}: stdin is {error.strerror}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        # Interrupted like a real CLI: die by SIGINT, without Python's traceback.
        _die_by(2)
        return 130


def _read_stdin() -> bytes | None:
    try:
        return read_fd(sys.stdin.fileno())
    except TooLarge:
        raise
    except (OSError, ValueError):
        return None


def __getattr__(name: str) -> Callable[[], int]:
    """
    The console script of the CLI called ``name`` (``providers_fake.cli.main:cursor``
    in pyproject.toml): one per entry of `providers_fake.MODULES`, none typed here.
    """
    if name not in CLIS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return functools.partial(_run, name)
