"""
A scenario runs no command unless the user opts in, and then only confined.

The bundled catalogue has Bash cases (LOOP-16's side effects); an untrusted
catalogue could script any command.  Without ``--allow-exec`` such cases are
skipped with the reason on every target; with it the command cannot read the
harness's environment, cannot write outside the case's folder, and leaves no
process behind (bubblewrap where the machine has it: `.ci/run` installs it).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from harness import targets
from harness.catalogue import loader
from harness.seams import RunOptions
from harness.seams.case import execute
from harness.seams.model_api.values import ModelApiOutcome
from harness.systems import sandbox
from providers_fake.api import realcli

SECRET = "s3cret-planted-by-the-test"
PROBE = "sleep 283"


def _scenario(tmp_path: Path, command: str) -> Path:
    folder = tmp_path / "catalogue"
    folder.mkdir()
    (folder / "exec.yaml").write_text(
        f"""
id: exec-probe
title: A scripted Bash call
description: The model asks Claude Code to run a command.
clauses: [LOOP-16]
seam: model-api
request:
  cli: claude
  schema: {{type: object}}
  allowed_tools: [Bash]
provider:
  model_script:
    - {{tool_name: Bash, tool: {{command: {command!r}}}}}
    - {{tool: {{}}}}
expect:
  exit_code: 0
  requests: 2
  line_types: [result/success]
  structured_output: {{}}
  subtype: success
  is_error: false
""",
        encoding="utf-8",
    )
    return folder


def _targets() -> list[str]:
    return ["reference-inproc", "reference"] + (["real"] if realcli.enabled() else [])


def _lingering() -> list[str]:
    found = []
    for entry in Path("/proc").iterdir():
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode().strip()
        except OSError:
            continue
        if cmdline == PROBE:
            found.append(entry.name)
    return found


@pytest.mark.subprocess
@pytest.mark.parametrize("spec", _targets())
def test_without_the_opt_in_the_case_is_skipped(tmp_path: Path, spec: str) -> None:
    marker = tmp_path / "ran.txt"
    loaded = loader.load([_scenario(tmp_path, f"touch {marker}")])
    assert loaded.problems == ()
    result = execute(loaded.scenarios[0], targets.create(spec))
    assert result.status == "skipped"
    assert "--allow-exec" in (result.reason or "")
    assert not marker.exists()


@pytest.mark.subprocess
@pytest.mark.parametrize("spec", _targets())
def test_with_it_the_command_is_confined(
    tmp_path: Path, spec: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    if sandbox.isolation() != sandbox.BUBBLEWRAP:
        if os.environ.get("CI"):
            pytest.fail("CI must have bubblewrap (.ci/run installs it)")
        pytest.skip("no bubblewrap on this machine: writes outside the folder cannot be refused")
    monkeypatch.setenv("HARNESS_TEST_SECRET", SECRET)
    outside = tmp_path / "outside"
    outside.mkdir()
    command = (
        f"env > env.txt; echo $HARNESS_TEST_SECRET > secret.txt; "
        f"echo escaped > {outside}/escape.txt; ({PROBE} &) ; echo done"
    )
    loaded = loader.load([_scenario(tmp_path, command)])
    result = execute(loaded.scenarios[0], targets.create(spec), RunOptions(allow_exec=True))
    assert result.status in {"passed", "failed"}, result.reason
    outcome = result.outcome
    assert isinstance(outcome, ModelApiOutcome)
    files = dict(outcome.files)
    if spec != "real":  # the real binary refuses background commands itself
        assert files["secret.txt"] == "\n"
        assert SECRET not in files["env.txt"]
    assert SECRET not in str(outcome.to_json())
    assert not (outside / "escape.txt").exists()
    assert _lingering() == []


def test_the_sandbox_bounds_time_and_output(tmp_path: Path) -> None:
    env = {"PATH": os.environ["PATH"]}
    loud = sandbox.run("yes | head -c 3000000", tmp_path, env, 10.0)
    assert (loud.size, len(loud.output)) == (3_000_000, sandbox.KEEP_BYTES)
    slow = sandbox.run("sleep 30", tmp_path, env, 0.5)
    assert (slow.timed_out, slow.exit_code) == (True, None)
    failing = sandbox.run("echo out; echo err >&2; exit 3", tmp_path, env, 10.0)
    assert (failing.output, failing.exit_code) == (b"out\nerr\n", 3)


def test_the_sandbox_sees_the_case_folder_and_the_system_not_the_home(tmp_path: Path) -> None:
    if sandbox.isolation() != sandbox.BUBBLEWRAP:
        pytest.skip("bubblewrap cannot make a sandbox on this machine")
    home = Path.home()
    probe = "ls -A {home} >/dev/null 2>&1 && echo home-seen; "
    probe += "test -e /etc/shadow && echo shadow-seen"
    folder = tmp_path / "case"
    folder.mkdir()
    done = sandbox.run(
        probe.format(home=home) + "; echo made > made.txt; cat made.txt; ls /usr/bin/env",
        folder,
        {"PATH": "/usr/bin:/bin"},
        10,
    )
    shown = done.output.decode()
    assert "home-seen" not in shown
    assert "shadow-seen" not in shown
    assert "made\n/usr/bin/env\n" in shown
    assert (folder / "made.txt").read_text() == "made\n"
