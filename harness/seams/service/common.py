"""
What the services of the service-api seam share: their registry and comparisons.

The service-api seam has one scenario shape per service (``request.service``:
Throng, T3).  Each registers a `ServiceKind` here that builds its typed
request and expectation, drives the conformance binding, and compares what
came back; `harness.seams.service.seam` dispatches on the service name through
`SERVICES` and never branches on it.

Comparisons read answers of services we did not write, so every lookup
tolerates any JSON shape: a missing member is `MISSING`, shown as
``<missing>`` in the diff, never an exception.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, ClassVar, Final, Protocol

from harness.catalogue.outcome import ProviderCall
from harness.catalogue.scenario import Json, ProviderExpectation
from harness.catalogue.seam import Report
from harness.exceptions import ServiceFailed
from harness.seams.compare import Mismatch, json_equal, provider_mismatches, show
from harness.targets.http import Connection, Reply
from harness.targets.workspace import Workspace


class _Missing:
    def __repr__(self) -> str:
        return "<missing>"


#: A member an answer does not have (distinct from JSON ``null``).
MISSING: Final = _Missing()


class ServiceOutcome(Protocol):
    """What one service-api case observed (a `SeamOutcome` of the service-api seam)."""

    seam: ClassVar[str]
    service: ClassVar[str]

    @property
    def launches(self) -> int: ...

    @property
    def calls(self) -> tuple[ProviderCall, ...]: ...

    def to_json(self) -> dict[str, Any]: ...

    def summary(self) -> str: ...


class ServiceKind(Protocol):
    """One service's scenarios: typed values, the binding's calls, the comparison."""

    def cli(self, request: dict[str, Any]) -> str | None:
        """The fake agent CLI behind the service for this request (None: there is none)."""
        ...

    def check(self, doc: dict[str, Any], report: Report) -> None: ...

    def request(self, raw: dict[str, Any]) -> object: ...

    def expectation(self, raw: dict[str, Any]) -> object: ...

    def observe(
        self, request: object, connection: Connection, workspace: Workspace
    ) -> ServiceOutcome: ...

    def compare(self, expect: object, actual: ServiceOutcome) -> tuple[Mismatch, ...]: ...

    def outcome_from_json(self, data: dict[str, Any]) -> ServiceOutcome: ...

    def describe(self, expect: object) -> list[str]: ...

    def show_request(self, request: object) -> list[str]: ...


#: Service name → its kind; the scenario schema lists the same names.
SERVICES: dict[str, ServiceKind] = {}


def register(name: str, kind: ServiceKind) -> None:
    if name in SERVICES:
        raise TypeError(f"service {name!r} registered twice")
    SERVICES[name] = kind


# -- reading answers -----------------------------------------------------------


def at(value: Any, *path: str | int) -> Any:
    """``value[path…]`` for any JSON shape; `MISSING` where a member is absent."""
    for step in path:
        if isinstance(step, str):
            if not isinstance(value, dict) or step not in value:
                return MISSING
        elif not isinstance(value, list) or not -len(value) <= step < len(value):
            return MISSING
        value = value[step]
    return value


def shown(value: Any) -> str:
    return repr(MISSING) if value is MISSING else show(value)


def ok(connection: Connection, reply: Reply, what: str) -> Any:
    """The body of a binding call that must succeed; otherwise the binding is broken."""
    if reply.status != 200:
        text = shown(reply.body).replace("\n", " ")[:200]
        raise ServiceFailed(f"{connection.where}: {what} answered {reply.status}: {text}")
    return reply.body


def calls_json(calls: tuple[ProviderCall, ...]) -> list[dict[str, Any]]:
    return [call.to_json() for call in calls]


def calls_from(data: dict[str, Any]) -> tuple[ProviderCall, ...]:
    return tuple(ProviderCall.from_record(c) for c in data.get("calls", ()))


def maybe(value: Any) -> Json | None:
    return None if value is None else Json.of(value)


# -- comparing -----------------------------------------------------------------


def equal(field: str, want: Any, got: Any) -> Iterator[Mismatch]:
    """``got`` is ``want`` as JSON sees it (`json_equal`, as on every seam); missing never is."""
    if got is MISSING or not json_equal(want, got):
        yield Mismatch(field, show(want), shown(got))


def contains(field: str, fragment: str, got: Any) -> Iterator[Mismatch]:
    if not isinstance(got, str) or fragment not in got:
        yield Mismatch(field, f"contains {show(fragment)}", shown(got))


def options(
    field: str,
    want: tuple[tuple[str, Json], ...],
    unset: tuple[str, ...],
    got: Any,
) -> Iterator[Mismatch]:
    """Each named option deep-equal to what is expected; each unset one absent."""
    for key, value in want:
        yield from equal(f"{field}.{key}", value.value, at(got, key))
    for key in unset:
        found = at(got, key)
        if found is not MISSING:
            yield Mismatch(f"{field}.{key}", "<unset>", shown(found))


def fake_side(
    launches: int | None,
    provider: ProviderExpectation | None,
    actual: ServiceOutcome,
) -> Iterator[Mismatch]:
    """What the fake CLI behind the service measured: launches and what it received."""
    if launches is not None:
        yield from equal("launches", launches, actual.launches)
    if provider is not None:
        yield from provider_mismatches(provider, actual.calls)


def describe_fake_side(launches: int | None, provider: ProviderExpectation | None) -> list[str]:
    out = []
    if launches is not None:
        out.append(f"agent CLI launches: {launches}")
    if provider is not None:
        if provider.schema is not None:
            out.append(f"the agent CLI receives the schema `{provider.schema.text}`")
        if provider.no_schema:
            out.append("the agent CLI receives no schema")
    return out


def options_from(raw: dict[str, Any]) -> tuple[tuple[str, Json], ...]:
    return tuple((key, Json.of(value)) for key, value in raw.items())


def check_options(doc: dict[str, Any], report: Report) -> None:
    """``options`` and ``options_unset`` must not name the same option."""
    expectations = [("expect",)] + [("by_target", k) for k in doc.get("by_target", {})]
    for where in expectations:
        expect = doc[where[0]] if len(where) == 1 else doc[where[0]][where[1]]
        both = set(expect.get("options", {})) & set(expect.get("options_unset", ()))
        for key in sorted(both):
            report((*where, "options_unset"), f"{key!r} is also expected in 'options'")
