"""
The fake CLIs against the real captures, and as real processes.

Every Claude and Codex capture (tests/data/captures/) is rebuilt as a script
(from what the capture's stdout and meta show) and replayed; the output must
match the capture field for field and end with the same exit status.  A few
launches then go through the installed console scripts to prove that
signals, hangs, exit codes, stderr and malformed output reach a real reader.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from providers_fake import CLIS, SCRIPT_ENV, event_names, replay
from providers_fake.cli.jsonout import dumps_js, loads_js
from tests import captures
from tests.capture_compare import compare_to_capture

ENFORCE_PREFIX = "[structured-output-enforce]"
DEFAULT_WARNING = "Model metadata for `{model}` not found."
EXHAUSTED_SEPARATOR = " — last StructuredOutput error: "


def _load(name: str) -> tuple[dict[str, Any], bytes]:
    return captures.meta(name), captures.stdout(name)


def _event(name: str, arg: Any = None) -> dict[str, Any]:
    return {"event": name, "arg": arg}


def _write_script(tmp_path: Path, cli: str, steps: list[Any], **extra: Any) -> dict[str, str]:
    script = {"cli": cli, "seed": tmp_path.name, "steps": steps, "exit": None, "signal": None}
    script["json_shape"] = None
    script.update(extra)
    path = tmp_path / "script.json"
    path.write_text(json.dumps(script))
    return {SCRIPT_ENV: str(path), "HOME": "/home/probe", "PATH": os.environ.get("PATH", "")}


# -- Claude: scripts rebuilt from the captures ---------------------------------------------


def _claude_steps_from_stream(lines: list[dict[str, Any]]) -> list[Any]:
    """
    Each stream-json line back to the semantic event that prints it.

    Only what cannot be derived is passed (a retry's random delay, the
    fallback model); attempt numbers, error kinds, the fallback notice and
    the synthetic error text must all come out of the fake by default.
    """
    steps: list[Any] = []
    pending: dict[str, Any] = {}  # tool_use id -> input, until its tool_result line
    for line in lines:
        kind, subtype = line["type"], line.get("subtype")
        if (kind, subtype) == ("system", "init"):
            steps.append(_event("init"))
        elif (kind, subtype) == ("system", "api_retry"):
            steps.append(_event("api_retry", {"delay_ms": line["retry_delay_ms"]}))
        elif (kind, subtype) == ("system", "model_fallback"):
            steps.append(_event("model_fallback", {"to": line["fallback_model"]}))
        elif kind == "assistant" and line["message"]["model"] == "<synthetic>":
            steps.append(_event("api_error_message"))
        elif kind == "assistant":
            for block in line["message"]["content"]:
                if block["type"] == "text":
                    steps.append(_event("text", block["text"]))
                else:
                    pending[block["id"]] = block["input"]
        elif kind == "user":
            for block in line["message"]["content"]:
                if block["type"] == "text" and block["text"].startswith(ENFORCE_PREFIX):
                    steps.append(_event("enforce_reminder"))
                elif block.get("is_error"):
                    arg = {"input": pending.pop(block["tool_use_id"]), "error": block["content"]}
                    steps.append(_event("structured_output_rejected", arg))
                else:
                    steps.append(_event("structured_output", pending.pop(block["tool_use_id"])))
        elif kind == "result":
            steps.append(_event("result", _result_arg(line)))
    return steps


def _claude_steps_from_meta(meta: dict[str, Any], result: dict[str, Any]) -> list[Any]:
    """A json-mode run: the conversation the CLI sent last, plus the model's last answer."""
    requests = meta["requests_to_model_api"]
    steps: list[Any] = [_event("init")]
    pending: dict[str, Any] = {}
    for message in requests[-1]["messages_after_prompt"]:
        for block in message["content"]:
            if block["type"] == "tool_use":
                pending[block["id"]] = block["input"]
            elif block["type"] == "text" and message["role"] == "assistant":
                steps.append(_event("text", block["text"]))
            elif block["type"] == "text":
                assert block["text"].startswith(ENFORCE_PREFIX), block
                steps.append(_event("enforce_reminder"))
            elif block.get("is_error"):
                arg = {"input": pending.pop(block["tool_use_id"]), "error": block["content"]}
                steps.append(_event("structured_output_rejected", arg))
            else:
                steps.append(_event("structured_output", pending.pop(block["tool_use_id"])))
    script = meta["model_script"]
    answer = script[min(len(requests), len(script)) - 1]
    if "status" in answer:
        text = f"API Error: {answer['status']} {answer['body']['error']['message']}"
        steps.append(_event("api_error_message", text))
    steps.extend(_event("text", text) for text in answer.get("texts", []))
    if "text" in answer:
        steps.append(_event("text", answer["text"]))
    if "tool" in answer:
        if result["subtype"] == "success":
            steps.append(_event("structured_output", answer["tool"]))
        else:
            error = result["errors"][0].split(EXHAUSTED_SEPARATOR)[1]
            arg = {"input": answer["tool"], "error": error}
            steps.append(_event("structured_output_rejected", arg))
    if answer.get("midstream_error"):
        steps.append(_event("api_error_message"))
    steps.append(_event("result", _result_arg(result)))
    return steps


def _result_arg(result: dict[str, Any]) -> dict[str, Any]:
    """Only what a script author has to say; everything else must come out by default."""
    arg: dict[str, Any] = {}
    if result["subtype"] != "success":
        arg["subtype"] = result["subtype"]
    if result["is_error"] != (result["subtype"] != "success"):
        arg["is_error"] = result["is_error"]
    if result.get("api_error_status") is not None:
        arg["api_error_status"] = result["api_error_status"]
    if "api_error_type" in result:
        arg["api_error_type"] = result["api_error_type"]
    return arg


def _bad_schema_from(stderr: str) -> str:
    """A --json-schema value the CLI rejects with exactly this message."""
    if "is not valid JSON" in stderr:
        word = stderr.split('Unexpected identifier "')[1].split('"', maxsplit=1)[0]
        return f"{word} a schema"
    if "must be a JSON object" in stderr:
        return '["not", "an", "object"]'
    path = stderr.split(": ", 2)[2].split(" ", maxsplit=1)[0].split("/")[1:]
    assert path[-1] == "type", stderr
    schema: Any = "no-such-type"
    for key in reversed(path):
        schema = {key: schema}
    return json.dumps(schema)


@pytest.mark.parametrize("name", captures.names("claude-"))
def test_claude_capture(name: str, tmp_path: Path) -> None:
    meta, stdout = _load(name)
    lines = [json.loads(line) for line in stdout.splitlines()]
    requests = meta["requests_to_model_api"]
    argv = ["-p", "Explain why the build failed."]
    if not requests:  # the CLI refused the command line before calling the model
        env = _write_script(tmp_path, "claude", [_event("init")])
        argv += ["--output-format", "json", "--json-schema", _bad_schema_from(meta["stderr"])]
        result = replay("claude", argv, env)
        assert (result.stdout, result.stderr.decode()) == (stdout, meta["stderr"])
        assert result.exit_code == meta["exit_code"]
        return
    schema = requests[0]["structured_output_tool"]["input_schema"]
    argv += ["--json-schema", json.dumps(schema)]
    if len(lines) > 1:
        argv += ["--output-format", "stream-json", "--verbose"]
        steps = _claude_steps_from_stream(lines)
    else:
        argv += ["--output-format", "json"]
        steps = _claude_steps_from_meta(meta, lines[0])
    env = _write_script(tmp_path, "claude", steps)
    result = replay("claude", argv, env)
    assert compare_to_capture(result.stdout, stdout) == []
    assert result.exit_code == meta["exit_code"]
    assert result.stderr.decode() == meta["stderr"]
    assert result.signal is None


def test_costs_are_printed_as_javascript_prints_them(tmp_path: Path) -> None:
    _, stdout = _load("claude-overload-fallback")
    lines = [json.loads(line) for line in stdout.splitlines()]
    env = _write_script(tmp_path, "claude", _claude_steps_from_stream(lines))
    argv = ["-p", "x", "--output-format", "stream-json", "--verbose"]
    printed = replay("claude", argv, env).stdout
    assert b'"total_cost_usd":0.00007000000000000001,' in printed
    assert (
        dumps_js([1.0, 1e21, 1.5e-7, 2**60 + 1, -0.0]) == "[1,1e+21,1.5e-7,1152921504606846977,0]"
    )


def test_indented_json_is_laid_out_as_json_stringify_lays_it_out() -> None:
    """``JSON.stringify(value, null, 2)``: what CodeBuddy prints on text (probed)."""
    value = {"2": [1e21, 1e-6, {}], "a": {"b": [], "c": 1.0}, "d": "\u2028"}
    printed = '{\n  "2": [\n    1e+21,\n    0.000001,\n    {}\n  ],\n  "a": {\n    "b": [],'
    assert dumps_js(value, indent=2) == printed + '\n    "c": 1\n  },\n  "d": "\u2028"\n}'
    assert dumps_js(value) == '{"2":[1e+21,0.000001,{}],"a":{"b":[],"c":1},"d":"\u2028"}'


# -- Codex ---------------------------------------------------------------------------------


def _codex_steps(lines: list[dict[str, Any]], model: str) -> list[Any]:
    steps: list[Any] = []
    for line in lines:
        kind = line["type"]
        item = line.get("item", {})
        if kind == "item.completed" and item["type"] == "error":
            default = item["message"].startswith(DEFAULT_WARNING.format(model=model))
            steps.append(_event("warning", None if default else item["message"]))
        elif kind in ("item.completed", "item.started"):
            name = item["type"] + (".started" if kind == "item.started" else "")
            steps.append(_event(name, item["text"]))
        elif kind == "error":
            steps.append(_event("error", line["message"]))
        elif kind == "turn.failed":
            steps.append(_event("turn.failed", line["error"]["message"]))
        elif kind == "turn.completed":
            steps.append(_event("turn.completed"))  # the default usage must match
        else:
            steps.append(_event(kind))
    return steps


@pytest.mark.parametrize("name", captures.names("codex-"))
def test_codex_capture(name: str, tmp_path: Path) -> None:
    meta, stdout = _load(name)
    lines = [json.loads(line) for line in stdout.splitlines()]
    request = meta["requests_to_model_api"][0]
    schema_file = tmp_path / "schema.json"
    schema_file.write_text(json.dumps(request["text"]["format"]["schema"]))
    model = request["model"]
    provider = 'model_providers.fake={name="fake",base_url="http://127.0.0.1:1/v1"}'
    argv = ["exec", "--json", "--skip-git-repo-check", "--output-schema", str(schema_file)]
    argv += ["-m", model, "-c", "model_provider=fake", "-c", provider, "Explain the failure."]
    env = _write_script(tmp_path, "codex", _codex_steps(lines, model))
    result = replay("codex", argv, env)
    assert compare_to_capture(result.stdout, stdout) == []
    assert result.exit_code == meta["exit_code"]
    assert result.stderr.decode() == meta["stderr"]


def test_every_capture_family_is_covered() -> None:
    families = {name.split("-")[0] for name in captures.names()}
    assert families <= {"claude", "codex"}, families
    assert all(event_names(cli) for cli in CLIS)


# -- Real processes through the console scripts --------------------------------------------


def _executable(cli: str) -> str:
    name = {"cursor": "fake-cursor-agent"}.get(cli, f"fake-{cli}")
    search = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    found = shutil.which(name, path=search)
    assert found, f"{name} is not installed; run .venv/bin/pip install -e '.[dev]'"
    return found


def _run(cli: str, argv: list[str], env: dict[str, str], timeout: float = 5) -> Any:
    return subprocess.run(
        [_executable(cli), *argv],
        env={**os.environ, **env},
        capture_output=True,
        timeout=timeout,
        check=False,
        stdin=subprocess.DEVNULL,
    )


@pytest.mark.subprocess
def test_process_signal_stderr_and_raw_output(tmp_path: Path) -> None:
    steps = [{"raw": '{"type":"thread.started"'}, {"stderr": "tracing noise\n"}]
    env = _write_script(tmp_path, "codex", steps, signal="SIGKILL")
    done = _run("codex", ["exec", "--json", "p"], env)
    assert done.returncode == -signal.SIGKILL
    assert (done.stdout, done.stderr) == (b'{"type":"thread.started"', b"tracing noise\n")


@pytest.mark.subprocess
def test_process_exit_status_and_sleep(tmp_path: Path) -> None:
    steps = [_event("init"), {"sleep": 0.05}, _event("text", "hi")]
    steps.append(_event("result"))
    env = _write_script(tmp_path, "claude", steps, exit=3)
    started = time.monotonic()
    done = _run("claude", ["-p", "--output-format", "json", "p"], env)
    assert time.monotonic() - started >= 0.05
    assert done.returncode == 3
    assert json.loads(done.stdout)["result"] == "hi"


@pytest.mark.subprocess
def test_process_hang_is_ended_by_timeout(tmp_path: Path) -> None:
    steps = [_event("init"), _event("assistant", "partial"), {"hang": True}]
    steps.append(_event("result"))
    env = _write_script(tmp_path, "cursor", steps)
    argv = ["-p", "--output-format", "stream-json", "p"]
    process = subprocess.Popen(
        [_executable("cursor"), *argv],
        env={**os.environ, **env},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
    )
    assert process.stdout is not None
    first, second = process.stdout.readline(), process.stdout.readline()
    assert json.loads(first)["type"] == "system"
    assert json.loads(second)["message"]["content"][0]["text"] == "partial"
    with pytest.raises(subprocess.TimeoutExpired):
        process.wait(timeout=0.3)
    process.kill()
    assert process.wait(timeout=5) == -signal.SIGKILL
    process.stdout.close()
    assert process.stderr is not None
    process.stderr.close()


@pytest.mark.subprocess
def test_process_interrupted_while_hanging_dies_by_sigint(tmp_path: Path) -> None:
    env = _write_script(tmp_path, "claude", [{"stderr": "ready\n"}, {"hang": True}])
    process = subprocess.Popen(
        [_executable("claude"), "-p", "p"],
        env={**os.environ, **env},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
    )
    assert process.stderr is not None
    assert process.stderr.readline() == b"ready\n"
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=5)
    assert process.returncode == -signal.SIGINT
    assert b"Traceback" not in stderr


@pytest.mark.subprocess
def test_process_reports_missing_script_without_traceback(tmp_path: Path) -> None:
    done = _run("codebuddy", ["-p", "x"], {SCRIPT_ENV: str(tmp_path / "missing.json")})
    assert done.returncode == 2
    assert done.stdout == b""
    assert done.stderr.decode().startswith("fake-codebuddy: cannot read script ")
    assert b"Traceback" not in done.stderr


@pytest.mark.parametrize(
    ("text", "message"),
    [
        # What codex 0.169.0 printed for each (probed against the real binary).
        ("not json", "expected ident at line 1 column 2"),
        ("nul", "EOF while parsing a value at line 1 column 3"),
        ("abc", "expected value at line 1 column 1"),
        ("falsy", "expected ident at line 1 column 5"),
        ("  nope", "expected ident at line 1 column 4"),
        ('{"a":', "EOF while parsing a value at line 1 column 5"),
        ("[1,]", "trailing comma at line 1 column 4"),
    ],
)
def test_codex_words_a_bad_schema_file_as_serde_does(text: str, message: str) -> None:
    from providers_fake.cli.codex import serde_message  # noqa: PLC0415  (one test's subject)

    with pytest.raises(json.JSONDecodeError) as caught:
        json.loads(text)
    assert serde_message(text, caught.value) == message


@pytest.mark.parametrize(
    ("text", "message"),
    [
        # Probed on codex 0.169.0 (scenarios/model-api/codex/schema-file-serde.yaml).
        ('\ufeff{"type":"object"}', "expected value at line 1 column 1"),
        ('{"enum":["\\ud800"]}', "unexpected end of hex escape at line 1 column 17"),
        ('{"enum":["a\\udc00"]}', "lone leading surrogate in hex escape at line 1 column 17"),
        ('{"éé": x}', "expected value at line 1 column 10"),
        ('["\\ud800\\u0041"]', "lone leading surrogate in hex escape at line 1 column 14"),
        ('["\\ud83d\\ude00", "\\\\ud800"]', None),
    ],
)
def test_codex_reads_a_schema_file_as_serde_does(text: str, message: str | None) -> None:
    from providers_fake.cli.codex import serde_problem  # noqa: PLC0415  (one test's subject)

    assert serde_problem(text) == message


def test_json_is_read_as_json_parse_reads_it() -> None:
    """Every number a double: an integer past 2**53 rounds; NaN is no JSON."""
    assert loads_js(
        '{"a": 9007199254740993, "b": 1e21, "c": 2.5, "d": 7, "e": 9223372036854775808}'
    ) == {
        "e": 9223372036854776000,
        "a": 9007199254740992,
        "b": 1e21,
        "c": 2.5,
        "d": 7,
    }
    with pytest.raises(ValueError, match="NaN"):
        loads_js("[NaN]")
