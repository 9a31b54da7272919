"""
A YAML file of the harness's own (a baseline, the differential expectations),
read once and checked against the JSON Schema shipped for it.

Both kinds of file are hand-written next to the catalogue and must fail the
same way scenarios do: every problem is one `Problem` naming the file, line,
column and field, never a traceback.  `read` does the parts they share (the
safe YAML load with positions, the schema check) and hands back a `Checked`
whose `Checked.problem` lets the caller add its own findings at a path.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema

from harness.catalogue import yamlpos
from harness.exceptions import Problem


@cache
def validator(schema: str) -> jsonschema.Draft202012Validator:
    """The validator of ``harness/schemas/<schema>``."""
    text = resources.files("harness").joinpath(f"schemas/{schema}").read_text()
    return jsonschema.Draft202012Validator(json.loads(text))


def field_name(path: tuple[str | int, ...]) -> str:
    """``("entries", 0, "scenario")`` as ``entries[0].scenario``."""
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else part)
    return out


@dataclass
class Checked:
    """A file read and checked: its document (None if unusable) and its problems."""

    name: str
    doc: Any = None
    problems: list[Problem] = field(default_factory=list)
    located: yamlpos.Located | None = None

    def line(self, where: tuple[str | int, ...]) -> int:
        """The line ``where`` starts on."""
        return self.located.where(where)[0] if self.located else 1

    def problem(self, where: tuple[str | int, ...], message: str) -> None:
        line, column = self.located.where(where) if self.located else (1, 1)
        self.problems.append(Problem(self.name, line, column, field_name(where), message))


def read(path: Path, schema: str, noun: str) -> Checked:
    """``path`` loaded and checked against ``schema``; ``doc`` is None on any problem."""
    checked = Checked(str(path))
    try:
        located = yamlpos.read(path)
    except yamlpos.YAMLProblem as error:
        where = field_name(error.path)
        checked.problems.append(
            Problem(checked.name, error.line, error.column, where, error.message)
        )
        return checked
    checked.located = located
    for invalid in validator(schema).iter_errors(located.value):
        checked.problem(tuple(invalid.absolute_path), invalid.message)
    if not checked.problems:
        checked.doc = located.value
    return checked
