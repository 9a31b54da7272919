"""
The model-api seam: an agent CLI under test, a scripted fake model API behind it.

Here the system under test is the agent CLI itself (``claude -p --json-schema``
or ``codex exec --output-schema``) and the fake stands where the model API
would be: ``provider.model_script`` answers one request per step, in the
captures' ``model_script`` format (`providers_fake.api.Script`).  A case
starts a fresh loopback fake, runs the CLI against it, and observes its exit
code, stderr, stdout lines, final result and every request that reached the
fake (`ModelApiOutcome`); only the expectations a scenario gives are checked.

The final result is the CLI's ``result`` object for claude (the one JSON
object of ``--output-format json``, the last ``result`` line of
``stream-json``).  Codex prints no result object, so for codex it is made of
the last line's type, the last agent message (``result``, and parsed as JSON,
``structured_output``) and the messages of its ``error`` lines (``errors``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from harness import seams
from harness.catalogue.files import Folder
from harness.catalogue.scenario import Scenario, VersionRule
from harness.catalogue.seam import Parts, Report, merge
from harness.catalogue.versions import VersionRange, common
from harness.seams import promises
from harness.seams.compare import Mismatch
from harness.seams.model_api.expect import (
    ExpectationPatch,
    ModelApiExpectation,
    compare,
    describe,
    expectation_of,
    patch_of,
)
from harness.seams.model_api.run import model_script, run_case, run_reference
from harness.seams.model_api.values import ModelApiOutcome, ModelApiRequest, request_of
from harness.systems import codebuddy, sandbox
from harness.targets import AgentBinary, Target, versions_of
from harness.targets.protocol import Skipped
from providers_fake.api import Script as ModelScript
from providers_fake.api import ScriptError, realcli

_CLAUDE_FIELDS = ("subtype", "is_error", "terminal_reason", "input_schema", "strict", "strict_each")
_SCHEMA_SOURCES = ("schema", "schema_text", "schema_generated")
#: Request keys that only some CLIs take, and which.
_TAKEN_BY = {
    "fallback_model": ("claude",),
    "gates": ("claude",),
    "refusal_fallback_model": ("claude",),
    "allowed_tools": ("claude",),
    "max_turns": ("claude", "codebuddy"),
    "tools": ("claude",),
    "output_last_message": ("codex",),
}
#: Output formats and the CLIs that have them.
_FORMATS = {
    "json": ("claude", "codex", "codebuddy"),
    "stream-json": ("claude", "codebuddy"),
    "text": ("claude", "codex", "codebuddy"),
}


def _claude(request: Mapping[str, Any], expect: Mapping[str, Any]) -> bool:
    return request.get("cli") == "claude"


def _codex(request: Mapping[str, Any], expect: Mapping[str, Any]) -> bool:
    return request.get("cli") == "codex"


def _claude_lines(request: Mapping[str, Any], expect: Mapping[str, Any]) -> bool:
    """Claude printing JSON lines (in text mode it prints its result's text alone)."""
    return _claude(request, expect) and request.get("output_format") != "text"


def _prints_result(request: Mapping[str, Any], expect: Mapping[str, Any]) -> bool:
    lines = expect.get("line_types", ())
    return _claude(request, expect) and any(str(t).startswith("result/") for t in lines)


#: What every model-api expectation pins (`harness.seams.promises`).
DECISIVE = (
    promises.Decisive(("exit_code",), "how the run ends"),
    promises.Decisive(("requests",), "how many requests reach the model API"),
    # Codex's lines depend on the model's metadata too (a warning item for a model it
    # does not know), so its exit code and final message decide a run, not its lines.
    promises.Decisive(("line_types",), "what the CLI prints, line by line", _claude_lines),
    promises.Decisive(("structured_output", "no_structured_output"), "what the run delivers"),
    promises.Decisive(("subtype",), "the verdict of the result line", _prints_result),
    promises.Decisive(("is_error",), "whether the result line is an error", _prints_result),
)
#: Terms of art a model-api description may name, and the check each calls for.
PHRASES = (
    promises.Phrase(
        r"\bexit(?:s|ed|ing)?(?: code| status)? (-?\d+)\b", ("exit_code",), promises.number()
    ),
    promises.Phrase(r"\bsystem/(\w+)", ("line_types",), promises.word(1, "system/{}")),
    promises.Phrase(
        r"\b(api_retry|model_fallback|thinking_tokens|informational)\b",
        ("line_types",),
        promises.word(1, "system/{}"),
        applies=_claude,
    ),
    promises.Phrase(
        r"\b(turn\.failed|turn\.completed)\b", ("line_types",), promises.word(), applies=_codex
    ),
    promises.Phrase(
        r"\b(error_max_structured_output_retries|error_during_execution|error_max_turns)\b",
        ("subtype",),
        promises.word(),
    ),
    promises.Phrase(r"\bis_error:? `?(true|false)\b", ("is_error",), promises.boolean()),
    promises.Phrase(r"\bterminal_reason:? `?(\w+)", ("terminal_reason",), promises.word()),
    promises.Phrase(r"\bstderr\b", ("stderr_contains",)),
    promises.Phrase(r"\bkill(?:s|ed)\b", ("timed_out",)),
    promises.Phrase(r"\btext\.format\b", ("text_format",)),
    promises.Phrase(r"\binput_schema\b", ("input_schema",)),
    promises.Phrase(r"\bstrict\b", ("strict", "strict_each"), applies=_claude),
    promises.Phrase(
        r"\b(one|two|three|four|five|six|\d+) requests?\b", ("requests",), promises.number()
    ),
    promises.Phrase(
        r"\bbefore any request\b|\bnothing reaches the model API\b", ("requests",), lambda m: 0
    ),
    promises.Phrase(r"--fallback-model|\bfallback model\b", ("models",)),
    promises.Phrase(
        r"\b(?:no|without) structured.output\b", ("no_structured_output",), lambda m: True
    ),
    promises.Phrase(r"\bside.effects?\b", ("files",)),
)


def _check_hold(
    script: ModelScript, request: Mapping[str, Any], where: tuple[str, ...], report: Report
) -> None:
    """
    A case that expects the kill at its timeout must hold an answer back
    longer than that timeout: the timeout counts what the script holds back
    (docs/model-api.md), so without such a hold the verdict would hang on how
    fast the machine runs the CLI.
    """
    timeout = float(request.get("timeout", realcli.DEFAULT_TIMEOUT))
    if _waits_by_itself(script, request):
        return
    if not any(step.delay > timeout for step in script.steps):
        report(
            where,
            f"expects the kill at the {timeout:g} s timeout, but no step of model_script "
            "holds its answer back longer (give one a delay above the timeout)",
        )


def _waits_by_itself(script: ModelScript, request: Mapping[str, Any]) -> bool:
    """Whether the CLI waits without end on this script (CodeBuddy: rules C-05, C-07)."""
    return request.get("cli") == "codebuddy" and codebuddy.waits_by_itself(
        script, request.get("max_turns")
    )


class ModelApi:
    """See the module docstring."""

    schema_def = "model-api"

    def merge_case(self, base: dict[str, Any], case: dict[str, Any]) -> dict[str, Any]:
        """A family case over the shared fields; its own schema source replaces the family's."""
        merged = merge(base, case)
        own = case.get("request")
        if isinstance(own, dict) and any(k in own for k in _SCHEMA_SOURCES):
            for key in _SCHEMA_SOURCES:
                if key in own:
                    merged["request"][key] = own[key]  # a schema is replaced, never merged
                else:
                    merged["request"].pop(key, None)
        return merged

    def check(self, doc: dict[str, Any], base: Folder, report: Report) -> None:
        request = doc["request"]
        given = [key for key in _SCHEMA_SOURCES if key in request]
        if not given:
            report(("request", "schema"), f"give the schema ({' or '.join(_SCHEMA_SOURCES)})")
        elif len(given) > 1:
            report(("request", given[1]), f"give one schema source, not {' and '.join(given)}")
        cli = request.get("cli")
        for key, takers in _TAKEN_BY.items():
            if key in request and cli not in takers:
                report(("request", key), f"{key} applies to {' and '.join(takers)} only")
        shown = request.get("output_format", "json")
        if cli not in _FORMATS.get(shown, (cli,)):
            report(("request", "output_format"), f"{cli} has no {shown} output")
        try:
            script = ModelScript.from_json(doc["provider"]["model_script"])
        except ScriptError as error:
            report(("provider", "model_script"), str(error))
            script = None
        Where = tuple[str, ...]
        expectations: list[tuple[Where, Mapping[str, Any]]] = [(("expect",), doc["expect"])]
        expectations += [(("by_target", k), v) for k, v in doc.get("by_target", {}).items()]
        # A by_version rule is a patch over `expect`: the merged expectation is
        # held to the same checks, and to the decisive fields but those it
        # leaves unchecked by name (each rule says why).
        rules = _check_versions(doc, report)
        expectations += [(rule.where, rule.expect) for rule in rules]
        for where, expect in expectations:
            if "structured_output" in expect and expect.get("no_structured_output"):
                report((*where, "no_structured_output"), "contradicts 'structured_output'")
            models, count = expect.get("models"), expect.get("requests")
            if models is not None and count is not None and len(models) != count:
                report((*where, "models"), "names a model for a different number of requests")
            if request.get("cli") == "codex":
                for key in _CLAUDE_FIELDS:
                    if key in expect:
                        report((*where, key), f"{key} is claude's; codex prints no such field")
            else:
                if "text_format" in expect:
                    report((*where, "text_format"), "text_format is codex's (OpenAI Responses)")
                if "items" in expect:
                    report((*where, "items"), "items are codex's item.completed lines")
            if "stdout" in expect and request.get("output_format") != "text":
                report((*where, "stdout"), "stdout is checked on text output (output_format: text)")
            if expect.get("timed_out") is True and script is not None:
                _check_hold(script, request, (*where, "timed_out"), report)
        promises.check(doc, DECISIVE, PHRASES, report, variants=rules)

    def parts(self, doc: dict[str, Any], base: Folder) -> Parts:
        expect = doc["expect"]
        overrides = [*doc.get("by_target", {}).values()]
        rules = [
            (cli, text, rule)
            for cli, ranges in doc.get("by_version", {}).items()
            for text, rule in ranges.items()
        ]
        overrides += [rule.get("expect", {}) for _, _, rule in rules]
        full_stack = "adaptor" in expect or any("adaptor" in o for o in overrides)
        return Parts(
            request=request_of(doc["request"], doc["provider"], full_stack),
            expect=expectation_of(expect),
            by_target=tuple(
                (target, expectation_of(merge(expect, override)))
                for target, override in sorted(doc.get("by_target", {}).items())
            ),
            by_version=tuple(
                VersionRule(
                    cli,
                    VersionRange.parse(text),
                    " ".join(rule["because"].split()),
                    patch_of(rule),
                    tuple(rule.get("breaks", ())),
                )
                for cli, text, rule in rules
            ),
        )

    def observe(
        self, scenario: Scenario, target: Target, options: seams.RunOptions
    ) -> ModelApiOutcome:
        request = cast(ModelApiRequest, scenario.request)
        confine = request.runs_commands()
        if confine and not options.allow_exec:
            raise Skipped(
                "the model's script makes the CLI run commands on this machine; "
                "run with --allow-exec to allow it (they then run confined: "
                f"{sandbox.isolation()})",
                by="harness",
            )
        if isinstance(target, AgentBinary):
            # A target that names real binaries runs them against a loopback fake,
            # unless the case needs what no fake can give a binary offline.
            beyond = request.beyond_offline()
            if beyond is not None:
                raise Skipped(beyond, by="scenario")
            binary = target.binary(request.cli)
            return run_case(request, model_script(scenario), binary, confine=confine)
        # The reference targets answer with the reference models of the CLIs.
        return run_reference(request, model_script(scenario), scenario.id, versions_of(target))

    def compare(self, expect: object, actual: seams.SeamOutcome) -> tuple[Mismatch, ...]:
        return compare(cast(ModelApiExpectation, expect), cast(ModelApiOutcome, actual))

    def outcome_from_json(self, data: dict[str, Any]) -> ModelApiOutcome:
        return ModelApiOutcome.from_json(data)

    def describe(self, scenario: Scenario) -> list[str]:
        out = describe(cast(ModelApiExpectation, scenario.expect))
        for target, override in scenario.by_target:
            differs = "; ".join(describe(cast(ModelApiExpectation, override)))
            out.append(f"on `{target}` targets the expectation differs: {differs or 'nothing'}")
        for rule in scenario.by_version:
            differs = "; ".join(cast(ExpectationPatch, rule.patch).words())
            broken = f" ({', '.join(rule.breaks)} do not hold there)" if rule.breaks else ""
            out.append(
                f"on {rule.cli} {rule.range.text}{broken}: {differs or 'nothing differs'}; "
                f"because {rule.because}"
            )
        beyond = cast(ModelApiRequest, scenario.request).beyond_offline()
        if beyond is not None:
            out.append(f"the real binaries are skipped here: {beyond}")
        return out


def _check_versions(doc: dict[str, Any], report: Report) -> list[promises.Variant]:
    """
    Check ``by_version``: the scenario's own CLI, ranges that parse, clauses
    the scenario cites, and no two ranges sharing a version that set one
    field.  Returns each rule's expectation merged over ``expect`` (less
    what it leaves unchecked, which it waives), for the checks every
    expectation gets.
    """
    cli = doc["request"].get("cli")
    out: list[promises.Variant] = []
    for named, ranges in doc.get("by_version", {}).items():
        if named != cli:
            report(("by_version", named), f"this scenario runs {cli}; give its versions only")
            continue
        seen: list[tuple[str, VersionRange, set[str]]] = []
        for text, rule in ranges.items():
            where = ("by_version", named, text)
            try:
                parsed = VersionRange.parse(text)
            except ValueError as error:
                report(where, str(error))
                continue
            for i, clause in enumerate(rule.get("breaks", ())):
                if clause not in doc["clauses"]:
                    report((*where, "breaks", i), f"{clause} is not one of the scenario's clauses")
            given, unchecked = set(rule.get("expect", {})), set(rule.get("unchecked", ()))
            for both in sorted(given & unchecked):
                report((*where, "unchecked"), f"{both} is given in expect and unchecked both")
            for other, other_range, other_sets in seen:
                shared = sorted((given | unchecked) & other_sets)
                version = common(parsed, other_range)
                if shared and version is not None:
                    report(
                        where,
                        f"shares {version} with {other!r} and both set {', '.join(shared)}; "
                        "split the ranges or the fields",
                    )
            seen.append((text, parsed, given | unchecked))
            merged = merge(doc["expect"], rule.get("expect", {}))
            for name in unchecked:
                merged.pop(name, None)
            out.append(promises.Variant((*where, "expect"), merged, frozenset(unchecked)))
    return out


seams.register("model-api", ModelApi())
