"""
A misbehaving target is one errored case with the right reason, and is bounded.

An adaptor that answers with NaN (which no report could print), one that
leaves a child holding its stdout and exits, one that floods its stderr, a
target spec that cannot be split: each ends as data or as one clear line,
never as a hang, a traceback, an orphan or unbounded memory.
"""

from __future__ import annotations

import os
import resource
import sys
import time
import types
from pathlib import Path
from typing import Any

import pytest

from harness import targets
from harness.adaptor import custody
from harness.adaptor.environment import adaptor_environment, looks_secret, scrub
from harness.catalogue import loader
from harness.cli import main
from harness.seams.case import execute
from harness.targets.protocol import AdaptorFailed, ProtocolAdaptor
from providers_fake.api import realcli

HERE = Path(__file__).parent


def _adaptor(mode: str, victim: str) -> ProtocolAdaptor:
    argv = (sys.executable, str(HERE / "misbehaving_adaptor.py"), f"{mode}:{victim}")
    return ProtocolAdaptor("bad", argv, grace=0.5)


def _sleepers(seconds: str = "271") -> list[str]:
    found = []
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            if (entry / "cmdline").read_bytes() == f"sleep\x00{seconds}\x00".encode():
                found.append(entry.name)
        except OSError:
            continue
    return found


@pytest.mark.subprocess
def test_nan_from_an_adaptor_is_an_errored_case(catalogue: loader.Loaded) -> None:
    adaptor = _adaptor("nan", "codex-happy")
    try:
        result = execute(next(s for s in catalogue.scenarios if s.id == "codex-happy"), adaptor)
    finally:
        adaptor.close()
    assert result.status == "errored"
    assert "NaN is not valid JSON" in (result.reason or "")


@pytest.mark.subprocess
def test_an_adaptor_that_exits_leaving_a_child_is_reported_as_exited(
    catalogue: loader.Loaded,
) -> None:
    adaptor = _adaptor("orphan", "codex-happy")
    try:
        result = execute(next(s for s in catalogue.scenarios if s.id == "codex-happy"), adaptor)
    finally:
        adaptor.close()
    assert result.status == "errored"
    assert "adaptor exited with status 0 before answering" in (result.reason or "")
    assert _sleepers() == []


@pytest.mark.subprocess
@pytest.mark.parametrize(
    ("mode", "held", "reason"),
    [
        ("detach", custody.PID_NAMESPACE, "adaptor exited with status 0 before answering"),
        ("detach-hang", custody.PID_NAMESPACE, "adaptor did not answer within 10.5 s"),
        ("detach", custody.SUBREAPER, "adaptor exited with status 0 before answering"),
        ("detach-hang", custody.SUBREAPER, "adaptor did not answer within 10.5 s"),
    ],
)
def test_an_adaptor_whose_child_leaves_its_session_cannot_hang_the_run(
    catalogue: loader.Loaded, monkeypatch: pytest.MonkeyPatch, mode: str, held: str, reason: str
) -> None:
    """A child that calls setsid, holding stderr and stdout, is out of the adaptor's group."""
    if held == custody.PID_NAMESPACE and custody.bubblewrap() is None:
        pytest.skip("bubblewrap cannot make a PID namespace on this machine")
    if held == custody.SUBREAPER:
        monkeypatch.setattr(custody, "bubblewrap", lambda: None)
    assert custody.how() == held
    adaptor = _adaptor(mode, "codex-happy")
    started = time.monotonic()
    try:
        result = execute(next(s for s in catalogue.scenarios if s.id == "codex-happy"), adaptor)
    finally:
        adaptor.close()
    assert time.monotonic() - started < 20
    assert result.status == "errored"
    assert reason in (result.reason or "")
    assert _sleepers() == []


@pytest.mark.subprocess
def test_a_double_forked_child_of_an_adaptor_ends_with_it_without_bubblewrap(
    catalogue: loader.Loaded, monkeypatch: pytest.MonkeyPatch
) -> None:
    """
    A daemon's double fork and setsid, its streams closed: out of the group
    and, its parent gone, out of the adaptor's tree.  Without bubblewrap the
    custody shim, a child subreaper, is handed the orphan, and the sweep at
    the adaptor's end finds it below the shim.
    """
    monkeypatch.setattr(custody, "bubblewrap", lambda: None)
    if not custody.subreaper():
        pytest.skip("no PR_SET_CHILD_SUBREAPER here (not Linux)")
    assert custody.how() == custody.SUBREAPER
    adaptor = _adaptor("double-fork", "codex-happy")
    try:
        result = execute(next(s for s in catalogue.scenarios if s.id == "codex-happy"), adaptor)
        assert result.status == "passed", result.reason
        assert len(_sleepers("300.25")) == 1  # it ran, and outlived its parent
    finally:
        adaptor.close()
    assert _sleepers("300.25") == []


@pytest.mark.subprocess
def test_an_adaptor_that_reads_nothing_cannot_block_the_harness_writing(tmp_path: Path) -> None:
    script = tmp_path / "deaf.py"
    script.write_text(_DEAF)
    adaptor = ProtocolAdaptor("deaf", (sys.executable, str(script)))
    try:
        adaptor._ready()
        started = time.monotonic()
        with pytest.raises(AdaptorFailed, match=r"did not read its input within 1\.0 s"):
            adaptor._send({"cmd": "run", "seq": 1, "padding": "x" * (1 << 20)}, 1.0)
        assert time.monotonic() - started < 5
    finally:
        adaptor.close()


_DEAF = """\
import json, sys, time
from harness.targets import serve
message = json.loads(sys.stdin.readline())
print(json.dumps(serve._answer(message)), flush=True)
time.sleep(3600)
"""


@pytest.mark.subprocess
def test_an_adaptor_flooding_stderr_is_held_to_a_tail(catalogue: loader.Loaded) -> None:
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    adaptor = _adaptor("chatty", "codex-happy")
    try:
        result = execute(next(s for s in catalogue.scenarios if s.id == "codex-happy"), adaptor)
    finally:
        adaptor.close()
    assert result.status == "passed"
    grown_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    assert grown_kib < 32 * 1024  # 64 MiB went by; a bounded tail stayed


@pytest.mark.subprocess
def test_an_adaptor_gets_no_credentials(
    catalogue: loader.Loaded, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ACME_API_KEY", "sk-acme-0123456789")
    monkeypatch.setenv("ACME_HOME", "/opt/acme")
    adaptor = _adaptor("env", "codex-happy")
    try:
        result = execute(next(s for s in catalogue.scenarios if s.id == "codex-happy"), adaptor)
    finally:
        adaptor.close()
    seen = (result.reason or "").split()
    assert "ACME_HOME" in seen
    assert "ACME_API_KEY" not in seen


def test_a_python_adaptor_answering_nan_is_an_errored_case(
    catalogue: loader.Loaded, monkeypatch: pytest.MonkeyPatch
) -> None:
    def nan_answer(message: dict[str, Any]) -> dict[str, Any]:
        return {"status": "ok", "value": {"a": float("nan")}, "has_value": True}

    module = types.ModuleType("nan_adaptor")
    vars(module)["answer"] = nan_answer
    monkeypatch.setitem(sys.modules, "nan_adaptor", module)
    target = targets.create("python:nan_adaptor:answer")
    result = execute(next(s for s in catalogue.scenarios if s.id == "codex-happy"), target)
    assert result.status == "errored"
    assert "/value/a" in (result.reason or "")


def test_an_unbalanced_target_spec_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--target", "cmd:'unbalanced"]) == 4
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [
        'harness: target "cmd:\'unbalanced": cannot split the command: No closing quotation'
    ]


def test_adaptors_get_no_credentials_and_reports_never_show_one() -> None:
    environ = {
        "PATH": "/usr/bin",
        "GOPATH": "/go",
        "ANTHROPIC_API_KEY": "sk-ant-very-secret-value",
        "GITHUB_TOKEN": "ghp_abcdefgh12345678",
        "PGPASSWORD": "hunter2hunter2",
        "AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI/K7MDENG",
        "SSH_AUTH_SOCK": "/run/agent.sock",
        "DATABASE_URL": "postgres://app:hunter2db@db.internal:5432/app",
        "DOCS_URL": "https://example.invalid/docs",
    }
    assert adaptor_environment(environ) == {
        "PATH": "/usr/bin",
        "GOPATH": "/go",
        "DOCS_URL": "https://example.invalid/docs",
    }
    assert scrub("connecting to postgres://app:hunter2db@db.internal:5432/app", environ) == (
        "connecting to <DATABASE_URL>"
    )
    # A password in a URL the harness never saw in its environment is hidden too.
    assert scrub("adaptor: redis://:s3cr3t-pw@cache:6379/0 and mysql://root:pw9@h/x", {}) == (
        "adaptor: redis://:<redacted>@cache:6379/0 and mysql://root:<redacted>@h/x"
    )
    assert not looks_secret("KEYBOARD_LAYOUT")
    assert not looks_secret("HOME")
    text = "stderr: using sk-ant-very-secret-value and ghp_abcdefgh12345678"
    assert scrub(text, environ) == "stderr: using <ANTHROPIC_API_KEY> and <GITHUB_TOKEN>"


_GONE_AFTER_START = """\
import json, sys
from harness.targets import serve
message = json.loads(sys.stdin.readline())
print(json.dumps(serve._answer(message)), flush=True)
sys.exit(3)
"""


@pytest.mark.subprocess
def test_an_adaptor_gone_while_the_harness_writes_is_one_failure(tmp_path: Path) -> None:
    # Deterministic form of a race CI met: the write fails, and closing the pipe
    # (which flushes what the failed write left behind) must not fail again.
    script = tmp_path / "gone.py"
    script.write_text(_GONE_AFTER_START)
    adaptor = ProtocolAdaptor("gone", (sys.executable, str(script)))
    try:
        adaptor._ready()
        assert adaptor._live is not None
        adaptor._live.process.wait(timeout=10)
        with pytest.raises(AdaptorFailed, match="exited with status 3 while the harness was"):
            adaptor._send({"cmd": "run", "seq": 1})
    finally:
        adaptor.close()


_DAEMON_THEN_HANG = """\
import os, subprocess, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        devnull = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(devnull, fd)
        os.execvp("sleep", ["sleep", "300.75"])
    os._exit(0)
time.sleep(60)
"""


@pytest.mark.subprocess
def test_a_real_cli_killed_at_its_timeout_takes_its_daemon_along_without_bubblewrap(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """
    A CLI that double-forks a daemon and then hangs is killed at its timeout
    by group; the daemon left the group, and the custody shim (a subreaper)
    holds it: the kill must reach it below the shim before the shim dies.
    """
    monkeypatch.setattr(custody, "bubblewrap", lambda: None)
    if not custody.subreaper():
        pytest.skip("no PR_SET_CHILD_SUBREAPER here (not Linux)")
    script = tmp_path / "cli.py"
    script.write_text(_DAEMON_THEN_HANG)
    probe = tmp_path / "probe"
    probe.mkdir()
    run = realcli._run(
        [sys.executable, str(script)],
        dict(os.environ),
        probe,
        1.0,
        tty_stdin=False,
        confine=lambda argv, folder, env: custody.contained(argv),
    )
    assert run.timed_out
    deadline = time.monotonic() + 2
    while _sleepers("300.75") and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _sleepers("300.75") == []
