"""
``harness baseline`` merges into the file that is there: reasons and order
kept, failures per check, stale entries counted and pruned on request, and a
file that does not load left alone (a usage error).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness import exitcodes
from harness.baselines.rebaseline import merge, render
from harness.baselines.verdicts import WHOLE, Baseline, Entry, Skip, judge, load
from harness.cli import main
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


TWO_DRIVERS = """\
IMPLEMENTATION = {"name": "two", "version": "1.0.0", "drivers": ["claude", "codex"]}


def run(message):
    return {"skipped": True, "reason": "never asked: the harness declines the others"}
"""
#: Two folders of drivers the adaptor does not announce.
ELSEWHERE = [str(ROOT / "scenarios" / "agent-cli" / d) for d in ("cursor", "codebuddy")]


def test_a_driver_the_adaptor_does_not_announce_is_one_skip(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Not one entry per scenario: one per driver, with the reason the run gives."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "two_drivers.py").write_text(TWO_DRIVERS)
    out = tmp_path / "two.yaml"
    target = ["--target", "two=python:two_drivers:run"]
    assert main(["baseline", *ELSEWHERE, *target, "-o", str(out)]) == 0
    text = out.read_text()
    assert text.count("  - driver: ") == 2, text
    assert "  - scenario: " not in text
    assert '  - driver: codebuddy\n    reason: "two does not announce the codebuddy driver' in text
    assert "0 known failure(s) and " in capsys.readouterr().out
    # The baseline holds: the run is green, nothing stale.
    (tmp_path / "baselines").mkdir()
    out.rename(tmp_path / "baselines" / "two.yaml")
    argv = ["run", *ELSEWHERE, *target, "--baselines", "baselines", "--reports", ""]
    assert main(argv) == 0
    assert "0 regressions, 0 stale" in capsys.readouterr().out


def test_scenario_skips_of_an_unannounced_driver_fold_into_one() -> None:
    drivers = {"c1": "cursor", "c2": "cursor", "c3": "cursor", "x1": "codex"}
    old = Baseline(
        "t",
        skips=(
            Skip("c1", None, "hand-written: no cursor", frozenset({"c1"})),
            Skip("c2", None, "generated", frozenset({"c2"})),
            Skip("x1", None, "kept", frozenset({"x1"})),
        ),
    )
    results = [
        CaseResult(s, "t", "skipped", reason="t does not announce it", skipped_by="target")
        for s in ("c1", "c2", "c3", "x1")
    ]
    merged = merge("t", results, old, drivers=drivers, unannounced=frozenset({"cursor"}))
    assert [(s.scenario, s.driver, s.reason) for s in merged.baseline.skips] == [
        ("x1", None, "kept"),
        (None, "cursor", "hand-written: no cursor"),
    ]
    assert (merged.added, merged.stale, merged.folded) == (1, 0, 2)
    # Without the announcement, each case is its own entry, as before.
    plain = merge("t", results, None, drivers=drivers)
    assert [s.scenario for s in plain.baseline.skips] == ["c1", "c2", "c3", "x1"]


def test_a_run_and_prune_count_the_same_stale_entries(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """
    A scenario listed on three checks that passes now is three stale entries,
    in the run's summary as in --prune (the run used to count one: a case).
    """
    folder = tmp_path / "baselines"
    folder.mkdir()
    out = folder / "naive.yaml"
    assert _baseline(out) == 0
    listed = "".join(
        f"  - scenario: claude-happy-json\n    check: {check}\n    reason: fixed since\n"
        for check in ("value", "status", "text")
    )
    out.write_text(out.read_text().replace("known_failures:\n", "known_failures:\n" + listed, 1))
    capsys.readouterr()
    run = ["run", CLAUDE, "--target", NAIVE, "--baselines", str(folder), "--reports", ""]
    assert main(run) == 1
    said = capsys.readouterr().out
    assert "regressions, 3 stale" in said
    assert said.count("harness: naive: stale baseline entry ") == 3
    first = out.read_text().splitlines().index("  - scenario: claude-happy-json") + 1
    assert f"{out}:{first}: known failure claude-happy-json (value): passed now" in said
    assert "exit 1: failed: 3 stale baseline entries" in said
    assert _baseline(out, "--prune") == 0
    assert "3 stale, 3 pruned" in capsys.readouterr().out
    assert main(run) == 0


def test_a_long_reason_is_folded_and_reads_back_as_written(tmp_path: Path) -> None:
    long = " ".join(["JSON.parse rounds 9007199254740993 to 9007199254740992,"] * 4)
    odd = "two  spaces keep it quoted, " + "x" * 80
    kept = Baseline("t", (Entry("a", WHOLE, long), Entry("b", WHOLE, odd)))
    text = render(kept)
    assert "    reason: >-\n      JSON.parse rounds" in text
    assert max(len(line) for line in text.splitlines() if "JSON.parse" in line) <= 88
    assert f"    reason: {json.dumps(odd)}" in text
    path = tmp_path / "t.yaml"
    path.write_text(text)
    loaded, problems = load(path, {"a": None, "b": None})
    assert problems == []
    assert loaded is not None
    assert [e.reason for e in loaded.entries] == [long, odd]
