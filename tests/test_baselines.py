"""
Baselines of known failures: loading, verdicts, and the run's exit status.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from harness.cli import main
from harness.reports import baseline
from harness.seams.case import CaseResult
from harness.seams.compare import Mismatch

ROOT = Path(__file__).resolve().parent.parent
KNOWN = ["codex-happy", "claude-prose-twice"]


def _write(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "naive.yaml"
    path.write_text(textwrap.dedent(body))
    return path


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (
            """\
            target: naive
            known_failures:
              - scenario: no-such-scenario
                reason: typo
            """,
            "naive.yaml:3:5: known_failures[0].scenario: unknown scenario 'no-such-scenario'",
        ),
        (
            """\
            target: naive
            known_failures:
              - scenario: codex-happy
                reason: one
              - scenario: codex-happy
                reason: two
            """,
            "naive.yaml:5:5: known_failures[1]: duplicate of entry 0",
        ),
        (
            """\
            target: naive
            known_failures:
              - scenario: codex-happy
                check: value
                reason: one
              - scenario: codex-happy
                reason: all of it
            """,
            "naive.yaml:6:5: known_failures[1]: contradicts another entry for 'codex-happy'",
        ),
        (
            """\
            target: naive
            known_failures:
              - scenario: codex-happy
            """,
            "naive.yaml:3:5: known_failures[0]: 'reason' is a required property",
        ),
        (
            """\
            target: naive
            known_failures:
              - scenario: codex-happy
                check: vibes
                reason: nope
            """,
            "naive.yaml:4:5: known_failures[0].check: 'vibes' is not one of",
        ),
    ],
)
def test_bad_baselines_are_one_line(tmp_path: Path, body: str, expected: str) -> None:
    loaded, problems = baseline.load(_write(tmp_path, body), KNOWN)
    assert loaded is None
    assert len(problems) == 1
    assert str(problems[0]).startswith(str(tmp_path / expected.split(":", 1)[0]))
    assert expected.split(":", 1)[1] in str(problems[0])


def _result(status: str, *fields: str) -> CaseResult:
    mismatches = tuple(Mismatch(f, "a", "b") for f in fields)
    return CaseResult("codex-happy", "naive", status, mismatches=mismatches, reason="boom")


def test_verdicts() -> None:
    whole = baseline.Baseline("naive", (baseline.Entry("codex-happy", None, "known"),))
    value = baseline.Baseline("naive", (baseline.Entry("codex-happy", "value", "v"),))
    assert baseline.judge(_result("passed"), None) == (None, "")
    assert baseline.judge(_result("failed", "value"), None)[0] == "regression"
    assert baseline.judge(_result("failed", "value", "text"), whole) == ("expected", "known")
    assert baseline.judge(_result("errored"), whole) == ("expected", "known")
    assert baseline.judge(_result("passed"), whole)[0] == "stale"
    assert baseline.judge(_result("failed", "value"), value) == ("expected", "v")
    verdict, note = baseline.judge(_result("failed", "value", "cause"), value)
    assert verdict == "regression"
    assert "cause" in note
    assert baseline.judge(_result("failed", "text"), value)[0] == "regression"
    assert baseline.judge(_result("skipped"), whole) == (None, "")


NAIVE = "naive=python:tests.adaptors:naive"


def _run(tmp_path: Path, baselines: Path, *extra: str) -> int:
    return main(
        [
            "run",
            str(ROOT / "scenarios"),
            "--target",
            NAIVE,
            "--tag",
            "claude",
            "--baselines",
            str(baselines),
            "--reports",
            str(tmp_path / "reports"),
            *extra,
        ]
    )


def test_baseline_workflow(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    baselines = tmp_path / "baselines"
    baselines.mkdir()
    # Without a baseline every failure of the naive adaptor is a regression.
    assert _run(tmp_path, baselines) == 1
    out = capsys.readouterr().out
    # Which file would have listed them is said, not left to guess.
    assert f"harness: naive: no baseline at {baselines / 'naive.yaml'}" in out

    # Record the current failures; the same run is then green.
    written = baselines / "naive.yaml"
    assert main(["baseline", str(ROOT / "scenarios"), "--target", NAIVE, "-o", str(written)]) == 0
    text = written.read_text()
    assert "scenario: claude-json-result-without-structured-output" in text
    capsys.readouterr()
    assert _run(tmp_path, baselines) == 0
    out = capsys.readouterr().out
    assert f"; baseline {written}: " in out
    assert "0 regressions, 0 stale" in out
    assert "harness: known failure" not in out  # quiet unless asked
    matrix = (tmp_path / "reports" / "matrix.md").read_text()
    assert "| known |" in matrix or "| [known](" in matrix

    # On request, each listed failure shows its entry and what differs today.
    assert _run(tmp_path, baselines, "--show-known") == 0
    out = capsys.readouterr().out
    entry = text.splitlines().index("  - scenario: claude-json-result-without-structured-output")
    assert (
        "harness: known failure claude-json-result-without-structured-output[naive] "
        f"({written}:{entry + 1}): "
    ) in out
    assert '\n  error:\n    expected: "policy_violation"\n    actual:   null\n' in out

    # An entry for a scenario that passes is stale, fails the run, and is named by file and line.
    stale = len(text.splitlines()) + 1
    written.write_text(text + "  - scenario: claude-happy-json\n    reason: it used to fail\n")
    assert _run(tmp_path, baselines) == 1
    assert f"claude-happy-json[naive]: stale baseline entry: {written}:{stale}: " in (
        capsys.readouterr().out
    )


def test_baseline_naming_another_target(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    baselines = tmp_path / "baselines"
    baselines.mkdir()
    (baselines / "naive.yaml").write_text("target: other\nknown_failures: []\n")
    assert _run(tmp_path, baselines) == 1
    assert "names 'other', not 'naive'" in capsys.readouterr().out


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["in-process", "xdist"])
def test_a_bad_file_fails_a_run_that_deselects_its_case(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], workers: list[str]
) -> None:
    # The broken baseline's own case is deselected by -k; the run must fail anyway.
    baselines = tmp_path / "baselines"
    baselines.mkdir()
    (baselines / "reference-inproc.yaml").write_text(
        "target: reference-inproc\nknown_failures:\n  - scenario: no-such-scenario\n"
        "    reason: typo\n"
    )
    argv = ["run", str(ROOT / "scenarios" / "agent-cli"), "--target", "reference-inproc"]
    argv += ["-k", "codex-happy", "--baselines", str(baselines), "--reports", "", *workers]
    assert main(argv) == 1
    out = capsys.readouterr().out
    assert "reference-inproc.yaml:3:5: known_failures[0].scenario: unknown scenario" in out
