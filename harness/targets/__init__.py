"""
Targets: how a system under test is reached.

Every target says which seams it serves; each seam has one Protocol its
targets implement.  On the agent-cli seam an `Adaptor` runs one request
against the fake provider and returns the canonical `Outcome`; on the
service-api seam a `Service` opens a `Connection` that speaks the
conformance binding over HTTP.  The reference serves both: the reference
adaptor pipeline, and the reference service models in process (behind an
`harness.net` transport, so they are driven by exactly the client code that drives
a real service over ``http:BASE_URL``).  Targets are created from a spec
string through a registry of kinds, never through a chain of conditions.

Beside the registry: `protocol` (adaptors in any language over JSON lines),
`serve` (the reference adaptor behind that protocol), `http` (services over
the conformance binding), `real` (the real CLIs at any published version),
`workspace` (the fake's private folder for one case) and `skeleton` (adaptors
in other languages to start from, speaking that protocol).

May import: `harness.systems`, `harness.adaptor`, `harness.catalogue`,
`harness.exceptions`, `providers_fake`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Protocol, runtime_checkable

from harness import net
from harness.adaptor import pipeline
from harness.adaptor.launch import InProcess, Launcher, Subprocess
from harness.adaptor.pipeline import Provider
from harness.catalogue import contracts
from harness.catalogue.contracts import CURRENT, Contract
from harness.catalogue.outcome import Outcome
from harness.catalogue.scenario import Request, Seam
from harness.exceptions import BadTargetSpec, NoSuchTarget, ReservedTargetName
from harness.systems.service import ReferenceService
from harness.targets.http import GRACE, Connection
from harness.targets.protocol import ProtocolAdaptor
from harness.targets.pyadaptor import PythonCallable
from harness.targets.real import PINS, VERSIONS, RealCli, unpinned, versions_argument


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
class Contracted(Target, Protocol):
    """A target that reads agent-cli runs as one contract profile (`catalogue.contracts`)."""

    @property
    def contract(self) -> Contract: ...


def contract_of(target: Target) -> str | None:
    """The name of the contract profile a target follows; None for one that names none."""
    return target.contract.name if isinstance(target, Contracted) else None


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
    serves model-api only, the one seam with CLI versions).  On agent-cli it
    reads runs as ``contract`` (the catalogue's own reading unless
    ``reference:contract=NAME`` names an SDK release's), and then serves
    agent-cli only, the one seam with contract profiles.
    """

    name: str
    launcher: Launcher
    kind: str = "reference"
    seams: frozenset[Seam] = frozenset({Seam.AGENT_CLI, Seam.SERVICE_API, Seam.MODEL_API})
    versions: tuple[tuple[str, str], ...] = PINS
    contract: Contract = CURRENT

    @classmethod
    def from_spec(cls, spec: str, argument: str, launcher: Launcher) -> Reference:
        kind = spec.partition(":")[0]
        if not argument:
            return cls(spec, launcher, kind)
        key, equals, name = argument.partition("=")
        if key.strip() == CONTRACT and equals:
            if name.strip() not in contracts.CONTRACTS:
                known = ", ".join(contracts.CONTRACTS)
                raise BadTargetSpec(spec, f"no contract {name.strip()!r} (known: {known})")
            contract = contracts.get(name.strip())
            return cls(spec, launcher, kind, frozenset({Seam.AGENT_CLI}), contract=contract)
        try:
            versions = versions_argument(spec, argument)
        except BadTargetSpec as error:
            raise BadTargetSpec(spec, f"{error.why}, or {CONTRACT}=NAME") from None
        return cls(spec, launcher, kind, frozenset({Seam.MODEL_API}), versions)

    def run(self, request: Request, provider: Provider, scenario_id: str) -> Outcome:
        return pipeline.run(request, provider, self.launcher, self.contract)

    def connect(self) -> Connection:
        app = ReferenceService(self.launcher)
        transport = net.MockTransport(app.handle)
        client = net.Client(transport=transport, base_url=REFERENCE_URL)
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
            raise BadTargetSpec(spec, "give a base URL, as in http:http://127.0.0.1:8080")
        return cls(spec, url.rstrip("/"))

    def connect(self) -> Connection:
        return Connection.to(self.url, self.grace)


@dataclass(frozen=True)
class Kind:
    """
    One target kind as ``--target`` takes it: ``KIND`` or ``KIND:ARGUMENT``.

    The grammar of each kind's argument is declared here, not left to its
    factory: a kind that takes none refuses one (``real:anything`` is a
    usage error, not ``real``), and one that needs one says so.
    """

    #: Builds the target from the spec (as written) and the argument ("" if none).
    build: Callable[[str, str], Target]
    #: What the argument is, for usage lines (``COMMAND``); None: it takes none.
    argument: str | None = None
    #: Whether the argument may be left out (only when it has one).
    optional: bool = False

    def usage(self, kind: str) -> str:
        if self.argument is None:
            return kind
        return f"{kind}[:{self.argument}]" if self.optional else f"{kind}:{self.argument}"

    def check(self, spec: str, kind: str, argument: str | None) -> None:
        """Raise `BadTargetSpec` unless ``argument`` is what this kind takes."""
        if argument is not None and self.argument is None:
            raise BadTargetSpec(spec, f"{kind} takes no argument (use: {self.usage(kind)})")
        # ``real:`` is neither the pins nor a version: the colon promises an argument.
        missing = not argument and (argument is not None or not self.optional)
        if missing and self.argument is not None:
            raise BadTargetSpec(spec, f"{kind} needs {self.argument} (use: {self.usage(kind)})")


#: The key of a reference's argument that names a contract profile: ``reference:contract=NAME``.
CONTRACT = "contract"
#: What a reference's argument is: CLI versions (model-api) or a contract profile (agent-cli).
_REFERENCE_ARGUMENT = f"{VERSIONS}|{CONTRACT}=NAME"

#: Target kind → how its spec is read.
KINDS: dict[str, Kind] = {
    # The reference models and the real binaries take the CLI versions they
    # model or run (the pins when left out): ``real:claude=2.1.235,codex=0.171.0``.
    # A reference takes a contract profile instead: ``reference:contract=b07349b7``.
    "reference": Kind(
        lambda spec, argument: Reference.from_spec(spec, argument, Subprocess()),
        _REFERENCE_ARGUMENT,
        True,
    ),
    "reference-inproc": Kind(
        lambda spec, argument: Reference.from_spec(spec, argument, InProcess()),
        _REFERENCE_ARGUMENT,
        True,
    ),
    "python": Kind(PythonCallable.from_spec, "MODULE:FUNCTION"),
    "cmd": Kind(ProtocolAdaptor.from_spec, "COMMAND"),
    "cmd-check": Kind(
        lambda spec, command: ProtocolAdaptor.from_spec(spec, command, check=True), "COMMAND"
    ),
    "http": Kind(lambda spec, _: HttpService.from_spec(spec), "BASE_URL"),
    "real": Kind(RealCli.from_spec, VERSIONS, True),
}

DEFAULT_TARGETS = ("reference",)


#: What a target may be called (``NAME=SPEC``): its baseline is ``NAME.yaml``.
NAME = re.compile(r"[a-z][a-z0-9-]*")
_NAMED = re.compile(rf"({NAME.pattern})=(.+)", re.DOTALL)
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
    kind, colon, argument = body.partition(":")
    declared = KINDS.get(kind)
    if declared is None:
        if "=" in kind:
            raise BadTargetSpec(
                spec, "a target's name is lower-case letters, digits and dashes, as in mine=KIND"
            )
        usages = tuple(k.usage(n) for n, k in sorted(KINDS.items()))
        raise NoSuchTarget(spec, usages)
    declared.check(spec, kind, argument if colon else None)
    target = declared.build(body, argument)
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
