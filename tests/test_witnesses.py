"""
No rule without a witness: every unit test of a reference model of a real CLI names
what shows the same behaviour on the binary itself.

The reference models of Claude Code and ``codex exec`` (`harness.systems.claude`,
`harness.systems.codex`) are unit-tested in process, where only the model answers.
A rule pinned there alone could be the model's invention, so `WITNESSES` gives each
such test its witness on the pinned binary:

- `Real`: model-api scenarios of the same CLI that the `real` target runs (not
  skipped by their own rules, the same expectation on `reference` and `real`);
  tests/test_differential.py runs each on both and compares what a faithful model
  must reproduce, every request's conversation included.
- `Captures`: every capture scenario of the CLI (the captures are the binary's runs).
- `Probe`: a test that runs the binary and shows it cannot be put in the state
  offline (a feature gate, remote configuration), with an `Oracle` where the
  binary's own routine can be run under Node instead (tests/oracles/).
- `Machinery`: the test pins the harness around the model (its validator
  worker's lifecycle, a mutant of the model), not a rule of the CLI; the reason
  says which.

The tests are collected by reading the test modules: every test function that
reaches a name imported from those packages, directly or through a helper of its
module.  A new one without an entry fails here, as does an entry naming a test
that no longer exists; and every skip reason of the `real` target names its probe.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import cast

import pytest

from harness.catalogue import loader
from harness.catalogue.scenario import Scenario, Seam
from harness.seams.model_api.values import ModelApiRequest
from tests import test_offline_reach

TESTS = Path(__file__).resolve().parent
SCENARIOS = TESTS.parent / "scenarios"
#: The packages holding reference models of real CLIs, and the CLI each models.
MODELS = {
    "harness.systems.claude": "claude",
    "harness.systems.codex": "codex",
    "harness.systems.codex_exec": "codex",
}


@dataclass(frozen=True)
class Real:
    """Model-api scenarios the `real` target runs that pin the same behaviour."""

    ids: tuple[str, ...]


@dataclass(frozen=True)
class Captures:
    """Every capture scenario of the CLI: the model reproduces the binary's own runs."""


@dataclass(frozen=True)
class Probe:
    """A test that runs the binary and shows the state cannot be reached offline."""

    test: str


@dataclass(frozen=True)
class Oracle:
    """A test that asks the binary's own routine, run under Node, the same questions."""

    test: str


@dataclass(frozen=True)
class Machinery:
    """Not a rule of the CLI: what the test pins instead."""

    why: str


Witness = Real | Captures | Probe | Oracle | Machinery


def real(*ids: str) -> tuple[Witness, ...]:
    return (Real(ids),)


STRICT_GATE = Probe("test_offline_reach.py::test_the_strict_gate_cannot_be_turned_on_offline")
STRICT_ORACLE = Oracle("test_strict.py::test_derivation_agrees_with_the_binary_routine")
ENV_ORACLE = Oracle("test_validator.py::test_environment_integers_agree_with_the_binary_routine")
ATTEMPTS = (
    "model-claude-attempts-leading-digits",
    "model-claude-attempts-fraction",
    "model-claude-attempts-underscore",
    "model-claude-attempts-exponent",
    "model-claude-garbage-attempts",
    "model-claude-zero-attempts",
)
VALIDATION = (
    "model-claude-all-errors-listed",
    "model-claude-ajv-order-and-details",
    "model-claude-nested-errors-listed",
    "model-claude-error-details",
    "model-claude-long-error-capped",
    "model-claude-unicode-property-pattern",
    "model-claude-schema-format-email",
    "model-claude-schema-bad-pattern",
    "model-claude-schema-async",
    "model-claude-schema-invalid",
    "model-claude-schema-unknown-keyword",
    "model-claude-schema-keyword-type",
    "model-claude-schema-other-draft",
    "model-claude-schema-duplicate-enum",
    "model-claude-schema-nullable-needs-type",
    "model-claude-schema-nullable-with-type",
)

#: Each unit test of a reference model (``module::function``), with its witnesses.
WITNESSES: dict[str, tuple[Witness, ...]] = {
    # -- what the CLIs print beside their JSON (issue 24) --------------------------------------
    "test_scenario_keys.py::test_claude_text_output_prints_success_with_a_line_end": real(
        "model-claude-text-structured-output",
        "model-claude-text-retries-exhausted",
        "model-claude-max-turns-text",
        "model-claude-report-text-output-blank",
    ),
    "test_scenario_keys.py::test_codex_text_output_is_the_last_message": real(
        "model-codex-text-output",
        "model-codex-text-output-failed",
        "model-codex-text-output-failed-after-an-answer",
    ),
    "test_scenario_keys.py::test_codex_text_output_prints_a_reasoning_summary_as_it_is": real(
        "model-codex-text-output-reasoning"
    ),
    "test_scenario_keys.py::test_codex_text_output_puts_each_log_line_where_it_happened": real(
        "model-codex-text-output-log-in-order", "model-codex-text-output-no-turn"
    ),
    "test_scenario_keys.py::test_codex_last_message_file_is_the_answer_or_empty": real(
        "model-codex-output-last-message",
        "model-codex-output-last-message-failed",
        "model-codex-output-last-message-no-turn",
    ),
    # -- time, validator set-up and line ends --------------------------------------------------
    "test_deadlines.py::test_the_reference_model_counts_its_back_offs_as_its_own_time": real(
        "model-claude-hung-api"
    ),
    # -- a compaction's summary requests (B-48) ---------------------------------------------
    "test_compaction.py::test_a_summary_request_keeps_the_conversation_before_the_last_answer": (
        real(
            "model-claude-413-summary-requests-fail",
            "model-claude-413-summary-requests-fail-resumed",
        )
    ),
    "test_compaction.py::test_without_prompt_caching_no_message_carries_the_mark": real(
        "model-claude-413-summary-requests-fail"
    ),
    "test_compaction.py::test_a_conversation_with_one_answer_has_nothing_to_summarise": real(
        "model-claude-413-too-few-groups"
    ),
    "test_compaction.py::test_known_instructions_are_shown_by_a_placeholder": real(
        "model-claude-413-summary-requests-fail"
    ),
    "test_doctor.py::test_the_ajv_worker_missing_names_its_folder": (
        Machinery("the validator worker's missing-package message: no rule of the CLI"),
    ),
    "test_doctor.py::test_the_validator_points_at_doctor": (
        Machinery("the validator worker's missing-package message: no rule of the CLI"),
    ),
    "test_line_ends.py::test_event_stream_readers_end_lines_at_cr_lf_crlf_only": real(
        "model-claude-line-separators-stream", "model-codex-line-separators"
    ),
    "test_line_ends.py::test_json_line_readers_keep_the_line_whole": real(
        "model-claude-line-separators-json"
    ),
    "test_line_ends.py::test_a_data_line_that_is_not_json_is_skipped_as_codex_does": (
        Machinery(
            "the reader's robustness to an event no script step can write (the fake model API "
            "sends JSON data only): read in codex-rs's stream reader, shown by no offline run"
        ),
    ),
    # -- the model cards: notes and refusals per model ---------------------------------------
    "test_model_cards.py::test_a_known_model_has_its_own_card": real(
        "model-claude-token-note-in-the-result", "model-claude-token-note-as-a-system-message"
    ),
    "test_model_cards.py::test_a_model_the_release_does_not_know_takes_the_longest_stem": real(
        "model-claude-refusal-wording-dated-id"
    ),
    "test_model_cards.py::test_a_refusal_is_worded_as_the_models_card_says": real(
        "model-claude-refusal-wording-brief",
        "model-claude-refusal-wording-article",
        "model-claude-refusal-wording-unknown-model",
    ),
    "test_model_cards.py::test_an_id_extending_a_known_one_is_recognised": real(
        "model-claude-refusal-wording-dated-id", "model-claude-refusal-wording-unknown-model"
    ),
    "test_model_cards.py::"
    "test_a_note_placed_in_a_result_joins_the_last_result_before_it_else_stands_alone": real(
        "model-claude-token-note-in-resumed-result",
        "model-claude-tool-search-note-in-resumed-result",
        "model-claude-token-note-before-resumed-prompt",
        "model-claude-tool-search-note-before-reminder",
    ),
    "test_model_cards.py::test_every_card_is_a_model_the_pinned_release_knows": (
        Machinery("the cards' table against the profile's known ids: no rule of the CLI"),
    ),
    "test_model_cards.py::"
    "test_the_announcement_names_the_model_and_its_cutoff_when_it_has_one": real(
        "model-claude-fallback-names-the-model", "model-claude-fallback-to-an-unknown-model"
    ),
    # -- the loop against every capture, and rules beyond them -------------------------------
    "test_ref_models.py::test_reference_claude_matches_capture": (Captures(),),
    "test_ref_models.py::test_reference_codex_matches_capture": (Captures(),),
    "test_ref_models.py::test_overload_without_fallback_gives_up_after_three": real(
        "model-claude-overloaded-no-fallback"
    ),
    "test_ref_models.py::test_server_errors_are_retried_as_often_as_the_environment_says": real(
        "model-claude-server-error-exhausts-retries"
    ),
    "test_ref_models.py::test_a_server_error_is_retried_then_the_answer_counts": real(
        "model-claude-server-error-retried"
    ),
    "test_ref_models.py::test_a_400_is_sent_six_times_in_all_without_api_retry_lines": real(
        "model-claude-400-cascade"
    ),
    "test_ref_models.py::test_only_some_models_hear_that_the_user_has_not_heard_from_them": real(
        "model-claude-quiet-notice-not-for-sonnet-4-5", "model-claude-attempts-exponent"
    ),
    "test_ref_models.py::test_a_prompt_too_long_ends_the_first_exchange_at_once": real(
        "model-claude-prompt-too-long"
    ),
    "test_ref_models.py::test_the_words_of_a_prompt_too_long_say_where_the_bulk_is": real(
        "model-claude-prompt-too-long",
        "model-claude-prompt-too-long-own-content",
        "model-claude-input-too-long",
        "model-claude-prompt-too-long-413",
    ),
    "test_ref_models.py::test_a_prompt_too_long_is_told_by_its_words_and_status": real(
        "model-claude-400-cascade", "model-claude-prompt-too-long"
    ),
    "test_ref_models.py::"
    "test_the_estimate_of_a_text_is_its_utf16_length_over_four_rounded_half_up": real(
        "model-claude-prompt-too-long-estimate", "model-claude-prompt-too-long-own-content"
    ),
    "test_ref_models.py::test_an_unusable_attempt_budget_falls_back_to_five": real(
        "model-claude-garbage-attempts"
    ),
    # The differential compares the second request's conversation: no enforce reminder.
    "test_ref_models.py::test_a_tool_call_the_rules_refuse_is_answered_and_the_loop_goes_on": real(
        "model-claude-bash-denied"
    ),
    # The exhausting case's lines race the end of the binary's run (unchecked from
    # 2.1.282); the order case puts the same refusal line before the same results.
    "test_ref_models.py::"
    "test_a_refusal_that_spends_the_last_attempt_prints_its_line_then_the_exhaustion": real(
        "model-claude-refusal-rejected-order", "model-claude-refusal-rejected-exhausts"
    ),
    "test_ref_models.py::test_codex_answers_a_call_to_a_tool_it_lacks_and_asks_again": real(
        "model-codex-shell-call-unsupported", "model-codex-unknown-tool-call"
    ),
    "test_ref_models.py::test_codex_that_is_never_answered_is_killed_as_by_its_timeout": (
        Machinery(
            "the model's bound on a model that calls in every answer, which the binary asks "
            "until its caller's timeout kills it (probed: 247 requests in 15 s)"
        ),
    ),
    "test_ref_models.py::test_codex_words_some_errors_by_their_kind": real(
        "model-codex-context-length-400",
        "model-codex-rate-limit-failed",
        "model-codex-slow-down-failed",
        "model-codex-server-error-failed",
        "model-codex-invalid-prompt-failed",
        "model-codex-quota-429",
        "model-codex-plan-429",
        "model-codex-plan-code-429",
    ),
    "test_ref_models.py::test_codex_refuses_a_schema_that_is_not_json": real(
        "model-codex-schema-not-json", "model-codex-schema-cut-off"
    ),
    # -- the strict wire schema: behind a remote gate, so the binary's routine answers -----
    "test_strict.py::test_a_schema_in_the_subset_is_derived_with_every_object_closed": (
        STRICT_GATE,
        STRICT_ORACLE,
    ),
    "test_strict.py::test_anyof_with_only_annotations_beside_it_is_kept": (
        STRICT_GATE,
        STRICT_ORACLE,
    ),
    "test_strict.py::test_a_list_of_scalar_types_is_kept": (STRICT_GATE, STRICT_ORACLE),
    "test_strict.py::test_a_schema_outside_the_subset_falls_back_with_its_reason": (
        STRICT_GATE,
        STRICT_ORACLE,
    ),
    "test_strict.py::test_derivation_agrees_with_the_binary_routine": (STRICT_GATE, STRICT_ORACLE),
    # -- validation --------------------------------------------------------------------------
    "test_validator.py::test_every_recorded_answer_of_the_binary": real(*VALIDATION),
    "test_validator.py::test_the_input_is_rewritten_before_it_is_judged": real(
        "model-claude-strings-parsed-for-the-schema",
        "model-claude-escaped-unicode-decoded",
        "model-claude-spread-input-is-the-object",
        "model-claude-tool-input-array",
    ),
    "test_validator.py::test_numbers_are_javascript_numbers": real(
        "model-claude-schema-numbers-on-the-wire", "model-claude-numbers-are-javascript-numbers"
    ),
    "test_validator.py::test_strict_mode_warnings_are_kept_for_stderr": real(
        "model-claude-schema-strict-warning"
    ),
    "test_validator.py::test_environment_integers_are_read_as_the_binary_reads_them": (
        Real(ATTEMPTS),
        ENV_ORACLE,
    ),
    "test_validator.py::test_environment_integers_agree_with_the_binary_routine": (
        Real(ATTEMPTS),
        ENV_ORACLE,
    ),
    "test_validator.py::test_no_reference_is_ever_fetched": real("model-claude-schema-remote-ref"),
    "test_validator.py::test_a_catastrophic_pattern_is_stopped_by_the_watchdog": (
        Machinery(
            "the harness's bound on its Node worker: the binary gives up on such a pattern "
            "after its own backtracking budget, which Node lacks, so the case is errored "
            "(a documented divergence, docs/model-api.md)"
        ),
    ),
    "test_validator.py::test_a_missing_package_names_the_command": (
        Machinery("the message when the validator's package is not installed"),
    ),
    # -- the version profiles' tables (each row's behaviour is witnessed by the
    # -- by_version rules run on that release's real binary, docs/versions.md) ----------
    "test_versions.py::test_every_behaviour_covers_every_version_once": (
        Machinery("the shape of the profile tables: ranges with no gap and no overlap"),
    ),
    "test_versions.py::test_a_profile_has_a_field_per_behaviour": (
        Machinery("the shape of the profile tables: one field per behaviour"),
    ),
    "test_versions.py::test_every_row_cites_its_evidence": (
        Machinery("every profile row names its probe in docs/versions.md"),
    ),
    "test_versions.py::test_the_pinned_profile_is_the_pinned_model": (
        Machinery(
            "the pinned release's profile is the model the catalogue runs on `real` at the "
            "pin; other releases' values are checked by their by_version rules on those "
            "releases' binaries"
        ),
    ),
    "test_versions.py::test_the_words_and_models_of_older_releases": real(
        "model-claude-bash-denied",
        "model-claude-bash-chmod-ln",
        "model-claude-unknown-tool-hints",
        "model-claude-model-env-alias",
        "model-claude-model-env-known-long-context",
        "model-claude-bash-environment",
        "model-claude-bash-cd",
        "model-claude-attempts-exponent",
        "model-claude-bash-input-invalid",
    ),
    # -- tests that use a model as the subject of other machinery -------------------------
    "test_expectations.py::test_a_cli_that_ends_a_broken_stream_at_once_fails": (
        Machinery("a mutant of the loop, to show the catalogue's expectations catch it"),
    ),
    "test_mutants.py::test_install_leaves_other_constants_of_the_same_value_alone": (
        Machinery("the mutation runner, using the loop's constants as its subject"),
    ),
}

#: Why the `real` target skips a case (the start of `ModelApiRequest.beyond_offline`'s
#: words), each with the probe that shows the binary cannot be put there offline.
SKIP_PROBES = {
    "needs Claude Code's remote feature gate": STRICT_GATE,
    "needs a refusal-fallback model": Probe(
        "test_offline_reach.py::test_a_refusal_has_no_fallback_model_offline"
    ),
    "the schema argument is": Probe(
        "test_offline_reach.py::test_a_schema_argument_at_the_argv_limit_cannot_start_the_binary"
    ),
}


# -- collecting the unit tests of the models --------------------------------------------------


def _model_names(tree: ast.Module) -> dict[str, str]:
    """Names the module binds to the model packages, each with the CLI it models."""
    out: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module is not None:
            modules = [f"{node.module}.{a.name}" for a in node.names]
            for alias, module in zip(node.names, modules, strict=True):
                cli = _cli_of(module)
                if cli is not None:
                    out[alias.asname or alias.name] = cli
        elif isinstance(node, ast.Import):
            for alias in node.names:
                cli = _cli_of(alias.name)
                if cli is not None:
                    out[alias.asname or alias.name.partition(".")[0]] = cli
    return out


def _cli_of(module: str) -> str | None:
    for package, cli in MODELS.items():
        if module == package or module.startswith(package + "."):
            return cli
    return None


def _names_used(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _functions(tree: ast.Module) -> Iterator[tuple[str, ast.FunctionDef]]:
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            yield node.name, node
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, ast.FunctionDef):
                    yield f"{node.name}::{item.name}", item


def _imported_by_name(function: ast.FunctionDef) -> set[str]:
    """The CLIs whose model the function imports by name (``importlib.import_module``)."""
    out: set[str] = set()
    for call in ast.walk(function):
        if not isinstance(call, ast.Call) or not call.args:
            continue
        func, first = call.func, call.args[0]
        named = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
        if named == "import_module" and isinstance(first, ast.Constant):
            cli = _cli_of(str(first.value))
            if cli is not None:
                out.add(cli)
    return out


def _reach(
    tree: ast.Module, roots: dict[str, str], *, by_name: bool = False
) -> dict[str, set[str]]:
    """
    For each function of the module, the labels of the ``roots`` it reaches: a root
    name it uses or imports, or a helper of its module that does (to a fixpoint);
    with ``by_name``, a model package imported by its dotted name too.
    """
    functions = dict(_functions(tree))
    reach = {
        name: {roots[n] for n in _names_used(f) if n in roots}
        | {roots[a.name] for a in ast.walk(f) if isinstance(a, ast.alias) and a.name in roots}
        | (_imported_by_name(f) if by_name else set())
        for name, f in functions.items()
    }
    changed = True
    while changed:
        changed = False
        for name, f in functions.items():
            for used in _names_used(f) & set(functions):
                if not reach[used] <= reach[name]:
                    reach[name] |= reach[used]
                    changed = True
    return reach


def model_tests() -> dict[str, set[str]]:
    """Every test function that reaches a reference model of a real CLI, with the CLIs."""
    found: dict[str, set[str]] = {}
    for path in sorted(TESTS.glob("test_*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        names = _model_names(tree)
        for name, clis in _reach(tree, names, by_name=True).items():
            if clis and name.rpartition("::")[2].startswith("test_"):
                found[f"{path.name}::{name}"] = clis
    return found


def _consults_the_binary(test: str) -> bool:
    """Whether the named test runs the pinned binary (or its routine, read out of it)."""
    module, _, name = test.partition("::")
    path = TESTS / module
    assert path.is_file(), f"no test module {module}"
    reach = _reach(ast.parse(path.read_text(encoding="utf-8")), {"real_binary": "binary"})
    assert name in reach, f"no test {test}"
    return reach[name] == {"binary"}


MODEL_TESTS = model_tests()


@pytest.fixture(scope="module")
def model_api() -> dict[str, Scenario]:
    loaded = loader.load([SCENARIOS / "model-api"])
    assert loaded.problems == ()
    return {s.id: s for s in loaded.scenarios if s.seam is Seam.MODEL_API}


# -- the rule ----------------------------------------------------------------------------------


def test_the_collection_finds_the_model_tests() -> None:
    # A collector that found nothing would make every check below vacuous.
    modules = {test.partition("::")[0] for test in MODEL_TESTS}
    assert {"test_ref_models.py", "test_strict.py", "test_validator.py"} <= modules
    assert {"claude", "codex"} <= set().union(*MODEL_TESTS.values())
    assert len(MODEL_TESTS) >= 20


def test_every_model_test_has_a_witness_and_every_entry_a_test() -> None:
    assert sorted(set(MODEL_TESTS) - set(WITNESSES)) == [], "unit tests without a witness"
    assert sorted(set(WITNESSES) - set(MODEL_TESTS)) == [], "entries for no model test"


@pytest.mark.parametrize("test", sorted(WITNESSES))
def test_the_witness_is_of_a_kind_that_shows_the_binary(test: str) -> None:
    kinds = {type(w) for w in WITNESSES[test]}
    if Machinery in kinds:
        assert kinds == {Machinery}, "machinery stands alone"
        return
    # An oracle answers for a state the binary cannot be put in; the probe says so.
    assert kinds & {Real, Captures, Probe}, "no scenario on `real` and no probe"
    if Oracle in kinds and not kinds & {Real, Captures}:
        assert Probe in kinds


@pytest.mark.parametrize("test", sorted(WITNESSES))
def test_each_scenario_witness_runs_on_the_real_target(
    test: str, model_api: dict[str, Scenario]
) -> None:
    clis = MODEL_TESTS.get(test, set())
    for witness in WITNESSES[test]:
        if isinstance(witness, Captures):
            ids: tuple[str, ...] = tuple(
                s.id for s in model_api.values() if s.capture is not None and _cli(s) in clis
            )
            assert ids, f"{test}: no capture scenario of {clis}"
        elif isinstance(witness, Real):
            ids = witness.ids
        else:
            continue
        for scenario_id in ids:
            scenario = model_api.get(scenario_id)
            assert scenario is not None, f"{test}: no model-api scenario {scenario_id}"
            assert _cli(scenario) in clis, f"{scenario_id} runs {_cli(scenario)}, not {clis}"
            request = cast(ModelApiRequest, scenario.request)
            assert request.beyond_offline() is None, f"{scenario_id} skips `real`"
            overrides = {kind for kind, _ in scenario.by_target}
            assert not overrides & {"real", "reference"}, f"{scenario_id}: not one expectation"


def _cli(scenario: Scenario) -> str:
    return cast(ModelApiRequest, scenario.request).cli


@pytest.mark.parametrize("test", sorted(WITNESSES))
def test_each_probe_and_oracle_consults_the_binary(test: str) -> None:
    for witness in WITNESSES[test]:
        if isinstance(witness, Probe | Oracle):
            assert _consults_the_binary(witness.test), f"{witness.test} never runs the binary"


def test_every_skip_of_the_real_target_names_its_probe(model_api: dict[str, Scenario]) -> None:
    skipped = 0
    for scenario in model_api.values():
        reason = cast(ModelApiRequest, scenario.request).beyond_offline()
        if reason is None:
            continue
        skipped += 1
        probes = [p for start, p in SKIP_PROBES.items() if reason.startswith(start)]
        assert len(probes) == 1, f"{scenario.id}: no probe for {reason!r}"
        assert _consults_the_binary(probes[0].test)
        gates = {name for name, on in cast(ModelApiRequest, scenario.request).gates if on}
        assert gates <= {test_offline_reach.GATE}, f"{scenario.id}: gate(s) no probe tried"
    assert skipped >= 1
    for probe in SKIP_PROBES.values():
        assert _consults_the_binary(probe.test)
