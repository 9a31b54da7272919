"""
Throng scenarios on the service-api seam: initialise, then (optionally) one turn.

The binding calls Throng's own ``POST /api/initialise`` with the scenario's
manifest.  On a 202 it reads the Claude wrapper options the manifest mapped
to, and when the scenario asks for a turn it runs one against the fake
``claude`` behind the sandbox and reads the publication: a completed turn's
A2A artifact, in the shape the scenario chose, or a failed turn's message.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar
from urllib.parse import quote

from harness.catalogue.outcome import ProviderCall
from harness.catalogue.scenario import Json, ProviderExpectation
from harness.catalogue.seam import Report
from harness.exceptions import ServiceFailed
from harness.seams import promises
from harness.seams.agent_cli import provider_expectation
from harness.seams.compare import Mismatch, json_equal, show
from harness.seams.service import common
from harness.targets.http import Connection
from harness.targets.workspace import Workspace

#: Expectation fields that only mean something after a turn.
_TURN_FIELDS = ("turn", "turn_error", "turn_error_contains", "parts", "provider")


@dataclass(frozen=True)
class ThrongTurn:
    """One turn after a successful initialise."""

    prompt: str = "Report the build status."
    #: The A2A version whose part shapes the artifact uses (`_a2a.SHAPES`).
    a2a: str = "v0.3"
    timeout: float = 10.0


@dataclass(frozen=True)
class ThrongRequest:
    """The manifest to initialise with, and the turn to run after a 202."""

    service: ClassVar[str] = "throng"

    manifest: Json
    turn: ThrongTurn | None = None


@dataclass(frozen=True)
class FieldError:
    """One expected entry of a 400 body; ``reason`` is checked only when given."""

    field: str
    reason: str | None = None


@dataclass(frozen=True)
class ThrongExpectation:
    """Only the fields given are checked."""

    status: int | None = None
    errors: tuple[FieldError, ...] | None = None
    options: tuple[tuple[str, Json], ...] = ()
    options_unset: tuple[str, ...] = ()
    turn: str | None = None
    turn_error: str | None = None
    turn_error_contains: str | None = None
    parts: Json | None = None
    launches: int | None = None
    provider: ProviderExpectation | None = None


@dataclass(frozen=True)
class ThrongOutcome:
    """The answers as the service gave them, and what the fake measured."""

    seam: ClassVar[str] = "service-api"
    service: ClassVar[str] = "throng"

    status: int
    body: Json
    options: Json | None = None
    turn: Json | None = None
    launches: int = 0
    calls: tuple[ProviderCall, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "service": self.service,
            "initialise": {"status": self.status, "body": self.body.value},
            "options": None if self.options is None else self.options.value,
            "turn": None if self.turn is None else self.turn.value,
            "launches": self.launches,
            "calls": common.calls_json(self.calls),
        }

    def summary(self) -> str:
        state = "no turn" if self.turn is None else f"turn {common.at(self.turn.value, 'state')}"
        return f"initialise {self.status}, {state}"


def _published(request: Mapping[str, Any], expect: Mapping[str, Any]) -> bool:
    return "turn" in request and expect.get("turn") == "completed"


#: What every Throng expectation pins (`harness.seams.promises`).
DECISIVE = (
    promises.Decisive(("status",), "what initialise answers"),
    promises.Decisive(("errors",), "which fields a 400 names", lambda r, e: e.get("status") == 400),
    promises.Decisive(
        ("turn_error", "turn_error_contains"),
        "why the turn failed",
        lambda r, e: e.get("turn") == "failed",
    ),
    promises.Decisive(("parts",), "what the turn publishes", _published),
    # A failed turn may fail before or after launching the agent (an invalid schema
    # is refused by the SDK or by the CLI it starts), so only a published turn pins it.
    promises.Decisive(("launches",), "a published turn ran the agent", _published),
)
#: Terms of art a Throng description may name, and the check each calls for.
PHRASES = (
    promises.Phrase(r"\b(400|202)\b", ("status",), promises.number(), among=True),
    promises.Phrase(r"\bdata part\b", ("parts",)),
    promises.Phrase(
        r"\bfails? the turn\b|\bturn fails\b|\bturn (?:is )?failed\b|\bfailed turn\b",
        ("turn",),
        lambda m: "failed",
    ),
    promises.Phrase(r"Structured output retries exhausted", ("turn_error", "turn_error_contains")),
    promises.Phrase(r"\boutputFormat\b", ("options", "options_unset")),
)


class Throng:
    """See the module docstring."""

    def cli(self, request: dict[str, Any]) -> str | None:
        return "claude"

    def check(self, doc: dict[str, Any], report: Report) -> None:
        has_turn = "turn" in doc["request"]
        provider = doc.get("provider", {})
        if has_turn and "provider" not in doc:
            report(("provider",), "required field is missing: the turn needs a fake agent")
        if not has_turn and "provider" in doc:
            report(("provider",), "no turn runs, so no fake agent is launched (add request.turn)")
        if "follow_ups" in provider:
            report(("provider", "follow_ups"), "a Throng scenario runs one turn")
        if not has_turn:
            for name in _TURN_FIELDS:
                if name in doc["expect"]:
                    report(("expect", name), "expects a turn, but request.turn is not given")
        common.check_options(doc, report)
        promises.check(doc, DECISIVE, PHRASES, report)

    def request(self, raw: dict[str, Any]) -> ThrongRequest:
        turn = None
        if "turn" in raw:
            given = raw["turn"]
            turn = ThrongTurn(
                prompt=given.get("prompt", ThrongTurn.prompt),
                a2a=given.get("a2a", ThrongTurn.a2a),
                timeout=float(given.get("timeout", ThrongTurn.timeout)),
            )
        return ThrongRequest(Json.of(raw["manifest"]), turn)

    def expectation(self, raw: dict[str, Any]) -> ThrongExpectation:
        errors = None
        if "errors" in raw:
            errors = tuple(FieldError(e["field"], e.get("reason")) for e in raw["errors"])
        return ThrongExpectation(
            status=raw.get("status"),
            errors=errors,
            options=common.options_from(raw.get("options", {})),
            options_unset=tuple(raw.get("options_unset", ())),
            turn=raw.get("turn"),
            turn_error=raw.get("turn_error"),
            turn_error_contains=raw.get("turn_error_contains"),
            parts=Json.of(raw["parts"]) if "parts" in raw else None,
            launches=raw.get("launches"),
            provider=provider_expectation(raw["provider"]) if "provider" in raw else None,
        )

    def observe(
        self, request: object, connection: Connection, workspace: Workspace
    ) -> ThrongOutcome:
        assert isinstance(request, ThrongRequest), request
        initialised = connection.call("POST", "/api/initialise", request.manifest.value)
        options = turn = None
        if initialised.status == 202:
            sandbox = common.at(initialised.body, "sandboxId")
            if not isinstance(sandbox, str) or not sandbox:
                raise ServiceFailed(
                    f"{connection.where}: POST /api/initialise answered 202 without a "
                    f"sandboxId string: {common.shown(initialised.body)[:200]}"
                )
            base = f"/conformance/throng/sandboxes/{quote(sandbox, safe='')}"
            options = common.ok(
                connection, connection.call("GET", f"{base}/options"), f"GET {base}/options"
            )
            if request.turn is not None:
                body = {
                    "prompt": request.turn.prompt,
                    "a2a": request.turn.a2a,
                    "timeout": request.turn.timeout,
                    "provider": workspace.provider().to_json(),
                }
                reply = connection.call("POST", f"{base}/turns", body, timeout=request.turn.timeout)
                turn = common.ok(connection, reply, f"POST {base}/turns")
        calls = workspace.calls()
        return ThrongOutcome(
            status=initialised.status,
            body=Json.of(initialised.body),
            options=common.maybe(options),
            turn=common.maybe(turn),
            launches=len(calls),
            calls=calls,
        )

    def compare(self, expect: object, actual: common.ServiceOutcome) -> tuple[Mismatch, ...]:
        assert isinstance(expect, ThrongExpectation), expect
        assert isinstance(actual, ThrongOutcome), actual
        return tuple(_mismatches(expect, actual))

    def outcome_from_json(self, data: dict[str, Any]) -> ThrongOutcome:
        return ThrongOutcome(
            status=int(data["initialise"]["status"]),
            body=Json.of(data["initialise"]["body"]),
            options=common.maybe(data.get("options")),
            turn=common.maybe(data.get("turn")),
            launches=int(data.get("launches", 0)),
            calls=common.calls_from(data),
        )

    def describe(self, expect: object) -> list[str]:
        assert isinstance(expect, ThrongExpectation), expect
        out = []
        if expect.status is not None:
            out.append(f"initialise answers `{expect.status}`")
        for error in expect.errors or ():
            out.append(f"a field error names `{error.field}`")
        out += [f"option `{key}` is `{value.text}`" for key, value in expect.options]
        out += [f"option `{key}` is left unset" for key in expect.options_unset]
        if expect.turn is not None:
            out.append(f"the turn is `{expect.turn}`")
        if expect.turn_error is not None:
            out.append(f"the turn fails with `{expect.turn_error}`")
        if expect.turn_error_contains is not None:
            out.append(f"the turn failure mentions `{expect.turn_error_contains}`")
        if expect.parts is not None:
            out.append(f"artifact parts: `{expect.parts.text}`")
        return out + common.describe_fake_side(expect.launches, expect.provider)

    def show_request(self, request: object) -> list[str]:
        assert isinstance(request, ThrongRequest), request
        lines = ["request: service=throng", f"  manifest: {request.manifest.text}"]
        if request.turn is not None:
            lines.append(
                f"  turn: a2a={request.turn.a2a} timeout={request.turn.timeout} "
                f"prompt={request.turn.prompt!r}"
            )
        return lines


def _mismatches(expect: ThrongExpectation, actual: ThrongOutcome) -> Iterator[Mismatch]:
    if expect.status is not None:
        yield from common.equal("status", expect.status, actual.status)
    if expect.errors is not None:
        yield from _errors(expect.errors, actual.body.value)
    if expect.options or expect.options_unset:
        got = common.MISSING if actual.options is None else actual.options.value
        yield from common.options("options", expect.options, expect.options_unset, got)
    turn = common.MISSING if actual.turn is None else actual.turn.value
    if expect.turn is not None:
        yield from common.equal("turn.state", expect.turn, common.at(turn, "state"))
    if expect.turn_error is not None:
        yield from common.equal("turn.error", expect.turn_error, common.at(turn, "error"))
    if expect.turn_error_contains is not None:
        yield from common.contains(
            "turn.error", expect.turn_error_contains, common.at(turn, "error")
        )
    if expect.parts is not None:
        got = common.at(turn, "artifact", "parts")
        yield from common.equal("artifact.parts", expect.parts.value, got)
    yield from common.fake_side(expect.launches, expect.provider, actual)


def _errors(want: tuple[FieldError, ...], body: Any) -> Iterator[Mismatch]:
    """The 400 body names exactly the expected fields, in order; reasons when given."""
    fields = [common.at(entry, "field") for entry in body] if isinstance(body, list) else None
    if fields is None or not json_equal([e.field for e in want], fields):
        expected = [{"field": e.field} for e in want]
        yield Mismatch("errors", show(expected), common.shown(body))
        return
    for index, error in enumerate(want):
        if error.reason is not None:
            got = common.at(body, index, "reason")
            yield from common.equal(f"errors[{index}].reason", error.reason, got)
