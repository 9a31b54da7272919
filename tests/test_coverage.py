"""Clause coverage: the registry matches CONTRACTS.md and the foundation families are covered."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from harness.catalogue import loader
from harness.catalogue.clauses import registry
from harness.reports import render

CONTRACTS = Path(__file__).resolve().parents[2] / "shared" / "CONTRACTS.md"


def test_every_foundation_clause_has_a_scenario(catalogue: loader.Loaded) -> None:
    report = render.Report.build(catalogue.scenarios, (), (), Path.cwd())
    assert report.uncovered_required() == []


def test_foundation_families_are_what_the_coverage_gate_checks() -> None:
    gated = {
        c.id
        for c in registry().values()
        if c.family in render._REQUIRED_FAMILIES and c.seam == "agent-cli"
    }
    assert {
        "SCH-01",
        "SCH-08",
        "NEG-07",
        "PV-05",
        "CDX-08",
        "CLA-05",
        "DEC-04",
        "POL-04",
        "CUR-01",
        "CBY-01",
    } <= gated
    assert "CDX-06" not in gated  # a model-api clause, covered by that seam


def test_the_model_api_clauses_are_gated_too() -> None:
    gated = {
        c.id
        for c in registry().values()
        if c.family in render._REQUIRED_FAMILIES and c.seam in render._GATED_SEAMS
    }
    loop = {c.id for c in registry().values() if c.family == "LOOP"}
    assert len(loop) == 16
    assert loop | {"SCH-09", "SCH-10", "CDX-06"} <= gated


def test_registry_matches_contracts() -> None:
    if not CONTRACTS.exists():
        pytest.fail(f"{CONTRACTS} is missing: the registry cannot be checked against it")
    ids = re.findall(r"^- ([A-Z0-9]+-\d{2}) ", CONTRACTS.read_text(), flags=re.MULTILINE)
    assert ids, "no clause IDs found in CONTRACTS.md"
    assert set(ids) == set(registry())
