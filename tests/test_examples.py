"""
The example adaptors in other languages run the catalogue against their baselines.

``make test`` installs their dependencies first; a missing install is a loud
failure here, never a skip.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from harness.cli import main

ROOT = Path(__file__).resolve().parent.parent
NODE = ROOT / "examples" / "node-adaptor"


def test_node_example_meets_its_baseline(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    node = shutil.which("node")
    assert node, "node is not installed"
    assert (NODE / "node_modules" / "ajv").is_dir(), "run `make test` (npm ci) first"
    spec = f"node-example=cmd-check:{node} {NODE / 'adaptor.mjs'}"
    # Its own committed baseline alone: strictly, the others' would be baselines
    # for targets not in the run.
    own = tmp_path / "baselines"
    own.mkdir()
    shutil.copy(ROOT / "baselines" / "node-example.yaml", own)
    code = main(
        [
            "run",
            str(ROOT / "scenarios"),
            "--target",
            spec,
            "--baselines",
            str(own),
            "--strict-baseline",
            "--reports",
            str(tmp_path / "reports"),
        ]
    )
    out = capsys.readouterr().out
    assert code == 0, out
    assert "0 regressions, 0 stale" in out
    assert "0 errored" in out
