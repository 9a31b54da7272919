"""
The exit status of ``harness``, one test per code, and the last line that names the cause.

The table is `harness.exitcodes`; interrupts (2) are proved end to end in
tests/test_safety_interrupts.py, here only the line is checked.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from harness import exitcodes
from harness.catalogue import loader
from harness.cli import main

ROOT = Path(__file__).resolve().parent.parent
CODEX = str(ROOT / "scenarios" / "agent-cli" / "codex")
NAIVE = "naive=python:tests.adaptors:naive"


def _last(capsys: pytest.CaptureFixture[str]) -> str:
    return capsys.readouterr().out.strip().splitlines()[-1]


def _run(*argv: str) -> list[str]:
    return ["run", CODEX, "--target", "reference-inproc", "--reports", "", *argv]


def test_0_all_as_expected(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(_run("-k", "codex-happy")) == exitcodes.OK
    assert _last(capsys) == (
        "harness: exit 0: all as expected: 1 passed, 0 known failures, 0 skipped"
    )


def test_1_a_regression(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["run", str(ROOT / "scenarios" / "agent-cli" / "claude"), "--target", NAIVE]
    argv += ["-k", "claude-json-result-without-structured-output", "--reports", ""]
    assert main(argv) == exitcodes.FAILED
    assert _last(capsys) == "harness: exit 1: failed: 1 regression"


def test_1_a_stale_entry(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "reference-inproc.yaml").write_text(
        "target: reference-inproc\nknown_failures:\n"
        "  - scenario: codex-happy\n    reason: it used to fail\n"
    )
    assert main(_run("-k", "codex-happy", "--baselines", str(tmp_path))) == exitcodes.FAILED
    assert _last(capsys) == "harness: exit 1: failed: 1 stale baseline entry"


def test_2_interrupted_names_the_kept_reports() -> None:
    assert exitcodes.last_line(2, "the run was stopped") == (
        "harness: exit 2: interrupted: the run was stopped"
    )


def test_3_an_internal_error_is_a_bug_with_its_traceback(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def broken(*args: object) -> object:
        raise ZeroDivisionError("oops")

    monkeypatch.setattr(loader, "load", broken)
    assert main(["lint", CODEX]) == exitcodes.INTERNAL
    err = capsys.readouterr().err
    assert "Traceback" in err
    assert err.strip().splitlines()[-1] == (
        "harness: exit 3: internal error: ZeroDivisionError: oops "
        "(a bug in the harness; please report it)"
    )


@pytest.mark.parametrize(
    "argv",
    [
        ["run", "--no-such-option"],
        ["run", "--target"],
        ["frobnicate"],
        ["run", "--target", "nonsense"],
        ["lint", "/no/such/folder"],
    ],
    ids=["unknown-option", "missing-value", "unknown-command", "unknown-target", "no-folder"],
)
def test_4_bad_arguments(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == exitcodes.USAGE
    assert "Traceback" not in "".join(capsys.readouterr())


def test_4_a_baseline_that_does_not_parse(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "reference-inproc.yaml").write_text("target: reference-inproc\nknown_failures: [\n")
    assert main(_run("-k", "codex-happy", "--baselines", str(tmp_path))) == exitcodes.USAGE
    last = _last(capsys)
    assert last.startswith(
        f"harness: exit 4: usage error: {tmp_path / 'reference-inproc.yaml'}:3:1:"
    )
    assert "invalid YAML" in last


def test_4_an_invalid_scenario_beats_a_regression(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("id: x\n")
    argv = ["run", str(ROOT / "scenarios" / "agent-cli" / "claude"), str(bad), "--target", NAIVE]
    argv += ["-k", "claude-json-result-without-structured-output or invalid", "--reports", ""]
    assert main(argv) == exitcodes.USAGE
    assert _last(capsys).startswith(f"harness: exit 4: usage error: {bad}:1:1: ")


def test_5_nothing_selected(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(_run("-k", "no-such-case")) == exitcodes.NOTHING
    assert _last(capsys) == (
        "harness: exit 5: nothing selected: no case matched the selection "
        "(paths, -k, --tag, --shard)"
    )


def test_help_is_not_an_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:  # as argparse ends it
        main(["run", "--help"])
    assert done.value.code == exitcodes.OK
    assert "--target" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["--module", "nope"], "harness: mutants: unknown module(s) nope; known: pipeline, "),
        (["--jobs", "0"], "harness: mutants: --jobs must be at least 1 and --deadline above 0"),
        (["--jobs", "two"], "harness mutants: error: argument --jobs: invalid int value: 'two'"),
        (["/no/such/folder"], "/no/such/folder:1:1: <document>: no such file or directory"),
    ],
    ids=["unknown-module", "no-jobs", "jobs-not-a-number", "no-folder"],
)
def test_4_mutants_bad_arguments(
    argv: list[str], says: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Each is found before any mutant runs, and is a usage error like every other command's."""
    assert main(["mutants", *argv]) == exitcodes.USAGE
    out, err = capsys.readouterr()
    assert out == ""
    assert says in err
    assert "Traceback" not in err


def test_4_mutants_with_an_equivalents_file_that_is_invalid(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    equivalents = tmp_path / "mutants.yaml"
    equivalents.write_text(
        "equivalent:\n  - mutant: 3\n    reason: the same behaviour on every input\n"
    )
    assert main(["mutants", "--equivalents", str(equivalents)]) == exitcodes.USAGE
    out, err = capsys.readouterr()
    assert out == ""
    assert err == f"{equivalents}:2:5: equivalent[0].mutant: 3 is not of type 'string'\n"
