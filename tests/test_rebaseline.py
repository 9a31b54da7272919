"""
``harness baseline`` merges into the file that is there: reasons and order
kept, failures per check, stale entries counted and pruned on request, and a
file that does not load left alone (a usage error).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from harness import exitcodes
from harness.cli import main
from harness.reports.baseline import WHOLE, Baseline, Entry, Skip, judge
from harness.reports.rebaseline import merge, render
from harness.seams.case import CaseResult
from harness.seams.compare import Mismatch

ROOT = Path(__file__).resolve().parent.parent
CLAUDE = str(ROOT / "scenarios" / "agent-cli" / "claude")
NAIVE = "naive=python:tests.adaptors:naive"
WRONG = "claude-json-result-without-structured-output"


def _failed(scenario: str, *fields: str) -> CaseResult:
    return CaseResult(
        scenario, "t", "failed", mismatches=tuple(Mismatch(f, "a", "b") for f in fields)
    )


def test_failures_are_recorded_per_check_so_a_new_check_still_regresses() -> None:
    merged = merge("t", [_failed("s", "value", "provider.argv")], None)
    checks = [(e.scenario, e.check) for e in merged.baseline.entries]
    assert checks == [("s", "provider.argv"), ("s", "value")]
    later = _failed("s", "value", "provider.argv", "status")
    verdict, note = judge(later, merged.baseline)
    assert verdict == "regression"
    assert "status" in note


def test_fields_that_are_not_baseline_checks_get_a_whole_scenario_entry() -> None:
    merged = merge("t", [_failed("m", "exit_code", "stderr")], None)
    (entry,) = merged.baseline.entries
    assert entry.check is WHOLE
    assert entry.reason == "differs on exit_code, stderr"


def test_an_errored_case_is_listed_as_its_errored_check() -> None:
    result = CaseResult("e", "t", "errored", reason="adaptor exited with status 3\nmore")
    (entry,) = merge("t", [result], None).baseline.entries
    assert (entry.check, entry.reason) == ("errored", "errored: adaptor exited with status 3")


def test_existing_entries_keep_their_reasons_and_order_and_stale_ones_are_pruned_on_request() -> (
    None
):
    old = Baseline(
        "t",
        (
            Entry("z", "value", "hand-written: z rounds big integers"),
            Entry("gone", WHOLE, "used to fail"),
            Entry("a", WHOLE, "hand-written: a is whole"),
        ),
        (
            Skip("declined", None, "hand-written skip", frozenset({"declined"})),
            Skip("runs-now", None, "old skip", frozenset({"runs-now"})),
        ),
    )
    results = [
        _failed("a", "value", "status"),
        _failed("z", "value", "text"),
        _failed("new", "value"),
        CaseResult("gone", "t", "passed"),
        CaseResult("declined", "t", "skipped", reason="no", skipped_by="target"),
        CaseResult("runs-now", "t", "passed"),
        CaseResult("fresh-skip", "t", "skipped", reason="not mine", skipped_by="target"),
    ]
    kept = merge("t", results, old)
    assert [(e.scenario, e.check, e.reason) for e in kept.baseline.entries] == [
        ("z", "value", "hand-written: z rounds big integers"),
        ("gone", WHOLE, "used to fail"),
        ("a", WHOLE, "hand-written: a is whole"),
        ("new", "value", "differs on value"),  # what is new: appended, by scenario
        ("z", "text", "differs on text"),
    ]
    assert [s.scenario for s in kept.baseline.skips] == ["declined", "runs-now", "fresh-skip"]
    assert (kept.added, kept.stale, kept.pruned) == (3, 2, 0)
    pruned = merge("t", results, old, prune=True)
    assert [e.scenario for e in pruned.baseline.entries] == ["z", "a", "new", "z"]
    assert [s.scenario for s in pruned.baseline.skips] == ["declined", "fresh-skip"]
    assert (pruned.added, pruned.stale, pruned.pruned) == (3, 2, 2)
    assert 'reason: "hand-written: z rounds big integers"' in render(pruned.baseline)


def _baseline(out: Path, *extra: str) -> int:
    return main(["baseline", CLAUDE, "--target", NAIVE, "-o", str(out), *extra])


def test_the_command_merges_into_the_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "naive.yaml"
    assert _baseline(out) == 0
    first = out.read_text()
    assert f"  - scenario: {WRONG}\n    check: value\n" in first
    edited = "# Our notes stay.\n" + first.replace(
        'reason: "differs on value"', 'reason: "trusts the result text"', 1
    )
    edited = edited.replace(
        "known_failures:\n",
        "known_failures:\n  - scenario: claude-happy-json\n    reason: fixed since\n",
    )
    out.write_text(edited)
    capsys.readouterr()
    assert _baseline(out) == 0
    assert "0 entries added, 1 stale (--prune removes them)" in capsys.readouterr().out
    assert out.read_text() == edited.replace("reason: fixed since", 'reason: "fixed since"')
    assert _baseline(out, "--prune") == 0
    assert "1 pruned" in capsys.readouterr().out
    text = out.read_text()
    assert text.startswith("# Our notes stay.\n")
    assert "claude-happy-json" not in text
    assert 'reason: "trusts the result text"' in text


def test_a_file_that_does_not_load_is_a_usage_error_and_left_alone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "naive.yaml"
    out.write_text("target: naive\nknown_failures: [\n")
    assert _baseline(out) == exitcodes.USAGE
    assert f"{out}:3:1: <document>: invalid YAML" in capsys.readouterr().err
    assert out.read_text() == "target: naive\nknown_failures: [\n"
