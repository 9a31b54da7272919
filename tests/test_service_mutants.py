"""
The service-api catalogue catches plausible mistakes, and says which scenario does.

Each row breaks the reference service in one realistic way (the bugs the seeds
warn about, or that a careful reading of the contract invites) and states
exactly which scenarios must then stop passing.  A scenario that stops
catching its mistake, or a mistake nothing catches, fails this table.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import jsonschema
import pytest

from harness import targets
from harness.catalogue import loader
from harness.catalogue.outcome import Outcome
from harness.catalogue.scenario import Seam
from harness.seams.case import execute
from harness.systems import a2a, t3, throng

Mutate = Callable[[pytest.MonkeyPatch], None]


def _reescape(value: Any) -> Any:
    if isinstance(value, str):
        return value.replace("\\", "\\\\")
    if isinstance(value, dict):
        return {k: _reescape(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_reescape(v) for v in value]
    return value


def reescaping_typed_result(monkeypatch: pytest.MonkeyPatch) -> None:
    """Strings in typedResult are escaped once more (the seed 003 corruption)."""
    original = t3._Task.status_json

    def status_json(self: t3._Task, task_id: str) -> dict[str, Any]:
        out = original(self, task_id)
        return {**out, "typedResult": _reescape(out["typedResult"])}

    monkeypatch.setattr(t3._Task, "status_json", status_json)


def _publish_with(data_for: Callable[[Outcome, bool], Any], *, data_first: bool = False) -> Any:
    def publication(
        outcome: Outcome, structured: bool, version: str, artifact_id: str
    ) -> dict[str, Any]:
        if outcome.error not in {None, "policy_violation", "decode_error"}:
            return _PUBLICATION(outcome, structured, version, artifact_id)
        shape = a2a.SHAPES[version]
        parts = [shape.text(outcome.text or "")]
        value = data_for(outcome, structured)
        if value is not _NONE:
            parts.insert(0 if data_first else 1, shape.data(value))
        return {"state": "completed", "artifact": a2a.artifact(version, "a", "response", parts)}

    return publication


_NONE = object()
#: The reference's own publication, for the failures the mutants leave alone.
_PUBLICATION = throng.publication


def _value(outcome: Outcome, structured: bool) -> Any:
    ok = structured and outcome.status == "ok" and outcome.value is not None
    return outcome.value.value if ok and outcome.value is not None else _NONE


def _patch_publication(monkeypatch: pytest.MonkeyPatch, replacement: Any) -> None:
    monkeypatch.setattr(throng, "publication", replacement)


def data_part_for_any_value(monkeypatch: pytest.MonkeyPatch) -> None:
    """Arrays and scalars get a data part too."""
    _patch_publication(monkeypatch, _publish_with(_value))


def data_part_from_text(monkeypatch: pytest.MonkeyPatch) -> None:
    """An object-looking answer becomes a data part even when nobody asked for one."""

    def from_text(outcome: Outcome, structured: bool) -> Any:
        found = _value(outcome, structured)
        if found is _NONE and outcome.text and outcome.text.startswith("{"):
            return {"parsed": outcome.text}
        return found if isinstance(found, dict) else _NONE

    _patch_publication(monkeypatch, _publish_with(from_text))


def data_part_first(monkeypatch: pytest.MonkeyPatch) -> None:
    """The data part is published before the text part."""

    def objects(outcome: Outcome, structured: bool) -> Any:
        found = _value(outcome, structured)
        return found if isinstance(found, dict) else _NONE

    _patch_publication(monkeypatch, _publish_with(objects, data_first=True))


def exhaustion_degrades_to_text(monkeypatch: pytest.MonkeyPatch) -> None:
    """Retry exhaustion publishes the text instead of failing the turn."""
    original = throng.publication

    def publication(
        outcome: Outcome, structured: bool, version: str, artifact_id: str
    ) -> dict[str, Any]:
        if outcome.cause == "max_structured_output_retries":
            parts = [a2a.SHAPES[version].text(outcome.text or "")]
            return {"state": "completed", "artifact": a2a.artifact(version, "a", "r", parts)}
        return original(outcome, structured, version, artifact_id)

    monkeypatch.setattr(throng, "publication", publication)


def _camel(value: Any) -> Any:
    if isinstance(value, dict):
        return {re.sub(r"_([a-z])", lambda m: m[1].upper(), k): _camel(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_camel(v) for v in value]
    return value


def camel_cases_the_schema(monkeypatch: pytest.MonkeyPatch) -> None:
    """The mapper renames keys inside output_format like thinking.budget_tokens."""
    monkeypatch.setitem(throng._OPTIONS, "output_format", ("outputFormat", _camel))


def typeof_only_checks(monkeypatch: pytest.MonkeyPatch) -> None:
    """JavaScript's typeof x === "object" is taken as "is an object" (null, arrays pass)."""

    def js_object(value: Any) -> bool:
        return value is None or isinstance(value, dict | list)

    def field_errors(manifest: Any) -> list[dict[str, str]]:
        agent = manifest.get("agent", {})
        if "output_format" not in agent:
            return []
        output_format = agent["output_format"]
        if not js_object(output_format):
            return [{"field": "agent.output_format", "reason": "x"}]
        if isinstance(output_format, dict):
            if output_format.get("type") != "json_schema":
                return [{"field": "agent.output_format", "reason": "x"}]
            if "schema" not in output_format or not js_object(output_format["schema"]):
                return [{"field": "agent.output_format.schema", "reason": "x"}]
        return []

    monkeypatch.setattr(throng, "field_errors", field_errors)


def validates_schema_at_initialise(monkeypatch: pytest.MonkeyPatch) -> None:
    """Throng compiles the schema itself and refuses invalid ones with a 400."""
    original = throng.field_errors

    def field_errors(manifest: Any) -> list[dict[str, str]]:
        found = original(manifest)
        if found or "output_format" not in manifest["agent"]:
            return found
        try:
            schema = manifest["agent"]["output_format"]["schema"]
            jsonschema.Draft202012Validator.check_schema(schema)
        except jsonschema.SchemaError:
            return [{"field": "agent.output_format.schema", "reason": "invalid JSON Schema"}]
        return []

    monkeypatch.setattr(throng, "field_errors", field_errors)


def prose_fallback_for_cursor(monkeypatch: pytest.MonkeyPatch) -> None:
    """Cursor accepts resultSchema and is prompted for JSON instead of refusing."""
    monkeypatch.setitem(t3.ADAPTERS, "cursor", t3.ChildAdapter("cursor", lambda s: {}))


def follow_ups_forget_the_schema(monkeypatch: pytest.MonkeyPatch) -> None:
    """The adapter takes the schema from the delegate call, not from the child thread."""
    original = t3.T3.follow_up

    def follow_up(self: t3.T3, task_id: str, body: dict[str, Any]) -> dict[str, Any]:
        thread = self.threads[self.tasks[task_id].thread_id]
        saved, thread.schema = thread.schema, None
        try:
            return original(self, task_id, body)
        finally:
            thread.schema = saved

    monkeypatch.setattr(t3.T3, "follow_up", follow_up)


MUTANTS: list[tuple[Mutate, set[str]]] = [
    (
        reescaping_typed_result,
        {
            "t3-backslash-paren-claude",
            "t3-backslash-paren-codex-wait",
            "t3-escapes-survive",
            "t3-backslash-through-follow-up",
        },
    ),
    (
        data_part_for_any_value,
        {
            "throng-array-result-no-data-part",
            "throng-string-result-no-data-part",
            "throng-number-result-no-data-part",
        },
    ),
    (data_part_from_text, {"throng-json-text-without-format"}),
    (
        data_part_first,
        {
            "throng-object-result-v03",
            "throng-object-result-v1",
            "throng-prose-text-part-first",
            "throng-empty-object-result",
            "throng-json-kinds-data-part",
            # The mapping cases pin what their published turn holds, too.
            "throng-nested-schema-verbatim",
            "throng-budget-tokens-contrast",
            "throng-schema-exact-numbers-and-text",
        },
    ),
    (
        exhaustion_degrades_to_text,
        {
            "throng-unsatisfiable-retries-exhausted",
            "throng-top-level-array-exhausts",
            "throng-fallback-retraction-exhausts",
        },
    ),
    (camel_cases_the_schema, {"throng-nested-schema-verbatim", "throng-budget-tokens-contrast"}),
    (
        typeof_only_checks,
        {
            "throng-format-null",
            "throng-format-array",
            "throng-schema-null",
            "throng-schema-array",
            "throng-schema-empty-array",
        },
    ),
    (
        validates_schema_at_initialise,
        {
            "throng-invalid-schema-unknown-type",
            "throng-invalid-schema-required-not-array",
            "throng-invalid-schema-negative-length",
        },
    ),
    (
        prose_fallback_for_cursor,
        {"t3-capabilities", "t3-cursor-schema-fails-fast", "t3-cursor-schema-wait-fails-fast"},
    ),
    (
        follow_ups_forget_the_schema,
        {
            "t3-claude-follow-up-stays-constrained",
            "t3-codex-follow-up-resends-output-schema",
            "t3-backslash-through-follow-up",
        },
    ),
]


@pytest.mark.parametrize(
    ("mutate", "caught_by"), [pytest.param(*m, id=m[0].__name__) for m in MUTANTS]
)
def test_each_mistake_is_caught_by_its_scenarios(
    catalogue: loader.Loaded,
    monkeypatch: pytest.MonkeyPatch,
    mutate: Mutate,
    caught_by: set[str],
) -> None:
    mutate(monkeypatch)
    target = targets.create("reference-inproc")
    results = [execute(s, target) for s in catalogue.scenarios if s.seam is Seam.SERVICE_API]
    assert {r.scenario for r in results if r.status != "passed"} == caught_by
