"""The canonical outcome: its JSON form, its schema, and comparisons against expectations."""

from __future__ import annotations

import json
from collections.abc import Callable
from contextlib import AbstractContextManager
from importlib import resources
from typing import Any

import jsonschema
import pytest

from harness import targets
from harness.catalogue import loader
from harness.catalogue.outcome import CAUSES, ERROR_KINDS, Diagnostic, Outcome, ProviderCall
from harness.catalogue.scenario import (
    DiagnosticExpectation,
    Expectation,
    Json,
    ProviderExpectation,
    SchemaPoint,
    Seam,
)
from harness.seams.case import execute
from harness.seams.compare import compare, show


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
    assert isinstance(validator.schema, dict)  # jsonschema also allows a bare true/false
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


def test_diagnostics_match_by_keyword_in_any_order() -> None:
    outcome = Outcome.failed(
        "policy_violation",
        "x",
        diagnostics=(
            Diagnostic("", "'fixes' is a required property", "required"),
            Diagnostic("", "Additional properties are not allowed", "additionalProperties"),
        ),
    )
    swapped = (
        DiagnosticExpectation("", keyword="additionalProperties"),
        DiagnosticExpectation("", keyword="required"),
    )
    assert compare(Expectation(diagnostics=swapped), outcome) == ()
    # Each expectation needs a diagnostic of its own: two "required" are not met by one.
    twice = (DiagnosticExpectation("", keyword="required"),) * 2
    assert compare(Expectation(diagnostics=twice), outcome)[0].field == "diagnostics"
    wrong = (DiagnosticExpectation("", keyword="type"), DiagnosticExpectation(""))
    assert compare(Expectation(diagnostics=wrong), outcome)[0].field == "diagnostics"
    # A general expectation must not take the only diagnostic a specific one needs.
    greedy = (DiagnosticExpectation(""), DiagnosticExpectation("", keyword="required"))
    assert compare(Expectation(diagnostics=greedy), outcome) == ()


def test_audit_value_and_stdout_are_compared() -> None:
    outcome = Outcome.failed(
        "policy_violation", "x", audit_value=Json.of({"cause": 42}), stdout="line one\n"
    )
    assert compare(Expectation(audit_value=Json.of({"cause": 42})), outcome) == ()
    [m] = compare(Expectation(audit_value=Json.of({"cause": "42"})), outcome)
    assert (m.field, m.expected) == ("audit_value", show({"cause": "42"}))
    assert compare(Expectation(no_audit_value=True), outcome)[0].field == "audit_value"
    missing = Outcome.failed("policy_violation", "x")
    assert compare(Expectation(audit_value=Json.of(None)), missing)[0].actual == (
        "<no audit value>"
    )
    assert compare(Expectation(stdout_contains=("line one",)), outcome) == ()
    assert compare(Expectation(stdout_contains=("two",)), outcome)[0].field == "stdout"
    assert compare(Expectation(message_match="^x$"), outcome) == ()
    assert compare(Expectation(message_match="^y"), outcome)[0].field == "message"


def test_what_the_cli_received_beyond_equality() -> None:
    call = ProviderCall(
        cli="codex",
        argv=("exec", "--output-schema", "/w/output-schema.json", "Explain."),
        output_format=None,
        schema=Json.of({"properties": {"a/b": {"type": "string"}}, "items": [1, 2]}),
        prompt="Explain.",
    )
    outcome = Outcome.ok(Json.of(1)).observed((call,))

    def mismatches(**want: Any) -> list[str]:
        expect = Expectation(provider=ProviderExpectation(**want))
        return [m.expected for m in compare(expect, outcome)]

    assert mismatches(prompt="Explain.", prompt_match=("^Exp",), argv_match=(r"\.json$",)) == []
    assert mismatches(prompt="Explain") == ['"Explain"']
    assert mismatches(argv_match=("^--json$",)) == ['an argument matches "^--json$"']
    found = (
        SchemaPoint("/properties/a~1b/type", Json.of("string")),
        SchemaPoint("/items/1", Json.of(2)),
        SchemaPoint("/items/01", absent=True),
        SchemaPoint("/$defs", absent=True),
    )
    assert mismatches(schema_at=found) == []
    assert mismatches(schema_at=(SchemaPoint("/items/2", Json.of(None)),)) == [
        'at "/items/2": null'
    ]
    assert mismatches(schema_at=(SchemaPoint("", absent=True),)) == ['at "": <absent>']


def test_a_runaway_pattern_is_stopped_not_waited_for() -> None:
    """
    Validation is bounded (harness.adaptor.validation.bounded): a catastrophically
    backtracking pattern ends with ValidationTimeout instead of hanging the run. No
    scenario can show this (the case errors), so it is held here.
    """
    import threading  # noqa: PLC0415
    import time  # noqa: PLC0415

    import jsonschema as js  # noqa: PLC0415

    from harness.adaptor import validation  # noqa: PLC0415

    validator = js.Draft202012Validator({"type": "string", "pattern": "^(a+)+$"})
    started = time.monotonic()
    with (
        pytest.raises(validation.ValidationTimeout, match=r"longer than 0\.2 s"),
        validation.bounded(0.2),
    ):
        list(validator.iter_errors("a" * 40 + "!"))
    assert time.monotonic() - started < 5
    # The timer is disarmed afterwards and the previous handler is back.
    assert signal_handler_is_default()
    # Off the main thread the block runs unbounded rather than failing to arm a timer.
    ran = []
    worker = threading.Thread(target=lambda: ran.append(_bounded_quick(validation.bounded)))
    worker.start()
    worker.join()
    assert ran == [True]


def signal_handler_is_default() -> bool:
    import signal  # noqa: PLC0415

    return signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0) and signal.getsignal(
        signal.SIGALRM
    ) in (signal.SIG_DFL, signal.default_int_handler, None)


def _bounded_quick(bounded: Callable[[float], AbstractContextManager[None]]) -> bool:
    with bounded(0.01):
        return True
