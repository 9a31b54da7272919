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
import re
from collections.abc import Mapping
from dataclasses import fields, replace
from typing import Any

import providers_fake
from harness import seams
from harness.adaptor.derive import BUILTIN_NAMES
from harness.catalogue import contracts
from harness.catalogue.files import FileRefused, Folder
from harness.catalogue.outcome import Outcome
from harness.catalogue.scenario import (
    DiagnosticExpectation,
    Expectation,
    Json,
    ProviderExpectation,
    Request,
    Scenario,
    SchemaPoint,
    Script,
    Step,
)
from harness.catalogue.seam import Parts, Report, merge
from harness.catalogue.suggest import did_you_mean
from harness.seams import promises
from harness.seams.compare import Mismatch, compare
from harness.targets import Adaptor, Target, workspace

#: The fields of an expectation, as a scenario writes them.
_EXPECT_FIELDS = frozenset(f.name for f in fields(Expectation))
_SPECIAL_STEPS = frozenset({"line", "raw", "raw_latin1", "stderr", "sleep", "hang"})
#: The tag of a scenario that also pins the reference's own reading of a point
#: the contract leaves open (under ``by_target.reference``).
CHOICE = "choice"
#: Documents; a derived ``schema_type`` may precede one of them (SCH-08).
_DOCUMENTS = ("schema", "schema_text", "schema_file")


#: Errors that refuse a request before the fake CLI is launched.
_PRE_LAUNCH = ("invalid_output_schema", "structured_output_unsupported", "invalid_driver_config")
_ERRORS = (*_PRE_LAUNCH, "policy_violation", "decode_error", "execution_error")
_CAUSES = (
    "malformed_protocol",
    "turn_failed",
    "api_error",
    "max_structured_output_retries",
    "nonzero_exit",
    "missing_terminal",
)

#: What every agent-cli expectation pins (`harness.seams.promises`).
DECISIVE = (
    promises.Decisive(("status", "error"), "how the run ends"),
    promises.Decisive(
        ("cause",), "why the execution failed", lambda r, e: e.get("error") == "execution_error"
    ),
    promises.Decisive(
        ("value", "no_value"),
        "what the caller gets",
        lambda r, e: e.get("status") == "ok" and "error" not in e,
    ),
    promises.Decisive(
        ("launches",),
        "a refusal happens before the CLI is launched",
        lambda r, e: e.get("error") in _PRE_LAUNCH,
        value=0,
    ),
)
#: Terms of art an agent-cli description may name, and the check each calls for.
#: Error kinds and causes are named with their underscores; prose ("not a policy
#: violation") is how a description mentions one it rules out.
PHRASES = (
    promises.Phrase(rf"\b({'|'.join(_ERRORS)})\b", ("error",), promises.word(), among=True),
    promises.Phrase(rf"\b({'|'.join(_CAUSES)})\b", ("cause",), promises.word(), among=True),
    promises.Phrase(r"\bdiagnostics?\b", ("diagnostics", "diagnostics_contain")),
    promises.Phrase(
        r"\bbefore (?:the )?launch\b|\bnever (?:launched|started)\b|\bzero launches\b",
        ("launches",),
        lambda m: 0,
    ),
)


class AgentCli:
    """See the module docstring."""

    schema_def = "agent-cli"

    def merge_case(self, base: dict[str, Any], case: dict[str, Any]) -> dict[str, Any]:
        """
        A family case over the shared fields.

        The case's own schema source replaces the family's; ``null`` for a
        request or provider field the family sets unsets it (a ``null`` with
        nothing to unset stays, for `check` to report).
        """
        merged = merge(base, case)
        for section in ("request", "provider"):
            own, shared, target = case.get(section), base.get(section), merged.get(section)
            if not isinstance(own, Mapping) or not isinstance(target, dict):
                continue
            family = shared if isinstance(shared, Mapping) else {}
            if section == "request" and any(k in own for k in _DOCUMENTS):
                for key in _DOCUMENTS:
                    if key not in own:
                        target.pop(key, None)
            for key, value in own.items():
                documents = key in _DOCUMENTS and any(k in family for k in _DOCUMENTS)
                if value is None and (key in family or documents):
                    target.pop(key)
        return merged

    def check(self, doc: dict[str, Any], base: Folder, report: Report) -> None:
        request = doc["request"]
        unset = [
            (section, key)
            for section in ("request", "provider")
            for key, value in doc.get(section, {}).items()
            if value is None
        ]
        for section, key in unset:
            report(
                (section, key),
                f"null unsets a field its family sets, but there is no {key!r} to unset",
            )
        if unset:
            return
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
        _check_record_names(request.get("schema_type") or {}, report)
        if "provider" not in doc:
            report(("provider",), "required field is missing for agent-cli")
        else:
            check_steps(request["driver"], doc["provider"]["steps"], ("provider",), report)
        targets = doc.get("by_target", {})
        if ("reference" in targets) != (CHOICE in doc.get("tags", ())):
            report(
                ("tags",),
                f"a scenario pins the reference's own reading under by_target.reference "
                f"exactly when it is tagged {CHOICE!r}",
            )
        by_contract = doc.get("by_contract", {})
        for name, rule in by_contract.items():
            if name == contracts.CURRENT.name or name not in contracts.CONTRACTS:
                others = ", ".join(n for n in contracts.CONTRACTS if n != contracts.CURRENT.name)
                report(
                    ("by_contract", name),
                    f"no contract profile {name!r} other than the default (known: {others})",
                )
            for field in rule.get("unchecked", ()):
                if field not in _EXPECT_FIELDS:
                    report(("by_contract", name, "unchecked"), f"{field!r} is no field of expect")
        expectations = [("expect",)] + [("by_target", k) for k in targets]
        for where in expectations:
            expect = doc[where[0]] if len(where) == 1 else doc[where[0]][where[1]]
            if "cause" in expect and expect.get("error", "execution_error") != "execution_error":
                report((*where, "cause"), "cause applies only to execution_error")
            if "value" in expect and expect.get("no_value"):
                report((*where, "no_value"), "contradicts 'value'")
            if "audit_value" in expect and expect.get("no_audit_value"):
                report((*where, "no_audit_value"), "contradicts 'audit_value'")
            check_patterns(expect.get("provider", {}), (*where, "provider"), report)
            if "message_match" in expect:
                _check_pattern(expect["message_match"], (*where, "message_match"), report)
        promises.check(doc, DECISIVE, PHRASES, report)

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
            by_contract=tuple(
                (name, _expectation(under_contract(expect, rule)))
                for name, rule in sorted(doc.get("by_contract", {}).items())
            ),
        )

    def observe(self, scenario: Scenario, target: Target, options: seams.RunOptions) -> Outcome:
        assert isinstance(target, Adaptor), target
        request = scenario.request
        assert isinstance(request, Request), request
        with workspace.open_for(scenario) as work:
            outcome = target.run(request, work.provider(), scenario.id)
            stdout = workspace.stable_text(outcome.stdout, work.work)
            return replace(outcome, stdout=stdout).observed(work.calls())

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
        for name, override in scenario.by_contract:
            assert isinstance(override, Expectation)
            out.append(
                f"under contract `{name}` the expectation differs: "
                f"`{override.error or override.status}`"
            )
        return out


def _check_record_names(schema_type: dict[str, Any], report: Report) -> None:
    """
    A record no type expression could refer to is a mistake, not a record.

    The type language reads a name as letters, digits and underscores, and a
    built-in name always means the built-in: a record called ``str`` or
    ``Grid Point`` would be silently unreachable.
    """
    for name in schema_type.get("types") or {}:
        where = ("request", "schema_type", "types", name)
        if not name or not all(c.isalnum() or c == "_" for c in name):
            report(where, f"record name {name!r} is not a name of the type language")
        elif name in BUILTIN_NAMES:
            report(where, f"record name {name!r} is a built-in type of the type language")


def check_steps(cli: str, steps: list[Any], at: tuple[str | int, ...], report: Report) -> None:
    """Every scripted step is an event of ``cli`` or a special step (any seam with a fake CLI)."""
    events = providers_fake.event_names(cli)
    for i, step in enumerate(steps):
        name = step if isinstance(step, str) else next(iter(step))
        if name not in events and name not in _SPECIAL_STEPS:
            known = ", ".join(sorted(events))
            hint = did_you_mean(name, events | _SPECIAL_STEPS)
            report((*at, "steps", i), f"unknown {cli} event {name!r}{hint} (known: {known})")


def check_patterns(provider: dict[str, Any], at: tuple[str | int, ...], report: Report) -> None:
    """Every regular expression of a provider expectation compiles."""
    for key in ("prompt_match", "argv_match"):
        for i, pattern in enumerate(provider.get(key, ())):
            _check_pattern(pattern, (*at, key, i), report)


def _check_pattern(pattern: str, at: tuple[str | int, ...], report: Report) -> None:
    try:
        re.compile(pattern)
    except re.error as error:
        report(at, f"not a regular expression: {error}")


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
        prompt=p.get("prompt"),
        prompt_match=tuple(p.get("prompt_match", ())),
        argv_match=tuple(p.get("argv_match", ())),
        schema_at=tuple(
            SchemaPoint(
                point["pointer"],
                Json.of(point["value"]) if "value" in point else None,
                point.get("absent", False),
            )
            for point in p.get("schema_at", ())
        ),
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
        message_match=raw.get("message_match"),
        value=Json.of(raw["value"]) if "value" in raw else None,
        no_value=raw.get("no_value", False),
        text=Json.of(raw["text"]) if "text" in raw else None,
        text_contains=_fragments(raw.get("text_contains")),
        mechanism=Json.of(raw["mechanism"]) if "mechanism" in raw else None,
        diagnostics=_diagnostics(raw["diagnostics"]) if "diagnostics" in raw else None,
        diagnostics_contain=_diagnostics(raw.get("diagnostics_contain", [])),
        launches=raw.get("launches"),
        raw=Json.of(raw["raw"]) if "raw" in raw else None,
        provider=provider,
        stdout_contains=_fragments(raw.get("stdout_contains")),
        audit_value=Json.of(raw["audit_value"]) if "audit_value" in raw else None,
        no_audit_value=raw.get("no_audit_value", False),
    )


def under_contract(expect: dict[str, Any], rule: dict[str, Any]) -> dict[str, Any]:
    """
    The expectation under a contract profile: ``expect`` without the rule's
    ``unchecked`` fields, with the rule's ``expect`` merged over it.
    """
    kept = {key: value for key, value in expect.items() if key not in rule.get("unchecked", ())}
    return merge(kept, rule.get("expect", {}))


def _fragments(raw: str | list[str] | None) -> tuple[str, ...]:
    """One fragment or a list of them, as a tuple."""
    if raw is None:
        return ()
    return (raw,) if isinstance(raw, str) else tuple(raw)


seams.register("agent-cli", AgentCli())
