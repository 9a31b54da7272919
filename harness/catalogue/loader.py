"""
The loader: the one place scenario files are read.

A file goes through ``safe`` YAML loading with positions, family expansion,
validation against the packaged scenario JSON Schema, then semantic checks
(clauses exist, plus whatever the scenario's seam checks beyond the schema).
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

from harness.catalogue import seam as formats
from harness.catalogue import yamlpos
from harness.catalogue.clauses import registry
from harness.catalogue.files import FileRefused, Folder
from harness.catalogue.scenario import (
    Scenario,
    Seam,
)
from harness.exceptions import Problem


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

    def __init__(self, located: yamlpos.Located, prefix: tuple[str | int, ...]) -> None:
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


def _merge_case(base: Mapping[str, Any], case: Mapping[str, Any]) -> dict[str, Any]:
    """A family case over the shared fields, the way the case's seam merges them."""
    seam = case.get("seam", base.get("seam"))
    kind = formats.get(seam) if isinstance(seam, str) else None
    if kind is None:
        return formats.merge(dict(base), dict(case))
    return kind.merge_case(dict(base), dict(case))


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
    if error.validator == "not" and isinstance(schema.get("description"), str):
        return path, schema["description"]  # a field refused here, and why
    message = error.message
    return path, message if len(message) <= 200 else message[:197] + "..."


class _FileLoader:
    def __init__(self, path: Path, root: Path) -> None:
        self.path = path
        self.folder = Folder(path.parent, root)
        self.name = str(path)
        self.problems: list[Problem] = []

    def problem(self, where: tuple[int, int], field: str, message: str) -> None:
        self.problems.append(Problem(self.name, where[0], where[1], field, message))

    def load(self) -> list[Scenario]:
        try:
            located = yamlpos.read(self.path)
        except yamlpos.YAMLProblem as error:
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
        reported: set[tuple[str | int, ...]] = set()
        for error in sorted(_validator().iter_errors(doc), key=lambda e: list(map(str, e.path))):
            path, message = _schema_problem(error)
            if path in reported:
                continue  # the shared and the seam's schema may both object: say it once
            reported.add(path)
            self.problem(where.where(path), _field(path), message)
        if len(self.problems) > before:
            return []
        self._semantics(doc, where)
        if len(self.problems) > before:
            return []
        try:
            return [self._build(doc, where)]
        except FileRefused as refused:  # changed since it was checked
            self.problem(where.where(("request",)), "request", str(refused))
            return []

    def _semantics(self, doc: dict[str, Any], where: _Positions) -> None:
        known = registry()
        for i, clause in enumerate(doc["clauses"]):
            if clause not in known:
                at: tuple[str | int, ...] = ("clauses", i)
                self.problem(where.where(at), _field(at), f"unknown clause {clause!r}")
        seam = formats.get(doc["seam"])
        if seam is None:
            self.problem(where.where(("seam",)), "seam", f"seam {doc['seam']!r} has no loader yet")
            return

        def problem(path: tuple[str | int, ...], message: str) -> None:
            self.problem(where.where(path), _field(path), message)

        seam.check(doc, self.folder, problem)

    def _build(self, doc: dict[str, Any], where: _Positions) -> Scenario:
        parts = formats.require(doc["seam"]).parts(doc, self.folder)
        return Scenario(
            id=doc["id"],
            title=doc["title"].strip(),
            description=" ".join(doc["description"].split()),
            clauses=tuple(doc["clauses"]),
            seam=Seam(doc["seam"]),
            request=parts.request,
            expect=parts.expect,
            by_target=parts.by_target,
            by_version=parts.by_version,
            path=self.path,
            line=where.where(("id",))[0],
            tags=tuple(doc.get("tags", ())),
            capture=doc.get("capture"),
            script=parts.script,
            later_scripts=parts.later_scripts,
        )


def scenario_files(paths: Iterable[Path]) -> Iterator[tuple[Path, Path]]:
    """
    Every ``*.yaml``/``*.yml`` file under the given files and folders, sorted,
    with the catalogue folder it belongs to (`catalogue_folder`).
    """
    for path in paths:
        if path.is_dir():
            found = sorted(p for p in path.rglob("*") if p.suffix in {".yaml", ".yml"})
            yield from ((file, catalogue_folder(path)) for file in found)
        else:
            yield path, catalogue_folder(path.parent)


def catalogue_folder(given: Path) -> Path:
    """
    The folder a scenario's relative paths may reach: the folder given, or,
    when it is a seam's folder or lies in one (``scenarios/agent-cli/codex``,
    at most two levels down as the catalogue is laid out), the folder that
    holds the seams (``scenarios``), so that part of a catalogue sees the
    shared files of the whole.
    """
    for folder in (given, *given.parents[:2]):
        if formats.get(folder.name) is not None:
            return folder.parent
    return given


def load(paths: Iterable[Path]) -> Loaded:
    """Load every scenario under ``paths``; never raises for a bad file."""
    scenarios: list[Scenario] = []
    problems: list[Problem] = []
    seen: dict[str, Scenario] = {}
    for file, root in scenario_files(paths):
        if not file.exists():
            problems.append(Problem(str(file), 1, 1, "", "no such file or directory"))
            continue
        loader = _FileLoader(file, root)
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
