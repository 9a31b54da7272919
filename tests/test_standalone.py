"""
The repository stands alone: nothing it runs or tests names a path outside it.

A clone with nothing beside it must pass `make test`.  The suite once read the
real CLIs' captures and the clause list from a folder next to the checkout,
and passed only on the machine that had one.  Four rules over the code, the
tests, the scripts and the Makefile (and, for the first, the docs):

1. no absolute path of a workstation (``/work/...``, a home folder) and no
   name of the old sibling folder's contents;
2. in Python, every path anchored at a module's own file (``Path(__file__)``,
   ``os.path.dirname(__file__)``, ``importlib.resources.files``) stays inside
   the repository, however it climbs (``.parent``, ``.parents[k]``, ``..``, a
   name bound to such a path);
3. the Makefile and shell scripts never climb out with ``..`` (they run from
   the repository's root);
4. in any other file, a relative literal (``./x``, ``../x``: a JSON ``$ref``, a
   JavaScript ``new URL``) resolved against the file's folder stays inside;
5. a committed symbolic link leads to a place inside the repository (a link
   to a machine's ``node_modules`` is easy to commit by accident).

The checker is tested on snippets that break each rule, so a rule that
cannot fail shows up here.
"""

from __future__ import annotations

import ast
import os
import re
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

import pytest

ROOT = Path(__file__).resolve().parent.parent
THIS = PurePosixPath("tests") / Path(__file__).name

#: What runs or tests: the code, the scripts, the build and the examples.
CODE = ("harness", "providers_fake", "scripts", "tests", "examples", "Makefile", "pyproject.toml")
#: Prose a user reads: rule 1 only (the docs name paths of their own kind, `../x` links).
PROSE = ("docs", "README.md")
#: Folders that hold data or what tools made, not code.
SKIPPED = frozenset(
    {"node_modules", "__pycache__", ".venv", ".git", ".mypy_cache", ".ruff_cache", ".hypothesis"}
)
DATA = (PurePosixPath("tests/data"), PurePosixPath("tests/__snapshots__"))
TEXT = frozenset(
    {".py", ".sh", ".mjs", ".js", ".cjs", ".go", ".json", ".toml", ".yaml", ".yml", ".md", ".cfg"}
)

#: Rule 1: each pattern, and why it names something a clone does not have.
OUTSIDE: dict[str, str] = {
    # Not after a name or a placeholder: `$HOME/work/`, `<work>/home/` are relative.
    r"(?<![\w.~$}>-])/work/": "the workspace of the machine the project was written on",
    r"(?<![\w.~$}>-])/(?:root|Users/[\w.-]+|home/(?!probe/?\b)[\w.-]+)/": "someone's home folder",
    r"HARNESS_CAPTURES": "the old switch to captures outside the repository",
    r"\bCONTRACTS\.md\b": "the old clause list beside the checkout (now docs/clauses.md)",
}
#: Rule 3: ``..`` as a path component.
CLIMB = re.compile(r"(?:^|[\s/\"'=:(,])\.\.(?:/|$|[\s\"')])", re.MULTILINE)
#: Rule 4: a quoted relative path.
RELATIVE = re.compile(r"[\"'](\.{1,2}/[^\"'\s]*)[\"']")


@dataclass(frozen=True)
class Finding:
    """One place that names a path outside the repository, and why it does."""

    path: PurePosixPath
    line: int
    why: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.why}"


def _files(roots: tuple[str, ...]) -> Iterator[PurePosixPath]:
    for name in roots:
        top = ROOT / name
        if top.is_file():
            yield PurePosixPath(name)
            continue
        for folder, dirs, files in os.walk(top):
            dirs[:] = sorted(d for d in dirs if d not in SKIPPED and not d.endswith(".egg-info"))
            rel = PurePosixPath(Path(folder).relative_to(ROOT).as_posix())
            if any(rel == d or d in rel.parents for d in DATA):
                dirs[:] = []
                continue
            for file in sorted(files):
                if Path(file).suffix in TEXT:
                    yield rel / file


# -- rule 1 ---------------------------------------------------------------------------------


def outside_names(path: PurePosixPath, text: str) -> list[Finding]:
    found = []
    for pattern, why in OUTSIDE.items():
        for match in re.finditer(pattern, text):
            line = text.count("\n", 0, match.start()) + 1
            found.append(Finding(path, line, f"{match.group(0)!r}: {why}"))
    return found


# -- rule 2 ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Depth:
    """
    Where an anchored path points: ``at`` folders below the repository's root
    (0 the root itself), ``low`` the highest it climbed on the way.
    """

    at: int
    low: int

    def down(self, segments: str) -> Depth:
        at, low = self.at, self.low
        for part in segments.replace("\\", "/").split("/"):
            if part == "..":
                at -= 1
                low = min(low, at)
            elif part not in ("", "."):
                at += 1
        return Depth(at, low)

    def up(self, steps: int) -> Depth:
        return Depth(self.at - steps, min(self.low, self.at - steps))


_PATH_TYPES = frozenset({"Path", "PurePath", "PosixPath", "PurePosixPath"})
_SAME = frozenset({"resolve", "absolute", "expanduser", "abspath", "realpath", "normpath"})


def _name(node: ast.expr) -> str:
    """The last dotted part a call is made through (`os.path.dirname` -> dirname)."""
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else ""


class _Anchors(ast.NodeVisitor):
    """Follows every path built from a module's own file through one module."""

    def __init__(self, path: PurePosixPath) -> None:
        self.path = path
        self.file = Depth(len(path.parts), len(path.parts))  # the module itself
        self.names: dict[str, Depth] = {}
        self.found: dict[int, Finding] = {}

    def depth(self, node: ast.expr) -> Depth | None:
        if isinstance(node, ast.Name):
            if node.id == "__file__":
                return self.file
            bound = self.names.get(node.id)
            return None if bound is None else Depth(bound.at, bound.at)
        if isinstance(node, ast.Attribute) and node.attr == "parent":
            inner = self.depth(node.value)
            return None if inner is None else inner.up(1)
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute):
            if node.value.attr == "parents" and isinstance(node.slice, ast.Constant):
                inner = self.depth(node.value.value)
                steps = node.slice.value
                if inner is not None and isinstance(steps, int):
                    return inner.up(steps + 1)
            return None
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
            inner = self.depth(node.left)
            return None if inner is None else self._joined(inner, [node.right])
        if isinstance(node, ast.Call):
            return self._called(node)
        return None

    def _called(self, node: ast.Call) -> Depth | None:
        func, args = node.func, node.args
        name = _name(func)
        if name in _PATH_TYPES and args:
            first = args[0]
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                # A relative literal is read from the working folder: the root, under make.
                relative = not first.value.startswith(("/", "~"))
                return Depth(0, 0).down(first.value) if relative else None
            inner = self.depth(first)
            return None if inner is None else self._joined(inner, args[1:])
        if name == "files" and args and isinstance(args[0], ast.Constant):
            package = args[0].value  # importlib.resources.files("harness")
            return Depth(0, 0).down(package.replace(".", "/")) if isinstance(package, str) else None
        method = self.depth(func.value) if isinstance(func, ast.Attribute) else None
        if method is not None:  # a method of an anchored path
            if name == "joinpath":
                return self._joined(method, args)
            return method if name in _SAME else None
        if name == "dirname" and args:
            inner = self.depth(args[0])
            return None if inner is None else inner.up(1)
        if name in _SAME and args:
            return self.depth(args[0])
        if name == "join" and args:
            inner = self.depth(args[0])
            return None if inner is None else self._joined(inner, args[1:])
        return None

    def _joined(self, base: Depth, parts: list[ast.expr]) -> Depth:
        for part in parts:
            if isinstance(part, ast.Constant) and isinstance(part.value, str):
                base = base.down(part.value)
            else:
                base = Depth(base.at + 1, base.low)  # a name or call: a folder further down
        return base

    def visit_Assign(self, node: ast.Assign) -> None:
        self.generic_visit(node)
        bound = self.depth(node.value)
        for target in node.targets:
            if isinstance(target, ast.Name) and bound is not None:
                self.names[target.id] = bound

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        self.generic_visit(node)
        bound = None if node.value is None else self.depth(node.value)
        if isinstance(node.target, ast.Name) and bound is not None:
            self.names[node.target.id] = bound

    def generic_visit(self, node: ast.AST) -> None:
        if isinstance(node, ast.expr) and node.lineno not in self.found:
            where = self.depth(node)
            if where is not None and where.low < 0:
                shown = ast.unparse(node)
                why = f"{shown} climbs {-where.low} folder(s) above the repository"
                self.found[node.lineno] = Finding(self.path, node.lineno, why)
        super().generic_visit(node)


def climbing_python(path: PurePosixPath, text: str) -> list[Finding]:
    visitor = _Anchors(path)
    visitor.visit(ast.parse(text, filename=str(path)))
    return sorted(visitor.found.values(), key=lambda f: f.line)


# -- rules 3 and 4 --------------------------------------------------------------------------


def climbing_text(path: PurePosixPath, text: str) -> list[Finding]:
    found = []
    if path.name == "Makefile" or path.suffix == ".sh":
        for match in CLIMB.finditer(text):
            line = text.count("\n", 0, match.start()) + 1
            found.append(Finding(path, line, "'..' climbs from the root, where make runs"))
        return found
    here = Depth(len(path.parts) - 1, len(path.parts) - 1)
    for match in RELATIVE.finditer(text):
        if here.down(match.group(1)).low < 0:
            line = text.count("\n", 0, match.start()) + 1
            found.append(Finding(path, line, f"{match.group(1)!r} leaves the repository"))
    return found


def findings(path: PurePosixPath, text: str, prose: bool = False) -> list[Finding]:
    """Every rule that applies to ``path``, over its ``text``."""
    found = [] if path == THIS else outside_names(path, text)
    if prose:
        return found
    if path.suffix == ".py":
        return found + climbing_python(path, text)
    return found + climbing_text(path, text)


# -- the repository -------------------------------------------------------------------------


def test_nothing_names_a_path_outside_the_repository() -> None:
    scanned = 0
    found: list[Finding] = []
    for roots, prose in ((CODE, False), (PROSE, True)):
        for path in _files(roots):
            scanned += 1
            found += findings(path, (ROOT / path).read_text(encoding="utf-8"), prose)
    assert scanned > 200, f"only {scanned} files scanned: the walk missed the tree"
    assert [str(f) for f in found] == []


def test_the_scan_reaches_every_kind_of_file() -> None:
    """Each rule has files to bite on: Python, the Makefile, a shell script, JS, JSON, docs."""
    seen = {p.suffix or p.name for roots in (CODE, PROSE) for p in _files(roots)}
    assert {".py", "Makefile", ".sh", ".mjs", ".json", ".md", ".toml", ".go"} <= seen
    assert THIS in set(_files(CODE))
    data = [p for p in _files(CODE) if "node_modules" in p.parts or DATA[0] in p.parents]
    assert data == []


def test_every_committed_link_leads_inside() -> None:
    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout: no list of committed files to read the links from")
    listed = subprocess.run(
        ["git", "ls-files", "-s"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout
    links = [line.split("\t", 1)[1] for line in listed.splitlines() if line.startswith("120000 ")]
    outside = []
    for link in links:
        target = os.readlink(ROOT / link)
        depth = Depth(len(PurePosixPath(link).parts) - 1, len(PurePosixPath(link).parts) - 1)
        if os.path.isabs(target) or depth.down(target).low < 0:
            outside.append(f"{link} -> {target}")
    assert outside == []
    assert "harness/catalogue/bundled" in links  # the one link the package has: the catalogue


# -- the checker ----------------------------------------------------------------------------

TESTS = PurePosixPath("tests/test_x.py")
DEEP = PurePosixPath("harness/targets/real.py")


@pytest.mark.parametrize(
    ("path", "source"),
    [
        (TESTS, 'CAPTURES = Path(__file__).resolve().parents[2] / "beside" / "captures"\n'),
        (TESTS, 'ROOT = Path(__file__).resolve().parent.parent\nX = ROOT.parent / "x"\n'),
        (TESTS, "X = Path(__file__).parent.parent.parent\n"),
        (TESTS, 'X = Path(__file__).resolve().parent / ".." / ".." / "x"\n'),
        (TESTS, 'X = Path(__file__).parent.joinpath("../../x")\n'),
        (TESTS, 'X = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")\n'),
        (TESTS, 'HERE: Path = Path(__file__).parent\ndef f():\n    return HERE / "../.."\n'),
        (TESTS, 'X = Path("../beside/CONTRACTS.md")\n'),
        (TESTS, 'X = resources.files("harness").joinpath("../..")\n'),
        (TESTS, 'X = Path("/work/beside/captures")\n'),
        (TESTS, 'X = os.environ.get("HARNESS_CAPTURES")\n'),
        (DEEP, "INSTALLER = Path(__file__).resolve().parents[3]\n"),
        (PurePosixPath("Makefile"), "test:\n\tcp ../beside/x tests/\n"),
        (PurePosixPath("scripts/x.sh"), 'cd "$(dirname "$0")/../.."\n'),
        (PurePosixPath("harness/schemas/a.json"), '{"$ref": "../../../b.json"}\n'),
        (PurePosixPath("examples/a/b.mjs"), "new URL('../../../x.json', import.meta.url)\n"),
        (PurePosixPath("tests/conftest.py"), 'home = "/home/alice/src/x"\n'),
    ],
)
def test_the_checker_catches(path: PurePosixPath, source: str) -> None:
    assert findings(path, source) != []


@pytest.mark.parametrize(
    ("path", "source"),
    [
        (TESTS, "ROOT = Path(__file__).resolve().parents[1]\n"),
        (TESTS, 'ROOT = Path(__file__).resolve().parent.parent\nX = ROOT / "tests" / "data"\n'),
        (TESTS, 'X = Path(__file__).parent / "data" / ".." / "oracles"\n'),
        (DEEP, 'INSTALLER = Path(__file__).resolve().parents[2] / "scripts"\n'),
        (TESTS, 'BAD = "../../../../outside.json"  # data a test feeds the loader\n'),
        (TESTS, 'env = {"HOME": "/home/probe"}\n'),
        (PurePosixPath("Makefile"), "run:\n\tsh scripts/install-real-clis.sh\n"),
        (PurePosixPath("harness/schemas/protocol/a.json"), '{"$ref": "../outcome.schema.json"}\n'),
        (PurePosixPath("docs/a.md"), "[ci](../examples/ci/harness.yml), `schema_file: ../x`\n"),
    ],
)
def test_the_checker_lets_pass(path: PurePosixPath, source: str) -> None:
    prose = path.parts[0] == "docs"
    assert findings(path, source, prose) == []
