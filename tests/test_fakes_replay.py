"""
What the fakes do beyond the captures: records, refusals, shapes, determinism.

These pin behaviour the harness relies on but no capture shows: the launch
record, command-line errors worded like the real CLIs, script errors as one
line with status 2, Codex's ``-o`` file, CodeBuddy's and Cursor's shapes.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from providers_fake import CLIS, MODULES, RECORD_ENV, SCRIPT_ENV, replay
from providers_fake.cli import base, script
from providers_fake.cli import replay as replay_module
from tests.capture_compare import compare_to_capture
from tests.test_fakes import _event, _write_script


def test_same_seed_same_bytes_other_seed_other_ids(tmp_path: Path) -> None:
    steps = [_event("init"), _event("text", "hi")]
    steps.append(_event("result"))
    argv = ["-p", "x", "--output-format", "stream-json", "--verbose"]
    env = _write_script(tmp_path, "claude", steps)
    first, second = replay("claude", argv, env), replay("claude", argv, env)
    assert first == second
    other = dict(env)
    script = json.loads(Path(env[SCRIPT_ENV]).read_text())
    script["seed"] = "another-scenario"
    (tmp_path / "other.json").write_text(json.dumps(script))
    other[SCRIPT_ENV] = str(tmp_path / "other.json")
    third = replay("claude", argv, other)
    assert third.stdout != first.stdout
    assert compare_to_capture(third.stdout, first.stdout) == []


def test_launch_record(tmp_path: Path) -> None:
    env = _write_script(tmp_path, "codex", [_event("thread.started")])
    env[RECORD_ENV] = str(tmp_path / "launches.jsonl")
    schema = tmp_path / "schema.json"
    schema.write_text('{"type": "object"}')
    replay("codex", ["exec", "--json", "--output-schema", str(schema), "-m", "m", "hi"], env)
    replay("claude", ["-p", "--json-schema", "{oops", "--model", "opus"], env, b"from stdin")
    codex_line, claude_line = (tmp_path / "launches.jsonl").read_text().splitlines()
    assert json.loads(codex_line) == {
        "cli": "codex",
        "argv": ["exec", "--json", "--output-schema", str(schema), "-m", "m", "hi"],
        "output_format": "jsonl",
        "schema": {"type": "object"},
        "prompt": "hi",
        "model": "m",
    }
    record = json.loads(claude_line)
    assert (record["schema"], record["prompt"], record["output_format"]) == (
        None,
        "from stdin",
        "text",
    )


@pytest.mark.parametrize(
    ("cli", "argv", "stderr", "status"),
    [
        ("codex", ["exec", "--bogus", "p"], "error: unexpected argument '--bogus' found", 2),
        (
            "codex",
            ["exec", "--output-schema", "/nonexistent/s.json", "p"],
            "Failed to read output schema file /nonexistent/s.json: No such file or directory",
            1,
        ),
        ("claude", ["-p", "--bogus", "p"], "error: unknown option '--bogus'\n", 1),
        (
            "claude",
            ["-p", "--output-format", "stream-json", "p"],
            "Error: When using --print, --output-format=stream-json requires --verbose\n",
            1,
        ),
        (
            "claude",
            ["-p", "--json-schema", '{"type": "strin"}', "p"],
            "Error: --json-schema is not a valid JSON Schema: data/type must be equal to",
            1,
        ),
        ("cursor", ["-p", "--json-schema", "{}", "p"], "error: unknown option '--json-schema'", 1),
        ("cursor", ["-p", "--output-schema", "s.json", "p"], "error: unknown option", 1),
        (
            "codebuddy",
            ["-p", "--json-schema", "[]", "p"],
            "Error: --json-schema must be a JSON object\n",
            1,
        ),
    ],
)
def test_command_line_refusals(
    tmp_path: Path, cli: str, argv: list[str], stderr: str, status: int
) -> None:
    env = _write_script(tmp_path, cli, [{"raw": "must not be printed"}])
    result = replay(cli, argv, env)
    assert (result.stdout, result.exit_code) == (b"", status)
    assert result.stderr.decode().startswith(stderr)


@pytest.mark.parametrize(
    ("script", "reason"),
    [
        (None, "HARNESS_FAKE_SCRIPT is not set"),
        ("{not json", "is not valid JSON"),
        ('{"steps": [{"event": "turn.begun"}]}', "unknown claude event 'turn.begun'"),
        ('{"steps": [{"raw": "x", "stderr": "y"}]}', "exactly one of"),
        ('{"steps": [], "signal": "SIGFOO"}', "'signal' must be one of"),
        ('{"steps": [{"event": "text", "arg": 5}]}', "arg must be a string"),
    ],
)
def test_bad_scripts_give_one_line_and_status_2(
    tmp_path: Path, script: str | None, reason: str
) -> None:
    env: dict[str, str] = {}
    if script is not None:
        (tmp_path / "s.json").write_text(script)
        env[SCRIPT_ENV] = str(tmp_path / "s.json")
    result = replay("claude", ["-p", "x"], env)
    assert result.exit_code == 2
    [line] = result.stderr.decode().splitlines()
    assert line.startswith("fake-claude: ")
    assert reason in line


def test_codex_last_message_file_and_plain_mode(tmp_path: Path) -> None:
    steps = [_event("thread.started"), _event("turn.started")]
    steps += [_event("agent_message", '{"ok":true}'), _event("turn.completed")]
    env = _write_script(tmp_path, "codex", steps)
    out = tmp_path / "last.txt"
    result = replay("codex", ["exec", "-o", str(out), "prompt"], env)
    assert (result.stdout, result.exit_code) == (b'{"ok":true}\n', 0)
    assert out.read_text() == '{"ok":true}'
    failed = [*steps[:2], _event("error", "boom"), _event("turn.failed")]
    env = _write_script(tmp_path, "codex", failed)
    result = replay("codex", ["exec", "--json", "-o", str(out), "prompt"], env)
    assert result.exit_code == 1
    assert out.read_text() == ""
    assert b"Warning: no last agent message" in result.stderr
    assert json.loads(result.stdout.splitlines()[-1])["error"]["message"] == "boom"


def test_codebuddy_json_shapes(tmp_path: Path) -> None:
    """The order the real CLI prints (tests/data/captures/codebuddy/success-json)."""
    steps = [_event("init"), _event("structured_output", {"b": 1, "a": 2})]
    steps.append(_event("result", {"result": ""}))
    argv = ["-p", "x", "--output-format", "json", "--json-schema", '{"type":"object"}']
    stdout = replay("codebuddy", argv, _write_script(tmp_path, "codebuddy", steps)).stdout
    assert stdout.startswith(b"[\n  {\n")  # indented by two, as JSON.stringify(x, null, 2)
    document = json.loads(stdout)
    assert isinstance(document, list)
    assert [item["type"] for item in document] == [
        "message", "file-history-snapshot", "function_call", "function_call_result", "result",
    ]  # fmt: skip
    result = document[-1]
    assert list(result) == [
        "type", "subtype", "is_error", "result", "uuid", "session_id", "duration_ms",
        "duration_api_ms", "num_turns", "total_cost_usd", "usage", "permission_denials",
        "__timestamp", "structured_output",
    ]  # fmt: skip
    assert (result["result"], result["structured_output"]) == ("", {"b": 1, "a": 2})
    assert list(result["structured_output"]) == ["b", "a"]
    assert json.loads(document[2]["arguments"]) == {"b": 1, "a": 2}
    env = _write_script(tmp_path, "codebuddy", steps, json_shape="object")
    single = json.loads(replay("codebuddy", argv, env).stdout)
    assert single == {**result, "__timestamp": single["__timestamp"]}


def test_cursor_joins_fragments(tmp_path: Path) -> None:
    steps: list[Any] = [_event("init"), _event("user")]
    steps += [_event("assistant", '{"a":'), _event("assistant", "1}")]
    steps.append(_event("result"))
    env = _write_script(tmp_path, "cursor", steps)
    stream = replay("cursor", ["-p", "--output-format", "stream-json", "say", "hi"], env)
    lines = [json.loads(line) for line in stream.stdout.splitlines()]
    assert [line["type"] for line in lines] == [
        "system",
        "user",
        "assistant",
        "assistant",
        "result",
    ]
    assert lines[1]["message"]["content"][0]["text"] == "say hi"
    assert lines[-1]["result"] == '{"a":1}'
    text = replay("cursor", ["-p", "say hi"], env)
    assert (text.stdout, text.exit_code) == (b'{"a":1}\n', 0)


# -- The registries: CLIs, their events, step kinds ----------------------------------------


def test_every_cli_is_registered_with_its_own_module() -> None:
    assert set(MODULES) == CLIS
    for cli in CLIS:
        spec = replay_module.cli_spec(cli)
        assert spec.name == cli
        assert type(spec).__module__ == spec.renderer.__module__ == MODULES[cli]


@pytest.mark.parametrize("cli", sorted(CLIS))
def test_every_event_has_a_handler_and_every_handler_an_event(cli: str) -> None:
    spec = replay_module.cli_spec(cli)
    handlers = {name for name in dir(spec.renderer) if name.startswith("_on_")}
    assert handlers == {base.handler_name(event) for event in spec.events}


def test_step_kinds_are_checked_and_performed_alike() -> None:
    assert list(replay_module.STEPS) == list(script.STEP_KINDS)


@pytest.mark.subprocess
@pytest.mark.parametrize("cli", sorted(CLIS))
def test_a_launch_imports_only_its_own_cli(tmp_path: Path, cli: str) -> None:
    """Start-up is benchmarked: a launch must not pay for the other CLIs' modules."""
    env = _write_script(tmp_path, cli, [])
    argv = ["exec", "x"] if cli == "codex" else ["-p", "x"]
    code = (
        "import json, sys, providers_fake\n"
        f"result = providers_fake.replay({cli!r}, {argv!r}, {env!r})\n"
        "print(json.dumps([result.exit_code, sorted(sys.modules)]))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=30
    )
    status, modules = json.loads(result.stdout)
    assert status == 0
    expected = {MODULES[cli]}
    if cli == "codebuddy":
        expected.add(MODULES["claude"])  # CodeBuddy's module extends Claude's
    assert set(modules) & set(MODULES.values()) == expected


def test_a_refusal_prints_held_results_between_its_line_and_its_message(tmp_path: Path) -> None:
    block = {"type": "tool_result", "tool_use_id": "toolu_0", "content": "no", "is_error": True}
    result = {"block": block}
    argv = ["-p", "x", "--output-format", "stream-json", "--verbose"]
    types = []
    for fields in ({"results": [result]}, {"results": [result], "message": False}):
        steps = [_event("init"), _event("refusal", fields), _event("result")]
        out = replay("claude", argv, _write_script(tmp_path, "claude", steps)).stdout
        lines = [json.loads(line) for line in out.decode().splitlines()]
        types.append([line["type"] + "/" + line.get("subtype", "") for line in lines])
    assert types[0][1:4] == ["system/model_refusal_no_fallback", "user/", "assistant/"]
    assert types[1][1:3] == ["system/model_refusal_no_fallback", "user/"]
    assert "assistant/" not in types[1]


@pytest.mark.parametrize(
    ("fields", "reason"),
    [({"results": "x"}, "'results' must be a list"), ({"message": "no"}, "'message' must be")],
)
def test_a_refusal_event_with_a_bad_field_is_one_line(
    tmp_path: Path, fields: dict[str, object], reason: str
) -> None:
    steps = [_event("init"), _event("refusal", fields)]
    result = replay("claude", ["-p", "x"], _write_script(tmp_path, "claude", steps))
    assert result.exit_code == 2
    [line] = result.stderr.decode().splitlines()
    assert reason in line
