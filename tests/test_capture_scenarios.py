"""
Every real Codex and Claude capture has a scenario, and its fake output matches.

For a scenario marked ``capture: NAME`` the fake is replayed with the argv the
reference pipeline would use, and its stdout is compared with what the real
CLI printed (event types, key order, constant values; ids and timings are
volatile).  Captures of argument guards have no stdout: the fake gets the bad
``--json-schema`` directly and must print the same stderr and exit status.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import providers_fake
from harness.adaptor.drivers import get as driver_for
from harness.adaptor.intake import SchemaRejected, intake
from harness.adaptor.negotiate import BUILTIN, negotiate
from harness.adaptor.pipeline import build_option
from harness.catalogue import loader
from harness.catalogue.scenario import Request, Scenario, Seam
from tests import captures
from tests.capture_compare import compare_to_capture


@pytest.mark.parametrize("seam", [Seam.AGENT_CLI, Seam.MODEL_API])
def test_every_capture_has_a_scenario(catalogue: loader.Loaded, seam: Seam) -> None:
    """On agent-cli the fake CLI replays it; on model-api the real CLI is run against it."""
    mine = [
        s.capture
        for s in catalogue.scenarios
        if s.capture and s.seam is seam and s.capture.startswith(("claude-", "codex-"))
    ]  # CodeBuddy's captures are in the repository: tests/test_codebuddy_captures.py
    assert sorted(set(mine)) == sorted(mine), "one scenario per capture per seam"
    assert set(captures.names()) - set(mine) == set()
    assert set(mine) - set(captures.names()) == set()


def _replay(scenario: Scenario, tmp_path: Path) -> providers_fake.Replay:
    assert scenario.script is not None
    script = tmp_path / "script.json"
    script.write_text(json.dumps(scenario.script.to_json(scenario.id)))
    env = {providers_fake.SCRIPT_ENV: str(script)}
    request = scenario.request
    assert isinstance(request, Request), scenario.id
    option = build_option(request)
    try:
        schema = intake(option) if option is not None else None
    except SchemaRejected:
        # The adaptor refuses this schema itself; show the CLI would have refused it too.
        raw = (request.schema or b"").decode()
        argv = ["-p", "--output-format", "json", "--json-schema", raw, request.prompt]
        return providers_fake.replay(request.driver, argv, env)
    driver = driver_for(request.driver)
    plan = negotiate(
        request.descriptor or BUILTIN[request.driver],
        wants_schema=schema is not None,
        rich=driver.rich,
        approval=request.approval,
    )
    argv = driver.argv("fake", plan, schema, request.prompt, tmp_path)
    return providers_fake.replay(request.driver, argv[1:], env)


@pytest.mark.parametrize("name", captures.names())
def test_fake_matches_capture(name: str, catalogue: loader.Loaded, tmp_path: Path) -> None:
    [scenario] = [s for s in catalogue.scenarios if s.capture == name and s.seam is Seam.AGENT_CLI]
    meta = captures.meta(name)
    replay = _replay(scenario, tmp_path)
    stdout = b"".join(c[1] for c in replay.chunks if c[0] == "stdout")
    stderr = b"".join(c[1] for c in replay.chunks if c[0] == "stderr")
    assert replay.exit_code == meta["exit_code"]
    assert stderr.decode() == meta["stderr"]
    assert compare_to_capture(stdout, captures.stdout(name)) == []
