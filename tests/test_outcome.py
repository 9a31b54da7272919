"""The canonical outcome: its JSON form, its schema, and comparisons against expectations."""

from __future__ import annotations

import json
from importlib import resources

import jsonschema
import pytest

from harness import targets
from harness.catalogue import loader
from harness.catalogue.outcome import CAUSES, ERROR_KINDS, Diagnostic, Outcome
from harness.catalogue.scenario import DiagnosticExpectation, Expectation, Json, Seam
from harness.seams.case import execute
from harness.seams.compare import compare


@pytest.fixture(scope="module")
def validator() -> jsonschema.Draft202012Validator:
    text = resources.files("harness").joinpath("schemas/outcome.schema.json").read_text()
    schema = json.loads(text)
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def test_every_catalogue_outcome_fits_the_schema_and_round_trips(
    catalogue: loader.Loaded, validator: jsonschema.Draft202012Validator
) -> None:
    target = targets.create("reference-inproc")
    for scenario in catalogue.scenarios:
        if scenario.seam is not Seam.AGENT_CLI:
            continue  # the canonical outcome is agent-cli's (service-api: test_service_api)
        outcome = execute(scenario, target).outcome
        assert outcome is not None
        data = outcome.to_json()
        errors = [e.message for e in validator.iter_errors(data)]
        assert errors == [], scenario.id
        assert Outcome.from_json(json.loads(json.dumps(data))) == outcome


def test_schema_enums_match_the_taxonomy(validator: jsonschema.Draft202012Validator) -> None:
    props = validator.schema["properties"]
    assert set(props["error"]["enum"]) - {None} == set(ERROR_KINDS)
    assert set(props["cause"]["enum"]) - {None} == set(CAUSES)


def test_execution_error_needs_a_cause(validator: jsonschema.Draft202012Validator) -> None:
    bad = Outcome.failed("execution_error", "boom").to_json()
    assert not validator.is_valid(bad)


def test_value_null_differs_from_no_value() -> None:
    null = Outcome.ok(Json.of(None))
    assert compare(Expectation(value=Json.of(None)), null) == ()
    missing = Outcome.failed("decode_error", "nothing")
    [mismatch] = compare(Expectation(value=Json.of(None)), missing)
    assert mismatch.actual == "<no value>"
    assert compare(Expectation(no_value=True), null)[0].field == "value"


def test_diagnostics_compare_by_path_and_message() -> None:
    outcome = Outcome.failed(
        "policy_violation", "x", diagnostics=(Diagnostic("/a", "'a' is bad"), Diagnostic("/b", "b"))
    )
    exact = (DiagnosticExpectation("/a", "'a' is bad"), DiagnosticExpectation("/b"))
    assert compare(Expectation(diagnostics=exact), outcome) == ()
    partial = (DiagnosticExpectation("/b", message_contains="b"),)
    assert compare(Expectation(diagnostics_contain=partial), outcome) == ()
    [m] = compare(Expectation(diagnostics=partial), outcome)
    assert m.field == "diagnostics"
    assert '"path": "/a"' in m.actual


def test_mismatch_render_is_readable() -> None:
    [m] = compare(Expectation(error="policy_violation"), Outcome.ok(Json.of(1)))
    assert m.render() == 'error:\n  expected: "policy_violation"\n  actual:   null'
