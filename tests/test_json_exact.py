"""
Verdicts are JSON-exact on every seam: a value that Python's ``==`` calls equal
but whose JSON differs (``true`` for ``1``, ``1.0`` for ``1``, ``0`` for
``false``) fails its scenario.  Each seam is shown a target that corrupts a
value this way, and the comparison must name the field; Python's ``==`` on the
same pair says "equal", which is what the verdicts used to be.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any, cast

import pytest

from harness import seams, targets
from harness.catalogue import loader
from harness.catalogue.outcome import Outcome
from harness.catalogue.scenario import Expectation, Json, Scenario
from harness.seams.case import execute
from harness.seams.compare import json_equal
from harness.seams.model_api.values import ModelApiOutcome
from harness.systems import t3, throng

ROOT = Path(__file__).resolve().parent.parent
KINDS = (
    "decode-json-kinds-codex-text",
    "decode-json-kinds-claude-structured",
    "model-claude-json-kinds",
    "model-codex-json-kinds",
    "throng-json-kinds-data-part",
    "t3-json-kinds-typed-result",
)


@pytest.fixture(scope="module")
def catalogue() -> dict[str, Scenario]:
    loaded = loader.load([ROOT / "scenarios"])
    return {s.id: s for s in loaded.scenarios}


@pytest.mark.parametrize(
    ("want", "got", "same"),
    [
        (1, 1, True),
        (1, True, False),
        (True, 1, False),
        (False, 0, False),
        (0, False, False),
        (1, 1.0, False),
        (1.0, 1, False),
        (1.0, 1.00, True),
        (1e3, 1000.0, True),
        (0.5, 0.5, True),
        (9007199254740993, 9007199254740993, True),
        (9007199254740993, 9007199254740992, False),
        (9007199254740993, 9007199254740992.0, False),
        (None, False, False),
        (None, None, True),
        ("1", 1, False),
        ({"a": 1, "b": [True]}, {"b": [True], "a": 1}, True),
        ({"a": 1}, {"a": True}, False),
        ({"a": 1}, {"a": 1.0}, False),
        ({"a": 1}, {"a": 1, "b": None}, False),
        ([1, 2], [2, 1], False),
        ([{"x": [0]}], [{"x": [False]}], False),
        ([1], (1,), False),
    ],
)
def test_json_equal(want: Any, got: Any, same: bool) -> None:
    assert json_equal(want, got) is same
    assert json_equal(got, want) is same


def test_the_catalogue_pins_the_distinction_on_every_seam(catalogue: dict[str, Scenario]) -> None:
    assert {catalogue[i].seam.value for i in KINDS} == {"agent-cli", "model-api", "service-api"}


@pytest.mark.parametrize("adaptor", ["booleans_as_numbers", "integers_as_floats"])
@pytest.mark.parametrize(
    "scenario", ["decode-json-kinds-codex-text", "decode-json-kinds-claude-structured"]
)
def test_a_lossy_adaptor_fails(catalogue: dict[str, Scenario], scenario: str, adaptor: str) -> None:
    case = catalogue[scenario]
    assert execute(case, targets.create("reference-inproc")).status == "passed"
    result = execute(case, targets.create(f"python:tests.adaptors:{adaptor}"))
    assert result.status == "failed", result
    assert [m.field for m in result.mismatches] == ["value"]
    # What the old verdict used: Python's == calls the corrupted value equal.
    outcome = result.outcome
    assert isinstance(outcome, Outcome), outcome
    assert isinstance(case.expect, Expectation), case.expect
    assert case.expect.value is not None
    assert outcome.value is not None
    assert outcome.value.value == case.expect.value.value


def _coerced(value: Any, scalar: Callable[[Any], Any]) -> Any:
    if isinstance(value, dict):
        return {k: _coerced(v, scalar) for k, v in value.items()}
    if isinstance(value, list):
        return [_coerced(v, scalar) for v in value]
    return scalar(value)


def _bool_as_int(value: Any) -> Any:
    return int(value) if isinstance(value, bool) else value


def _int_as_float(value: Any) -> Any:
    return float(value) if type(value) is int else value


@pytest.mark.parametrize(
    ("scalar", "fields"),
    [
        (_bool_as_int, {"is_error", "structured_output"}),
        (_int_as_float, {"exit_code", "structured_output"}),
    ],
)
def test_a_cli_printing_other_kinds_fails(
    catalogue: dict[str, Scenario], scalar: Callable[[Any], Any], fields: set[str]
) -> None:
    case = catalogue["model-claude-json-kinds"]
    seam = seams.require("model-api")
    result = execute(case, targets.create("reference-inproc"))
    assert result.status == "passed", result.mismatches
    outcome = result.outcome
    assert isinstance(outcome, ModelApiOutcome)
    final = _coerced(outcome.final, scalar)
    bent = replace(outcome, final=final, exit_code=scalar(outcome.exit_code))
    named = {m.field for m in seam.compare(case.expect, bent)}
    assert named == fields
    assert final == outcome.final  # Python's == sees no difference


def _bool_as_int_publication(original: Any) -> Any:
    def publication(*args: Any) -> dict[str, Any]:
        return cast(dict[str, Any], _coerced(original(*args), _bool_as_int))

    return publication


def test_a_service_publishing_other_kinds_fails(
    catalogue: dict[str, Scenario], monkeypatch: pytest.MonkeyPatch
) -> None:
    cases = [catalogue["throng-json-kinds-data-part"], catalogue["t3-json-kinds-typed-result"]]
    reference = targets.create("reference-inproc")
    assert [execute(c, reference).status for c in cases] == ["passed", "passed"]
    monkeypatch.setattr(throng, "publication", _bool_as_int_publication(throng.publication))
    original = t3._Task.status_json

    def status_json(self: t3._Task, task_id: str) -> dict[str, Any]:
        return cast(dict[str, Any], _coerced(original(self, task_id), _bool_as_int))

    monkeypatch.setattr(t3._Task, "status_json", status_json)
    throng_result, t3_result = (execute(c, targets.create("reference-inproc")) for c in cases)
    assert throng_result.status == "failed"
    assert {m.field for m in throng_result.mismatches} == {"artifact.parts"}
    assert t3_result.status == "failed"
    assert "task_status.typedResult" in {m.field for m in t3_result.mismatches}


def test_a_received_schema_of_other_kinds_fails(catalogue: dict[str, Scenario]) -> None:
    """What a fake CLI received is held the same way (``provider.schema``)."""
    case = catalogue["decode-big-integer-native"]
    result = execute(case, targets.create("reference-inproc"))
    assert result.status == "passed"
    outcome = result.outcome
    assert isinstance(outcome, Outcome), outcome
    call = outcome.calls[-1]
    assert call.schema is not None
    bent_schema = _coerced(call.schema.value, _int_as_float)
    bent = replace(outcome, calls=(replace(call, schema=Json.of(bent_schema)),))
    named = [m.field for m in seams.require("agent-cli").compare(case.expect, bent)]
    assert named == ["provider.schema"]
