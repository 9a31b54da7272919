"""
The agent-cli seam: a fake agent CLI on one side, an adaptor on the other.

Checks what the JSON Schema cannot (schema sources, schema files, scripted
event names for the chosen CLI, contradictory expectations) and builds the
typed request, provider script and expectations.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import providers_fake
from harness import _seams
from harness._scenario import (
    Descriptor,
    DiagnosticExpectation,
    Expectation,
    Json,
    ProviderExpectation,
    Request,
    SchemaType,
    Script,
    Step,
)

_SPECIAL_STEPS = frozenset({"line", "raw", "stderr", "sleep", "hang"})
#: Documents; a derived ``schema_type`` may precede one of them (SCH-08).
_DOCUMENTS = ("schema", "schema_text", "schema_file")


class AgentCli:
    """See the module docstring."""

    def check(self, doc: dict[str, Any], base: Path, report: _seams.Report) -> None:
        request = doc["request"]
        if "driver" not in request:
            report(("request", "driver"), "required field is missing")
            return
        given = [key for key in _DOCUMENTS if key in request]
        if len(given) > 1:
            report(("request", given[1]), f"give one schema source, not {' and '.join(given)}")
        if "schema_file" in request and not (base / request["schema_file"]).is_file():
            report(("request", "schema_file"), f"no such file: {base / request['schema_file']}")
        if "provider" not in doc:
            report(("provider",), "required field is missing for agent-cli")
        else:
            events = providers_fake.event_names(request["driver"])
            for i, step in enumerate(doc["provider"]["steps"]):
                name = step if isinstance(step, str) else next(iter(step))
                if name not in events and name not in _SPECIAL_STEPS:
                    known = ", ".join(sorted(events))
                    report(
                        ("provider", "steps", i),
                        f"unknown {request['driver']} event {name!r} (known: {known})",
                    )
        expectations = [("expect",)] + [("by_target", k) for k in doc.get("by_target", {})]
        for where in expectations:
            expect = doc[where[0]] if len(where) == 1 else doc[where[0]][where[1]]
            if "cause" in expect and expect.get("error", "execution_error") != "execution_error":
                report((*where, "cause"), "cause applies only to execution_error")
            if "value" in expect and expect.get("no_value"):
                report((*where, "no_value"), "contradicts 'value'")

    def parts(self, doc: dict[str, Any], base: Path) -> _seams.Parts:
        request = doc["request"]
        script = None
        if "provider" in doc:
            provider = doc["provider"]
            script = Script(
                cli=request["driver"],
                steps=tuple(_step(step) for step in provider["steps"]),
                exit=provider.get("exit"),
                signal=provider.get("signal"),
                json_shape=provider.get("json_shape"),
            )
        expect = doc["expect"]
        return _seams.Parts(
            request=_request(request, base),
            expect=_expectation(expect),
            script=script,
            by_target=tuple(
                (kind, _expectation(_seams.merge(expect, override)))
                for kind, override in sorted(doc.get("by_target", {}).items())
            ),
        )


def _request(raw: dict[str, Any], base: Path) -> Request:
    schema: bytes | None = None
    if "schema" in raw:
        schema = json.dumps(raw["schema"], ensure_ascii=False).encode()
    elif "schema_text" in raw:
        schema = raw["schema_text"].encode()
    elif "schema_file" in raw:
        schema = (base / raw["schema_file"]).read_bytes()
    schema_type = None
    if "schema_type" in raw:
        spec = raw["schema_type"]
        schema_type = SchemaType(
            root=spec["root"],
            types=tuple(
                (name, tuple(fields.items())) for name, fields in spec.get("types", {}).items()
            ),
            inline_references=spec.get("inline_references", False),
        )
    descriptor = None
    if "descriptor" in raw:
        descriptor = Descriptor(**{"native": False, "prompt": False, **raw["descriptor"]})
    return Request(
        driver=raw["driver"],
        prompt=raw.get("prompt", Request.prompt),
        schema=schema,
        schema_type=schema_type,
        schema_format=raw.get("schema_format", "json_schema"),
        schema_name=raw.get("schema_name"),
        schema_description=raw.get("schema_description"),
        on_invalid=raw.get("on_invalid", "fail"),
        mode=raw.get("mode", "run"),
        approval=raw.get("approval", "auto"),
        descriptor=descriptor,
        timeout=float(raw.get("timeout", Request.timeout)),
        mutate_schema_after_build=raw.get("mutate_schema_after_build", False),
    )


def _step(raw: str | dict[str, Any]) -> Step:
    if isinstance(raw, str):
        return Step(raw)
    [(kind, arg)] = raw.items()
    return Step(kind, None if arg is None else Json.of(arg))


def _diagnostics(raw: list[dict[str, str]]) -> tuple[DiagnosticExpectation, ...]:
    return tuple(DiagnosticExpectation(**each) for each in raw)


def _expectation(raw: dict[str, Any]) -> Expectation:
    provider = None
    if "provider" in raw:
        p = raw["provider"]
        provider = ProviderExpectation(
            output_format=p.get("output_format"),
            schema=Json.of(p["schema"]) if "schema" in p else None,
            no_schema=p.get("no_schema", False),
            prompt_contains=tuple(p.get("prompt_contains", ())),
            prompt_excludes=tuple(p.get("prompt_excludes", ())),
            prompt_ends_with=p.get("prompt_ends_with"),
            argv_contains=tuple(p.get("argv_contains", ())),
            argv_excludes=tuple(p.get("argv_excludes", ())),
        )
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


_seams.register("agent-cli", AgentCli())
