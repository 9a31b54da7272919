"""
The catalogue ships in the package: an installed ``harness`` runs it with no
path given, outside any checkout.

Building and installing a wheel needs a build backend from the network, so
the suite checks what decides the wheel's contents instead: the package
data patterns match every catalogue file, and ``importlib.resources`` finds
the catalogue where the wheel puts it.  (A wheel built with ``pip wheel .``
and installed with ``pip install --target`` ran ``harness run`` outside the
repository, see docs/ci.md.)
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
import tomllib
from importlib import metadata
from pathlib import Path

import pytest

from harness import exitcodes, pytest_plugin
from harness.catalogue import loader
from harness.cli import main

ROOT = Path(__file__).resolve().parent.parent


def _files(folder: Path) -> set[str]:
    return {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()}


def test_the_package_data_holds_every_catalogue_file() -> None:
    settings = tomllib.loads((ROOT / "pyproject.toml").read_text())
    patterns = settings["tool"]["setuptools"]["package-data"]["harness"]
    bundled = [p for p in patterns if p.startswith("catalogue/bundled/")]
    shipped = {
        p.relative_to(ROOT / "harness" / "catalogue" / "bundled").as_posix()
        for pattern in bundled
        for p in (ROOT / "harness").glob(pattern)
    }
    assert shipped == _files(ROOT / "scenarios")
    assert len(shipped) > 50


def test_the_bundled_catalogue_is_the_repositorys() -> None:
    assert loader.bundled() == (ROOT / "scenarios").resolve()
    assert len(loader.load([loader.bundled()]).scenarios) == len(
        loader.load([ROOT / "scenarios"]).scenarios
    )


def test_a_run_with_no_path_runs_the_bundled_catalogue_anywhere(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)  # no scenarios folder here
    argv = ["run", "--target", "reference-inproc", "-k", "codex-happy", "--reports", ""]
    assert main(argv) == exitcodes.OK
    assert capsys.readouterr().out.splitlines()[-1].startswith("harness: exit 0: all as expected")
    assert main(["lint"]) == exitcodes.OK


# -- issue 21.6: a wheel that behaves -------------------------------------------------

#: Third-party modules one command alone needs, the extra that installs each, and where
#: they may be imported (harness schema draws values with hypothesis when it is there).
EXTRAS: dict[str, tuple[str, tuple[str, ...] | None]] = {
    "hypothesis": ("fuzz", ("harness/fuzz/", "harness/compat/values.py")),
    "xdist": ("xdist", None),
    "httpx": ("respx", ("providers_fake/api/respx_route.py",)),
}
#: What must never come with the package: only the project's tests use these, and
#: httpx brought anyio, whose pytest plugin then loaded in every pytest run of an
#: environment the package was installed in (issue 21.6; docs/benchmarks.md).
TESTS_ONLY = {"hypothesis", "syrupy", "respx", "pytest-xdist", "pytest-cov"}
NEVER_AT_RUNTIME = {"httpx", "httpcore", "anyio", "respx", "h11", "sniffio"}


def _runtime_imports(path: Path) -> set[str]:
    """The top-level modules ``path`` imports, leaving out ``if TYPE_CHECKING:`` blocks."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skipped = {
        id(inner)
        for node in ast.walk(tree)
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
        for inner in ast.walk(node)
    }
    found = set()
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            found |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.add(node.module.split(".")[0])
    return found


def _requirement_names(requirements: list[str]) -> set[str]:
    return {_normal(re.split(r"[<>=\[; ]", r, maxsplit=1)[0]) for r in requirements}


def _normal(distribution: str) -> str:
    return re.sub(r"[-_.]+", "-", distribution).lower()


def test_the_runtime_dependencies_are_what_the_harness_imports() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    runtime = _requirement_names(project["dependencies"])
    extras = {
        name: _requirement_names(reqs) for name, reqs in project["optional-dependencies"].items()
    }
    distributions = metadata.packages_distributions()
    own = {"harness", "providers_fake"}
    missing = []
    for path in sorted(
        [*(ROOT / "harness").rglob("*.py"), *(ROOT / "providers_fake").rglob("*.py")]
    ):
        where = path.relative_to(ROOT).as_posix()
        if "/skeletons/" in where:
            continue  # templates harness init writes, not modules of the package
        for module in sorted(_runtime_imports(path) - own - set(sys.stdlib_module_names)):
            names = {_normal(d) for d in distributions.get(module, [module])}
            if names & runtime:
                continue
            extra, under = EXTRAS.get(module, (None, None))
            if (
                extra is not None
                and names & extras[extra]
                and (under is None or where.startswith(under))
            ):
                continue
            missing.append(f"{where}: {module}")
    assert missing == [], missing
    # What only the project's own tests use stays out of every installing environment.
    assert not runtime & (TESTS_ONLY | NEVER_AT_RUNTIME)
    assert extras["dev"] >= {"hypothesis", "syrupy", "respx", "pytest-xdist"}


def test_no_module_of_the_package_imports_an_http_library_with_a_pytest_plugin() -> None:
    """
    Every module of the package (but the one for users' httpx code) imported,
    and a reference run of each HTTP-speaking seam, load no httpx, httpcore or
    anyio: the harness speaks HTTP through `harness.net` alone.
    """
    code = """
import importlib, pkgutil, sys
import harness, providers_fake
for package in (harness, providers_fake):
    for found in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
        name = found.name
        if "skeletons" in name or name.endswith(("__main__", ".respx_route")):
            continue
        try:
            importlib.import_module(name)
        except ImportError as error:  # an extra's module (hypothesis) may be absent
            if error.name not in {"hypothesis", "xdist"}:
                raise
from harness.cli import main
for path in ("scenarios/model-api/claude", "scenarios/model-api/codex", "scenarios/service-api"):
    argv = ["run", path, "--target", "reference-inproc", "-k", "happy or format-absent"]
    main([*argv, "--reports", ""])
heavy = set(sys.argv[1:])
print(sorted({m.split(".")[0] for m in sys.modules} & heavy))
"""
    done = subprocess.run(
        [sys.executable, "-c", code, *sorted(NEVER_AT_RUNTIME)],
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-1] == "[]", done.stdout[-2000:]


def test_importing_the_plugin_loads_nothing_of_the_harness() -> None:
    code = (
        "import sys, harness.pytest_plugin; "
        "heavy = ('harness', 'httpx', 'anyio', 'yaml', 'jsonschema'); "
        "print(sorted(m for m in sys.modules if m.startswith(heavy)))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "['harness', 'harness.pytest_plugin']"


def test_the_plugin_defaults_to_the_bundled_catalogue_outside_a_project_with_scenarios(
    tmp_path: Path,
) -> None:
    assert pytest_plugin._default_scenarios(tmp_path) == loader.bundled()
    (tmp_path / "scenarios").mkdir()
    assert pytest_plugin._default_scenarios(tmp_path) == tmp_path / "scenarios"


def test_run_help_names_the_real_default(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["run", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert (
        "PATHS scenario files or folders (default: the catalogue bundled with the harness)" in out
    )


@pytest.mark.parametrize(
    ("argv", "module", "line"),
    [
        (
            ["run", "-n", "2", "--target", "reference-inproc", "--reports", ""],
            "xdist",
            "harness: exit 4: usage error: -n 2 needs xdist: "
            "pip install 'structured-output-harness[xdist]'",
        ),
        (
            ["fuzz", "--seam", "agent-cli", "--target", "reference-inproc"],
            "hypothesis",
            "harness: harness fuzz needs hypothesis: pip install 'structured-output-harness[fuzz]'",
        ),
    ],
)
def test_a_missing_extra_is_named(
    argv: list[str],
    module: str,
    line: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setitem(sys.modules, module, None)  # as if not installed: import fails
    assert main(argv) == exitcodes.USAGE
    captured = capsys.readouterr()
    assert (captured.out + captured.err).strip().splitlines()[-1] == line


def test_the_docs_ship_and_harness_docs_prints_them(capsys: pytest.CaptureFixture[str]) -> None:
    settings = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "docs/*.md" in settings["tool"]["setuptools"]["package-data"]["harness"]
    pages = sorted(p.stem for p in (ROOT / "docs").glob("*.md"))
    assert main(["docs"]) == exitcodes.OK
    listed = [line.split()[0] for line in capsys.readouterr().out.splitlines()]
    assert listed == pages
    assert main(["docs", "ci"]) == exitcodes.OK
    assert capsys.readouterr().out == (ROOT / "docs" / "ci.md").read_text(encoding="utf-8")
    assert main(["docs", "adaptor"]) == exitcodes.USAGE
    assert capsys.readouterr().err.startswith(
        "harness: no page 'adaptor' (did you mean 'adaptors'?) (pages: adaptors, "
    )


def test_no_help_names_a_file_an_installed_harness_lacks(
    capsys: pytest.CaptureFixture[str],
) -> None:
    helps = []
    for argv in (["--help"], *([name, "--help"] for name in _commands())):
        with pytest.raises(SystemExit):
            main(argv)
        helps.append(capsys.readouterr().out)
    assert not [h for h in helps if "docs/" in h]  # the pages are `harness docs TOPIC`


def _commands() -> list[str]:
    from harness.commands import COMMANDS  # noqa: PLC0415

    return [command.name for command in COMMANDS]
