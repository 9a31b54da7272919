"""
What CI reads: junit.xml that a dashboard shows right, and failure context.

- A known failure (listed in the target's baseline) is ``<skipped>`` with the
  baseline's reason, never ``<failure>``; a regression is ``<failure>`` with
  the diff and what the provider printed; an errored case is ``<error>``.
- ANSI sequences and control characters never make the file invalid XML.
- Each case's ``time`` is measured.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from harness import exitcodes
from harness.cli import main
from harness.reports import junit, render
from harness.seams.case import CaseResult

ROOT = Path(__file__).resolve().parent.parent
CLAUDE = str(ROOT / "scenarios" / "agent-cli" / "claude")
NAIVE = "naive=python:tests.adaptors:naive"
#: A case the naive adaptor gets wrong (tests/test_exit_codes.py).
WRONG = "claude-json-result-without-structured-output"


def _run(tmp_path: Path, *extra: str) -> tuple[int, ET.Element]:
    reports = tmp_path / "reports"
    argv = ["run", CLAUDE, "--target", NAIVE, "-k", WRONG, "--reports", str(reports), *extra]
    code = main(argv)
    return code, ET.fromstring((reports / "junit.xml").read_bytes())


def test_a_known_failure_is_skipped_with_the_baselines_reason(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    baselines = tmp_path / "baselines"
    baselines.mkdir()
    (baselines / "naive.yaml").write_text(
        f"target: naive\nknown_failures:\n  - scenario: {WRONG}\n"
        "    reason: the naive adaptor trusts the result text\n"
    )
    code, root = _run(tmp_path, "--baselines", str(baselines))
    assert code == exitcodes.OK, capsys.readouterr().out
    (case,) = root.iter("testcase")
    (skipped,) = list(case)
    assert skipped.tag == "skipped"
    assert skipped.get("type") == "known-failure"
    assert skipped.get("message") == "known failure: the naive adaptor trusts the result text"
    suite = root.find("testsuite")
    assert suite is not None
    assert (suite.get("failures"), suite.get("skipped")) == ("0", "1")


def test_a_regression_is_a_failure_with_the_diff_context_and_a_real_time(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, root = _run(tmp_path)
    assert code == exitcodes.FAILED
    (case,) = root.iter("testcase")
    assert float(case.get("time", "")) > 0
    (failure,) = list(case)
    assert failure.tag == "failure"
    assert failure.get("type") == "regression"
    body = failure.text or ""
    assert "@@" not in body  # junit holds Mismatch.render(), not failures.md's diff
    assert "expected" in body
    assert "provider: fake claude" in body
    assert "stdout (scripted events and lines" in body
    # The terminal shows the same context.
    assert "provider: fake claude" in capsys.readouterr().out
    failures = (tmp_path / "reports" / "failures.md").read_text()
    assert "What the provider printed:" in failures


def test_ansi_and_control_characters_leave_valid_xml() -> None:
    noisy = "\x1b[31mred\x1b[0m bell\x07 nul\x00 \x1b]0;title\x07esc\x1b[2Kdone"
    result = CaseResult("s", "t", "errored", reason=f"adaptor died\nstderr (tail):\n{noisy}")
    text = junit.render(render.Report.build([], [result], [], ROOT))
    root = ET.fromstring(text.encode("utf-8"))  # any parser accepts it
    error = root.find("testsuite/testcase/error")
    assert error is not None
    assert error.get("message") == "adaptor died"
    body = error.text or ""
    assert "\x1b" not in text
    assert "red bell\\x07 nul\\x00 escdone" in body


def test_the_suite_counts_match_its_elements() -> None:
    results = [
        CaseResult("a", "t", "passed", seconds=0.25),
        CaseResult("b", "t", "failed", verdict="expected", note="known", seconds=0.5),
        CaseResult("c", "t", "errored", reason="boom"),
        CaseResult("d", "t", "passed", verdict="stale", note="passes now"),
        CaseResult("e", "t", "skipped", reason="declined", skipped_by="target"),
    ]
    root = ET.fromstring(junit.render(render.Report.build([], results, [], ROOT)))
    suite = root.find("testsuite")
    assert suite is not None
    counts = {k: suite.get(k) for k in ("tests", "failures", "errors", "skipped", "time")}
    assert counts == {"tests": "5", "failures": "1", "errors": "1", "skipped": "2", "time": "0.750"}
