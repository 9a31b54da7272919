"""
Reports are deterministic and complete: the JSON and JUnit reports of a few
chosen cases are snapshots a reviewer reads in a diff; the reports of a
wider sample (a scenario of every catalogue file) are held to properties.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from syrupy.assertion import SnapshotAssertion

from harness import seams, targets
from harness.catalogue import loader
from harness.catalogue.clauses import registry
from harness.catalogue.scenario import Expectation, Json
from harness.reports import junit, render
from harness.seams import RunOptions
from harness.seams.case import STATUSES, execute
from harness.targets.announce import about

#: The bundled catalogue's Bash cases run, confined, as under `make test`.
EXEC = RunOptions(allow_exec=True)


def _sample(catalogue: loader.Loaded) -> loader.Loaded:
    """
    The first scenario of every catalogue file: each seam, driver and report
    section, at a fraction of the whole catalogue's cost (the catalogue's own
    test runs every scenario; these tests are about the reports).
    """
    seen: set[Path] = set()
    chosen = []
    for scenario in catalogue.scenarios:
        if scenario.path not in seen:
            seen.add(scenario.path)
            chosen.append(scenario)
    return replace(catalogue, scenarios=tuple(chosen))


def _build(catalogue: loader.Loaded, root: Path) -> render.Report:
    target = targets.create("reference-inproc")
    results = [execute(s, target, EXEC) for s in catalogue.scenarios]
    # The machine's isolation is shown as bubblewrap's, so the snapshot is the same everywhere.
    confined = "allowed, confined (bubblewrap)"
    return render.Report.build(
        catalogue.scenarios,
        results,
        catalogue.problems,
        root,
        commands=confined,
        abouts=[about(target, target.name, target.kind)],
    )


def _mask(value: Any) -> Any:
    """Hide what may legitimately differ between machines: temporary paths."""
    if isinstance(value, dict):
        return {k: _mask(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_mask(v) for v in value]
    if isinstance(value, str):
        return re.sub(r"/tmp/[^\s\"']+", "<tmp>", value)
    return value


def test_two_runs_are_byte_identical(
    catalogue: loader.Loaded, built: render.Report, tmp_path: Path
) -> None:
    root = Path(__file__).resolve().parent.parent
    first = render.write(built, tmp_path / "one")
    second = render.write(_build(_sample(catalogue), root), tmp_path / "two")
    for a, b in zip(first, second, strict=True):
        assert _timeless(a.read_text()) == _timeless(b.read_text()), a.name


def _timeless(text: str) -> str:
    """junit.xml's measured times are the one thing that may differ between two runs."""
    return re.sub(r'time="[0-9.]+"', 'time="<t>"', text)


@pytest.fixture(scope="module")
def sample(catalogue: loader.Loaded) -> loader.Loaded:
    return _sample(catalogue)


@pytest.fixture(scope="module")
def built(sample: loader.Loaded) -> render.Report:
    """One run of the sample, shared by the tests that only read its report."""
    return _build(sample, Path(__file__).resolve().parent.parent)


#: The snapshot's cases: one of each seam and CLI, each small enough to read.
SNAPSHOT = (
    "claude-happy-json",  # agent-cli: the calls the fake CLI saw
    "model-claude-schema-array",  # model-api, claude
    "model-codex-schema-cut-off",  # model-api, codex
    "throng-format-absent",  # service-api
)


@pytest.fixture(scope="module")
def few(catalogue: loader.Loaded) -> render.Report:
    chosen = tuple(s for s in catalogue.scenarios if s.id in SNAPSHOT)
    assert sorted(s.id for s in chosen) == sorted(SNAPSHOT)
    return _build(replace(catalogue, scenarios=chosen), Path(__file__).resolve().parent.parent)


def test_json_report_snapshot(few: render.Report, snapshot: SnapshotAssertion) -> None:
    """
    report.json of the chosen cases; its coverage keeps the clauses they cite
    (the rest, one row per clause of the registry, is a property below).
    """
    document = json.loads(render.to_json(few))
    document["coverage"] = [row for row in document["coverage"] if row["scenarios"]]
    assert _mask(document) == snapshot


def test_json_report_properties(sample: loader.Loaded, built: render.Report) -> None:
    """What every case of the wider sample must show, in place of a snapshot of each."""
    text = render.to_json(built)
    document = json.loads(text)
    assert text == json.dumps(document, ensure_ascii=False, sort_keys=True, indent=2) + "\n"
    assert document["version"] == render.REPORT_VERSION
    seam_of = {s.id: s.seam.value for s in sample.scenarios}
    cases = document["cases"]
    assert [(c["scenario"], c["target"]) for c in cases] == [
        (i, "reference-inproc") for i in sorted(seam_of)
    ]
    for case in cases:
        assert case["seam"] == seam_of[case["scenario"]]
        assert (case["status"], case["verdict"], case["mismatches"]) == ("passed", None, [])
        # The outcome is its seam's shape: it reads back as the value it was written from.
        outcome = seams.require(case["seam"]).outcome_from_json(case["outcome"])
        assert outcome.to_json() == case["outcome"]
    counts = Counter(c["status"] for c in cases)
    assert document["summary"] == {
        "reference-inproc": {
            **{status: counts.get(status, 0) for status in STATUSES},
            **dict.fromkeys(render.VERDICTS, 0),
        }
    }
    rows = {row["clause"]: row for row in document["coverage"]}
    assert list(rows) == list(registry())
    for scenario in sample.scenarios:
        for clause in scenario.clauses:
            assert scenario.id in rows[clause]["scenarios"]
            assert scenario.id in rows[clause]["passing_scenarios"]
    for row in rows.values():
        assert row["status"] == ("covered" if row["scenarios"] else "not yet covered")
        assert set(row["scenarios"]) <= set(seam_of)


def test_matrix_links_failures_and_counts(sample: loader.Loaded, built: render.Report) -> None:
    report = built
    text = render.matrix(report)
    summary = report.summary()["reference-inproc"]
    assert summary["passed"] == len(sample.scenarios)
    assert f"| reference-inproc | {summary['passed']} | 0 | 0 | 0 |" in text
    for scenario in sample.scenarios:
        assert f"[{scenario.id}](catalogue.md#{scenario.id})" in text


def test_failure_is_linked_with_a_diff(catalogue: loader.Loaded) -> None:
    scenario = next(s for s in catalogue.scenarios if s.id == "codex-happy")
    wrong = replace(scenario, expect=Expectation(value=Json.of({"cause": "other"})))
    result = execute(wrong, targets.create("reference-inproc"))
    assert result.status == "failed"
    report = render.Report.build([wrong], [result], [], Path.cwd())
    assert "[FAIL](failures.md#codex-happy-reference-inproc)" in render.matrix(report)
    failures = render.failures(report)
    assert '<a id="codex-happy-reference-inproc"></a>' in failures
    assert '-   "cause": "other"' in failures
    xml = junit.render(report)
    assert '<failure type="regression" message="outcome differs on value">' in xml
    assert "provider: fake codex" in failures  # what the provider printed


def test_catalogue_has_a_section_per_scenario(sample: loader.Loaded, built: render.Report) -> None:
    text = render.catalogue(built)
    for scenario in sample.scenarios:
        assert f'<a id="{scenario.id}"></a>' in text
        assert scenario.description in text


def test_junit_snapshot(few: render.Report, snapshot: SnapshotAssertion) -> None:
    """junit.xml as CI reads it; the measured times are masked, nothing else."""
    assert _timeless(_mask(junit.render(few))) == snapshot


def test_junit_properties(sample: loader.Loaded, built: render.Report) -> None:
    """A testcase per case of the wider sample, by scenario id, none failing."""
    xml = _timeless(junit.render(built))
    names = re.findall(r'<testcase classname="reference-inproc" name="([^"]+)"', xml)
    assert names == sorted(s.id for s in sample.scenarios)
    assert f'tests="{len(names)}" failures="0" errors="0" skipped="0"' in xml
