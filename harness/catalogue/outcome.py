"""
The canonical outcome of one agent-cli run, and its error taxonomy.

Any adaptor, in any language, reports what happened in this one shape; the
harness compares it with a scenario's expectation.  It describes the result
of "run, then decode" as the consumer sees it:

* ``status: ok``: the run succeeded and Decode returned ``value``.
* ``status: error`` with ``error`` one of `ERROR_KINDS`:

  - ``invalid_output_schema`` / ``structured_output_unsupported`` /
    ``invalid_driver_config``: rejected before launch (``launches == 0``);
  - ``execution_error`` with a `CAUSES` entry: the provider run failed;
  - ``policy_violation``: the run completed but the final value was invalid
    or missing, under the default fail-the-run policy;
  - ``decode_error``: the run itself succeeded (for example under the
    return-invalid policy, or without a schema) but Decode failed.

``diagnostics`` are validator leaf messages with JSON-pointer instance
paths and the JSON Schema keyword that failed; ``raw`` is the provider's
terminal payload kept for audit; ``text`` is the assistant text the adaptor
kept; ``stdout`` the provider's standard output as the adaptor kept it for
audit; ``audit_value`` the final value the provider gave, kept for audit
whether or not it validated (the seed's "full audit value is retained in
runErr.Result").  ``launches`` is measured by the fake provider, not
reported by the adaptor.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, ClassVar, Final

from harness.catalogue.scenario import Json

#: Every error kind an outcome may carry.
ERROR_KINDS: Final = (
    "invalid_output_schema",
    "structured_output_unsupported",
    "invalid_driver_config",
    "policy_violation",
    "decode_error",
    "execution_error",
)

#: Why an execution failed, most specific first when several apply.
CAUSES: Final = (
    "timeout",
    "signal",
    "malformed_protocol",
    "turn_failed",
    "api_error",
    "max_structured_output_retries",
    "nonzero_exit",
    "missing_terminal",
)


@dataclass(frozen=True, order=True)
class Diagnostic:
    """One validator leaf message at a JSON-pointer instance path, with its keyword."""

    path: str
    message: str
    #: The JSON Schema keyword that failed; None for problems that are not a
    #: schema rule (no candidate at all, a candidate that is not JSON).
    keyword: str | None = None

    def to_json(self) -> dict[str, str | None]:
        return {"path": self.path, "message": self.message, "keyword": self.keyword}


@dataclass(frozen=True)
class ProviderCall:
    """What one launch of a fake provider received, from its own record."""

    cli: str
    argv: tuple[str, ...]
    output_format: str | None
    schema: Json | None
    prompt: str | None
    model: str | None = None

    @classmethod
    def from_record(cls, record: dict[str, Any]) -> ProviderCall:
        schema = record.get("schema")
        return cls(
            cli=str(record.get("cli")),
            argv=tuple(str(a) for a in record.get("argv", ())),
            output_format=record.get("output_format"),
            schema=None if schema is None else Json.of(schema),
            prompt=record.get("prompt"),
            model=record.get("model"),
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "cli": self.cli,
            "argv": list(self.argv),
            "output_format": self.output_format,
            "schema": None if self.schema is None else self.schema.value,
            "prompt": self.prompt,
            "model": self.model,
        }


@dataclass(frozen=True)
class Outcome:
    """See the module docstring for what each field means."""

    #: The seam this outcome belongs to (service-api cases observe other things).
    seam: ClassVar[str] = "agent-cli"

    status: str
    error: str | None = None
    cause: str | None = None
    message: str | None = None
    value: Json | None = None
    text: str | None = None
    mechanism: str | None = None
    diagnostics: tuple[Diagnostic, ...] = ()
    raw: Json | None = None
    stdout: str | None = None
    audit_value: Json | None = None
    launches: int = 0
    calls: tuple[ProviderCall, ...] = field(default=(), compare=True)

    @classmethod
    def ok(cls, value: Json | None, **fields: Any) -> Outcome:
        return cls(status="ok", value=value, **fields)

    @classmethod
    def failed(cls, error: str, message: str, **fields: Any) -> Outcome:
        assert error in ERROR_KINDS, error
        return cls(status="error", error=error, message=message, **fields)

    def summary(self) -> str:
        """One line for a failing case."""
        return f"{self.status} {self.error or ''} {self.cause or ''} {self.message or ''}"

    def observed(self, calls: tuple[ProviderCall, ...]) -> Outcome:
        """This outcome with what the fake providers recorded attached."""
        return replace(self, launches=len(calls), calls=calls)

    def to_json(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "error": self.error,
            "cause": self.cause,
            "message": self.message,
            "value": None if self.value is None else self.value.value,
            "has_value": self.value is not None,
            "text": self.text,
            "mechanism": self.mechanism,
            "diagnostics": [d.to_json() for d in self.diagnostics],
            "raw": None if self.raw is None else self.raw.value,
            "stdout": self.stdout,
            "audit_value": None if self.audit_value is None else self.audit_value.value,
            "has_audit_value": self.audit_value is not None,
            "launches": self.launches,
            "calls": [c.to_json() for c in self.calls],
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Outcome:
        """Rebuild an outcome reported over a wire (trusting its shape)."""
        has_value = data.get("has_value", data.get("value") is not None)
        has_audit = data.get("has_audit_value", data.get("audit_value") is not None)
        raw = data.get("raw")
        return cls(
            status=data["status"],
            error=data.get("error"),
            cause=data.get("cause"),
            message=data.get("message"),
            value=Json.of(data.get("value")) if has_value else None,
            text=data.get("text"),
            mechanism=data.get("mechanism"),
            diagnostics=tuple(
                Diagnostic(d["path"], d["message"], d.get("keyword"))
                for d in data.get("diagnostics", ())
            ),
            raw=None if raw is None else Json.of(raw),
            stdout=data.get("stdout"),
            audit_value=Json.of(data.get("audit_value")) if has_audit else None,
            launches=int(data.get("launches", 0)),
            calls=tuple(ProviderCall.from_record(c) for c in data.get("calls", ())),
        )
