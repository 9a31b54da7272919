"""
No verdict depends on the machine's speed.

A model-api case's timeout counts the time the CLI waits on answers the
script holds back (`providers_fake.api.loopback.HeldClock`), on the real
binaries as on the reference models: a CLI slow to start on a loaded machine
is not killed before it has asked, and a CLI waiting on a held answer is
killed once it has waited the timeout.  The processes below stand in for the
binaries (a Python client of the loopback fake, slow to start on purpose).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness.catalogue import loader
from harness.reports import bench
from harness.seams.model_api.values import ModelApiRequest
from harness.systems import codebuddy
from harness.systems.claude.loop import Loop
from providers_fake import api
from providers_fake.api import loopback, realcli

ROOT = Path(__file__).resolve().parent.parent

#: A client that takes ``sys.argv[2]`` seconds to start, then asks ``sys.argv[1]``.
_CLIENT = """
import sys, time, urllib.request
time.sleep(float(sys.argv[2]))
print("started", flush=True)
urllib.request.urlopen(urllib.request.Request(sys.argv[1] + "/v1/messages", data=b"{}"))
print("answered", flush=True)
"""


def _run(
    tmp_path: Path, argv: list[str], timeout: float, held: realcli.Held | None
) -> realcli.RealRun:
    env = {"PATH": "/usr/bin:/bin"}
    return realcli._run(argv, env, tmp_path, timeout, False, None, held)


def test_overlapping_holds_count_once() -> None:
    now = [100.0]
    clock = loopback.HeldClock(lambda: now[0])
    assert clock.held() == 0.0
    with clock.holding():
        now[0] += 1.0
        with clock.holding():
            now[0] += 2.0
            assert clock.held() == 3.0
        now[0] += 1.0
    now[0] += 50.0  # nothing held: the clock stands still
    assert clock.held() == 4.0
    with clock.holding():
        now[0] += 0.5
        assert clock.held() == 4.5


def test_a_slow_start_is_not_the_timeout(tmp_path: Path) -> None:
    # Nothing held back: the CLI's own time, start-up included, is not the case's timeout.
    argv = [sys.executable, "-c", "import time; time.sleep(0.8); print('done')"]
    run = _run(tmp_path, argv, 0.2, lambda: 0.0)
    assert (run.exit_code, run.timed_out, run.stdout) == (0, False, b"done\n")
    # The wall clock alone (a caller without a fake) still kills it at the timeout.
    walled = _run(tmp_path, argv, 0.2, None)
    assert (walled.timed_out, walled.exit_code) == (True, -9)
    assert walled.seconds < 0.8


def test_a_held_answer_kills_the_run_after_the_timeout_of_waiting(tmp_path: Path) -> None:
    script = api.Script.from_json([{"text": "late", "delay": 60}])
    with api.LoopbackServer(script) as server:
        started = time.monotonic()
        argv = [sys.executable, "-c", _CLIENT, server.url, "1.0"]
        run = _run(tmp_path, argv, 0.5, server.held)
        waited = server.held()
    # Killed while waiting, after it had asked: a start-up slower than the
    # timeout (1.0 s against 0.5 s) changes nothing of what the run shows.
    assert (run.timed_out, run.exit_code) == (True, -9)
    assert run.stdout == b"started\n"
    assert len(server.fake.requests) == 1
    assert 0.5 <= waited < 5.0
    assert time.monotonic() - started >= 1.5


def test_a_run_that_hangs_by_itself_is_bounded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(realcli, "OWN_TIME", 0.3)
    argv = [sys.executable, "-c", "import time; time.sleep(30)"]
    run = _run(tmp_path, argv, 0.2, lambda: 0.0)
    assert (run.timed_out, run.exit_code) == (True, -9)
    assert run.seconds < 5


def test_the_reference_model_counts_its_back_offs_as_its_own_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # However long the model's own work takes, only its waits count; its back-offs are the
    # CLI's own time, bounded by OWN_TIME on top of the timeout as for a real binary.
    monkeypatch.setattr(time, "monotonic", lambda: 1e9)
    monkeypatch.setattr(realcli, "OWN_TIME", 1.0)
    loop = Loop.__new__(Loop)
    loop.settings = type("S", (), {"timeout": 3.0})()
    loop.waited = 0.0
    assert loop.time_left() == pytest.approx(3.0)  # a held answer: the timeout at most
    loop.waited = 2.5
    assert loop.time_left() == pytest.approx(1.5)  # what is left of timeout and own time
    loop.waited = 4.0
    with pytest.raises(Exception, match="timeout"):
        loop.time_left()


def test_the_hung_scenarios_script_a_hold_past_their_timeout() -> None:
    # Each expects the kill, so each must hold an answer back longer than its timeout
    # (else the verdict would hang on the CLI's own speed), or script a CLI that
    # stops asking and waits by its own rule (CodeBuddy after an HTTP error).
    root = ROOT / "scenarios" / "model-api"
    scenarios = loader.load([root]).scenarios
    hung = [s for s in scenarios if getattr(s.expect, "timed_out", None) is True]
    assert len(hung) >= 3
    for scenario in hung:
        request = scenario.request
        assert isinstance(request, ModelApiRequest)
        script = api.Script.from_json(json.loads(request.model_script))
        if request.cli == "codebuddy" and codebuddy.waits_by_itself(script, request.max_turns):
            continue
        assert max(step.delay for step in script.steps) > request.timeout, scenario.id


def test_the_busy_processes_of_the_bench_spin_and_are_always_killed() -> None:
    seen: list[list[int | None]] = []

    def measured() -> None:
        with bench.busy(2) as hogs:
            seen.append([hog.poll() for hog in hogs])
            seen.append([hog.pid for hog in hogs])
            raise RuntimeError("the measured run failed")

    with pytest.raises(RuntimeError):
        measured()
    assert seen[0] == [None, None]  # spinning while the block ran
    for pid in seen[1]:  # and gone, reaped, once it failed
        with pytest.raises(ProcessLookupError):
            os.kill(pid or 0, 0)


def test_make_run_keeps_to_the_pinned_pair_and_make_matrix_writes_its_own_reports() -> None:
    def dry(goal: str) -> str:
        done = subprocess.run(
            ["make", "-n", goal], cwd=ROOT, capture_output=True, text=True, check=True
        )
        return done.stdout

    run, matrix = dry("run"), dry("matrix")
    assert "--target real " in run
    assert "2.1.235" not in run
    assert "--reports reports -n" in run
    assert "--reports reports/matrix" in matrix
    assert "'real:claude=2.1.235'" in matrix
    assert "'real:claude=2.1.332,codex=0.171.0'" in matrix
    assert "--busy 2" in dry("bench")
