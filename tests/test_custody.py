"""
The custody shim (`harness.adaptor.reaper`) is transparent, and nothing its
program starts outlives the program, daemon or not.

Without bubblewrap it is what holds a ``cmd:`` adaptor or a real CLI: it
must exit as the program did (by the same signal too, unlike bubblewrap,
which reports 128 + N), leave the program's streams to the program, and,
being a child subreaper, claim and kill a double-forked ``setsid`` child
when the program ends.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness.adaptor import custody

pytestmark = pytest.mark.skipif(not custody.subreaper(), reason="no PR_SET_CHILD_SUBREAPER here")

SHIM = [sys.executable, "-I", "-S", str(custody.REAPER)]
#: A daemon's double fork: the middle process calls setsid and exits at once.
DAEMON = """\
import os, sys
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        os.execvp("sleep", ["sleep", sys.argv[1]])
    os._exit(0)
os.wait()
print("daemon started", flush=True)
"""


def _started(seconds: str) -> list[int]:
    """The daemon's ``sleep``, once its last fork has reached ``exec``."""
    deadline = time.monotonic() + 10
    while not (found := _running(seconds)) and time.monotonic() < deadline:
        time.sleep(0.02)
    return found


def _running(seconds: str) -> list[int]:
    found = []
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            ours = (entry / "cmdline").read_bytes() == f"sleep\0{seconds}\0".encode()
            if ours and "\nState:\tZ" not in (entry / "status").read_text():
                found.append(int(entry.name))
        except OSError:
            continue
    return found


@pytest.mark.subprocess
@pytest.mark.parametrize(
    ("code", "expected"),
    [("raise SystemExit(3)", 3), ("import os; os.kill(os.getpid(), 9)", -9), ("pass", 0)],
    ids=["exit-3", "killed-by-9", "exit-0"],
)
def test_the_shim_exits_as_its_program_did(code: str, expected: int) -> None:
    done = subprocess.run([*SHIM, sys.executable, "-c", code], capture_output=True, check=False)
    assert done.returncode == expected
    assert done.stderr == b""


@pytest.mark.subprocess
def test_the_program_keeps_its_streams() -> None:
    code = "import sys; sys.stdout.write(sys.stdin.read().upper()); sys.stderr.write('e')"
    done = subprocess.run(
        [*SHIM, sys.executable, "-c", code], input=b"abc", capture_output=True, check=False
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, b"ABC", b"e")


@pytest.mark.subprocess
def test_a_program_that_cannot_be_run_is_refused_before_the_shim() -> None:
    with pytest.raises(FileNotFoundError):
        custody.contained(["no-such-program-anywhere"], os.environ.get("PATH"))


@pytest.mark.subprocess
def test_a_daemon_ends_with_the_program_that_started_it() -> None:
    seconds = "300.5"
    done = subprocess.run(
        [*SHIM, sys.executable, "-c", DAEMON, seconds],
        capture_output=True,
        timeout=30,
        check=False,
        start_new_session=True,
    )
    assert done.stdout == b"daemon started\n"
    assert done.returncode == 0
    assert _running(seconds) == []


@pytest.mark.subprocess
def test_end_finds_a_daemon_below_a_program_still_running(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(custody, "bubblewrap", lambda: None)
    seconds = "300.75"
    program = [sys.executable, "-c", DAEMON + "import time; time.sleep(60)\n", seconds]
    argv = custody.contained(program)
    assert argv[: len(SHIM)] == SHIM
    process = subprocess.Popen(argv, stdout=subprocess.PIPE, start_new_session=True)
    try:
        assert process.stdout is not None
        assert process.stdout.readline() == b"daemon started\n"
        daemon = _started(seconds)
        assert len(daemon) == 1
        assert f"PPid:\t{process.pid}\n" in Path(f"/proc/{daemon[0]}/status").read_text()
    finally:
        custody.end(process)
        process.stdout.close()  # type: ignore[union-attr]
    assert _running(seconds) == []
    assert process.returncode == -signal.SIGKILL


def test_where_no_orphan_can_be_claimed_the_program_runs_bare(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(custody, "bubblewrap", lambda: None)
    monkeypatch.setattr(custody, "subreaper", lambda: False)
    assert custody.how() == custody.PROCESS_GROUP
    assert custody.contained(["sh", "-c", "true"]) == ["sh", "-c", "true"]
