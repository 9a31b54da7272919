"""
What the reference model of Claude Code shows that no offline run of the binary can.

Three rules of the model (LOOP-09/10 the strict wire schema and the Foundry
memory that strips it, LOOP-11/13 the refusal fallback) depend on Claude
Code's remote configuration; their scenarios skip the `real` target and say
why (`ModelApiRequest.beyond_offline`).  These probes are the evidence for
that reason: each tries the offline ways a user has to switch the behaviour
on, and shows the pinned binary ignoring them.  (The strict derivation
itself is held to the binary's own routine in tests/test_strict.py.)  The
third reason, a schema argument too long for one argv string, is a limit of
the kernel, probed here on the binary as well.  tests/test_witnesses.py
holds every skip reason to one of these probes.
"""

from __future__ import annotations

import errno
import json
import os
import subprocess
from pathlib import Path

import pytest

from harness.seams.model_api.values import ARG_MAX_STRLEN
from providers_fake.api import LoopbackServer, RecordedRequest, ScriptedModelAPI, realcli
from tests.realbin import real_binary

SCHEMA = json.dumps(
    {
        "type": "object",
        "properties": {"cause": {"type": "string"}},
        "required": ["cause"],
        "additionalProperties": False,
    }
)
GATE = "tengu_structured_output_strict"


def _tool(
    script: list[object], env: dict[str, str], args: tuple[str, ...] = ()
) -> list[RecordedRequest]:
    with LoopbackServer(ScriptedModelAPI(script)) as server:
        run = realcli.run_claude(
            real_binary("claude"),
            server.url,
            prompt="p",
            schema=SCHEMA,
            output_format="stream-json",
            env=env,
            args=args,
        )
        requests = server.fake.requests
    assert run.exit_code == 0, run.stderr
    assert requests
    return requests


def test_the_strict_gate_cannot_be_turned_on_offline(tmp_path: Path) -> None:
    overrides = json.dumps({GATE: True})
    config = tmp_path / "config"
    config.mkdir()
    cached: dict[str, object] = {
        "cachedFeatureFlags": {GATE: True},
        "cachedGrowthBookFeatures": {GATE: True},
    }
    cached |= {"cachedFeatureFlagsAt": 4_102_444_800_000, "hasCompletedOnboarding": True}
    (config / ".claude.json").write_text(json.dumps(cached))
    ways = {
        "the flag-override variable": {"CLAUDE_INTERNAL_FC_OVERRIDES": overrides},
        "flags cached in the global config": {"CLAUDE_CONFIG_DIR": str(config)},
    }
    for way, env in ways.items():
        requests = _tool([{"tool": {"cause": "c"}}], env)
        tool = requests[0].structured_output_tool
        assert tool is not None, way
        assert "strict" not in tool, f"{way} turned the gate on: the skip reason is wrong"
        assert tool["input_schema"] == json.loads(SCHEMA), way
    # The config folder was the one read: the binary wrote its own keys beside ours.
    assert "firstStartVersion" in json.loads((config / ".claude.json").read_text())


def test_a_refusal_has_no_fallback_model_offline() -> None:
    # --fallback-model arms the overload fallback, not the refusal one (remote configuration).
    script = [{"text": "no", "stop_reason": "refusal"}]
    with LoopbackServer(ScriptedModelAPI(script)) as server:
        run = realcli.run_claude(
            real_binary("claude"),
            server.url,
            prompt="p",
            schema=SCHEMA,
            output_format="stream-json",
            args=("--fallback-model", "claude-sonnet-5"),
        )
        models = server.fake.models
    lines = [json.loads(line) for line in run.stdout.splitlines() if line.startswith(b"{")]
    subtypes = [line.get("subtype") for line in lines if line.get("type") == "system"]
    assert "model_refusal_no_fallback" in subtypes
    assert "model_refusal_fallback" not in subtypes
    assert set(models) == {models[0]}  # no request went to the fallback model


def test_a_schema_argument_at_the_argv_limit_cannot_start_the_binary(tmp_path: Path) -> None:
    # One byte under the limit starts the binary (--version answers before any request);
    # at the limit the kernel refuses to start it at all, whoever the caller is.
    def schema(size: int) -> str:
        head, tail = '{"type":"object","description":"', '"}'
        return head + "x" * (size - len(head) - len(tail)) + tail

    binary = str(real_binary("claude"))
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path)}
    under = schema(ARG_MAX_STRLEN - 1)
    done = subprocess.run(
        [binary, "--version", "--json-schema", under],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env=env,
    )
    assert (done.returncode, done.stdout.split()[0]) == (0, "2.1.328"), done.stderr
    with pytest.raises(OSError) as refused:
        subprocess.run(
            [binary, "--version", "--json-schema", schema(ARG_MAX_STRLEN)],
            capture_output=True,
            timeout=60,
            check=False,
            env=env,
        )
    assert refused.value.errno == errno.E2BIG
