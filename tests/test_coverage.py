"""
The clause registry: well formed, documented, its sources at hand; the foundation families covered.

The registry (harness/catalogue/clauses.yaml) is the project's own list of
contract clauses.  docs/clauses.md is that list as a reader sees it, and must
be what the registry renders; a clause learnt from a real CLI's capture names
a capture the repository holds (tests/data/captures/).
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

from harness.catalogue import clauses, loader
from harness.catalogue.clauses import registry
from harness.catalogue.scenario import Seam
from harness.reports import render
from tests import captures

ROOT = Path(__file__).resolve().parent.parent
#: How a clause's source reads: a seed document, a research note, or captures by name.
SOURCE = re.compile(
    r"seed (?P<seed>\d{3})|research (?P<note>[a-z-]+)|capture (?P<capture>[a-z0-9*-]+)"
)


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


def test_the_registry_is_well_formed() -> None:
    """What the loader's dict would hide: a duplicate ID, a stray family, an unknown seam."""
    raw = clauses._raw()
    ids = [entry["id"] for entry in raw["clauses"]]
    assert [i for i, n in Counter(ids).items() if n > 1] == []
    assert len(ids) >= 76  # the registry as first written; clauses are added, never removed
    bad = [i for i in ids if not re.fullmatch(r"[A-Z][A-Z0-9]*-\d{2}", i)]
    assert bad == []
    used = {c.family for c in registry().values()}
    assert used == set(clauses.families()), "a family without clauses, or clauses without one"
    seams = {seam.value for seam in Seam}
    assert [c.id for c in registry().values() if c.seam not in seams] == []
    assert [c.id for c in registry().values() if not c.summary.strip()] == []


def test_each_source_is_named_the_one_way_and_each_capture_is_at_hand() -> None:
    held = set(captures.names())
    for clause in registry().values():
        found = SOURCE.fullmatch(clause.source)
        assert found is not None, f"{clause.id}: source {clause.source!r}"
        pattern = found["capture"]
        if pattern is not None:
            matched = [n for n in held if Path(n).match(pattern)]
            assert matched, f"{clause.id}: no capture {pattern!r} in {captures.CAPTURES}"


def test_the_clause_page_is_the_registry() -> None:
    """docs/clauses.md lists every registered clause, as the registry renders it."""
    page = (ROOT / clauses.INVENTORY).read_text(encoding="utf-8")
    stale = f"{clauses.INVENTORY} is stale: write it again (the command is at its top)"
    assert page == clauses.inventory(), stale
    listed = re.findall(r"^\| ([A-Z][A-Z0-9]*-\d{2}) \|", page, flags=re.MULTILINE)
    assert listed == list(registry())


def test_every_scenario_clause_is_registered(catalogue: loader.Loaded) -> None:
    """The loader rejects an unknown ID; the bundled catalogue loads without one."""
    cited = {c for s in catalogue.scenarios for c in s.clauses}
    assert cited - set(registry()) == set()
    assert not [p for p in catalogue.problems if "unknown clause" in str(p)]
