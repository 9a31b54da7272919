"""
The JSON-lines target protocol: the reference through it, and adaptors that misbehave.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from harness import targets
from harness.catalogue import loader
from harness.catalogue.scenario import Scenario, Seam
from harness.seams.case import execute
from harness.targets.protocol import ProtocolAdaptor, problems

HERE = Path(__file__).resolve().parent
SERVE = f"{sys.executable} -m harness serve"


def _textual(scenario: Scenario) -> bool:
    """Whether the request survives the protocol: it carries the schema document as text."""
    schema = getattr(scenario.request, "schema", None)
    try:
        if schema is not None:
            schema.decode("utf-8")
    except UnicodeDecodeError:
        return False  # sch-schema-not-utf8: only an in-process adaptor can be handed these bytes
    return True


def test_reference_through_the_protocol_is_identical(catalogue: loader.Loaded) -> None:
    """Every agent-cli scenario: same status, outcome and mismatches as in process."""
    inproc = targets.create("reference-inproc")
    remote = targets.create(f"cmd-check:{SERVE}")
    assert isinstance(remote, ProtocolAdaptor)
    try:
        differing = []
        for scenario in catalogue.scenarios:
            if scenario.seam is not Seam.AGENT_CLI or not _textual(scenario):
                continue
            a = execute(scenario, inproc)
            b = execute(scenario, remote)
            if (a.status, a.outcome, a.mismatches) != (b.status, b.outcome, b.mismatches):
                differing.append(scenario.id)
        assert differing == []
        assert remote.implementation["name"] == "harness-reference"
    finally:
        remote.close()


SUBSET = ["codex-happy", "claude-prose-twice", "cursor-exact-json", "codebuddy-array-document"]


@pytest.mark.parametrize(
    ("mode", "status", "fragment"),
    [
        ("crash", "errored", "adaptor exited with status 3 before answering"),
        ("hang", "errored", "did not answer within"),
        ("wrong-seq", "errored", "answered seq 43 to seq 2"),
        ("garbage", "errored", "not JSON (malformed JSON: Expecting value at offset 0)"),
        ("invalid-outcome", "errored", "outcome/status: 'fine' is not one of"),
        ("errored", "errored", "adaptor reported an error: no idea"),
        ("skipped", "skipped", "no cursor here"),
    ],
)
def test_one_bad_scenario_does_not_stop_the_run(
    catalogue: loader.Loaded, mode: str, status: str, fragment: str
) -> None:
    by_id = {s.id: s for s in catalogue.scenarios}
    victim = SUBSET[1]
    argv = (sys.executable, str(HERE / "misbehaving_adaptor.py"), f"{mode}:{victim}")
    adaptor = ProtocolAdaptor("bad", argv, check=True, grace=0.5)
    try:
        results = [execute(by_id[i], adaptor) for i in SUBSET]
    finally:
        adaptor.close()
    assert [r.status for r in results] == ["passed", status, "passed", "passed"]
    reason = results[1].reason or ""
    assert fragment in reason
    if status == "errored" and mode != "errored":
        assert f"misbehaving on purpose: {mode}" in reason  # stderr is attached


def test_adaptor_that_cannot_start(catalogue: loader.Loaded) -> None:
    adaptor = ProtocolAdaptor("nothing", ("/nonexistent/adaptor",))
    result = execute(catalogue.scenarios[0], adaptor)
    assert result.status == "errored"
    assert "cannot start /nonexistent/adaptor" in (result.reason or "")


def test_run_messages_never_carry_expectations() -> None:
    schema = problems.__globals__["validators"]()["run"].schema
    assert "expect" not in schema["properties"]
    assert schema["additionalProperties"] is False


def test_protocol_schemas_reject_bad_messages() -> None:
    assert problems("start", {"cmd": "start", "seq": 0, "version": 1}) == []
    assert problems("start", {"cmd": "start", "seq": 0, "version": 2}) != []
    assert problems("ran", {"seq": 1, "outcome": {"status": "ok"}}) == []
    assert problems("ran", {"seq": 1, "outcome": {"status": "ok"}, "extra": 1}) != []
    assert problems("ran", {"seq": 1, "skipped": True}) != []
