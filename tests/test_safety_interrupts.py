"""
An interrupted run loses nothing and leaves nothing behind.

A run stopped by SIGINT or SIGTERM, at start-up or in the middle, under
pytest-xdist or not, exits 2, leaves the previous reports byte for byte,
and leaves no process and no temporary folder: every child runs in a process
group of its own that is killed on the way out, and SIGTERM is turned into
the same orderly stop as Ctrl-C.  A run that completes replaces the reports
as one set, and a reports folder that cannot be written is found before
anything runs.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
import tomllib
import types
from pathlib import Path

import pytest

from harness import signals
from harness.reports import render
from tests.peak import LIMIT_MIB, finish

ROOT = Path(__file__).resolve().parent.parent
HARNESS = Path(sys.executable).parent / "harness"
SCENARIOS = ROOT / "scenarios" / "agent-cli" / "codex"
# A case that outlasts every delay below: on a fast machine the rest of the
# catalogue can finish before the signal, and a finished run tests nothing.
LONG_CASE = """\
family: codex-interrupted
seam: agent-cli
tags: [codex, failure]
clauses: [CDX-04]
request:
  driver: codex
  schema_file: ../schemas/diagnosis.json
cases:
  - id: codex-outlasts-the-signal
    title: A CLI that answers after the run has been stopped
    description: >
      Holds the run open long enough for the signal to land mid-run.
    request: {timeout: 90.0}
    provider:
      steps: [thread.started, turn.started, {sleep: 60}, turn.completed]
    expect: {error: execution_error, cause: timeout, no_value: true}
"""
NODE = f"node=cmd:node {ROOT / 'examples' / 'node-adaptor' / 'adaptor.mjs'}"


def _previous_reports(folder: Path) -> dict[str, bytes]:
    folder.mkdir()
    for name in render.WRITERS:
        (folder / name).write_bytes(f"the last complete run's {name}\n".encode())
    return _snapshot(folder)


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def _default_sigint() -> None:
    # A background child of a non-interactive shell starts with SIGINT ignored;
    # a terminal's Ctrl-C is what is tested here, so SIGINT is given back.
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _left_behind(tag: str) -> list[str]:
    found = []
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            environ = (entry / "environ").read_bytes()
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if tag.encode() in environ or tag.encode() in cmdline:
            shown = cmdline.replace(b"\0", b" ").decode(errors="replace")[:120]
            found.append(f"{entry.name}: {shown}")
    return found


@pytest.mark.subprocess
@pytest.mark.parametrize(
    ("signum", "delay", "workers"),
    [
        (signal.SIGTERM, 1.0, "0"),
        (signal.SIGINT, 4.0, "0"),
        (signal.SIGTERM, 6.0, "2"),
    ],
    ids=["term-at-start", "int-mid-run", "term-mid-run-xdist"],
)
def test_an_interrupted_run_keeps_the_reports_and_leaves_nothing(
    tmp_path: Path, signum: int, delay: float, workers: str
) -> None:
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    before = _previous_reports(tmp_path / "reports")
    catalogue = tmp_path / "agent-cli" / "codex"
    catalogue.mkdir(parents=True)
    for source in SCENARIOS.glob("*.yaml"):
        (catalogue / source.name).write_bytes(source.read_bytes())
    (catalogue / "zz-long.yaml").write_text(LONG_CASE)
    schemas = tmp_path / "agent-cli" / "schemas"
    schemas.mkdir()
    for source in (SCENARIOS.parent / "schemas").glob("*.json"):
        (schemas / source.name).write_bytes(source.read_bytes())
    linted = subprocess.run(
        [str(HARNESS), "lint", str(catalogue)], capture_output=True, check=False
    )
    assert linted.returncode == 0, linted.stdout.decode()
    env = {**os.environ, "TMPDIR": str(scratch), "HARNESS_INTERRUPT_TAG": str(scratch)}
    argv = [str(HARNESS), "run", str(catalogue), "--target", "reference"]
    argv += ["--target", NODE, "--reports", "reports", "-n", workers]
    process = subprocess.Popen(
        argv,
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
        preexec_fn=_default_sigint,  # noqa: PLW1509 - the test starts no threads
    )
    time.sleep(delay)
    os.killpg(process.pid, signum)  # as a terminal or a CI runner signals the whole job
    output, peak = finish(process, timeout=120)
    shown = output.decode(errors="replace")[-2000:]
    assert process.returncode == 2, shown
    assert peak < LIMIT_MIB, f"{peak:.0f} MiB"
    print(f"peak {peak:.0f} MiB")
    assert _snapshot(tmp_path / "reports") == before
    assert _left_behind(str(scratch)) == []
    assert sorted(p.name for p in scratch.iterdir()) == []


@pytest.mark.subprocess
def test_a_complete_run_replaces_the_reports_as_one_set(tmp_path: Path) -> None:
    _previous_reports(tmp_path / "reports")
    argv = [str(HARNESS), "run", str(SCENARIOS), "--target", "reference-inproc"]
    done = subprocess.run(
        [*argv, "--reports", "reports"], cwd=tmp_path, capture_output=True, check=False
    )
    assert done.returncode == 0, done.stdout.decode()[-2000:]
    after = _snapshot(tmp_path / "reports")
    assert sorted(after) == sorted(render.WRITERS)  # no staged file left beside them
    assert all(not text.startswith(b"the last complete run") for text in after.values())
    mode = (tmp_path / "reports" / "matrix.md").stat().st_mode & 0o777
    assert mode == 0o666 & ~_umask()


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_a_writer_that_fails_leaves_the_previous_set(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = _previous_reports(tmp_path / "reports")

    def broken(report: render.Report) -> str:
        raise KeyboardInterrupt

    monkeypatch.setitem(render.WRITERS, "junit.xml", broken)
    report = render.Report.build((), (), (), tmp_path)
    with pytest.raises(KeyboardInterrupt):
        render.write(report, tmp_path / "reports")
    assert _snapshot(tmp_path / "reports") == before


@pytest.mark.subprocess
@pytest.mark.parametrize("blocker", ["file", "read-only"])
def test_an_unwritable_reports_folder_is_one_line_before_anything_runs(
    tmp_path: Path, blocker: str
) -> None:
    target = tmp_path / "reports"
    if blocker == "file":
        target.write_text("not a folder")
    else:
        target.mkdir()
        target.chmod(0o500)
        if os.access(target, os.W_OK):  # root writes anywhere; nothing to show then
            pytest.skip("this user can write into a read-only folder (root)")
    argv = [str(HARNESS), "run", str(SCENARIOS), "--target", "reference-inproc"]
    done = subprocess.run(
        [*argv, "--reports", "reports"], cwd=tmp_path, capture_output=True, check=False
    )
    errors = done.stderr.decode().strip().splitlines()
    assert done.returncode == 4
    assert errors == [f"ERROR: cannot write reports to {target}: " + errors[0].rsplit(": ", 1)[1]]
    assert "passed" not in done.stdout.decode()


def test_a_run_that_was_stopped_says_so_whatever_pytest_returns(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """pytest's own report of a KeyboardInterrupt can fail and end as an internal error."""
    from harness import cli, signals  # noqa: PLC0415

    monkeypatch.setattr(signals, "RECEIVED", [signal.SIGINT])
    monkeypatch.setattr(pytest, "main", lambda *args, **kwargs: 3)
    assert cli.main(["run", str(SCENARIOS), "--reports", str(tmp_path / "r")]) == 2
    assert capsys.readouterr().out.splitlines()[-1].startswith("harness: exit 2: interrupted")
    with pytest.raises(KeyboardInterrupt):
        signals._noted(signal.SIGINT, None)


@pytest.mark.subprocess
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["term", "int"])
def test_a_run_whose_adaptor_detaches_a_child_and_ignores_sigterm_stops_within_5_s(
    tmp_path: Path, signum: int
) -> None:
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    before = _previous_reports(tmp_path / "reports")
    adaptor = f"cmd:{sys.executable} {ROOT / 'tests' / 'misbehaving_adaptor.py'} detach-hang:*"
    env = {**os.environ, "TMPDIR": str(scratch), "PYTHONPATH": str(ROOT)}
    argv = [str(HARNESS), "run", str(SCENARIOS), "--target", adaptor, "--reports", "reports"]
    process = subprocess.Popen(
        [*argv, "-n", "0"],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
        preexec_fn=_default_sigint,  # noqa: PLW1509 - the test starts no threads
    )
    time.sleep(4.0)  # the adaptor hangs on the first case, its detached child holding stderr
    os.killpg(process.pid, signum)
    sent = time.monotonic()
    output, peak = finish(process, timeout=30)
    took = time.monotonic() - sent
    shown = output.decode(errors="replace")[-2000:]
    assert process.returncode == 2, shown
    assert took < 5, shown
    assert peak < LIMIT_MIB, f"{peak:.0f} MiB"
    print(f"peak {peak:.0f} MiB")
    assert "Traceback" not in shown
    assert _snapshot(tmp_path / "reports") == before
    assert _left_behind(str(scratch)) == []
    assert sorted(p.name for p in scratch.iterdir()) == []


def _console_script(folder: Path) -> Path:
    """The ``harness`` script as pip writes it from pyproject's entry point, on this tree."""
    entry = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]["harness"]
    module, function = entry.split(":")
    script = folder / "harness"
    script.write_text(
        f"#!{sys.executable}\nimport sys\nfrom {module} import {function}\n"
        f"if __name__ == '__main__':\n    sys.exit({function}())\n"
    )
    script.chmod(0o755)
    return script


def _claims_sigterm(pid: int) -> bool | None:
    """Whether ``pid`` catches SIGTERM (the harness's handlers are in), None once it is gone."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    if "\nState:\tZ" in status:
        return None
    caught = next(line for line in status.splitlines() if line.startswith("SigCgt:"))
    return bool(int(caught.split()[1], 16) & (1 << (signal.SIGTERM - 1)))


@pytest.mark.subprocess
@pytest.mark.parametrize("argv", [["list", str(SCENARIOS)], ["--help"]], ids=["list", "help"])
def test_an_interrupt_while_the_command_starts_is_one_line(tmp_path: Path, argv: list[str]) -> None:
    """
    SIGINT at any moment from 0.01 s to 0.5 s, and just after the entry
    point's claim: once the console script's entry point runs (it claims
    SIGTERM first thing, which /proc shows), the one line and exit 2, or exit
    0 when the command finished first; never a traceback.  Before it the
    interpreter itself is starting and Python answers (docs/safety.md
    measures that window): such a signal is counted apart, and at least a
    third of the signals must land after it.
    """
    script = _console_script(tmp_path)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    answered, finished, early = 0, 0, 0
    # Fixed delays, then delays counted from the claim itself: on a loaded
    # machine the interpreter's start-up can outlast every fixed delay.
    fixed = [(delay, False) for delay in (0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.15, 0.2, 0.3, 0.5)]
    for delay, after_claim in [*fixed, (0.0, True), (0.02, True)]:
        process = subprocess.Popen(
            [str(script), *argv],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            env=env,
            preexec_fn=_default_sigint,  # noqa: PLW1509 - the test starts no threads
        )
        if after_claim:
            until = time.monotonic() + 30
            while _claims_sigterm(process.pid) is False and time.monotonic() < until:
                time.sleep(0.001)
        time.sleep(delay)
        ours = _claims_sigterm(process.pid)
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=60)
        text = err.decode(errors="replace")
        if ours is False:  # still in the interpreter's start-up: Python's to answer
            early += 1
            continue
        assert "Traceback" not in text, (delay, text)
        assert "Exception ignored" not in text, (delay, text)
        assert process.returncode in (0, 2), (delay, process.returncode, text)
        if process.returncode == 2:
            assert text == "harness: interrupted\n", (delay, text)
            answered += 1
        else:
            finished += 1
    assert answered > 0
    assert early <= 8, f"{early} of 12 signals landed before the entry point ran"


#: Writes the reports as a run does, each writer and each rename slowed down, so
#: that a signal lands inside the swap: while rendering, staging or renaming.
_SWAP = """\
import os, sys, time
from pathlib import Path
from harness import signals
from harness import signals
from harness.reports import render
from tests.peak import LIMIT_MIB, finish

signals.terminate_gracefully()
replace = os.replace
def slow_replace(source, target):
    time.sleep(0.03)
    replace(source, target)
os.replace = slow_replace
def slow(name):
    def writer(report):
        time.sleep(0.03)
        return f"the new run's {name}\\n"
    return writer
for name in render.WRITERS:
    render.WRITERS[name] = slow(name)
print("writing", flush=True)
try:
    render.write(render.Report.build((), (), (), Path.cwd()), Path(sys.argv[1]))
except KeyboardInterrupt:
    sys.exit(2)
"""


def _one_set(folder: Path, before: dict[str, bytes]) -> str:
    now = _snapshot(folder)
    if now == before:
        return "old"
    assert now == {n: f"the new run's {n}\n".encode() for n in render.WRITERS}, sorted(now)
    return "new"


@pytest.mark.subprocess
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGKILL], ids=["term", "kill"])
def test_a_swap_stopped_anywhere_leaves_one_set_and_nothing_beside_it(
    tmp_path: Path, signum: int
) -> None:
    """
    SIGTERM at points all through the swap (rendering, staging, the renames
    it holds signals over) leaves the old set or the new one and no staged
    file; a run killed outright (SIGKILL, which no process can answer) may
    leave staged files, which the next run into the folder removes before
    it writes or runs anything.
    """
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    seen = set()
    for step in range(10):
        folder = tmp_path / f"reports-{step}"
        before = _previous_reports(folder)
        process = subprocess.Popen(
            [sys.executable, "-c", _SWAP, str(folder)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
        )
        assert process.stdout is not None
        assert process.stdout.readline() == b"writing\n"
        time.sleep(0.06 * step)
        process.send_signal(signum)
        _, err = process.communicate(timeout=60)
        assert b"Traceback" not in err, err.decode()
        names = {p.name for p in folder.iterdir()}
        staged = {n for n in names if n.startswith(".")}
        if signum == signal.SIGTERM:
            assert process.returncode in (0, 2), err.decode()
            assert staged == set()
            seen.add(_one_set(folder, before))
        else:  # nothing runs on SIGKILL: inside the renames the set can be mixed
            render.check_writable(folder)  # what the next run does first
            assert {p.name for p in folder.iterdir()} == names - staged
            seen.add("staged" if staged else "clean")
        assert sorted(p.name for p in tmp_path.iterdir() if not p.name.startswith("reports-")) == []
    assert seen >= ({"old", "new"} if signum == signal.SIGTERM else {"staged"})


def test_a_staged_file_of_a_run_still_writing_is_left_alone(tmp_path: Path) -> None:
    folder = tmp_path / "reports"
    folder.mkdir()
    mine = folder / f".matrix.md.{os.getpid()}.abc.tmp"
    mine.write_text("being written")
    assert render.check_writable(folder) is None
    assert [p.name for p in folder.iterdir()] == [mine.name]


def _frame(filename: str, name: str = "cb") -> object:
    return types.SimpleNamespace(f_code=compile("pass", filename, "exec").replace(co_name=name))


@pytest.mark.parametrize("handler", ["_interrupt", "_noted"])
def test_a_stop_signal_where_python_would_drop_the_exception_is_raised_again(
    monkeypatch: pytest.MonkeyPatch, handler: str
) -> None:
    """
    A KeyboardInterrupt raised in a module lock's weakref callback is printed
    as "Exception ignored" and lost (CI saw it once in `harness list`); the
    handler passes the signal on to the next frame instead.
    """
    again: list[int] = []
    monkeypatch.setattr(signal, "raise_signal", again.append)
    monkeypatch.setattr(signals, "RECEIVED", [])
    monkeypatch.setattr(signals, "_first", [])
    monkeypatch.setattr(signals, "_forward", lambda signum: None)
    handle = getattr(signals, handler)
    for frame in (_frame("<frozen importlib._bootstrap>"), _frame("x.py", "__del__")):
        handle(signal.SIGTERM, frame)
    assert again == [signal.SIGTERM, signal.SIGTERM]
    assert signals.RECEIVED == []
    with pytest.raises(KeyboardInterrupt):
        handle(signal.SIGTERM, _frame(str(ROOT / "harness" / "cli.py"), "main"))
    assert signals.RECEIVED == [signal.SIGTERM]
    assert again == [signal.SIGTERM, signal.SIGTERM]
    # The same stop again at once (a worker gets the group's and its parent's) only counts.
    handle(signal.SIGTERM, _frame(str(ROOT / "harness" / "cli.py"), "main"))
    assert signals.RECEIVED == [signal.SIGTERM, signal.SIGTERM]
    monkeypatch.setattr(signals, "_first", [time.monotonic() - signals.ECHO_SECONDS])
    with pytest.raises(KeyboardInterrupt):  # a later one is a second stop
        handle(signal.SIGTERM, _frame(str(ROOT / "harness" / "cli.py"), "main"))


def test_a_stop_signal_inside_a_held_block_waits_for_its_end(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Even when the kernel hands the signal to a thread that does not block it."""
    again: list[int] = []
    monkeypatch.setattr(signal, "raise_signal", again.append)
    monkeypatch.setattr(signals, "RECEIVED", [])
    monkeypatch.setattr(signals, "_first", [])
    frame = _frame(str(ROOT / "harness" / "cli.py"), "main")
    with signals.held():
        with signals.held():
            signals._interrupt(signal.SIGTERM, frame)
        assert again == []
    assert again == [signal.SIGTERM]
    assert signals.RECEIVED == []
    with signals.held():  # delivered once: nothing kept for a later block
        pass
    assert again == [signal.SIGTERM]


def test_the_temporary_folder_is_found_with_the_stop_signals_held(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Python's probe for TMPDIR is a file with a bare random name; an interrupt there leaves it."""
    blocked: list[set[int]] = []

    def probe() -> str:
        blocked.append(signal.pthread_sigmask(signal.SIG_BLOCK, set()))
        return "/tmp"

    monkeypatch.setattr(tempfile, "gettempdir", probe)
    monkeypatch.setattr(signal, "signal", lambda signum, handler: None)
    signals.terminate_gracefully()
    assert blocked
    assert {signal.SIGINT, signal.SIGTERM} <= blocked[0]
    assert {signal.SIGINT, signal.SIGTERM}.isdisjoint(
        signal.pthread_sigmask(signal.SIG_BLOCK, set())
    )
