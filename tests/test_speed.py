"""
What makes the command fast must not change what it says.

- The catalogue's schema check asks jsonschema-rs first and the Python
  validator only for an invalid document: the two must agree on every
  document, valid (the catalogue) or not (the lint tables).
- The reference models meet a fake model API that holds its answer back past
  their timeout with virtual time: the timeout, at once, never a real wait.
- ``harness run`` loads its own pytest plugins only, and leaves the
  environment as it found it.

Timings themselves are figures (`make bench`), never asserted here.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import pytest

from harness import net
from harness.catalogue import loader, yamlpos
from harness.cli import main
from harness.systems.inprocess import transport
from providers_fake import api
from tests import test_lint, test_service_lint

ROOT = Path(__file__).resolve().parent.parent


def _documents() -> list[tuple[str, Any]]:
    """(definition, document) of every catalogue scenario and every lint-table one."""
    found: list[tuple[str, Any]] = []
    for file, _ in loader.scenario_files([ROOT / "scenarios"]):
        document = yamlpos.read(file).value
        found.append(("family" if "cases" in document else "scenario", document))
    for case in [*test_lint.CASES, *test_service_lint.CASES]:
        try:
            document = yamlpos.load(case[1]).value
        except yamlpos.YAMLProblem:
            continue  # never reaches the schema
        found.append(("scenario", document))
    return found


def test_the_quick_and_the_full_schema_check_agree() -> None:
    full = {
        "scenario": loader._validator(),
        "family": loader._family_validator(),
    }
    documents = _documents()
    invalid = 0
    for definition, document in documents:
        quick = loader._quick(definition).is_valid(document)
        assert quick == full[definition].is_valid(document), document
        invalid += not quick
    assert invalid >= 10  # the tables did reach the schema with invalid documents


def test_a_valid_document_never_reaches_the_python_validator(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def refuse(*args: object) -> None:
        raise AssertionError("the slow validator ran on a valid document")

    monkeypatch.setattr(type(loader._validator()), "iter_errors", refuse)
    loaded = loader.load([ROOT / "scenarios" / "agent-cli" / "codex"])
    assert loaded.scenarios
    assert not loaded.problems


def test_a_reply_held_past_the_timeout_times_out_at_once_in_virtual_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def no_waiting(seconds: float) -> None:
        raise AssertionError(f"slept {seconds} s")

    monkeypatch.setattr("providers_fake.api.inprocess.time.sleep", no_waiting)
    fake = api.ScriptedModelAPI([api.Answer(texts=("late",), delay=30.0)])
    answers = transport(fake, "https://fake.test", virtual_time=True)
    with net.Client(transport=answers) as client, pytest.raises(net.ReadTimeout):
        client.post("https://fake.test/v1/messages", json={}, timeout=2.0).read()
    assert len(fake.requests) == 1


def test_without_virtual_time_the_wait_is_real(monkeypatch: pytest.MonkeyPatch) -> None:
    slept: list[float] = []
    monkeypatch.setattr("providers_fake.api.inprocess.time.sleep", slept.append)
    fake = api.ScriptedModelAPI([api.Answer(texts=("late",), delay=30.0)])
    answers = transport(fake, "https://fake.test")
    with net.Client(transport=answers) as client, pytest.raises(net.ReadTimeout):
        client.post("https://fake.test/v1/messages", json={}, timeout=2.0).read()
    assert slept == [2.0]


def test_the_hung_model_api_scenarios_pass_on_the_reference_without_waiting(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def no_waiting(seconds: float) -> None:
        raise AssertionError(f"slept {seconds} s")

    monkeypatch.setattr("providers_fake.api.inprocess.time.sleep", no_waiting)
    argv = ["run", str(ROOT / "scenarios" / "model-api"), "--target", "reference-inproc"]
    assert main([*argv, "-k", "hung", "--reports", ""]) == 0, capsys.readouterr().out
    assert "3 passed" in capsys.readouterr().out


def test_a_run_loads_its_own_plugins_and_restores_the_environment(
    capsys: pytest.CaptureFixture[str],
) -> None:
    before = os.environ.get("PYTEST_DISABLE_PLUGIN_AUTOLOAD")
    argv = ["run", str(ROOT / "scenarios" / "agent-cli" / "codex"), "--target", "reference-inproc"]
    assert main([*argv, "-k", "codex-happy", "--reports", ""]) == 0
    assert os.environ.get("PYTEST_DISABLE_PLUGIN_AUTOLOAD") == before
    # Arguments for pytest itself may need any installed plugin: all load then.
    assert main([*argv, "-k", "codex-happy", "--reports", "", "--", "-p", "syrupy"]) == 0


def test_without_jsonschema_rs_the_python_validator_answers_alone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "jsonschema_rs", None)  # an import of it fails
    loader._quick.cache_clear()
    try:
        assert loader._quick("scenario") is None
        loaded = loader.load([ROOT / "scenarios" / "agent-cli" / "codex"])
        assert loaded.scenarios
        assert not loaded.problems
        bad = loader.schema_errors("scenario", loader._validator(), {"id": 3})
        assert bad
    finally:
        loader._quick.cache_clear()


def test_a_short_document_that_breaks_a_bound_says_so_though_it_skips_the_event_pass() -> None:
    deep = "id: x\nrequest: " + "[" * 300 + "\n"  # short, too deep, and never closed
    assert len(deep) < yamlpos._EVENT_CHECK_FROM
    with pytest.raises(yamlpos.YAMLProblem) as found:
        yamlpos.load(deep)
    assert "nested deeper than" in str(found.value.message)
