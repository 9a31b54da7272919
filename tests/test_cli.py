"""The ``harness`` command: each subcommand end to end, and no tracebacks for bad input."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from harness import targets
from harness.catalogue import loader
from harness.catalogue.loader import Loaded
from harness.cli import main
from harness.exceptions import BadTargetSpec
from harness.seams.case import execute

ROOT = Path(__file__).resolve().parent.parent


def test_list_prints_every_scenario(capsys: pytest.CaptureFixture[str], catalogue: Loaded) -> None:
    assert main(["list", str(ROOT / "scenarios")]) == 0
    out = capsys.readouterr().out.splitlines()
    assert len(out) == len(catalogue.scenarios)
    assert any(line.startswith("codex-happy ") for line in out)


def test_list_filters_by_tag(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["list", str(ROOT / "scenarios"), "--tag", "cursor"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out
    assert all("cursor" in line for line in out)


def test_show_documents_a_scenario(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["show", "claude-prose-twice", str(ROOT / "scenarios")]) == 0
    out = capsys.readouterr().out
    header, _, written = out.partition("\n# ")
    assert "claude-prose-twice: " in header
    assert "CLA-02: Success without structured_output is no candidate" in header
    assert "replays capture: claude-prose-twice" in header
    # Then the YAML as written: the family's shared part and this case, nothing else.
    where, _, text = written.partition("\n")
    assert re.fullmatch(r"\S+/claude/captures\.yaml, lines 1-\d+, \d+-\d+", where)
    document = yaml.safe_load(text)
    assert [case["id"] for case in document["cases"]] == ["claude-prose-twice"]
    assert document["request"]["driver"] == "claude"
    assert "enforce_reminder" in text


def test_show_prints_each_scenario_as_its_own_yaml(catalogue: Loaded) -> None:
    # What `harness show` prints is YAML that defines that scenario: its own
    # case last, after only the cases whose anchors it uses.
    for scenario in catalogue.scenarios:
        text = loader.source(scenario)
        document = yaml.safe_load(text)
        cases = document.get("cases", [document])
        assert cases[-1]["id"] == scenario.id
        assert len(cases) == 1 or "*" in text.split(f"id: {scenario.id}")[1], scenario.id
        assert document["seam"] == scenario.seam.value


def test_show_unknown_id(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["show", "no-such-scenario", str(ROOT / "scenarios")]) == 4
    assert "no scenario with id 'no-such-scenario'" in capsys.readouterr().err
    assert main(["show", "codex-hapy", str(ROOT / "scenarios")]) == 4
    assert "(did you mean 'codex-happy'?)" in capsys.readouterr().err


def test_run_subset_writes_reports_and_junit(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    reports = tmp_path / "reports"
    junit = tmp_path / "pytest-junit.xml"
    code = main(
        [
            "run",
            str(ROOT / "scenarios"),
            "--target",
            "reference-inproc",
            "-k",
            "codex-happy and not model-codex-happy",
            "--reports",
            str(reports),
            "--",
            f"--junitxml={junit}",
        ]
    )
    assert code == 0
    out = capsys.readouterr().out
    assert "harness: reference-inproc: 1 passed, 0 failed, 0 errored, 0 skipped" in out
    document = json.loads((reports / "report.json").read_text())
    assert [c["scenario"] for c in document["cases"]] == ["codex-happy"]
    assert junit.exists()
    assert (reports / "junit.xml").read_text().count("<testcase ") == 1


def test_a_failing_case_says_which_scenario_it_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """
    Title, why and file before the diff, the file relative to the catalogue
    when the run is elsewhere (as from an installed wheel), and never the
    path of the harness's own test module.
    """
    monkeypatch.chdir(tmp_path)
    wrong = "claude-json-result-without-structured-output"
    (scenario,) = [s for s in loader.load([ROOT / "scenarios"]).scenarios if s.id == wrong]
    argv = ["run", str(ROOT / "scenarios" / "agent-cli" / "claude")]
    argv += ["--target", "naive=python:tests.adaptors:naive", "-k", wrong, "--reports", ""]
    assert main(argv) == 1
    out = capsys.readouterr().out
    where = f"agent-cli/claude/{scenario.path.name}:{scenario.line}"
    intro = f"{wrong}[naive] does not meet its expectation\n  {scenario.title}\n  why: "
    assert intro in out
    assert f"\n  scenario: {where} (harness show {wrong})\nerror:\n" in out
    said = " ".join(scenario.description.split())
    assert said[:60] in " ".join(out.split())
    assert f"harness: naive: FAILED {wrong}: {scenario.title} ({where})" in out
    assert "testing.py" not in out
    assert "site-packages" not in out
    assert str(ROOT) not in out


def test_run_by_tag(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(
        [
            "run",
            str(ROOT / "scenarios"),
            "--target",
            "reference-inproc",
            "--tag",
            "codebuddy",
            "--reports",
            "",
        ]
    )
    assert code == 0
    out = capsys.readouterr().out
    assert main(["list", str(ROOT / "scenarios"), "--tag", "codebuddy"]) == 0
    listed = capsys.readouterr().out.splitlines()
    assert len(listed) > 20
    # Every case the tag lists ran and passed; none of another CLI's came along.
    assert f"harness: reference-inproc: {len(listed)} passed, 0 failed" in out


def test_run_with_a_broken_file_reports_it_without_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    broken = tmp_path / "broken.yaml"
    broken.write_text("id: x\ntitle: [\n")
    code = main(["run", str(broken), "--target", "reference-inproc", "--reports", ""])
    assert code == 4
    out = capsys.readouterr().out
    assert f"{broken}:3:1: <document>: invalid YAML" in out
    assert "Traceback" not in out


def test_unknown_target_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", str(ROOT / "scenarios"), "--target", "nonsense"]) == 4
    captured = capsys.readouterr()
    assert captured.err.startswith("harness: unknown target 'nonsense' (known: ")
    assert "Traceback" not in captured.out + captured.err


def test_a_reserved_target_name_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    # Its baseline would be the differential's expectations file.
    assert main(["run", str(ROOT / "scenarios"), "--target", "differential=reference"]) == 4
    captured = capsys.readouterr()
    assert captured.err == (
        "harness: target name 'differential' is reserved: baselines/differential.yaml holds "
        "the differential's expectations, not a target's baseline\n"
    )


def test_python_target_that_raises_is_errored(catalogue: Loaded) -> None:
    target = targets.create("python:tests.adaptors:explodes")
    scenario = catalogue.scenarios[0]
    result = execute(scenario, target)
    assert result.status == "errored"
    assert (result.reason or "").splitlines() == [
        "RuntimeError: adaptor bug",
        "Traceback (most recent call last):",
        '  File "tests/adaptors.py", line 16, in explodes',
        '    raise RuntimeError("adaptor bug")',
        "RuntimeError: adaptor bug",
    ]


def test_python_target_with_garbage_answer_is_errored(catalogue: Loaded) -> None:
    target = targets.create("python:tests.adaptors:garbage")
    result = execute(catalogue.scenarios[0], target)
    assert result.status == "errored"
    assert result.reason is not None
    assert "invalid outcome" in result.reason


def test_python_target_wrapping_the_reference_passes(catalogue: Loaded) -> None:
    target = targets.create("python:tests.adaptors:reference")
    for scenario in catalogue.scenarios:
        if scenario.seam in target.seams:  # an adaptor serves agent-cli only
            assert execute(scenario, target).status == "passed", scenario.id


def test_python_target_spec_errors() -> None:
    with pytest.raises(BadTargetSpec, match=re.escape("python:MODULE:FUNCTION")):
        targets.create("python:nomodule")
    with pytest.raises(BadTargetSpec, match="has no function 'missing'"):
        targets.create("python:tests.adaptors:missing")
