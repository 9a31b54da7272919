"""
The tree reads as the architecture: a test keeps it so.

Imports inside ``harness`` flow one way, from the front (the CLI, the pytest
plugin, the engine) down to the catalogue: a module may import its own
subpackage and the layers below it, never one above.  ``harness.exceptions``
is the one module every layer may use, and ``harness.net`` (HTTP) the one
package: it stands beside the layers and imports nothing of the harness but
the exceptions.  The fakes stand apart: nothing in
``providers_fake`` imports the harness.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
HARNESS = ROOT / "harness"

#: Top to bottom; each layer may import the layers after it.
LAYERS = (
    "harness",
    "compat",
    "fuzz",
    "record",
    "mutation",
    "reports",
    "baselines",
    "seams",
    "targets",
    "systems",
    "adaptor",
    "catalogue",
)
#: Modules any layer may import: they import nothing of the harness (checked below).
ANYWHERE = {"harness.exceptions", "harness.signals"}
#: Packages beside the layers: any layer may import them; they import `ANYWHERE` only.
LEAVES = {"net"}
#: Subpackages that are part of the front (the top layer) with cli, engine and the plugin.
FRONT = {"commands"}


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _leaf(module: str) -> bool:
    parts = module.split(".")
    return len(parts) > 1 and parts[0] == "harness" and parts[1] in LEAVES


def _layer(module: str) -> int:
    parts = module.split(".")
    inner = parts[1] if len(parts) > 1 and parts[1] in LAYERS else "harness"
    return LAYERS.index(inner)


def _layer_of_package(name: str) -> str:
    return "harness" if name in FRONT else name


def _imports(path: Path) -> list[tuple[int, str]]:
    """Every module ``path`` imports by name (static imports, TYPE_CHECKING ones too)."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.append((node.lineno, node.module))
            found += [(node.lineno, f"{node.module}.{alias.name}") for alias in node.names]
    return found


def _harness_modules() -> list[Path]:
    return sorted(HARNESS.rglob("*.py"))


@pytest.mark.parametrize("path", _harness_modules(), ids=_module_name)
def test_imports_flow_down(path: Path) -> None:
    own = _module_name(path)
    upward = [
        f"{path.relative_to(ROOT)}:{line}: {own} imports {target}"
        for line, target in _imports(path)
        if target.startswith("harness.")
        and target not in ANYWHERE
        and not _leaf(target)
        and _is_module_or_package(target)
        and _layer(target) < _layer(own)
    ]
    assert upward == []


@pytest.mark.parametrize("leaf", sorted(LEAVES))
def test_a_leaf_imports_nothing_of_the_harness_but_the_exceptions(leaf: str) -> None:
    found = [
        f"{path.relative_to(ROOT)}:{line}: {target}"
        for path in sorted((HARNESS / leaf).rglob("*.py"))
        for line, target in _imports(path)
        if (target == "harness" or target.startswith("harness."))
        and target not in ANYWHERE
        and not target.startswith(f"harness.{leaf}")
        and not target.startswith("harness.exceptions.")
    ]
    assert found == []


@pytest.mark.parametrize("module", sorted(ANYWHERE))
def test_what_any_layer_imports_imports_nothing_of_the_harness(module: str) -> None:
    path = ROOT / Path(*module.split(".")).with_suffix(".py")
    found = [target for _, target in _imports(path) if target.split(".")[0] == "harness"]
    assert found == []


def _is_module_or_package(dotted: str) -> bool:
    relative = Path(*dotted.split("."))
    return (ROOT / relative.with_suffix(".py")).exists() or (ROOT / relative).is_dir()


def test_the_fakes_never_import_the_harness() -> None:
    found = [
        f"{path.relative_to(ROOT)}:{line}: {target}"
        for path in sorted((ROOT / "providers_fake").rglob("*.py"))
        for line, target in _imports(path)
        if target == "harness" or target.startswith("harness.")
    ]
    assert found == []


def test_the_top_level_stays_small() -> None:
    modules = sorted(p.name for p in HARNESS.glob("*.py"))
    assert len(modules) <= 12, modules


@pytest.mark.parametrize(
    "package",
    sorted(p for p in HARNESS.iterdir() if (p / "__init__.py").exists()),
    ids=lambda p: p.name,
)
def test_every_subpackage_says_what_it_holds_and_may_import(package: Path) -> None:
    docstring = ast.get_docstring(ast.parse((package / "__init__.py").read_text("utf-8")))
    assert docstring, f"{package.name}/__init__.py has no docstring"
    if package.name in LEAVES:
        assert "May import: `harness.exceptions` only" in docstring
        return
    below = LAYERS[LAYERS.index(_layer_of_package(package.name)) + 1 :]
    if package.name == "catalogue":
        assert "May import: `harness.exceptions` only" in docstring
    else:
        assert "May import:" in docstring
        named = docstring.split("May import:", 1)[1]
        assert all(f"`harness.{layer}`" in named for layer in below), below


def test_a_layer_violation_is_caught(tmp_path: Path) -> None:
    """The check itself: an upward import in a catalogue module is found."""
    module = tmp_path / "probe.py"
    module.write_text("from harness.seams.case import execute\n", encoding="utf-8")
    [(line, target)] = [i for i in _imports(module) if i[1] == "harness.seams.case"]
    assert line == 1
    assert _layer(target) < _layer("harness.catalogue.loader")
