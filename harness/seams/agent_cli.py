"""
The agent-cli seam: a fake agent CLI on one side, an adaptor on the other.

Checks what the JSON Schema cannot (schema sources, schema files, scripted
event names for the chosen CLI, contradictory expectations) and builds the
typed request, provider script and expectations.  Runs a case by handing
the request and the fake's whereabouts to an `Adaptor` target, then compares
its canonical `Outcome` field by field (`harness.seams.compare`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import providers_fake
from harness import seams
from harness.catalogue.files import FileRefused, Folder
from harness.catalogue.outcome import Outcome
from harness.catalogue.scenario import (
    DiagnosticExpectation,
    Expectation,
    Json,
    ProviderExpectation,
    Request,
    Scenario,
    Script,
    Step,
)
from harness.catalogue.seam import Parts, Report, merge
from harness.catalogue.suggest import did_you_mean
from harness.seams.compare import Mismatch, compare
from harness.targets import Adaptor, Target, workspace

_SPECIAL_STEPS = frozenset({"line", "raw", "stderr", "sleep", "hang"})
#: Documents; a derived ``schema_type`` may precede one of them (SCH-08).
_DOCUMENTS = ("schema", "schema_text", "schema_file")


class AgentCli:
    """See the module docstring."""

    schema_def = "agent-cli"

    def merge_case(self, base: dict[str, Any], case: dict[str, Any]) -> dict[str, Any]:
        """A family case over the shared fields; its own schema source replaces the family's."""
        merged = merge(base, case)
        own = case.get("request")
        if not isinstance(own, Mapping):
            return merged
        if any(k in own for k in _DOCUMENTS) and isinstance(merged.get("request"), dict):
            for key in _DOCUMENTS:
                if key not in own:
                    merged["request"].pop(key, None)
        return merged

    def check(self, doc: dict[str, Any], base: Folder, report: Report) -> None:
        request = doc["request"]
        if "driver" not in request:
            report(("request", "driver"), "required field is missing")
            return
        given = [key for key in _DOCUMENTS if key in request]
        if len(given) > 1:
            report(("request", given[1]), f"give one schema source, not {' and '.join(given)}")
        if "schema_file" in request:
            try:
                base.locate(request["schema_file"])
            except FileRefused as refused:
                report(("request", "schema_file"), str(refused))
        if "provider" not in doc:
            report(("provider",), "required field is missing for agent-cli")
        else:
            check_steps(request["driver"], doc["provider"]["steps"], ("provider",), report)
        expectations = [("expect",)] + [("by_target", k) for k in doc.get("by_target", {})]
        for where in expectations:
            expect = doc[where[0]] if len(where) == 1 else doc[where[0]][where[1]]
            if "cause" in expect and expect.get("error", "execution_error") != "execution_error":
                report((*where, "cause"), "cause applies only to execution_error")
            if "value" in expect and expect.get("no_value"):
                report((*where, "no_value"), "contradicts 'value'")

    def parts(self, doc: dict[str, Any], base: Folder) -> Parts:
        request = doc["request"]
        script = None
        if "provider" in doc:
            script = script_from(request["driver"], doc["provider"])
        expect = doc["expect"]
        return Parts(
            request=_request(request, base),
            expect=_expectation(expect),
            script=script,
            by_target=tuple(
                (kind, _expectation(merge(expect, override)))
                for kind, override in sorted(doc.get("by_target", {}).items())
            ),
        )

    def observe(self, scenario: Scenario, target: Target, options: seams.RunOptions) -> Outcome:
        assert isinstance(target, Adaptor), target
        request = scenario.request
        assert isinstance(request, Request), request
        with workspace.open_for(scenario) as work:
            outcome = target.run(request, work.provider(), scenario.id)
            return outcome.observed(work.calls())

    def compare(self, expect: object, actual: seams.SeamOutcome) -> tuple[Mismatch, ...]:
        assert isinstance(expect, Expectation), expect
        assert isinstance(actual, Outcome), actual
        return compare(expect, actual)

    def outcome_from_json(self, data: dict[str, Any]) -> Outcome:
        return Outcome.from_json(data)

    def describe(self, scenario: Scenario) -> list[str]:
        e = scenario.expect
        assert isinstance(e, Expectation)
        out = []
        if e.status or e.error:
            verdict = e.error or e.status or ""
            if e.cause:
                verdict += f" ({e.cause})"
            out.append(f"outcome: `{verdict}`")
        if e.value is not None:
            out.append(f"value: `{e.value.text}`")
        if e.no_value:
            out.append("no decoded value")
        if e.mechanism is not None:
            out.append(f"mechanism: `{e.mechanism.value}`")
        if e.launches is not None:
            out.append(f"provider launches: {e.launches}")
        for d in e.diagnostics or e.diagnostics_contain:
            out.append(
                f"diagnostic at `{d.path or '/'}`: {d.message or d.message_contains or ''}".rstrip(
                    ": "
                )
            )
        if e.provider is not None:
            if e.provider.output_format:
                out.append(f"provider output format: `{e.provider.output_format}`")
            out += [f"prompt contains: `{p}`" for p in e.provider.prompt_contains]
        for kind, override in scenario.by_target:
            assert isinstance(override, Expectation)
            out.append(
                f"on `{kind}` targets the expectation differs: "
                f"`{override.error or override.status}`"
            )
        return out


def check_steps(cli: str, steps: list[Any], at: tuple[str | int, ...], report: Report) -> None:
    """Every scripted step is an event of ``cli`` or a special step (any seam with a fake CLI)."""
    events = providers_fake.event_names(cli)
    for i, step in enumerate(steps):
        name = step if isinstance(step, str) else next(iter(step))
        if name not in events and name not in _SPECIAL_STEPS:
            known = ", ".join(sorted(events))
            hint = did_you_mean(name, events | _SPECIAL_STEPS)
            report((*at, "steps", i), f"unknown {cli} event {name!r}{hint} (known: {known})")


def script_from(cli: str, provider: dict[str, Any]) -> Script:
    """The typed script of a checked ``provider`` section."""
    return Script(
        cli=cli,
        steps=tuple(_step(step) for step in provider["steps"]),
        exit=provider.get("exit"),
        signal=provider.get("signal"),
        json_shape=provider.get("json_shape"),
    )


def provider_expectation(p: dict[str, Any]) -> ProviderExpectation:
    """What the fake must have received, from a checked ``provider`` expectation."""
    return ProviderExpectation(
        output_format=p.get("output_format"),
        schema=Json.of(p["schema"]) if "schema" in p else None,
        no_schema=p.get("no_schema", False),
        prompt_contains=tuple(p.get("prompt_contains", ())),
        prompt_excludes=tuple(p.get("prompt_excludes", ())),
        prompt_ends_with=p.get("prompt_ends_with"),
        argv_contains=tuple(p.get("argv_contains", ())),
        argv_excludes=tuple(p.get("argv_excludes", ())),
    )


def _request(raw: dict[str, Any], base: Folder) -> Request:
    """The typed request: the YAML's schema source read here, the rest as on the wire."""
    schema: bytes | None = None
    if "schema" in raw:
        schema = json.dumps(raw["schema"], ensure_ascii=False).encode()
    elif "schema_text" in raw:
        schema = raw["schema_text"].encode()
    elif "schema_file" in raw:
        schema = base.read(raw["schema_file"])
    spec = raw.get("schema_type")
    wire = {
        **raw,
        "prompt": raw.get("prompt", Request.prompt),
        "schema": None,
        "schema_type": None if spec is None else {"types": {}, **spec},
        "descriptor": None
        if "descriptor" not in raw
        else {"native": False, "prompt": False, **raw["descriptor"]},
    }
    # The document keeps its exact bytes, whatever its encoding.
    return replace(Request.from_json(wire), schema=schema)


def _step(raw: str | dict[str, Any]) -> Step:
    if isinstance(raw, str):
        return Step(raw)
    [(kind, arg)] = raw.items()
    return Step(kind, None if arg is None else Json.of(arg))


def _diagnostics(raw: list[dict[str, str]]) -> tuple[DiagnosticExpectation, ...]:
    return tuple(DiagnosticExpectation(**each) for each in raw)


def _expectation(raw: dict[str, Any]) -> Expectation:
    provider = provider_expectation(raw["provider"]) if "provider" in raw else None
    return Expectation(
        status=raw.get("status"),
        error=raw.get("error"),
        cause=raw.get("cause"),
        message_contains=raw.get("message_contains"),
        value=Json.of(raw["value"]) if "value" in raw else None,
        no_value=raw.get("no_value", False),
        text=Json.of(raw["text"]) if "text" in raw else None,
        text_contains=raw.get("text_contains"),
        mechanism=Json.of(raw["mechanism"]) if "mechanism" in raw else None,
        diagnostics=_diagnostics(raw["diagnostics"]) if "diagnostics" in raw else None,
        diagnostics_contain=_diagnostics(raw.get("diagnostics_contain", [])),
        launches=raw.get("launches"),
        raw=Json.of(raw["raw"]) if "raw" in raw else None,
        provider=provider,
    )


seams.register("agent-cli", AgentCli())
