"""
The reference model of Throng's structured-output contract (seed 000, THR-01..08).

``POST /api/initialise`` validates only the wrapper shape of
``agent.output_format`` (THR-01, THR-02): the schema body is never inspected,
so an invalid JSON Schema is accepted and fails at turn time (THR-04).  A
valid manifest is accepted with 202; the agent section becomes the Claude
wrapper's options, where only the outer keys are renamed and the schema
rides through untouched (THR-05), and a manifest without the key leaves
``outputFormat`` unset (THR-03).

A turn runs the agent and publishes one ``response`` artifact: the text part
first, then a JSON data part only when the structured result is an object
(THR-06, THR-07).  The CLI's retry exhaustion fails the turn with the fixed
message the contract names (THR-08) instead of degrading to freeform text.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final

from harness.catalogue.outcome import Outcome
from harness.catalogue.scenario import Json
from harness.systems import a2a
from harness.systems.turns import Runner, TurnInput

RETRIES_EXHAUSTED: Final = "Structured output retries exhausted."
#: The 400 reasons the spec gives; scenarios check the field, not the wording.
FORMAT_REASON: Final = "must be an object with type json_schema"
SCHEMA_REASON: Final = "must be a JSON Schema object"
ARTIFACT_NAME: Final = "response"

#: Pipeline failures with a fixed turn-failure message; others pass their message on.
_FAILURE_MESSAGES: Final = {
    ("execution_error", "max_structured_output_retries"): RETRIES_EXHAUSTED,
}
#: Outcome errors that still complete the turn: the text is published, without data.
_COMPLETING_ERRORS: Final = frozenset({None, "policy_violation", "decode_error"})


def _same(value: Any) -> Any:
    return value


def _thinking(value: Any) -> Any:
    """``thinking.budget_tokens`` is the one nested key the mapping renames."""
    if not isinstance(value, dict):
        return value
    return {("budgetTokens" if k == "budget_tokens" else k): v for k, v in value.items()}


#: Manifest ``agent`` key → (wrapper option, how its value maps).  ``output_format``
#: maps verbatim: its keys are JSON Schema's own vocabulary (THR-05).
_OPTIONS: Final[dict[str, tuple[str, Callable[[Any], Any]]]] = {
    "model": ("model", _same),
    "effort": ("effort", _same),
    "permission_mode": ("permissionMode", _same),
    "thinking": ("thinking", _thinking),
    "output_format": ("outputFormat", _same),
}


def field_errors(manifest: Any) -> list[dict[str, str]]:
    """The field-level 400 body for ``manifest``; empty when it is accepted."""
    if not isinstance(manifest, dict):
        return [{"field": "manifest", "reason": "must be a JSON object"}]
    agent = manifest.get("agent")
    if not isinstance(agent, dict):
        return [{"field": "agent", "reason": "must be an object"}]
    if "output_format" not in agent:
        return []  # THR-03: absent is accepted and changes nothing
    output_format = agent["output_format"]
    if not isinstance(output_format, dict) or output_format.get("type") != "json_schema":
        return [{"field": "agent.output_format", "reason": FORMAT_REASON}]
    if not isinstance(output_format.get("schema"), dict):
        return [{"field": "agent.output_format.schema", "reason": SCHEMA_REASON}]
    return []


def wrapper_options(agent: dict[str, Any]) -> dict[str, Any]:
    """The Claude wrapper options an accepted ``agent`` section maps to."""
    return {
        option: mapping(agent[key]) for key, (option, mapping) in _OPTIONS.items() if key in agent
    }


def publication(
    outcome: Outcome, structured: bool, version: str, artifact_id: str
) -> dict[str, Any]:
    """The turn's result as published: a completed artifact or a failed turn."""
    if outcome.error not in _COMPLETING_ERRORS:
        known = _FAILURE_MESSAGES.get((str(outcome.error), str(outcome.cause)))
        message = known or outcome.message or ""
        return {"state": "failed", "error": message}
    shape = a2a.SHAPES[version]
    parts = [shape.text(outcome.text or "")]
    # Only a structured result the caller asked for, and only an object (THR-07).
    if structured and outcome.status == "ok" and outcome.value is not None:
        value = outcome.value.value
        if isinstance(value, dict):
            parts.append(shape.data(value))
    artifact = a2a.artifact(version, artifact_id, ARTIFACT_NAME, parts)
    return {"state": "completed", "artifact": artifact}


@dataclass
class _Sandbox:
    options: dict[str, Any]
    turns: int = 0

    @property
    def schema(self) -> Json | None:
        output_format = self.options.get("outputFormat")
        if not isinstance(output_format, dict):
            return None
        return Json.of(output_format.get("schema"))


@dataclass
class Throng:
    """One Throng instance: its sandboxes, and the runner behind their agents."""

    runner: Runner
    sandboxes: dict[str, _Sandbox] = field(default_factory=dict)

    def initialise(self, manifest: Any) -> tuple[int, Any]:
        errors = field_errors(manifest)
        if errors:
            return 400, errors
        sandbox_id = f"sandbox-{len(self.sandboxes) + 1}"
        self.sandboxes[sandbox_id] = _Sandbox(wrapper_options(manifest["agent"]))
        return 202, {"sandboxId": sandbox_id}

    def options(self, sandbox_id: str) -> tuple[int, Any]:
        sandbox = self.sandboxes.get(sandbox_id)
        if sandbox is None:
            return 404, {"error": f"no sandbox {sandbox_id!r}"}
        return 200, sandbox.options

    def turn(self, sandbox_id: str, body: dict[str, Any]) -> tuple[int, Any]:
        sandbox = self.sandboxes.get(sandbox_id)
        if sandbox is None:
            return 404, {"error": f"no sandbox {sandbox_id!r}"}
        version = body.get("a2a", "v0.3")
        if version not in a2a.SHAPES:
            return 400, {"error": f"unknown A2A version {version!r}"}
        sandbox.turns += 1
        outcome = self.runner(
            TurnInput(
                driver="claude",
                prompt=str(body.get("prompt", "")),
                schema=sandbox.schema,
                timeout=float(body.get("timeout", 10.0)),
                provider=body.get("provider", {}),
            )
        )
        artifact_id = f"{sandbox_id}-response-{sandbox.turns}"
        return 200, publication(outcome, sandbox.schema is not None, version, artifact_id)
