"""
``harness doctor`` (issue 21.5): one line per prerequisite with the command
that fixes it, exit 0 only when the default run has what it needs.  Missing
and outdated tools are stand-ins on a PATH of the test's own.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from importlib import metadata
from pathlib import Path

import pytest

from harness import exitcodes
from harness.cli import main
from harness.commands import checks
from harness.exceptions import ValidatorUnavailable
from harness.systems.claude import validator

ROOT = Path(__file__).resolve().parent.parent


def _stand_in(folder: Path, name: str, prints: str, status: int = 0) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    script = folder / name
    script.write_text(f"#!/bin/sh\necho '{prints}'\nexit {status}\n", encoding="utf-8")
    script.chmod(0o755)


@pytest.fixture
def machine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A PATH holding only the test's stand-ins, and an empty real-CLI cache."""
    bin_ = tmp_path / "bin"
    bin_.mkdir()
    monkeypatch.setenv("PATH", str(bin_))
    monkeypatch.setenv("HARNESS_REAL_CLIS_DIR", str(tmp_path / "real-clis"))
    monkeypatch.delenv("HARNESS_REAL_CLIS", raising=False)
    return bin_


def _lines(capsys: pytest.CaptureFixture[str]) -> dict[str, str]:
    out = capsys.readouterr().out.splitlines()
    by_check = {}
    for check in checks.CHECKS:
        [line] = [line for line in out if line.split(None, 1)[1].startswith(f"{check.name}  ")]
        by_check[check.name] = line
    assert len(out) == len(checks.CHECKS) + 1, out
    by_check["last"] = out[-1]
    return by_check


def test_a_bare_machine_gets_a_line_and_a_fix_per_check(
    machine: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["doctor"]) == exitcodes.FAILED
    lines = _lines(capsys)
    for check in checks.CHECKS:
        line = lines[check.name]
        if line.startswith("ok"):
            continue  # python, xdist and the Ajv files are the test run's own
        assert line.startswith(("MISSING ", "absent ")), line
        assert "; fix: " in line, line
    assert lines["node"].startswith("MISSING  node")
    assert "not on PATH" in lines["node"]
    assert lines["node"].endswith("fix: " + checks.CHECKS[1].fix)
    assert lines["npm"].startswith("MISSING  npm")
    assert lines["go"].startswith("absent   go")
    assert "optional, for harness init adaptor --lang go" in lines["go"]
    assert lines["chromium"].startswith("absent   chromium")
    assert lines["bubblewrap"].startswith("absent   bubblewrap")
    assert lines["real CLIs"].startswith("MISSING  real CLIs")
    assert "missing claude 2.1.328, codebuddy 2.117.0, codex 0.169.0" in lines["real CLIs"]
    assert "install-real-clis.sh" in lines["real CLIs"]
    assert lines["last"] == "harness: exit 1: failed: the default run needs node, npm, real CLIs"


def test_only_what_the_default_run_needs_decides_the_exit(
    machine: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _stand_in(machine, "node", "v20.11.1")
    _stand_in(machine, "npm", "10.2.4")
    monkeypatch.setenv("HARNESS_REAL_CLIS", "off")
    assert main(["doctor"]) == exitcodes.OK
    lines = _lines(capsys)
    assert lines["node"] == "ok       node          v20.11.1"
    assert lines["npm"] == "ok       npm           10.2.4"
    # Left out of the run by the switch: reported, not required.
    assert lines["real CLIs"].startswith("absent   real CLIs")
    assert lines["go"].startswith("absent ")
    assert lines["last"] == "harness: doctor: all that the default run needs is here"


def test_an_old_node_or_one_that_fails_is_missing(
    machine: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _stand_in(machine, "node", "v18.19.0")
    assert checks.node() == checks.Finding(False, "v18.19.0, older than 20")
    _stand_in(machine, "node", "segfault", status=139)
    assert checks.node() == checks.Finding(False, "not on PATH")


def test_a_go_on_path_is_reported_with_its_version(machine: Path) -> None:
    _stand_in(machine, "go", "go version go1.22.0 linux/amd64")
    assert checks.CHECKS[-1].probe() == checks.Finding(True, "go version go1.22.0 linux/amd64")


def test_the_ajv_worker_missing_names_its_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(validator, "PACKAGE", tmp_path / "ajv")
    found = checks.ajv()
    assert not found.ok
    assert found.seen == f"not installed in {tmp_path / 'ajv'}"
    assert found.fix == f"npm ci --prefix {tmp_path / 'ajv'}"
    (tmp_path / "ajv" / "node_modules" / "ajv").mkdir(parents=True)
    (tmp_path / "ajv" / "node_modules" / "ajv" / "package.json").write_text('{"version": "8.1.0"}')
    assert checks.ajv().seen == f"ajv 8.1.0 in {tmp_path / 'ajv'}"


def test_the_validator_points_at_doctor(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    validator.shutdown()
    monkeypatch.setattr(validator, "PACKAGE", tmp_path)
    with pytest.raises(ValidatorUnavailable, match="harness doctor"):
        validator.env_int("1")
    monkeypatch.undo()
    validator.shutdown()


def test_installed_releases_are_listed(machine: Path, tmp_path: Path) -> None:
    cache = tmp_path / "real-clis"
    for folder, package, version in (
        (cache, "@anthropic-ai/claude-code", "2.1.328"),
        (cache / "claude-2.1.235", "@anthropic-ai/claude-code", "2.1.235"),
    ):
        manifest = folder / "node_modules" / package / "package.json"
        manifest.parent.mkdir(parents=True)
        manifest.write_text(json.dumps({"version": version}))
        binary = folder / "node_modules" / ".bin" / "claude"
        binary.parent.mkdir(parents=True)
        binary.write_text("#!/bin/sh\n")
        binary.chmod(0o755)
    (cache / "not-a-release").mkdir()
    found = checks.real_clis()
    assert not found.ok
    assert found.seen == (
        f"{cache}: claude 2.1.328 (pinned), claude 2.1.235; "
        "missing codebuddy 2.117.0, codex 0.169.0"
    )


def test_python_and_xdist(monkeypatch: pytest.MonkeyPatch) -> None:
    assert checks.python((3, 10, 14)) == checks.Finding(False, "3.10.14, older than 3.11")
    assert checks.python((3, 12, 1)).ok

    def absent(name: str) -> str:
        raise metadata.PackageNotFoundError(name)

    monkeypatch.setattr(metadata, "version", absent)
    assert checks.xdist() == checks.Finding(False, "not installed")


def test_a_failing_set_up_step_of_the_makefile_points_at_doctor(tmp_path: Path) -> None:
    # The Makefile's own rule for the Ajv worker, with an npm that fails.
    ajv = tmp_path / "harness" / "systems" / "claude" / "ajv"
    ajv.mkdir(parents=True)
    shutil.copy(ROOT / "harness/systems/claude/ajv/package-lock.json", ajv)
    shutil.copy(ROOT / "Makefile", tmp_path)
    _stand_in(tmp_path / "bin", "npm", "npm ERR! could not resolve", status=1)
    make = shutil.which("make")
    assert make is not None, "make is a prerequisite of the project (README)"
    env = {**os.environ, "PATH": f"{tmp_path / 'bin'}:{os.environ['PATH']}"}
    done = subprocess.run(
        [make, "-s", "-C", str(tmp_path), "ajv"],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert done.returncode != 0
    assert "make: a prerequisite is missing; run .venv/bin/harness doctor" in done.stderr
