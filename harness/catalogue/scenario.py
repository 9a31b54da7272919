"""
The scenario model: immutable values built once, at the loader boundary.

Everything past the loader works with these types, never with the YAML
mappings they came from.  JSON payloads (schemas, expected values, scripted
provider lines) are held as `Json`, an immutable wrapper around canonical
text, so a scenario can be hashed, compared and shared between workers.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from enum import Enum
from functools import cached_property
from pathlib import Path
from typing import Any, Protocol

from harness.catalogue.agents import Descriptor
from harness.catalogue.jsonvalue import dumps
from harness.catalogue.versions import VersionRange


@dataclass(frozen=True)
class Json:
    """An immutable JSON value: the text is the identity, `value` a fresh copy."""

    text: str

    @classmethod
    def of(cls, value: Any) -> Json:
        return cls(dumps(value))

    @property
    def value(self) -> Any:
        return json.loads(self.text)


class Seam(Enum):
    """Which boundary a scenario exercises (see DESIGN: Seams)."""

    AGENT_CLI = "agent-cli"
    MODEL_API = "model-api"
    SERVICE_API = "service-api"


@dataclass(frozen=True)
class SchemaType:
    """A schema to derive from a declared type instead of a JSON document."""

    root: str
    types: tuple[tuple[str, tuple[tuple[str, str], ...]], ...] = ()
    inline_references: bool = False


@dataclass(frozen=True)
class Request:
    """What the consumer asks the adaptor for; never includes expectations."""

    driver: str
    prompt: str = "Explain why the build failed."
    schema: bytes | None = None
    schema_type: SchemaType | None = None
    schema_format: str = "json_schema"
    schema_name: str | None = None
    schema_description: str | None = None
    on_invalid: str = "fail"
    mode: str = "run"
    approval: str = "auto"
    descriptor: Descriptor | None = None
    timeout: float = 10.0
    mutate_schema_after_build: bool = False

    @property
    def wants_schema(self) -> bool:
        return self.schema is not None or self.schema_type is not None

    @classmethod
    def from_json(cls, raw: dict[str, Any]) -> Request:
        """The inverse of `to_json`, for adaptors written against this package."""
        st = raw.get("schema_type")
        descriptor = raw.get("descriptor")
        return cls(
            driver=raw["driver"],
            prompt=raw["prompt"],
            schema=None if raw.get("schema") is None else raw["schema"].encode(),
            schema_type=None
            if st is None
            else SchemaType(
                st["root"],
                tuple((name, tuple(fields.items())) for name, fields in st["types"].items()),
                st.get("inline_references", False),
            ),
            schema_format=raw.get("schema_format", "json_schema"),
            schema_name=raw.get("schema_name"),
            schema_description=raw.get("schema_description"),
            on_invalid=raw.get("on_invalid", "fail"),
            mode=raw.get("mode", "run"),
            approval=raw.get("approval", "auto"),
            descriptor=None if descriptor is None else Descriptor(**descriptor),
            timeout=float(raw.get("timeout", 10.0)),
            mutate_schema_after_build=raw.get("mutate_schema_after_build", False),
        )

    def to_json(self) -> dict[str, Any]:
        """The request as an adaptor outside this process receives it."""
        st = self.schema_type
        return {
            "driver": self.driver,
            "prompt": self.prompt,
            "schema": None if self.schema is None else self.schema.decode("utf-8", "replace"),
            "schema_type": None
            if st is None
            else {
                "root": st.root,
                "types": {name: dict(fields) for name, fields in st.types},
                "inline_references": st.inline_references,
            },
            "schema_format": self.schema_format,
            "schema_name": self.schema_name,
            "schema_description": self.schema_description,
            "on_invalid": self.on_invalid,
            "mode": self.mode,
            "approval": self.approval,
            "descriptor": None if self.descriptor is None else asdict(self.descriptor),
            "timeout": self.timeout,
            "mutate_schema_after_build": self.mutate_schema_after_build,
        }


@dataclass(frozen=True)
class Step:
    """One scripted provider action: an event, a raw line, stderr, a pause..."""

    kind: str
    arg: Json | None = None

    def to_json(self) -> dict[str, Any]:
        special = {"line", "raw", "raw_latin1", "stderr", "sleep", "hang"}
        if self.kind in special:
            return {self.kind: None if self.arg is None else self.arg.value}
        return {"event": self.kind, "arg": None if self.arg is None else self.arg.value}


@dataclass(frozen=True)
class Script:
    """What the fake provider does when launched."""

    cli: str
    steps: tuple[Step, ...] = ()
    exit: int | None = None
    signal: str | None = None
    json_shape: str | None = None

    def to_json(self, seed: str) -> dict[str, Any]:
        return {
            "cli": self.cli,
            "seed": seed,
            "steps": [step.to_json() for step in self.steps],
            "exit": self.exit,
            "signal": self.signal,
            "json_shape": self.json_shape,
        }


@dataclass(frozen=True)
class DiagnosticExpectation:
    """
    One expected diagnostic: its instance path, and optionally what it says.

    ``keyword`` is the JSON Schema keyword that failed (``type``,
    ``required``...), the contract-level way to say which rule broke;
    ``message`` and ``message_contains`` pin one validator's wording.
    """

    path: str
    message: str | None = None
    message_contains: str | None = None
    keyword: str | None = None


@dataclass(frozen=True)
class SchemaPoint:
    """What the schema handed to the CLI holds at one JSON pointer (or that it holds nothing)."""

    pointer: str
    value: Json | None = None
    absent: bool = False


@dataclass(frozen=True)
class ProviderExpectation:
    """What the fake provider must have received (from its launch record)."""

    output_format: str | None = None
    schema: Json | None = None
    no_schema: bool = False
    prompt_contains: tuple[str, ...] = ()
    prompt_excludes: tuple[str, ...] = ()
    prompt_ends_with: str | None = None
    argv_contains: tuple[str, ...] = ()
    argv_excludes: tuple[str, ...] = ()
    #: The prompt exactly (e.g. unchanged under native enforcement).
    prompt: str | None = None
    #: Regular expressions the prompt must match (``re.search``).
    prompt_match: tuple[str, ...] = ()
    #: Regular expressions each matched (``re.search``) by at least one argument.
    argv_match: tuple[str, ...] = ()
    #: Values at JSON pointers into the schema the CLI received.
    schema_at: tuple[SchemaPoint, ...] = ()


@dataclass(frozen=True)
class Expectation:
    """
    A partial outcome: only the fields given are checked.

    ``value`` uses `Json` so that expecting ``null`` differs from not checking.
    """

    status: str | None = None
    error: str | None = None
    cause: str | None = None
    message_contains: str | None = None
    #: A regular expression the message matches (``re.search``).
    message_match: str | None = None
    value: Json | None = None
    no_value: bool = False
    text: Json | None = None
    text_contains: tuple[str, ...] = ()
    mechanism: Json | None = None
    diagnostics: tuple[DiagnosticExpectation, ...] | None = None
    diagnostics_contain: tuple[DiagnosticExpectation, ...] = ()
    launches: int | None = None
    raw: Json | None = None
    provider: ProviderExpectation | None = None
    #: Fragments of the provider's stdout as the adaptor kept it for audit.
    stdout_contains: tuple[str, ...] = ()
    #: The rejected (or accepted) final value kept for audit (runErr.Result).
    audit_value: Json | None = None
    no_audit_value: bool = False


class Patch(Protocol):
    """A seam's change to an expectation (what a `VersionRule` says differs)."""

    def apply(self, expectation: object) -> object:
        """``expectation`` with this patch's fields set (or no longer checked)."""
        ...


@dataclass(frozen=True)
class VersionRule:
    """
    What a scenario expects differently on a range of versions of its CLI.

    Rules apply in the order the file gives them, after any ``by_target``
    override; two rules whose ranges share a version never set the same field
    (lint), so the order cannot change the result.
    """

    cli: str
    range: VersionRange
    #: Why the behaviour differs there: the research note or probe that showed it.
    because: str
    #: The seam's change to the expectation.
    patch: Patch
    #: Clauses the scenario cites that do not hold on these versions.
    breaks: tuple[str, ...] = ()

    def holds_for(self, versions: dict[str, str]) -> bool:
        return versions.get(self.cli) in self.range


@dataclass(frozen=True)
class Scenario:
    """
    One edge case: request, provider script and expected outcome.

    ``request`` and ``expect`` are the seam's own typed values (agent-cli:
    `Request` and `Expectation`); only that seam's code reads them, so they
    are typed as ``object`` here and narrowed where they are used.
    """

    id: str
    title: str
    description: str
    clauses: tuple[str, ...]
    seam: Seam
    request: object
    expect: object
    path: Path
    line: int = 1
    tags: tuple[str, ...] = ()
    capture: str | None = None
    script: Script | None = None
    by_target: tuple[tuple[str, object], ...] = field(default=())
    #: Scripts for the second and later launches of the fake (follow-up turns
    #: behind a service), in order; a launch past the end replays the last one.
    later_scripts: tuple[Script, ...] = ()
    #: What differs on ranges of versions of the scenario's CLI (model-api).
    by_version: tuple[VersionRule, ...] = ()
    #: What a target following a contract profile must show instead (agent-cli):
    #: the profile's name and the expectation merged over ``expect``.
    by_contract: tuple[tuple[str, object], ...] = ()
    #: The lines of ``path`` that define it, as (first, last) spans: the whole
    #: file, or a family's shared part and this case (`harness show` prints them).
    source: tuple[tuple[int, int], ...] = ()

    @cached_property
    def family(self) -> str:
        """The folder the scenario lives in, e.g. ``agent-cli/codex``."""
        return self.path.parent.name

    def expectation_for(
        self,
        target_kind: str,
        versions: dict[str, str] | None = None,
        contract: str | None = None,
    ) -> object:
        """
        What a target of ``target_kind`` running ``versions`` of the CLIs and
        following ``contract`` must show: the expectation, its ``by_contract``
        override for that profile or else its ``by_target`` override, then the
        ``by_version`` rules whose ranges hold the target's versions.
        """
        by_kind = next((e for kind, e in self.by_target if kind == target_kind), self.expect)
        found = next((e for name, e in self.by_contract if name == contract), by_kind)
        for rule in self.rules_for(versions or {}):
            found = rule.patch.apply(found)
        return found

    def rules_for(self, versions: dict[str, str]) -> tuple[VersionRule, ...]:
        """The ``by_version`` rules in force for a target running ``versions``."""
        return tuple(rule for rule in self.by_version if rule.holds_for(versions))
