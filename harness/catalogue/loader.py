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
from dataclasses import dataclass, replace
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
from jsonschema.exceptions import ValidationError, best_match

from harness.catalogue import agents, yamlcache, yamlpos
from harness.catalogue import seam as formats
from harness.catalogue.clauses import registry
from harness.catalogue.files import FileRefused, Folder
from harness.catalogue.scenario import (
    Scenario,
    Seam,
)
from harness.catalogue.seam import Report
from harness.catalogue.suggest import did_you_mean
from harness.exceptions import Problem


@cache
def bundled() -> Path:
    """
    The catalogue shipped inside the package (``harness/catalogue/bundled``,
    a link to the repository's ``scenarios/`` that the wheel holds as files),
    so an installed ``harness`` has something to run outside a checkout.
    Resolved, so a checkout's reports name ``scenarios/...`` as before.
    """
    return Path(str(resources.files("harness.catalogue").joinpath("bundled"))).resolve()


def scenario_schema() -> dict[str, Any]:
    """
    The packaged JSON Schema every scenario file is validated against, its enums
    of CLI names filled in from the registry (`agents.fill_enums`).
    """
    text = resources.files("harness").joinpath("schemas/scenario.schema.json").read_text()
    loaded: dict[str, Any] = agents.fill_enums(json.loads(text))
    return loaded


@cache
def _validator() -> jsonschema.Draft202012Validator:
    schema = scenario_schema()
    single = {"$ref": "#/$defs/scenario", "$defs": schema["$defs"]}
    return jsonschema.Draft202012Validator(single)


@cache
def _family_validator() -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(
        {"$ref": "#/$defs/family", "$defs": scenario_schema()["$defs"]}
    )


@cache
def _quick(definition: str) -> Any:
    """
    The same schema compiled by jsonschema-rs, which answers "valid or not"
    a hundred times faster than the pure-Python validator: a catalogue loads
    on every command, and almost every document in it is valid.  Only an
    invalid document goes through `jsonschema` too, for the error that
    names the field (tests/test_speed.py holds the two to the same answers).
    """
    try:
        import jsonschema_rs  # noqa: PLC0415 - optional: the Python validator alone, slower
    except ImportError:  # no wheel for this platform
        return None
    single = {"$ref": f"#/$defs/{definition}", "$defs": scenario_schema()["$defs"]}
    return jsonschema_rs.Draft202012Validator(single, validate_formats=False)


def schema_errors(
    definition: str, validator: jsonschema.Draft202012Validator, doc: Any
) -> list[ValidationError]:
    """Every error of ``doc`` against ``$defs/definition``; none at all, quickly, if valid."""
    quick = _quick(definition)
    if quick is not None and quick.is_valid(doc):
        return []
    return list(validator.iter_errors(doc))


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


#: A field's path in a document, and what is wrong with it.
Found = tuple[tuple[str | int, ...], str]


def _telling(error: ValidationError) -> ValidationError:
    """The error that explains ``error`` best (inside a ``oneOf``, the branch meant)."""
    if error.context:
        # A type mismatch against the branch the author clearly did not mean is
        # the least useful explanation; prefer what went wrong inside the other.
        telling = [e for e in error.context if e.validator != "type"] or list(error.context)
        best: ValidationError = best_match(telling)
        return best
    return error


#: Schema errors that leave every value the document does give valid.
_STRUCTURAL = frozenset({"additionalProperties", "required"})
#: The sections a seam's own checks read (the rest is the same on every seam).
_SEAM_SECTIONS = frozenset(
    {"seam", "request", "provider", "expect", "by_target", "by_version", "by_contract"}
)


def _spoils_checks(error: ValidationError) -> bool:
    """Whether ``error`` makes a value the seam's checks read invalid."""
    telling = _telling(error)
    path = tuple(telling.absolute_path)
    if telling.validator in _STRUCTURAL:
        return False
    return not path or path[0] in _SEAM_SECTIONS


def _schema_problems(error: ValidationError) -> list[Found]:
    """
    Turn a validator error into (path of the offending field, message) pairs:
    one per unknown or missing field, with the closest known name when a name
    looks misspelt.
    """
    error = _telling(error)
    path: tuple[str | int, ...] = tuple(error.absolute_path)
    schema: Any = error.schema
    instance: Any = error.instance
    expected: Any = error.validator_value
    if error.validator == "additionalProperties":
        allowed = sorted(schema.get("properties", {}))
        extra = [k for k in instance if k not in allowed]
        if extra:
            known = ", ".join(allowed)
            return [
                (
                    (*path, key),
                    f"unknown field {key!r}{did_you_mean(key, allowed)} (known: {known})",
                )
                for key in extra
            ]
    if error.validator == "required":
        missing = [k for k in expected if k not in instance]
        if missing:
            return [((*path, key), "required field is missing") for key in missing]
    if error.validator == "pattern":
        return [(path, f"{instance!r} does not match {expected!r}")]
    if error.validator == "enum" and isinstance(instance, str):
        choices = [str(choice) for choice in expected]
        hint = did_you_mean(instance, choices)
        return [(path, f"{instance!r} is not one of {', '.join(choices)}{hint}")]
    if error.validator == "not" and isinstance(schema.get("description"), str):
        return [(path, schema["description"])]  # a field refused here, and why
    message = error.message
    return [(path, message if len(message) <= 200 else message[:197] + "...")]


class _FileLoader:
    def __init__(self, path: Path, root: Path) -> None:
        self.path = path
        self.folder = Folder(path.parent, root)
        self.name = str(path)
        self.problems: list[Problem] = []
        self.said: set[Problem] = set()

    def problem(self, where: tuple[int, int], field: str, message: str) -> None:
        found = Problem(self.name, where[0], where[1], field, message)
        if found not in self.said:  # a family's shared field, wrong in every case, once
            self.said.add(found)
            self.problems.append(found)

    def load(self) -> list[Scenario]:
        if not self.path.resolve().is_relative_to(self.folder.root.resolve()):
            # A symlink out of the catalogue: refused, as a schema_file out of it is.
            self.problem((1, 1), "", f"a link to outside the catalogue folder {self.folder.root}")
            return []
        try:
            located = yamlcache.read(self.path)
        except yamlpos.YAMLProblem as error:
            self.problem((error.line, error.column), _field(error.path), error.message)
            return []
        document = located.value
        if not isinstance(document, dict):
            self.problem((1, 1), "", "a scenario file must be a mapping")
            return []
        if "cases" not in document:
            return self._one(document, _Positions(located, ()), ((1, located.lines),))
        found: dict[tuple[str | int, ...], str] = {}
        for invalid in schema_errors("family", _family_validator(), document):
            for path, message in _schema_problems(invalid):
                found.setdefault(path, message)
        for path, message in found.items():
            self.problem(located.where(path), _field(path), message)
        cases = document["cases"]
        if not isinstance(cases, list):
            return []
        base = {k: v for k, v in document.items() if k not in {"family", "cases"}}
        out: list[Scenario] = []
        sources = _case_sources(located)
        # The cases are checked even when the family's own fields are wrong:
        # every problem of a file is reported in one pass.
        for index, case in enumerate(cases):
            if not isinstance(case, dict):
                continue
            merged, where = _merge_case(base, case), _Positions(located, ("cases", index))
            out.extend(self._one(merged, where, sources[index]))
        return [] if found else out

    def _one(
        self, doc: dict[str, Any], where: _Positions, source: tuple[tuple[int, int], ...]
    ) -> list[Scenario]:
        """
        One scenario document, or every problem with it: unknown clauses, the
        schema's findings and the seam's own checks, each field said once.
        """
        found: dict[tuple[str | int, ...], str] = {}

        def report(path: tuple[str | int, ...], message: str) -> None:
            found.setdefault(path, message)  # the first word on a field is the most telling

        _clauses(doc, report)
        errors = schema_errors("scenario", _validator(), doc)
        errors.sort(key=lambda e: list(map(str, e.path)))
        for error in errors:
            for path, message in _schema_problems(error):
                report(path, message)
        # The seam's checks read values the schema vouches for: they run unless
        # a value of the seam's sections is invalid (where they would only echo
        # the schema's finding in other words).
        if not any(_spoils_checks(e) for e in errors):
            self._seam_checks(doc, report, complete=not errors)
        for path, message in found.items():
            self.problem(where.where(path), _field(path), message)
        if found:
            return []
        try:
            return [replace(self._build(doc, where), source=source)]
        except FileRefused as refused:  # changed since it was checked
            self.problem(where.where(("request",)), "request", str(refused))
            return []

    def _seam_checks(self, doc: dict[str, Any], report: Report, *, complete: bool) -> None:
        name = doc.get("seam")
        seam = formats.get(name) if isinstance(name, str) else None
        if seam is None:
            if isinstance(name, str):
                report(("seam",), f"seam {name!r} has no loader yet")
            return
        try:
            seam.check(doc, self.folder, report)
        except (KeyError, TypeError, AttributeError):
            # A required field is missing (the schema says so): the checks stop
            # where they would read it.  On a complete document it is a bug.
            if complete:
                raise

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
            by_contract=parts.by_contract,
            path=self.path,
            line=where.where(("id",))[0],
            tags=tuple(doc.get("tags", ())),
            capture=doc.get("capture"),
            script=parts.script,
            later_scripts=parts.later_scripts,
        )


def _clauses(doc: dict[str, Any], report: Report) -> None:
    """Every cited clause exists (before the schema's pattern, which says less)."""
    cited = doc.get("clauses")
    known = registry()
    for i, clause in enumerate(cited if isinstance(cited, list) else ()):
        if isinstance(clause, str) and clause not in known:
            report(("clauses", i), f"unknown clause {clause!r}{did_you_mean(clause, known)}")


def _case_sources(located: yamlpos.Located) -> list[tuple[tuple[int, int], ...]]:
    """
    The lines that define each case of a family: the file up to the
    ``cases:`` key (the shared part), the case's own item (and that of any
    earlier case whose anchor it uses), and whatever follows the list; blank
    and comment lines between items go with the next.  All cases in one pass
    over the file's marks and aliases (per case, a large family was quadratic).
    """
    marks, end = located.marks, located.lines
    cases = marks[("cases",)][0]
    tops = (marks[(key,)][0] for key in located.value)
    after = [line for line in tops if line > cases]
    last = min(after, default=end + 1) - 1
    count = len(located.value["cases"])
    starts = [marks[("cases", i)][0] for i in range(count)]
    ends = [*(start - 1 for start in starts[1:]), last]
    used: list[set[int]] = [{i} for i in range(count)]
    for alias, anchor in located.aliases:
        if alias[:1] != ("cases",) or anchor[:1] != ("cases",):
            continue
        index, earlier = alias[1:2], anchor[1:2]
        if index and earlier and isinstance(index[0], int) and isinstance(earlier[0], int):
            used[index[0]].add(earlier[0])
    tail = [(last + 1, end)] if last < end else []
    return [((1, cases), *((starts[i], ends[i]) for i in sorted(u)), *tail) for u in used]


def source(scenario: Scenario) -> str:
    """The YAML that defines ``scenario``, as written (a family's case with its shared part)."""
    lines = scenario.path.read_text(encoding="utf-8").splitlines()
    out: list[str] = []
    for first, last in scenario.source:
        span = lines[first - 1 : last]
        while span and (not span[-1].strip() or span[-1].lstrip().startswith("#")):
            span.pop()  # a comment at the end of a case introduces the next one
        before = first - 1
        while before > 0 and lines[before - 1].lstrip().startswith("#") and out:
            before -= 1  # ...and so belongs with it
        out += lines[before : first - 1] + span
    return "\n".join(out) + "\n"


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


def shown(path: Path, root: Path) -> str:
    """
    A scenario file as a person is shown it: relative to ``root`` (the
    working folder) when it lies inside, else relative to the catalogue that
    holds it (``agent-cli/claude/json.yaml``), never an install's absolute
    path (``.../site-packages/harness/catalogue/bundled/...``).
    """
    resolved = path.resolve()
    for base in (root, catalogue_folder(path.parent)):
        try:
            return resolved.relative_to(base.resolve()).as_posix()
        except ValueError:
            continue
    return path.name


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
        problems.extend(sorted(loader.problems, key=lambda p: (p.line, p.column)))
    scenarios.sort(key=lambda s: s.id)
    return Loaded(tuple(scenarios), tuple(problems))
