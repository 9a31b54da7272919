"""
The reference adaptor pipeline: the seed 001 contract, end to end.

``intake → negotiate → launch → parse → validate → policy → decode``.  Each
stage is pure except the launch, which goes through a `Launcher`, so the
same pipeline drives real subprocesses or an in-process replay.  The result
is always an `Outcome`; nothing here raises for a misbehaving provider.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.adaptor import claudelike, codex  # noqa: F401  (drivers register on import)
from harness.adaptor.drivers import get as driver_for
from harness.adaptor.intake import Schema, SchemaOption, SchemaRejected, intake
from harness.adaptor.launch import Launcher, find_executable
from harness.adaptor.negotiate import BUILTIN, Refused, negotiate
from harness.adaptor.validation import diagnostics
from harness.catalogue.contracts import CURRENT, Contract
from harness.catalogue.jsonvalue import JSONError, parse_exact
from harness.catalogue.outcome import Diagnostic, Outcome
from harness.catalogue.scenario import Json, Request

#: What the instruction for prompt validation says before the schema (PV-01).
INSTRUCTION = (
    "Answer with exactly one JSON value and nothing else: no Markdown code fences, "
    "no explanation, no text before or after it. The value must validate against "
    "the JSON Schema below."
)


@dataclass(frozen=True)
class Provider:
    """Where the fake provider is: its executables and the environment it needs."""

    executables: Mapping[str, str]
    env: Mapping[str, str]
    work: Path
    #: The variables the fake needs on top of the ordinary environment.
    fake_env: Mapping[str, str] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """Where the fake is, as an adaptor outside this process receives it."""
        return {
            "executables": dict(self.executables),
            "env": dict(self.fake_env),
            "work": str(self.work),
        }


def build_option(request: Request) -> SchemaOption | None:
    """Build the consumer's schema option the way the SDK API would."""
    if not request.wants_schema:
        return None
    buffer = None if request.schema is None else bytearray(request.schema)
    option = SchemaOption.build(request, buffer)
    if request.mutate_schema_after_build and buffer is not None:
        # The caller reuses its buffer after building the option (SCH-07).
        buffer[:] = b'{"type":"string","description":"mutated after build"}'
    return option


def instruction(schema: Schema, prompt: str) -> str:
    """The exact-JSON instruction prepended to the prompt (PV-01)."""
    lines = [INSTRUCTION]
    if schema.name:
        lines.append(f"Schema name: {schema.name}")
    if schema.description:
        lines.append(f"Schema description: {schema.description}")
    lines += ["JSON Schema:", schema.text, "", prompt]
    return "\n".join(lines)


def run(
    request: Request, provider: Provider, launcher: Launcher, contract: Contract = CURRENT
) -> Outcome:
    """Run one request through the reference pipeline, reading the run as ``contract`` does."""
    option = build_option(request)
    schema = None
    if option is not None:
        try:
            schema = intake(option)
        except SchemaRejected as error:
            return Outcome.failed("invalid_output_schema", str(error))
    descriptor = request.descriptor or BUILTIN[request.driver]
    driver = driver_for(request.driver)
    try:
        # The consumer's Run or Stream (request.mode) is not an input (NEG-04).
        plan = negotiate(
            descriptor,
            wants_schema=schema is not None,
            rich=driver.rich,
            approval=request.approval,
        )
    except Refused as refused:
        return Outcome.failed(refused.kind, str(refused))

    prompt = request.prompt
    if schema is not None and plan.mechanism == "prompt":
        prompt = instruction(schema, prompt)
    exe = provider.executables.get(request.driver) or find_executable(request.driver)
    argv = driver.argv(exe, plan, schema, prompt, provider.work)
    finished = launcher.launch(argv, provider.env, request.timeout, provider.work)
    parsed = driver.parse(finished, plan, contract)
    common = {
        "text": parsed.text,
        "raw": parsed.raw,
        "mechanism": plan.mechanism,
        "stdout": finished.stdout.decode("utf-8", "replace"),
    }

    if parsed.cause is not None:
        # An execution failure outranks anything the policy could say (POL-03).
        return Outcome.failed("execution_error", parsed.message, cause=parsed.cause, **common)

    if schema is None:
        # Without a schema, Decode is a convenience over the text (DEC-02);
        # a structured value nobody asked for is ignored (DEC-03).
        try:
            value = parse_exact((parsed.text or "").strip())
        except JSONError as error:
            return Outcome.failed("decode_error", f"cannot decode text: {error}", **common)
        return Outcome.ok(Json.of(value), **common)

    candidate = parsed.candidate if plan.mechanism == "native" else parsed.text
    found: tuple[Diagnostic, ...]
    value_json = None
    if candidate is None:
        found = (Diagnostic("", "no structured output candidate"),)
    else:
        try:
            value = parse_exact(candidate)
        except JSONError as error:
            found = (Diagnostic("", f"not a single JSON value: {error}"),)
        else:
            found = diagnostics(schema.validator(), value)
            value_json = Json.of(value)
    if not found and value_json is not None:
        return Outcome.ok(value_json, audit_value=value_json, **common)
    summary = "structured output invalid: " + "; ".join(
        f"{d.path or '/'}: {d.message}" for d in found
    )
    # The value stays with the failed result for audit (seed 001: "The full
    # audit value is retained in runErr.Result"), never as the decoded value.
    kind = "decode_error" if schema.on_invalid == "return" else "policy_violation"
    return Outcome.failed(kind, summary, diagnostics=found, audit_value=value_json, **common)
