"""
Targets: how a system under test is reached.

Every target says which seams it serves; each seam has one Protocol its
targets implement.  On the agent-cli seam an `Adaptor` runs one request
against the fake provider and returns the canonical `Outcome`; on the
service-api seam a `Service` opens a `Connection` that speaks the
conformance binding over HTTP.  The reference serves both: the reference
adaptor pipeline, and the reference service models in process (behind an
httpx transport, so they are driven by exactly the client code that drives
a real service over ``http:BASE_URL``).  Targets are created from a spec
string through a registry of kinds, never through a chain of conditions.

Beside the registry: `protocol` (adaptors in any language over JSON lines),
`serve` (the reference adaptor behind that protocol), `http` (services over
the conformance binding), `real` (the real CLIs at any published version)
and `workspace` (the fake's private folder for one case).

May import: `harness.systems`, `harness.adaptor`, `harness.catalogue`,
`harness.exceptions`, `providers_fake`.
"""

from __future__ import annotations

import importlib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import httpx
import jsonschema

from harness.adaptor import pipeline
from harness.adaptor.launch import InProcess, Launcher, Subprocess
from harness.adaptor.pipeline import Provider
from harness.catalogue.jsonvalue import non_finite
from harness.catalogue.outcome import Outcome
from harness.catalogue.scenario import Request, Seam
from harness.exceptions import InvalidAnswer, NoSuchTarget, ReservedTargetName
from harness.systems.service import ReferenceService
from harness.targets.http import GRACE, Connection
from harness.targets.protocol import ProtocolAdaptor
from harness.targets.real import PINS, RealCli, unpinned, versions_argument


@cache
def outcome_validator() -> jsonschema.Draft202012Validator:
    """The packaged outcome schema, for answers from adaptors we did not write."""
    text = resources.files("harness").joinpath("schemas/outcome.schema.json").read_text()
    return jsonschema.Draft202012Validator(json.loads(text))


class Target(Protocol):
    """A system under test, reachable for some seams."""

    @property
    def name(self) -> str: ...

    @property
    def kind(self) -> str: ...

    @property
    def seams(self) -> frozenset[Seam]: ...


@runtime_checkable
class Adaptor(Target, Protocol):
    """The agent-cli seam's system under test: an adaptor in front of a fake CLI."""

    def run(self, request: Request, provider: Provider, scenario_id: str) -> Outcome: ...


@runtime_checkable
class Service(Target, Protocol):
    """The service-api seam's system under test: a service behind the HTTP binding."""

    def connect(self) -> Connection: ...


@runtime_checkable
class Versioned(Target, Protocol):
    """A target that runs (or models) given versions of the agent CLIs."""

    @property
    def versions(self) -> tuple[tuple[str, str], ...]:
        """Each CLI and its version, sorted by CLI."""
        ...


def versions_of(target: Target) -> dict[str, str]:
    """The CLI versions a target runs or models; empty for one that has none."""
    return dict(target.versions) if isinstance(target, Versioned) else {}


@runtime_checkable
class AgentBinary(Target, Protocol):
    """The model-api seam's system under test: an agent CLI run against a fake model API."""

    def binary(self, cli: str) -> Path:
        """The executable of ``cli``; raises FileNotFoundError naming the install command."""
        ...


#: The base URL the in-process reference service answers on; never resolved.
REFERENCE_URL = "http://reference-service.invalid"


@dataclass(frozen=True)
class Reference:
    """
    The reference implementations, launching fakes through ``launcher``.

    For agent-cli, the reference adaptor pipeline; for service-api, the
    reference service models (Throng, T3), fresh for every connection so
    that identifiers in reports do not depend on which cases ran before; for
    model-api, the reference models of the CLIs at ``versions`` (the pins;
    ``reference:claude=2.1.235`` gives other versions' profiles, and then
    serves model-api only, the one seam with CLI versions).
    """

    name: str
    launcher: Launcher
    kind: str = "reference"
    seams: frozenset[Seam] = frozenset({Seam.AGENT_CLI, Seam.SERVICE_API, Seam.MODEL_API})
    versions: tuple[tuple[str, str], ...] = PINS

    @classmethod
    def from_spec(cls, spec: str, launcher: Launcher) -> Reference:
        kind, colon, argument = spec.partition(":")
        if not colon:
            return cls(spec, launcher, kind)
        versions = versions_argument(spec, argument)
        return cls(spec, launcher, kind, frozenset({Seam.MODEL_API}), versions)

    def run(self, request: Request, provider: Provider, scenario_id: str) -> Outcome:
        return pipeline.run(request, provider, self.launcher)

    def connect(self) -> Connection:
        app = ReferenceService(self.launcher)
        transport = httpx.MockTransport(app.handle)
        client = httpx.Client(transport=transport, base_url=REFERENCE_URL)
        return Connection(client, "the reference service")


@dataclass(frozen=True)
class HttpService:
    """
    Any service by base URL, as ``http:BASE_URL`` (``http:http://127.0.0.1:8080``).

    The service must implement the conformance binding (README: the
    service-api seam) and launch the fake agent CLI the harness names in
    each turn, so it runs beside the harness.  A service that is down, too
    slow or answers with something that is not JSON errors that scenario.
    """

    name: str
    url: str
    grace: float = GRACE
    kind: str = "http"
    seams: frozenset[Seam] = frozenset({Seam.SERVICE_API})

    @classmethod
    def from_spec(cls, spec: str) -> HttpService:
        # ``http:BASE_URL``; a bare ``http://…`` is taken as the base URL itself.
        _, _, rest = spec.partition(":")
        url = spec if rest.startswith("//") else rest
        if not url.startswith(("http://", "https://")):
            raise NoSuchTarget(spec, ("http:BASE_URL, e.g. http:http://127.0.0.1:8080",))
        return cls(spec, url.rstrip("/"))

    def connect(self) -> Connection:
        return Connection(httpx.Client(base_url=self.url), self.url, self.grace)


@dataclass(frozen=True)
class PythonCallable:
    """
    Any Python adaptor, as ``python:package.module:function``.

    The function gets one JSON-shaped dict (``request`` and ``provider``, see
    the README) and returns an outcome dict; what it returns is checked
    against the packaged outcome schema, and a bad answer is an error of the
    target, which the harness records as ``errored``.
    """

    name: str
    function: Callable[[dict[str, Any]], dict[str, Any]]
    kind: str = "python"
    seams: frozenset[Seam] = frozenset({Seam.AGENT_CLI})

    @classmethod
    def from_spec(cls, spec: str) -> PythonCallable:
        _, _, location = spec.partition(":")
        module_name, _, attribute = location.partition(":")
        if not module_name or not attribute:
            raise NoSuchTarget(spec, ("python:package.module:function",))
        try:
            function = getattr(importlib.import_module(module_name), attribute)
        except (ImportError, AttributeError) as error:
            raise NoSuchTarget(spec, (f"cannot load it: {error}",)) from None
        return cls(spec, function)

    def run(self, request: Request, provider: Provider, scenario_id: str) -> Outcome:
        message = {
            "scenario": scenario_id,
            "request": request.to_json(),
            "provider": provider.to_json(),
        }
        answer = self.function(message)
        where = non_finite(answer)
        if where is not None:  # no report could print it as JSON
            raise InvalidAnswer(self.name, (f"{where}: NaN or infinity is not a JSON number",))
        problems = sorted(e.message for e in outcome_validator().iter_errors(answer))
        if problems:
            raise InvalidAnswer(self.name, tuple(problems))
        return Outcome.from_json(answer)


#: Target kind → factory taking the full spec string.
KINDS: dict[str, Callable[[str], Target]] = {
    "reference": lambda spec: Reference.from_spec(spec, Subprocess()),
    "reference-inproc": lambda spec: Reference.from_spec(spec, InProcess()),
    "python": PythonCallable.from_spec,
    "cmd": ProtocolAdaptor.from_spec,
    "cmd-check": ProtocolAdaptor.from_spec,
    "http": HttpService.from_spec,
    "real": RealCli.from_spec,
}

DEFAULT_TARGETS = ("reference",)


_NAMED = re.compile(r"([a-z][a-z0-9-]*)=(.+)", re.DOTALL)
#: Names a target may not take, and why.
RESERVED = {
    "differential": "baselines/differential.yaml holds the differential's expectations, "
    "not a target's baseline",
}


def create(spec: str) -> Target:
    """
    The target a ``--target`` spec names: ``kind``, ``kind:argument``, or
    ``name=kind:argument`` to give it a short name in reports and baselines.
    """
    named = _NAMED.fullmatch(spec)
    name, body = (named[1], named[2]) if named else (None, spec)
    if name in RESERVED:
        raise ReservedTargetName(name, RESERVED[name])
    kind = body.split(":", 1)[0]
    factory = KINDS.get(kind)
    if factory is None:
        raise NoSuchTarget(spec, tuple(sorted(KINDS)))
    target = factory(body)
    return replace(target, name=name) if name else target  # type: ignore[type-var]


def prepare(target: Target) -> None:
    """
    What a target needs before its first case (the CLI versions it runs,
    installed); called once by the front, never by a worker.  Raises
    HarnessError with one line when it cannot be done.
    """
    getter = getattr(target, "prepare", None)
    if getter is not None:
        getter()


#: Target kinds whose model-api outcomes come from the reference models.
REFERENCE_KINDS = frozenset({"reference", "reference-inproc"})
#: Target kinds that run the real binaries.
REAL_KINDS = frozenset({"real"})


def with_companions(specs: tuple[str, ...]) -> tuple[str, ...]:
    """
    ``specs``, plus a reference at the versions of each real target that no
    reference of the run models: a run that compares the reference models
    with ``real:claude=2.1.235`` compares them at 2.1.235 (the differential
    pairs only outcomes of one version).  Nothing is added to a run without
    a reference.
    """
    made = [create(spec) for spec in specs]
    references = [t for t in made if t.kind in REFERENCE_KINDS]
    if not references:
        return specs
    modelled = {t.versions for t in references if isinstance(t, Versioned)}
    added: list[str] = []
    for target in made:
        if target.kind not in REAL_KINDS or not isinstance(target, Versioned):
            continue
        if target.versions in modelled:
            continue
        argument = unpinned(target.versions)
        spec = f"{references[0].kind}:{argument}" if argument else references[0].kind
        if spec not in specs and spec not in added:
            added.append(spec)
    return (*specs, *added)


_SHARED: dict[str, Target] = {}


def shared(spec: str) -> Target:
    """One target per spec per process, so long-lived adaptors serve many cases."""
    if spec not in _SHARED:
        _SHARED[spec] = create(spec)
    return _SHARED[spec]


def close_all() -> None:
    """Stop every shared target that holds a process."""
    while _SHARED:
        _, target = _SHARED.popitem()
        close = getattr(target, "close", None)
        if close is not None:
            close()
