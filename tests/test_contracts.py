"""
Contract profiles: the reference run as an SDK release reads seed 001 (docs/seed-001.md).

``reference:contract=NAME`` reads agent-cli runs as that release's parsers do;
a scenario whose expectation differs by release says so under ``by_contract``.
The agent-cli catalogue passes on every profile, and a scenario's verdict
differs between them where the releases disagree.
"""

from __future__ import annotations

import re
from dataclasses import fields, replace
from pathlib import Path

import pytest

from harness import seams, targets
from harness.adaptor import claudelike, codex
from harness.catalogue import contracts, loader
from harness.catalogue.loader import Loaded
from harness.catalogue.outcome import Outcome
from harness.catalogue.scenario import Scenario, Seam
from harness.exceptions import BadTargetSpec
from harness.seams.case import execute
from tests.conftest import SCENARIOS
from tests.lintcheck import assert_one_clear_line
from tests.test_lint import GOOD


def test_the_default_reference_follows_the_current_contract() -> None:
    for spec in ("reference", "reference-inproc", "mine=reference"):
        assert targets.contract_of(targets.create(spec)) == contracts.CURRENT.name
    # A target that names no contract is held to each scenario's own expectation.
    assert targets.contract_of(targets.create("cmd:harness serve")) is None


@pytest.mark.parametrize("name", sorted(contracts.CONTRACTS))
def test_a_reference_runs_as_any_profile_on_agent_cli_only(name: str) -> None:
    target = targets.create(f"reference-inproc:contract={name}")
    assert targets.contract_of(target) == name
    assert target.seams == frozenset({Seam.AGENT_CLI})


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("reference:contract=v9", "no contract 'v9' (known: seed-001, b07349b7, e7709de6)"),
        ("reference:contract=", "no contract ''"),
        ("reference:contract=b07349b7,claude=2.1.235", "no contract 'b07349b7,claude=2.1.235'"),
        ("reference:anything", "'anything': give CLI=VERSION"),
    ],
)
def test_a_bad_contract_is_one_line(spec: str, message: str) -> None:
    with pytest.raises(BadTargetSpec) as raised:
        targets.create(spec)
    assert message in str(raised.value)
    assert "\n" not in str(raised.value)


def test_every_profile_names_a_release_and_each_rule_has_code() -> None:
    for contract in contracts.CONTRACTS.values():
        assert contract.name in {contract.release[:8], "seed-001"}, contract.name
        assert contract.codex_text in codex._TEXT
        assert contract.result_text in claudelike._RESULT_TEXT
        assert contract.cursor_text in claudelike._CURSOR_TEXT
        assert contract.cursor_terminal in claudelike._CURSOR_ENDS
        assert set(contract.cursor_shapes.required) <= set(claudelike._REQUIRED)


@pytest.mark.parametrize("name", sorted(contracts.CONTRACTS))
def test_the_agent_cli_catalogue_passes_on_every_profile(catalogue: Loaded, name: str) -> None:
    target = targets.create(f"reference-inproc:contract={name}")
    ran = 0
    for scenario in catalogue.scenarios:
        if scenario.seam is Seam.AGENT_CLI:
            result = execute(scenario, target)
            assert result.status == "passed", (scenario.id, result.mismatches)
            ran += 1
    assert ran > 250


def _scenario(catalogue: Loaded, scenario_id: str) -> Scenario:
    return next(s for s in catalogue.scenarios if s.id == scenario_id)


@pytest.mark.parametrize(
    ("scenario_id", "contract", "verdicts"),
    [
        # The seed-era parser ends a Cursor run on its first result record.
        (
            "cursor-error-subtype-then-success",
            "e7709de6",
            ("ok", None, "execution_error", "malformed_protocol"),
        ),
        # The seed-era parser reads fragment records, run.completed, a success without
        # session_id, a record naming no kind; the documented shapes do not.
        (
            "cursor-assistant-delta-records",
            "e7709de6",
            ("error", "policy_violation", "ok", None),
        ),
        (
            "cursor-run-completed-is-no-terminal",
            "e7709de6",
            ("error", "execution_error", "ok", None),
        ),
        (
            "cursor-success-without-session-id",
            "e7709de6",
            ("error", "execution_error", "ok", None),
        ),
        (
            "cursor-record-without-kind",
            "e7709de6",
            ("error", "execution_error", "ok", None),
        ),
        # The seed-era parser reads no subtype: a result of another one is a success.
        (
            "cursor-error-subtype-not-terminal",
            "e7709de6",
            ("error", "execution_error", "ok", None),
        ),
        # The v1 Codex parser keeps the last message: two JSON messages are one value.
        (
            "decode-prompt-validation-joined-messages",
            "b07349b7",
            ("error", "policy_violation", "ok", None),
        ),
    ],
)
def test_a_verdict_differs_by_contract(
    catalogue: Loaded, scenario_id: str, contract: str, verdicts: tuple[str | None, ...]
) -> None:
    scenario = _scenario(catalogue, scenario_id)
    default = execute(scenario, targets.create("reference-inproc"))
    other = execute(scenario, targets.create(f"reference-inproc:contract={contract}"))
    assert default.status == other.status == "passed"
    assert isinstance(default.outcome, Outcome)
    assert isinstance(other.outcome, Outcome)
    shown = (
        default.outcome.status,
        default.outcome.error or default.outcome.cause,
        other.outcome.error or other.outcome.status,
        other.outcome.cause,
    )
    assert shown == verdicts
    # Each outcome fails the other contract's expectation: the profile decides the verdict.
    compare = seams.require("agent-cli").compare
    assert compare(scenario.expectation_for("reference", {}, contract), default.outcome)
    assert compare(scenario.expectation_for("reference", {}, None), other.outcome)


_RULE = "by_contract:\n  {name}:\n    because: the release reads it otherwise.\n    {body}\n"


@pytest.mark.parametrize(
    ("name", "body", "line", "field", "fragment"),
    [
        ("v9", "expect: {status: ok}", 16, "by_contract.v9", "no contract profile 'v9'"),
        ("seed-001", "expect: {status: ok}", 16, "by_contract.seed-001", "other than the default"),
        (
            "b07349b7",
            "unchecked: [colour]",
            18,
            "by_contract.b07349b7.unchecked",
            "'colour' is no field of expect",
        ),
        (
            "b07349b7",
            "expect: {stauts: ok}",
            18,
            "by_contract.b07349b7.expect.stauts",
            "did you mean 'status'",
        ),
    ],
)
def test_a_bad_contract_rule_is_one_clear_line(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    name: str,
    body: str,
    line: int,
    field: str,
    fragment: str,
) -> None:
    document = GOOD + _RULE.format(name=name, body=body)
    assert_one_clear_line(tmp_path, capsys, document, line, field, fragment)


def test_only_agent_cli_scenarios_have_contract_rules(tmp_path: Path) -> None:
    model = (SCENARIOS / "model-api/claude/400-structured-outputs.yaml").read_text()
    assert re.search(r"^seam: model-api$", model, re.MULTILINE)
    path = tmp_path / "model.yaml"
    path.write_text(model + "by_contract: {b07349b7: {because: x, unchecked: [status]}}\n")
    loaded = loader.load([path])
    assert len(loaded.problems) == 1
    assert "by_contract" in str(loaded.problems[0])


#: The scenarios that judge each of the seed-era Cursor shapes (`contracts.RecordShapes`):
#: with the documented value in its place, the e7709de6 profile fails each of them.
_SHAPE_GUARDS = {
    "kind_keys": {"cursor-kind-under-event", "cursor-kind-under-kind"},
    "kindless_malformed": {"cursor-record-without-kind"},
    "assistant": {"cursor-assistant-kind-alias"},
    "delta": {"cursor-assistant-delta-records", "cursor-delta-records-then-a-message"},
    "top_level_text": {
        "cursor-top-level-content",
        "cursor-top-level-text",
        "cursor-assistant-message-not-object",
        "cursor-assistant-without-content",
    },
    "results": {"cursor-run-completed-is-no-terminal"},
    "failures": {"cursor-run-failed-is-no-terminal"},
    "success_subtype": {
        "cursor-error-subtype-not-terminal",
        "cursor-error-subtype-result-is-not-text",
    },
    "required": {
        "cursor-success-without-session-id",
        "cursor-success-with-empty-session-id",
        "cursor-run-completed-is-no-terminal",
    },
}


def test_the_seed_era_profile_reads_cursor_s_older_shapes() -> None:
    assert contracts.get("e7709de6").cursor_shapes is contracts.SEED_ERA_CURSOR
    for name in ("seed-001", "b07349b7"):
        assert contracts.get(name).cursor_shapes is contracts.DOCUMENTED
    assert set(_SHAPE_GUARDS) == {f.name for f in fields(contracts.RecordShapes)}


@pytest.mark.parametrize("field", sorted(_SHAPE_GUARDS))
def test_each_older_cursor_shape_is_judged(
    catalogue: Loaded, monkeypatch: pytest.MonkeyPatch, field: str
) -> None:
    """
    Each shape rule of the e7709de6 profile differs from the documented one, and
    with the documented value in its place the profile fails the scenarios that
    judge it: a rule dropped from the table is seen.
    """
    documented = getattr(contracts.DOCUMENTED, field)
    assert getattr(contracts.SEED_ERA_CURSOR, field) != documented
    profile = contracts.get("e7709de6")
    shapes = replace(contracts.SEED_ERA_CURSOR, **{field: documented})
    monkeypatch.setitem(contracts.CONTRACTS, "e7709de6", replace(profile, cursor_shapes=shapes))
    target = targets.create("reference-inproc:contract=e7709de6")
    for scenario_id in sorted(_SHAPE_GUARDS[field]):
        result = execute(_scenario(catalogue, scenario_id), target)
        assert result.status == "failed", (field, scenario_id)
