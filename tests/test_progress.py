"""
Progress people can read, and the run's memory for ``--lf``.

On a terminal a run keeps one status line (each target's counts, the time
left); in a log, a line per target every `progress.EVERY` seconds and one
when it is done, never a wall of dots.  ``--lf`` reruns the last run's
failures, ``-x`` stops at the first regression, as in pytest; what ``--lf``
reads lives in the harness's cache folder, never in the project.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Literal

import pytest

from harness import exitcodes, progress
from harness.catalogue import loader
from harness.cli import main

ROOT = Path(__file__).resolve().parent.parent
CLAUDE = str(ROOT / "scenarios" / "agent-cli" / "claude")
NAIVE = "naive=python:tests.adaptors:naive"
#: Two cases the naive adaptor fails (regressions) and one it passes.
PICKED = (
    "claude-json-result-without-structured-output or claude-structured-output-revalidated"
    " or claude-happy-json"
)


Outcome = Literal["passed", "failed", "skipped"]
When = Literal["setup", "call", "teardown"]


def _report(nodeid: str, outcome: Outcome = "passed", when: When = "call") -> pytest.TestReport:
    return pytest.TestReport(nodeid, ("f", 0, "d"), {}, outcome, None, when, duration=0.5)


def _ids(target: str, n: int) -> list[str]:
    return [f"harness/testing.py::test_scenario[s{i}@{target}]" for i in range(n)]


class _Shown:
    def __init__(self, mode: str) -> None:
        self.now = 0.0
        self.lines: list[str] = []
        self.drawn: list[str] = []
        self.progress = progress.Progress(
            mode, self.lines.append, self.drawn.append, now=lambda: self.now
        )


def test_a_case_id_is_read_from_its_node_id() -> None:
    nodeid = "harness/testing.py::test_scenario[codex-happy@mine]"
    assert progress.case_of(nodeid) == ("codex-happy@mine", "mine")
    assert progress.case_of("tests/test_x.py::test_y[a]") is None


@pytest.mark.parametrize(
    ("tty", "env", "expected"),
    [
        (True, {}, "line"),
        (True, {"CI": "true"}, "log"),
        (False, {}, "log"),
        (True, {"CI": "0"}, "line"),
    ],
)
def test_auto_is_a_line_on_a_terminal_and_a_log_in_ci(
    tty: bool, env: dict[str, str], expected: str
) -> None:
    assert progress.mode("auto", tty, env) == expected
    assert progress.mode("off", tty, env) == "off"


def test_a_log_gets_a_line_per_target_every_so_often_and_when_it_is_done() -> None:
    shown = _Shown("log")
    shown.progress.expect([*_ids("fast", 4), *_ids("slow", 3), "tests/x.py::test_other"])
    shown.progress.expect(_ids("fast", 9))  # a second xdist worker's collection: ignored
    assert {k: v.total for k, v in shown.progress.tallies.items()} == {"fast": 4, "slow": 3}
    fast, slow = _ids("fast", 4), _ids("slow", 3)
    shown.now = 1.0
    shown.progress.pytest_runtest_logreport(_report(fast[0]))
    shown.progress.pytest_runtest_logreport(_report(slow[0], "failed"))
    assert shown.lines == []  # not before EVERY seconds
    shown.now = progress.EVERY + 1
    shown.progress.pytest_runtest_logreport(_report(fast[1], when="setup"))  # a passed setup
    shown.progress.pytest_runtest_logreport(_report(fast[1]))
    assert shown.lines == [
        "harness: fast: 2/4 (0.50 s a case); about 0:15 left",
        "harness: slow: 1/3, 1 failed (0.50 s a case); about 0:15 left",
    ]
    shown.progress.pytest_runtest_logreport(_report(fast[2], "skipped", when="setup"))
    shown.progress.pytest_runtest_logreport(_report(fast[3]))
    shown.progress.pytest_runtest_logreport(_report(fast[3], when="teardown"))
    assert shown.lines[2:] == ["harness: fast: 4/4 done (0.50 s a case)"]
    assert shown.drawn == []


def test_a_terminal_gets_one_status_line_redrawn() -> None:
    shown = _Shown("line")
    shown.progress.expect([*_ids("reference", 2), *_ids("real", 2)])
    shown.now = 2.0
    shown.progress.pytest_runtest_logreport(_report(_ids("reference", 2)[0]))
    shown.now = 2.1  # too soon to redraw
    shown.progress.pytest_runtest_logreport(_report(_ids("reference", 2)[1], "failed"))
    assert shown.drawn == ["harness: reference 1/2 · real 0/2 · 0:02, about 0:06 left"]
    shown.now = 4.0
    for nodeid in _ids("real", 2):
        shown.progress.pytest_runtest_logreport(_report(nodeid))
    assert shown.drawn[-1] == "harness: reference 2/2, 1 failed · real 2/2 · 0:04"
    assert shown.lines == []


def test_a_case_shows_no_dot_and_other_tests_keep_theirs() -> None:
    shown = _Shown("line")
    hook = shown.progress.pytest_report_teststatus(_report(_ids("t", 1)[0]))
    next(hook)
    with pytest.raises(StopIteration) as done:
        hook.send(("passed", ".", "PASSED"))
    assert done.value.value == ("passed", "", "PASSED")
    other = shown.progress.pytest_report_teststatus(_report("tests/x.py::test_y"))
    next(other)
    with pytest.raises(StopIteration) as kept:
        other.send(("passed", ".", "PASSED"))
    assert kept.value.value == ("passed", ".", "PASSED")


def test_the_last_failures_are_kept_in_the_cache_not_the_project(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("HARNESS_CACHE", raising=False)
    last = progress.LastFailed.read(ROOT)
    assert last.cases == frozenset()
    assert last.path is not None
    assert last.path.is_relative_to(tmp_path / "cache" / "structured-output-harness")
    last.after({"a@t", "b@t"}, {"a@t"}).write()
    again = progress.LastFailed.read(ROOT)
    assert again.cases == {"a@t"}
    # A case not run keeps its place; one that passed leaves.
    assert again.after({"b@t", "c@t"}, {"c@t"}).cases == {"a@t", "c@t"}
    assert again.after({"a@t"}, set()).cases == frozenset()
    last.path.write_text("[not json")  # damaged: as if nothing had failed
    assert progress.LastFailed.read(ROOT).cases == frozenset()
    monkeypatch.setenv("HARNESS_CACHE", "off")
    assert progress.LastFailed.read(ROOT).path is None


def _run(*argv: str) -> list[str]:
    return ["run", CLAUDE, "--target", NAIVE, "--reports", "", "-k", PICKED, *argv]


def test_lf_reruns_the_last_failures_and_x_stops_at_the_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.delenv("HARNESS_CACHE", raising=False)
    assert main(_run("--lf", "--progress", "log")) == exitcodes.FAILED
    out = capsys.readouterr().out
    assert "harness: --lf: no failure recorded from the last run here: every case runs" in out
    assert "harness: naive: 3/3, 2 failed done" in out
    assert not [line for line in out.splitlines() if line and set(line) <= set(".sxFE")]
    stored = json.loads(next(tmp_path.rglob("lastfailed.json")).read_text())
    assert stored["failed"] == [
        "claude-json-result-without-structured-output@naive",
        "claude-structured-output-revalidated@naive",
    ]
    assert main(_run("--lf", "--progress", "off")) == exitcodes.FAILED
    out = capsys.readouterr().out
    assert "the 2 case(s) that failed last time" in out
    every = len(loader.load([Path(CLAUDE)]).scenarios)
    assert f"2 failed, {every - 2} deselected" in out  # -k leaves 3, --lf 2 of those
    assert main(_run("-x", "--progress", "off")) == exitcodes.FAILED
    out = capsys.readouterr().out
    assert "stopping after 1 failures" in out
    assert out.strip().splitlines()[-1] == "harness: exit 1: failed: 1 regression"
