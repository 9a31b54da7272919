"""
Baselines of known failures: loading, verdicts, and the run's exit status.
"""

from __future__ import annotations

import json
import shutil
import sys
import textwrap
from pathlib import Path

import pytest

from harness.baselines import verdicts as baseline
from harness.catalogue import loader
from harness.cli import main
from harness.seams.case import CaseResult
from harness.seams.compare import Mismatch

ROOT = Path(__file__).resolve().parent.parent
KNOWN = {"codex-happy": "codex", "claude-prose-twice": "claude", "throng-happy": None}


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
        (
            """\
            target: naive
            known_failures: []
            skips:
              - scenario: codex-happy
                driver: codex
                reason: both
            """,
            "naive.yaml:4:5: skips[0]: give either scenario or driver, not both",
        ),
        (
            """\
            target: naive
            known_failures: []
            skips:
              - reason: neither
            """,
            "naive.yaml:4:5: skips[0]: give either scenario or driver",
        ),
        (
            """\
            target: naive
            known_failures: []
            skips:
              - driver: gemini
                reason: not a driver of the catalogue
            """,
            "naive.yaml:4:5: skips[0].driver: no scenario drives 'gemini' (drivers: claude, codex)",
        ),
        (
            """\
            target: naive
            known_failures: []
            skips:
              - scenario: no-such-scenario
                reason: typo
            """,
            "naive.yaml:4:5: skips[0].scenario: unknown scenario 'no-such-scenario'",
        ),
        (
            """\
            target: naive
            known_failures: []
            skips:
              - driver: codex
                reason: codex only
              - scenario: codex-happy
                reason: and this one
            """,
            "naive.yaml:6:5: skips[1]: 'codex-happy' is already covered by skips[0]",
        ),
        (
            """\
            target: naive
            known_failures:
              - scenario: codex-happy
                reason: fails
            skips:
              - scenario: codex-happy
                reason: and is skipped
            """,
            "naive.yaml:6:5: skips[0]: 'codex-happy' is also a known failure (known_failures[0])",
        ),
        (
            """\
            target: naive
            known_failures: []
            skips:
              - scenario: codex-happy
            """,
            "naive.yaml:4:5: skips[0]: 'reason' is a required property",
        ),
    ],
)
def test_bad_baselines_are_one_line(tmp_path: Path, body: str, expected: str) -> None:
    loaded, problems = baseline.load(_write(tmp_path, body), KNOWN)
    if "unknown scenario" in expected or "no scenario drives" in expected:
        # Unmet, not bad: loaded without it, and the problem a strict run reports.
        assert loaded is not None
        assert problems == []
        problems = list(loaded.unmet)
    else:
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


def _skipped(by: str, scenario: str = "codex-happy") -> CaseResult:
    return CaseResult(scenario, "naive", "skipped", reason="not here", skipped_by=by)


def test_skip_verdicts() -> None:
    whole = baseline.Baseline("naive", (baseline.Entry("codex-happy", None, "known"),))
    by_driver = baseline.Skip(None, "codex", "codex only", frozenset({"codex-happy"}))
    skips = baseline.Baseline("naive", skips=(by_driver,))
    empty = baseline.Baseline("naive")
    # A known failure that is skipped now is no longer checked: stale.
    verdict, note = baseline.judge(_skipped("target"), whole)
    assert verdict == "stale"
    assert "skipped now" in note
    assert baseline.judge(_skipped("harness"), whole)[0] == "stale"
    # A skip the target decides is a regression unless listed.
    verdict, note = baseline.judge(_skipped("target"), empty)
    assert verdict == "regression"
    assert "lists no such skip" in note
    assert baseline.judge(_skipped("target"), skips) == (None, "codex only")
    # A listed skip that runs now is stale, passing or failing.
    assert baseline.judge(_result("passed"), skips)[0] == "stale"
    assert baseline.judge(_result("failed", "value"), skips)[0] == "stale"
    # The harness's and the scenario's own skips need no entry, and an entry for one is stale.
    assert baseline.judge(_skipped("harness"), empty) == (None, "")
    assert baseline.judge(_skipped("scenario"), empty) == (None, "")
    # A scenario skip the scenario makes itself is stale; inside a driver skip it is neutral
    # (the driver's other cases may still be declined by the target: `stale` decides).
    by_scenario = baseline.Skip("codex-happy", None, "not this", frozenset({"codex-happy"}))
    assert (
        baseline.judge(_skipped("scenario"), baseline.Baseline("naive", skips=(by_scenario,)))[0]
        == "stale"
    )
    assert baseline.judge(_skipped("scenario"), skips) == (None, "")
    # Without a baseline, nothing about skips is judged.
    assert baseline.judge(_skipped("target"), None) == (None, "")


def test_a_driver_skip_covers_every_scenario_of_that_driver(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        """\
        target: naive
        known_failures: []
        skips:
          - driver: claude
            reason: drives codex only
        """,
    )
    loaded, problems = baseline.load(path, KNOWN)
    assert problems == []
    assert loaded is not None
    assert loaded.skip_for("claude-prose-twice") is not None
    assert loaded.skip_for("codex-happy") is None
    assert loaded.skip_for("throng-happy") is None


NAIVE = "naive=python:tests.adaptors:naive"


#: The naive adaptor's workflow runs on one driver's folder: enough to fail, quick.
CLAUDE_CASES = ROOT / "scenarios" / "agent-cli" / "claude"


def _run(tmp_path: Path, baselines: Path, *extra: str) -> int:
    return main(
        [
            "run",
            str(CLAUDE_CASES),
            "--target",
            NAIVE,
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
    assert main(["baseline", str(CLAUDE_CASES), "--target", NAIVE, "-o", str(written)]) == 0
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
    assert _run(tmp_path, baselines) == 4
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
    assert main([*argv, "--strict-baseline"]) == 4
    out = capsys.readouterr().out
    assert "reference-inproc.yaml:3:5: known_failures[0].scenario: unknown scenario" in out


def test_a_baseline_for_another_catalogue_is_one_summary_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """
    A baseline written over the bundled catalogue, used with one's own folder
    of scenarios: what it names that the folder lacks is one line, not an
    error (unless --strict-baseline), and what it names that ran is judged.
    """
    mine = tmp_path / "mine"
    shutil.copytree(ROOT / "scenarios" / "agent-cli" / "schemas", mine / "schemas")
    (mine / "codex").mkdir()
    shutil.copy(ROOT / "scenarios" / "agent-cli" / "codex" / "terminals.yaml", mine / "codex")
    baselines = tmp_path / "baselines"
    baselines.mkdir()
    body = "target: reference-inproc\nknown_failures:\n"
    body += "".join(f"  - scenario: elsewhere-{i}\n    reason: not here\n" for i in range(5))
    body += "skips:\n  - driver: cursor\n    reason: no cursor in my folder\n"
    (baselines / "reference-inproc.yaml").write_text(body)
    argv = ["run", str(mine), "--target", "reference-inproc", "--baselines", str(baselines)]
    argv += ["--reports", ""]
    assert main(argv) == 0
    out = capsys.readouterr().out
    unmet = [line for line in out.splitlines() if "not judged" in line]
    assert len(unmet) == 1, out
    assert "6 entries name a scenario or driver this run's catalogue does not have" in unmet[0]
    assert "reference-inproc.yaml:3: unknown scenario 'elsewhere-0'" in unmet[0]
    assert main([*argv, "--strict-baseline"]) == 4
    out = capsys.readouterr().out
    assert "harness: rejected " in out
    assert "known_failures[4].scenario: unknown scenario 'elsewhere-4'" in out
    assert "skips[0].driver: no scenario drives 'cursor'" in out


@pytest.mark.parametrize("given", [True, False], ids=["--baselines", "./baselines"])
def test_a_baseline_for_a_target_not_in_the_run_is_one_summary_line(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    given: bool,
) -> None:
    """
    Its file is never read, so the run says so in one line (a target named
    otherwise than its baseline would go unjudged); with --strict-baseline,
    like an entry naming an unknown scenario, it is a rejected file, exit 4.
    """
    monkeypatch.chdir(tmp_path)
    baselines = tmp_path / "baselines"
    baselines.mkdir()
    for name in ("reference-inproc", "nodeadaptor", "old-sdk"):
        (baselines / f"{name}.yaml").write_text(f"target: {name}\nknown_failures: []\n")
    (baselines / "notes.yaml").write_text("- not a baseline\n")  # no target: not one
    argv = ["run", str(ROOT / "scenarios" / "agent-cli" / "codex"), "--target", "reference-inproc"]
    argv += ["-k", "codex-happy", "--reports", ""]
    argv += ["--baselines", str(baselines)] if given else []
    assert main(argv) == 0
    out = capsys.readouterr().out
    said = [line for line in out.splitlines() if "target not in this run" in line]
    shown = "baselines/"  # shown from the working folder, as every path of the summary
    assert said == [
        f"harness: baselines: 2 not read, their target not in this run: "
        f"{shown}nodeadaptor.yaml (nodeadaptor), {shown}old-sdk.yaml (old-sdk); "
        "--strict-baseline makes this an error"
    ], out
    assert main([*argv, "--strict-baseline"]) == 4
    out = capsys.readouterr().out
    rejected = [line for line in out.splitlines() if line.startswith("harness: rejected ")]
    assert len(rejected) == 2, out
    assert "old-sdk.yaml:1:1: target: names 'old-sdk', a target not in this run" in rejected[1]
    assert not [line for line in out.splitlines() if "harness: baselines:" in line]


SLY = f"sly=cmd:{sys.executable} {ROOT / 'tests' / 'misbehaving_adaptor.py'} skipped:codex-happy"


def _run_sly(tmp_path: Path, body: str) -> int:
    baselines = tmp_path / "baselines"
    baselines.mkdir(exist_ok=True)
    (baselines / "sly.yaml").write_text(textwrap.dedent(body))
    argv = [
        "run",
        str(ROOT / "scenarios" / "agent-cli" / "codex"),
        "--target",
        SLY,
        "-k",
        "codex-happy",
    ]
    return main([*argv, "--baselines", str(baselines), "--reports", str(tmp_path / "reports")])


def test_skips_cannot_hide_regressions(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A target with a baseline that starts skipping a case fails the run until it is listed."""
    assert _run_sly(tmp_path, "target: sly\nknown_failures: []\n") == 1
    out = capsys.readouterr().out
    assert "sly: 0 passed, 0 failed, 0 errored, 1 skipped; baseline " in out
    assert ": 0 expected, 1 regressions, 0 stale" in out
    assert "codex-happy[sly]: skipped (no cursor here)" in out

    # A baselined failure that turns into a skip is stale: it is no longer checked.
    listed = "target: sly\nknown_failures:\n  - scenario: codex-happy\n    reason: it fails\n"
    assert _run_sly(tmp_path, listed) == 1
    assert "skipped now" in capsys.readouterr().out

    # Listed as a skip, the run is green, and the reports count it by reason.
    skip = "target: sly\nknown_failures: []\nskips:\n  - scenario: codex-happy\n    reason: why\n"
    assert _run_sly(tmp_path, skip) == 0
    out = capsys.readouterr().out
    assert "harness: sly: 1 skipped by the target: no cursor here" in out
    report = json.loads((tmp_path / "reports" / "report.json").read_text())
    assert report["skips"]["sly"] == [
        {"count": 1, "reason": "no cursor here", "skipped_by": "target"}
    ]
    matrix = (tmp_path / "reports" / "matrix.md").read_text()
    assert "| sly | the target | no cursor here | 1 |" in matrix


def test_harness_baseline_lists_the_targets_skips(tmp_path: Path) -> None:
    out = tmp_path / "sly.yaml"
    argv = [
        "baseline",
        str(ROOT / "scenarios" / "agent-cli" / "codex" / "captures.yaml"),
        "--target",
        SLY,
    ]
    assert main([*argv, "-o", str(out)]) == 0
    text = out.read_text()
    assert 'skips:\n  - scenario: codex-happy\n    reason: "no cursor here"' in text
    known = baseline.known(loader.load([ROOT / "scenarios"]).scenarios)
    loaded, problems = baseline.load(out, known)
    assert problems == []
    assert loaded is not None
    assert loaded.skip_for("codex-happy") is not None
