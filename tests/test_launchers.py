"""
The in-process replay and real subprocesses give identical outcomes.

The in-process path exists for speed; it is only allowed to exist because
this test runs the whole agent-cli catalogue both ways and compares every
field of every outcome, launch records included.
"""

from __future__ import annotations

from harness import targets
from harness.catalogue import loader
from harness.catalogue.scenario import Expectation, Seam
from harness.seams.case import execute


def test_whole_catalogue_identical(catalogue: loader.Loaded) -> None:
    inproc = targets.create("reference-inproc")
    real = targets.create("reference")
    scenarios = [s for s in catalogue.scenarios if s.seam is Seam.AGENT_CLI]
    assert len(scenarios) >= 60
    differing = []
    for scenario in scenarios:
        a = execute(scenario, inproc)
        b = execute(scenario, real)
        if (a.status, a.outcome, a.mismatches) != (b.status, b.outcome, b.mismatches):
            differing.append((scenario.id, a.outcome, b.outcome))
    assert differing == []


def test_some_scenarios_really_exercise_processes(catalogue: loader.Loaded) -> None:
    """Signals, hangs and exit codes are in the catalogue, so the comparison means something."""
    causes = set()
    for scenario in catalogue.scenarios:
        if scenario.seam is not Seam.AGENT_CLI:
            continue
        assert isinstance(scenario.expect, Expectation), scenario.id
        if scenario.expect.cause:
            causes.add(scenario.expect.cause)
    assert {"signal", "timeout", "nonzero_exit", "malformed_protocol"} <= causes
