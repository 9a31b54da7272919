"""
The documentation's commands, run: a page cannot drift from the tool.

Every ```console block in ``docs/`` and in the README holds ``$ command``
lines, each followed by the output it must print (stdout and stderr
together).  In the expected output ``*`` stands for any text within a line,
a line ``...`` for any number of lines, and a last line ``[exit N]`` for the
exit status (0 when absent); runs of spaces count as one.  Each block runs
in a fresh folder that sees the repository's ``scenarios`` and ``examples``
and a copy of its ``baselines``, with this virtualenv's ``harness`` first on
the PATH.  Commands belong in console blocks only: a ``sh`` block in
``docs/`` would be a command nobody runs.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest

from providers_fake.api import realcli

ROOT = Path(__file__).resolve().parent.parent
PAGES = (ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")))
_FENCE = re.compile(r"^(\s*)```(\w*)\s*$")


@dataclass(frozen=True)
class Command:
    line: str
    expected: tuple[str, ...]
    status: int


@dataclass(frozen=True)
class Block:
    page: Path
    line: int
    language: str
    commands: tuple[Command, ...]

    @property
    def id(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def _blocks(page: Path) -> list[Block]:
    found: list[Block] = []
    lines = page.read_text(encoding="utf-8").splitlines()
    index = 0
    while index < len(lines):
        opening = _FENCE.match(lines[index])
        if not opening or not opening[2]:
            index += 1
            continue
        indent, language, start = opening[1], opening[2], index + 1
        body: list[str] = []
        index += 1
        while index < len(lines) and lines[index].strip() != "```":
            body.append(lines[index][len(indent) :])
            index += 1
        index += 1
        commands = _commands(body) if language == "console" else ()
        found.append(Block(page, start, language, commands))
    return found


def _commands(body: list[str]) -> tuple[Command, ...]:
    commands: list[Command] = []
    for line in body:
        if line.startswith("$ "):
            commands.append(Command(line[2:], (), 0))
        elif commands:
            last = commands[-1]
            status = re.fullmatch(r"\[exit (\d+)\]", line.strip())
            if status:
                commands[-1] = Command(last.line, last.expected, int(status[1]))
            else:
                commands[-1] = Command(last.line, (*last.expected, line), last.status)
    return tuple(commands)


def _console_blocks() -> list[Block]:
    return [b for page in PAGES for b in _blocks(page) if b.language == "console"]


def _squash(line: str) -> str:
    return " ".join(line.split())


def _pattern(line: str) -> re.Pattern[str]:
    parts = _squash(line).split("*")
    return re.compile(".*".join(re.escape(part.strip()) for part in parts))


def matches(expected: tuple[str, ...], actual: list[str]) -> bool:
    """Whether ``actual`` fits ``expected`` (``*`` within a line, ``...`` for lines)."""

    @cache
    def fit(e: int, a: int) -> bool:
        if e == len(expected):
            return a == len(actual)
        if expected[e].strip() == "...":
            return any(fit(e + 1, later) for later in range(a, len(actual) + 1))
        return (
            a < len(actual)
            and _pattern(expected[e]).fullmatch(_squash(actual[a])) is not None
            and fit(e + 1, a + 1)
        )

    return fit(0, 0)


def _workspace(tmp_path: Path) -> Path:
    for shared in ("scenarios", "examples"):
        (tmp_path / shared).symlink_to(ROOT / shared)
    shutil.copytree(ROOT / "baselines", tmp_path / "baselines")
    return tmp_path


@pytest.mark.subprocess
@pytest.mark.parametrize("block", _console_blocks(), ids=lambda b: b.id)
def test_documented_commands_do_what_the_page_says(block: Block, tmp_path: Path) -> None:
    if any("--target real" in c.line for c in block.commands) and not realcli.enabled():
        pytest.skip(f"the block runs the real CLIs and {realcli.SWITCH_ENV}=off")
    work = _workspace(tmp_path)
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    for command in block.commands:
        done = subprocess.run(
            ["bash", "-c", command.line],
            cwd=work,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        output = (done.stdout + done.stderr).rstrip("\n").splitlines()
        shown = "\n".join(output[-40:])
        assert done.returncode == command.status, f"{block.id}: $ {command.line}\n{shown}"
        assert matches(command.expected, output), f"{block.id}: $ {command.line}\n{shown}"


def test_every_page_has_commands_and_none_outside_console_blocks() -> None:
    docs = [p for p in PAGES if p.parent.name == "docs"]
    assert len(docs) >= 8
    shell = [b.id for p in docs for b in _blocks(p) if b.language in {"sh", "bash", "shell"}]
    assert shell == []
    assert {b.page for b in _console_blocks()} >= {ROOT / "README.md", ROOT / "docs/commands.md"}


@pytest.mark.parametrize(
    ("expected", "actual", "fits"),
    [
        (("a * c",), ["a  b   c"], True),
        (("...", "x"), ["1", "2", "x"], True),
        (("x",), ["x", "y"], False),
        (("x", "..."), ["x", "y"], True),
        (("a*",), ["b"], False),
    ],
)
def test_the_output_patterns(expected: tuple[str, ...], actual: list[str], fits: bool) -> None:
    assert matches(expected, actual) is fits
