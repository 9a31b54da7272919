"""
Reports are deterministic, complete, and the JSON report is snapshot-gated.
"""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from syrupy.assertion import SnapshotAssertion

from harness import targets
from harness.catalogue import loader
from harness.catalogue.scenario import Expectation, Json
from harness.reports import junit, render
from harness.seams import RunOptions
from harness.seams.case import execute
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


def test_json_report_snapshot(built: render.Report, snapshot: SnapshotAssertion) -> None:
    document = json.loads(render.to_json(built))
    assert _mask(document) == snapshot


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


def test_junit_snapshot(built: render.Report, snapshot: SnapshotAssertion) -> None:
    """junit.xml as CI reads it; the measured times are masked, nothing else."""
    assert _timeless(_mask(junit.render(built))) == snapshot
