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

import tomllib
from pathlib import Path

import pytest

from harness import exitcodes
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
