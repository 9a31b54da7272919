"""
Adaptor skeletons in other languages, written by ``harness init adaptor``.

A skeleton is a starting point that already works: it speaks the JSON-lines
protocol (`harness.targets.protocol`), runs the CLI each request names the way
a production adaptor does (the fake under the harness), reads its output and
passes the catalogue's cases without a schema.  It answers a case with a
schema ``skipped``, as the protocol allows, and announces no feature, so the
harness skips the ``schema_type`` cases itself: a new adaptor starts at
"passing what it does, skipping what it does not yet", never at errors.

The templates are package data under ``skeletons/LANGUAGE/``, each a valid
program of its language (the Python one is held to ruff and mypy like the
rest of the package); writing one fills in ``__NAME__`` (the target's name),
``__BUILD__`` and ``__RUN__`` (the commands that build it and run the
catalogue against it), and its empty table of CLIs (the line marked
``__CLIS__``) with one entry per CLI of the registry (`harness.catalogue.agents`),
so no template names a CLI and a new one reaches every skeleton at once.
"""

from __future__ import annotations

import json
import os
import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from harness.catalogue.agents import AGENT_CLIS, AgentCli, Wire
from harness.exceptions import BadTargetSpec, ReservedTargetName, WouldOverwrite
from harness.targets import NAME, RESERVED

#: The name a skeleton takes when its folder's name cannot be a target's name.
DEFAULT_NAME = "my-adaptor"


#: Which of a skeleton's readers reads a CLI's batch output, by the CLI's wire.
READER: dict[Wire, str] = {"codex": "codex", "claude": "result", "cursor": "result"}
#: The marker of the line whose empty table `write` fills in.
CLIS_MARK = "__CLIS__"


def _python_table(clis: tuple[AgentCli, ...]) -> str:
    rows = [
        f"    {_q(c.name)}: ({_q(c.command)}, [{', '.join(map(_q, c.batch_args))}], "
        f"{_q(READER[c.wire])}),"
        for c in clis
    ]
    return "{\n" + "\n".join(rows) + "\n}"


def _node_table(clis: tuple[AgentCli, ...]) -> str:
    def js(text: str) -> str:
        return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"

    rows = [
        f"  {js(c.name)}: [{js(c.command)}, [{', '.join(map(js, c.batch_args))}], "
        f"{js(READER[c.wire])}],"
        for c in clis
    ]
    return "{\n" + "\n".join(rows) + "\n};"


def _go_table(clis: tuple[AgentCli, ...]) -> str:
    # gofmt aligns the values of a literal's consecutive keys: pad to the longest.
    width = max(len(_q(c.name)) for c in clis) + 1
    rows = [
        f"\t{(_q(c.name) + ':').ljust(width)} {{{_q(c.command)}, "
        f"[]string{{{', '.join(map(_q, c.batch_args))}}}, {_q(READER[c.wire])}}},"
        for c in clis
    ]
    return "map[string]cli{\n" + "\n".join(rows) + "\n}"


def _q(text: str) -> str:
    """A double-quoted string literal, the same in Python, JavaScript and Go (JSON's)."""
    return json.dumps(text)


@dataclass(frozen=True)
class Skeleton:
    """One language's skeleton: its files, and how it is built and run from its folder."""

    files: tuple[str, ...]
    #: How the harness starts it, ``{dir}`` being its folder as the user gave it.
    command: tuple[str, ...]
    #: The empty table of CLIs in the template (on the `CLIS_MARK` line), and what
    #: renders the registry's CLIs as the table that replaces it.
    empty: str
    table: Callable[[tuple[AgentCli, ...]], str]
    #: What builds it, run in its folder; empty when it runs from source.
    build: tuple[str, ...] = ()
    #: Files the user runs directly (``./adaptor.py``), made executable.
    executable: tuple[str, ...] = ()

    def fill(self, text: str, clis: tuple[AgentCli, ...] = AGENT_CLIS) -> str:
        """``text`` (one of its templates) with its table of CLIs written out."""
        lines = text.splitlines(keepends=True)
        for number, line in enumerate(lines):
            if CLIS_MARK in line:
                head = line[: line.index(self.empty)]
                lines[number] = head + self.table(clis) + "\n"
        return "".join(lines)


#: Language → skeleton (``harness init adaptor --lang LANGUAGE``).
SKELETONS: dict[str, Skeleton] = {
    "python": Skeleton(
        ("adaptor.py",),
        ("python3", "{dir}/adaptor.py"),
        "{}",
        _python_table,
        executable=("adaptor.py",),
    ),
    "node": Skeleton(
        ("adaptor.mjs",),
        ("node", "{dir}/adaptor.mjs"),
        "{};",
        _node_table,
        executable=("adaptor.mjs",),
    ),
    "go": Skeleton(
        ("go.mod", "main.go"),
        ("{dir}/adaptor",),
        "map[string]cli{}",
        _go_table,
        build=("go", "build", "-o", "adaptor"),
    ),
}


@dataclass(frozen=True)
class Written:
    """What ``write`` made: the files, and the commands that build and run it."""

    files: tuple[Path, ...]
    name: str
    build: str | None
    run: str


def target_name(folder: Path) -> str:
    """A target name from a folder's name: ``My_Adaptor`` → ``my-adaptor``."""
    words = re.sub(r"[^a-z0-9]+", "-", folder.resolve().name.lower())
    name = re.sub(r"^[^a-z]+", "", words).rstrip("-")
    return name if name and name not in RESERVED else DEFAULT_NAME


def commands(language: str, folder: str, name: str) -> tuple[str | None, str]:
    """The shell lines that build the skeleton in ``folder`` (or None) and run the catalogue."""
    skeleton = SKELETONS[language]
    argv = [_in(folder, part) for part in skeleton.command]
    run = f"harness run --target {shlex.quote(f'{name}=cmd:{shlex.join(argv)}')}"
    if not skeleton.build:
        return None, run
    return f"(cd {shlex.quote(folder)} && {shlex.join(skeleton.build)})", run


def _in(folder: str, part: str) -> str:
    # os.path.join keeps "./adaptor" a path for a folder of ".", where pathlib drops the dot
    # (and a bare "adaptor" would be looked up on PATH).
    return os.path.join(folder, part.removeprefix("{dir}/")) if part.startswith("{dir}/") else part


def write(language: str, folder: str, name: str | None = None) -> Written:
    """
    Write ``language``'s skeleton into ``folder`` (created if missing); raise
    WouldOverwrite, having written nothing, if it exists and is not empty.
    """
    path = Path(folder)
    if path.exists() and not path.is_dir():
        raise WouldOverwrite(folder, "exists and is not a folder")
    if path.is_dir() and any(path.iterdir()):
        raise WouldOverwrite(folder, "is not empty")
    name = name or target_name(path)
    if name in RESERVED:
        raise ReservedTargetName(name, RESERVED[name])
    if not NAME.fullmatch(name):
        raise BadTargetSpec(name, "a target's name is lower-case letters, digits and dashes")
    build, run = commands(language, folder, name)
    skeleton = SKELETONS[language]
    templates = resources.files("harness.targets").joinpath("skeletons", language)
    path.mkdir(parents=True, exist_ok=True)
    written = []
    for file in skeleton.files:
        text = templates.joinpath(file).read_text(encoding="utf-8")
        for placeholder, value in (("__NAME__", name), ("__BUILD__", build), ("__RUN__", run)):
            text = text.replace(placeholder, value or "")
        text = skeleton.fill(text)
        out = path / file
        out.write_text(text, encoding="utf-8")
        if file in skeleton.executable:
            out.chmod(0o755)
        written.append(out)
    return Written(tuple(written), name, build, run)
