"""
The loader: the one place scenario files are read.

A file goes through ``safe`` YAML loading with positions, family expansion,
validation against the packaged scenario JSON Schema, then semantic checks
(clauses exist, scripted events exist for that CLI, schema files exist).
What survives becomes immutable `Scenario` values; everything else becomes a
`Problem` pointing at file, line, column and field.  Nothing here raises for
a bad scenario.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
from jsonschema.exceptions import ValidationError, best_match

import providers_fake
from harness import _yamlpos
from harness._clauses import registry
from harness._scenario import (
    Descriptor,
    DiagnosticExpectation,
    Expectation,
    Json,
    ProviderExpectation,
    Request,
    Scenario,
    SchemaType,
    Script,
    Seam,
    Step,
)
from harness.exceptions import Problem

_SPECIAL_STEPS = frozenset({"line", "raw", "stderr", "sleep", "hang"})
_SCHEMA_SOURCES = ("schema", "schema_text", "schema_file", "schema_type")


@cache
def scenario_schema() -> dict[str, Any]:
    """The packaged JSON Schema every scenario file is validated against."""
    text = resources.files("harness").joinpath("schemas/scenario.schema.json").read_text()
    loaded: dict[str, Any] = json.loads(text)
    return loaded


@cache
def _validator() -> jsonschema.Draft202012Validator:
    schema = scenario_schema()
    single = {"$ref": "#/$defs/scenario", "$defs": schema["$defs"]}
    return jsonschema.Draft202012Validator(single)


@dataclass(frozen=True)
class Loaded:
    """Scenarios that loaded and problems with those that did not."""

    scenarios: tuple[Scenario, ...]
    problems: tuple[Problem, ...]


def _field(path: Iterable[str | int]) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else part)
    return out


class _Positions:
    """Where a (possibly family-merged) path sits in the source file."""

    def __init__(self, located: _yamlpos.Located, prefix: tuple[str | int, ...]) -> None:
        self.located = located
        self.prefix = prefix

    def where(self, path: tuple[str | int, ...]) -> tuple[int, int]:
        marks = self.located.marks
        for end in range(len(path), -1, -1):
            own = marks.get((*self.prefix, *path[:end]))
            if own is not None and (end or not self.prefix):
                return own
            shared = marks.get(tuple(path[:end])) if end else None
            if shared is not None:
                return shared
        return marks.get(self.prefix, (1, 1))


def _merge(base: Mapping[str, Any], override: Mapping[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in override.items():
        if isinstance(value, Mapping) and isinstance(merged.get(key), Mapping):
            merged[key] = _merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def _merge_case(base: Mapping[str, Any], case: Mapping[str, Any]) -> dict[str, Any]:
    """A family case over the shared fields; its own schema source replaces the family's."""
    merged = _merge(base, case)
    own = case.get("request")
    if isinstance(own, Mapping) and isinstance(merged.get("request"), dict):
        documents = [k for k in _SCHEMA_SOURCES if k != "schema_type"]
        if any(k in own for k in documents):
            for key in documents:
                if key not in own:
                    merged["request"].pop(key, None)
    return merged


def _schema_problem(error: ValidationError) -> tuple[tuple[str | int, ...], str]:
    """Turn a validator error into (path of the offending field, message)."""
    if error.context:
        # A type mismatch against the branch the author clearly did not mean is
        # the least useful explanation; prefer what went wrong inside the other.
        telling = [e for e in error.context if e.validator != "type"] or list(error.context)
        error = best_match(telling)
    path: tuple[str | int, ...] = tuple(error.absolute_path)
    schema: Any = error.schema
    instance: Any = error.instance
    expected: Any = error.validator_value
    if error.validator == "additionalProperties":
        allowed = set(schema.get("properties", {}))
        extra = [k for k in instance if k not in allowed]
        if extra:
            known = ", ".join(sorted(allowed))
            return (*path, extra[0]), f"unknown field {extra[0]!r} (known: {known})"
    if error.validator == "required":
        missing = [k for k in expected if k not in instance]
        if missing:
            return (*path, missing[0]), "required field is missing"
    if error.validator == "pattern":
        return path, f"{instance!r} does not match {expected!r}"
    message = error.message
    return path, message if len(message) <= 200 else message[:197] + "..."


class _FileLoader:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.name = str(path)
        self.problems: list[Problem] = []

    def problem(self, where: tuple[int, int], field: str, message: str) -> None:
        self.problems.append(Problem(self.name, where[0], where[1], field, message))

    def load(self) -> list[Scenario]:
        try:
            text = self.path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            self.problem((1, 1), "", f"cannot read file: {error}")
            return []
        try:
            located = _yamlpos.load(text)
        except _yamlpos.YAMLProblem as error:
            self.problem((error.line, error.column), _field(error.path), error.message)
            return []
        document = located.value
        if not isinstance(document, dict):
            self.problem((1, 1), "", "a scenario file must be a mapping")
            return []
        if "cases" not in document:
            return self._one(document, _Positions(located, ()))
        family_errors = list(
            jsonschema.Draft202012Validator(
                {"$ref": "#/$defs/family", "$defs": scenario_schema()["$defs"]}
            ).iter_errors(document)
        )
        if family_errors:
            path, message = _schema_problem(family_errors[0])
            self.problem(located.where(path), _field(path), message)
            return []
        base = {k: v for k, v in document.items() if k not in {"family", "cases"}}
        out: list[Scenario] = []
        for index, case in enumerate(document["cases"]):
            out.extend(self._one(_merge_case(base, case), _Positions(located, ("cases", index))))
        return out

    def _one(self, doc: dict[str, Any], where: _Positions) -> list[Scenario]:
        before = len(self.problems)
        for error in sorted(_validator().iter_errors(doc), key=lambda e: list(map(str, e.path))):
            path, message = _schema_problem(error)
            self.problem(where.where(path), _field(path), message)
        if len(self.problems) > before:
            return []
        self._semantics(doc, where)
        if len(self.problems) > before:
            return []
        return [self._build(doc, where)]

    def _semantics(self, doc: dict[str, Any], where: _Positions) -> None:
        known = registry()
        for i, clause in enumerate(doc["clauses"]):
            if clause not in known:
                at: tuple[str | int, ...] = ("clauses", i)
                self.problem(where.where(at), _field(at), f"unknown clause {clause!r}")
        request = doc["request"]
        seam = doc["seam"]
        if seam != Seam.AGENT_CLI.value:
            self.problem(where.where(("seam",)), "seam", f"seam {seam!r} is not runnable yet")
            return
        if "driver" not in request:
            self.problem(where.where(("request",)), "request.driver", "required field is missing")
            return
        # A derived type may be followed by one explicit document (SCH-08).
        given = [key for key in _SCHEMA_SOURCES if key in request and key != "schema_type"]
        if len(given) > 1:
            second = ("request", given[1])
            self.problem(
                where.where(second),
                _field(second),
                f"give one schema source, not {' and '.join(given)}",
            )
        if "schema_file" in request:
            target = self.path.parent / request["schema_file"]
            if not target.is_file():
                self.problem(
                    where.where(("request", "schema_file")),
                    "request.schema_file",
                    f"no such file: {target}",
                )
        if "provider" not in doc:
            self.problem(where.where(()), "provider", "required field is missing for agent-cli")
        else:
            self._steps(doc["provider"]["steps"], request["driver"], where)
        for expect_path in [("expect",)] + [("by_target", k) for k in doc.get("by_target", {})]:
            expect = doc
            for part in expect_path:
                expect = expect[part]
            if "cause" in expect and expect.get("error", "execution_error") != "execution_error":
                path = (*expect_path, "cause")
                self.problem(
                    where.where(path), _field(path), "cause applies only to execution_error"
                )
            if "value" in expect and expect.get("no_value"):
                path = (*expect_path, "no_value")
                self.problem(where.where(path), _field(path), "contradicts 'value'")

    def _steps(self, steps: list[Any], cli: str, where: _Positions) -> None:
        events = providers_fake.event_names(cli)
        for i, step in enumerate(steps):
            name = step if isinstance(step, str) else next(iter(step))
            if name not in events and name not in _SPECIAL_STEPS:
                path = ("provider", "steps", i)
                self.problem(
                    where.where(path),
                    _field(path),
                    f"unknown {cli} event {name!r} (known: {', '.join(sorted(events))})",
                )

    def _build(self, doc: dict[str, Any], where: _Positions) -> Scenario:
        request = doc["request"]
        script = None
        if "provider" in doc:
            provider = doc["provider"]
            script = Script(
                cli=request["driver"],
                steps=tuple(_step(step) for step in provider["steps"]),
                exit=provider.get("exit"),
                signal=provider.get("signal"),
                json_shape=provider.get("json_shape"),
            )
        base = doc["expect"]
        return Scenario(
            id=doc["id"],
            title=doc["title"].strip(),
            description=" ".join(doc["description"].split()),
            clauses=tuple(doc["clauses"]),
            seam=Seam(doc["seam"]),
            request=self._request(request),
            expect=_expectation(base),
            by_target=tuple(
                (kind, _expectation(_merge(base, override)))
                for kind, override in sorted(doc.get("by_target", {}).items())
            ),
            path=self.path,
            line=where.where(("id",))[0],
            tags=tuple(doc.get("tags", ())),
            capture=doc.get("capture"),
            script=script,
        )

    def _request(self, raw: dict[str, Any]) -> Request:
        schema: bytes | None = None
        if "schema" in raw:
            schema = json.dumps(raw["schema"], ensure_ascii=False).encode()
        elif "schema_text" in raw:
            schema = raw["schema_text"].encode()
        elif "schema_file" in raw:
            schema = (self.path.parent / raw["schema_file"]).read_bytes()
        schema_type = None
        if "schema_type" in raw:
            spec = raw["schema_type"]
            schema_type = SchemaType(
                root=spec["root"],
                types=tuple(
                    (name, tuple(fields.items())) for name, fields in spec.get("types", {}).items()
                ),
                inline_references=spec.get("inline_references", False),
            )
        descriptor = None
        if "descriptor" in raw:
            descriptor = Descriptor(**{"native": False, "prompt": False, **raw["descriptor"]})
        return Request(
            driver=raw["driver"],
            prompt=raw.get("prompt", Request.prompt),
            schema=schema,
            schema_type=schema_type,
            schema_format=raw.get("schema_format", "json_schema"),
            schema_name=raw.get("schema_name"),
            schema_description=raw.get("schema_description"),
            on_invalid=raw.get("on_invalid", "fail"),
            mode=raw.get("mode", "run"),
            approval=raw.get("approval", "auto"),
            descriptor=descriptor,
            timeout=float(raw.get("timeout", Request.timeout)),
            mutate_schema_after_build=raw.get("mutate_schema_after_build", False),
        )


def _step(raw: str | dict[str, Any]) -> Step:
    if isinstance(raw, str):
        return Step(raw)
    [(kind, arg)] = raw.items()
    return Step(kind, None if arg is None else Json.of(arg))


def _diagnostics(raw: list[dict[str, str]]) -> tuple[DiagnosticExpectation, ...]:
    return tuple(DiagnosticExpectation(**each) for each in raw)


def _expectation(raw: dict[str, Any]) -> Expectation:
    provider = None
    if "provider" in raw:
        p = raw["provider"]
        provider = ProviderExpectation(
            output_format=p.get("output_format"),
            schema=Json.of(p["schema"]) if "schema" in p else None,
            no_schema=p.get("no_schema", False),
            prompt_contains=tuple(p.get("prompt_contains", ())),
            prompt_excludes=tuple(p.get("prompt_excludes", ())),
            prompt_ends_with=p.get("prompt_ends_with"),
            argv_contains=tuple(p.get("argv_contains", ())),
            argv_excludes=tuple(p.get("argv_excludes", ())),
        )
    return Expectation(
        status=raw.get("status"),
        error=raw.get("error"),
        cause=raw.get("cause"),
        message_contains=raw.get("message_contains"),
        value=Json.of(raw["value"]) if "value" in raw else None,
        no_value=raw.get("no_value", False),
        text=Json.of(raw["text"]) if "text" in raw else None,
        text_contains=raw.get("text_contains"),
        mechanism=Json.of(raw["mechanism"]) if "mechanism" in raw else None,
        diagnostics=_diagnostics(raw["diagnostics"]) if "diagnostics" in raw else None,
        diagnostics_contain=_diagnostics(raw.get("diagnostics_contain", [])),
        launches=raw.get("launches"),
        raw=Json.of(raw["raw"]) if "raw" in raw else None,
        provider=provider,
    )


def scenario_files(paths: Iterable[Path]) -> Iterator[Path]:
    """Every ``*.yaml``/``*.yml`` file under the given files and folders, sorted."""
    for path in paths:
        if path.is_dir():
            yield from sorted(p for p in path.rglob("*") if p.suffix in {".yaml", ".yml"})
        else:
            yield path


def load(paths: Iterable[Path]) -> Loaded:
    """Load every scenario under ``paths``; never raises for a bad file."""
    scenarios: list[Scenario] = []
    problems: list[Problem] = []
    seen: dict[str, Scenario] = {}
    for file in scenario_files(paths):
        if not file.exists():
            problems.append(Problem(str(file), 1, 1, "", "no such file or directory"))
            continue
        loader = _FileLoader(file)
        for scenario in loader.load():
            first = seen.get(scenario.id)
            if first is not None:
                loader.problem(
                    (scenario.line, 1),
                    "id",
                    f"duplicate id {scenario.id!r} (first in {first.path}:{first.line})",
                )
                continue
            seen[scenario.id] = scenario
            scenarios.append(scenario)
        problems.extend(loader.problems)
    scenarios.sort(key=lambda s: s.id)
    return Loaded(tuple(scenarios), tuple(problems))
