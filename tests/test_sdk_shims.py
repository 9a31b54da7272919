"""
Published agent SDKs as targets: each runs the catalogue against its baseline.

``claude-agent-sdk`` (PyPI), ``@openai/codex-sdk``,
``@anthropic-ai/claude-agent-sdk`` and ``@tencent-ai/agent-sdk`` (npm) are
driven through the shims under ``examples/sdk-shims`` and pointed at the fake
CLIs; the two TypeScript Agent SDKs on a few cases of each kind (their whole
runs wait out several case timeouts; ``make run`` has them).  A missing SDK
is a loud failure naming the command that installs it, never a skip.  The
fake's side of the Claude SDKs' streaming input (control requests on stdin,
answered before the prompt arrives) is tested here too, at the level of the
module and of the installed executable.
"""

from __future__ import annotations

import json
import os
import re
import selectors
import shutil
import subprocess
import sys
import time
from importlib import metadata
from pathlib import Path

import pytest

from harness.adaptor.launch import find_executable
from harness.cli import main
from providers_fake import RECORD_ENV, SCRIPT_ENV, replay
from providers_fake.cli import streamin

ROOT = Path(__file__).resolve().parent.parent
SHIMS = ROOT / "examples" / "sdk-shims"
CODEX_SHIM = SHIMS / "codex-sdk"
CLAUDE_TS_SHIM = SHIMS / "claude-agent-sdk-ts"
CODEBUDDY_SHIM = SHIMS / "codebuddy-sdk"
CLAUDE_SDK_VERSION = "0.2.189"
CODEX_SDK_VERSION = "0.163.0"
CLAUDE_TS_SDK_VERSION = "0.3.333"
CODEBUDDY_SDK_VERSION = "0.3.201"
SDK_ARGV = [
    "--output-format",
    "stream-json",
    "--verbose",
    "--system-prompt",
    "",
    "--json-schema",
    '{"type": "object"}',
    "--input-format",
    "stream-json",
]
INITIALIZE = {
    "type": "control_request",
    "request_id": "req_1_abcd",
    "request": {"subtype": "initialize", "hooks": None},
}
USER = {
    "type": "user",
    "session_id": "",
    "message": {"role": "user", "content": "Explain the failure."},
    "parent_tool_use_id": None,
}


def _line(message: object) -> bytes:
    return (json.dumps(message) + "\n").encode()


def _run_catalogue(target: str, spec: str, tmp_path: Path, *select: str) -> int:
    # Its own committed baseline alone: strictly, the others' would be baselines
    # for targets not in the run.
    own = tmp_path / "baselines"
    own.mkdir()
    shutil.copy(ROOT / "baselines" / f"{target}.yaml", own)
    return main(
        [
            "run",
            str(ROOT / "scenarios"),
            "--target",
            f"{target}={spec}",
            "--baselines",
            str(own),
            "--strict-baseline",
            "--reports",
            str(tmp_path / "reports"),
            *select,
        ]
    )


def _npm_sdk(shim: Path, package: str, version: str, install: str) -> str:
    """The node to run `shim` with, once its pinned SDK is known to be installed."""
    node = shutil.which("node")
    assert node, "node is not installed"
    manifest = shim / "node_modules" / package / "package.json"
    assert manifest.is_file(), f"{package} is not installed; run: {install}"
    installed = json.loads(manifest.read_text())["version"]
    assert installed == version, f"{package} {installed}; run: {install}"
    return node


def _summary(out: str, target: str) -> str:
    # The counts line, not the skip lines that follow it.
    lines = [
        line
        for line in out.splitlines()
        if line.startswith(f"harness: {target}:") and " passed, " in line
    ]
    assert lines, out
    return lines[-1]


# -- the SDKs against their baselines -------------------------------------------


def test_claude_agent_sdk_meets_its_baseline(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    install = f"{sys.executable} -m pip install claude-agent-sdk=={CLAUDE_SDK_VERSION}"
    try:
        installed = metadata.version("claude-agent-sdk")
    except metadata.PackageNotFoundError:
        pytest.fail(f"claude-agent-sdk is not installed; run: {install}")
    assert installed == CLAUDE_SDK_VERSION, f"claude-agent-sdk {installed}; run: {install}"
    shim = SHIMS / "claude_agent_sdk_shim.py"
    status = _run_catalogue("claude-agent-sdk", f"cmd-check:{sys.executable} {shim}", tmp_path)
    out = capsys.readouterr().out
    summary = _summary(out, "claude-agent-sdk")
    assert status == 0, out
    # Errored cases are the SDK's own (an exception where an error result is due):
    # listed with their reasons like its failures, so none is a regression.
    assert "0 regressions, 0 stale" in summary, out


def test_codex_sdk_meets_its_baseline(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    node = shutil.which("node")
    assert node, "node is not installed"
    install = f"npm ci --prefix {CODEX_SHIM} --omit=optional"
    package = CODEX_SHIM / "node_modules" / "@openai" / "codex-sdk" / "package.json"
    assert package.is_file(), f"@openai/codex-sdk is not installed; run: {install}"
    installed = json.loads(package.read_text())["version"]
    assert installed == CODEX_SDK_VERSION, f"@openai/codex-sdk {installed}; run: {install}"
    status = _run_catalogue("codex-sdk", f"cmd-check:{node} {CODEX_SHIM / 'shim.mjs'}", tmp_path)
    out = capsys.readouterr().out
    summary = _summary(out, "codex-sdk")
    assert status == 0, out
    # Errored cases are the SDK's own (an exception where an error result is due):
    # listed with their reasons like its failures, so none is a regression.
    assert "0 regressions, 0 stale" in summary, out


# A few cases of each kind for the TypeScript Agent SDKs: one that passes, known
# failures of several checks, a skip by driver and one by request.
CLAUDE_TS_CASES = (
    "claude-happy-stream or claude-structured-output-revalidated or claude-garbage-line"
    " or claude-exhausted or claude-schema-array or codex-happy"
    " or neg-claude-prompt-when-native-off"
)
CODEBUDDY_CASES = (
    "codebuddy-capture-success-stream or codebuddy-capture-prose-only"
    " or codebuddy-two-result-records or codebuddy-capture-success-json"
    " or codebuddy-error-subtype or codex-happy"
)


@pytest.mark.parametrize(
    ("target", "shim", "package", "version", "cases", "install"),
    [
        (
            "claude-agent-sdk-ts",
            CLAUDE_TS_SHIM,
            "@anthropic-ai/claude-agent-sdk",
            CLAUDE_TS_SDK_VERSION,
            CLAUDE_TS_CASES,
            f"npm ci --prefix {CLAUDE_TS_SHIM} --omit=optional",
        ),
        (
            "codebuddy-sdk",
            CODEBUDDY_SHIM,
            "@tencent-ai/agent-sdk",
            CODEBUDDY_SDK_VERSION,
            CODEBUDDY_CASES,
            f"npm ci --prefix {CODEBUDDY_SHIM}",
        ),
    ],
)
def test_typescript_agent_sdk_meets_its_baseline(
    target: str,
    shim: Path,
    package: str,
    version: str,
    cases: str,
    install: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    node = _npm_sdk(shim, package, version, install)
    spec = f"cmd-check:{node} {shim / 'shim.mjs'}"
    status = _run_catalogue(target, spec, tmp_path, "-k", cases)
    out = capsys.readouterr().out
    summary = _summary(out, target)
    assert status == 0, out
    assert "0 regressions, 0 stale" in summary, out
    counts = re.search(r"(\d+) passed, .*: (\d+) expected", summary)
    assert counts is not None, summary
    # Each kind in the selection happened: a case passed, known failures were expected.
    assert int(counts[1]) >= 1, summary
    assert int(counts[2]) >= 2, summary


def test_codebuddy_sdk_drops_output_format(tmp_path: Path) -> None:
    """
    The reason the codebuddy-sdk shim sends its schema through ``extraArgs``:
    @tencent-ai/agent-sdk 0.3.201 types ``outputFormat`` but never reads it, so
    the CLI gets no ``--json-schema`` and the fake records no schema.  A release
    that honours it fails this test, and the shim should then use it.
    """
    install = f"npm ci --prefix {CODEBUDDY_SHIM}"
    node = _npm_sdk(CODEBUDDY_SHIM, "@tencent-ai/agent-sdk", CODEBUDDY_SDK_VERSION, install)
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"cli": "codebuddy", "seed": "sdk", "steps": ["init", "result"]}))
    record = tmp_path / "record.jsonl"
    program = """
import { query } from '@tencent-ai/agent-sdk';
const [cli, runtime, cwd] = process.argv.slice(1);
const options = {
  pathToCodebuddyCode: cli, executable: runtime, cwd,
  outputFormat: { type: 'json_schema', schema: { type: 'object' } },
};
for await (const message of query({ prompt: 'Explain the failure.', options })) {
  if (message.type === 'result') console.log(message.subtype);
}
"""
    done = subprocess.run(
        [node, "--input-type=module", "-e", program, find_executable("codebuddy"),
         sys.executable, str(tmp_path)],
        cwd=CODEBUDDY_SHIM,
        env={**os.environ, SCRIPT_ENV: str(script), RECORD_ENV: str(record)},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )  # fmt: skip
    assert (done.returncode, done.stdout) == (0, "success\n"), done.stderr
    [launch] = [json.loads(line) for line in record.read_text().splitlines()]
    assert launch["prompt"] == "Explain the failure."
    assert launch["schema"] is None
    assert not any(a.startswith("--json-schema") for a in launch["argv"]), launch["argv"]


# -- the fake's side of streaming input, in process ------------------------------


def test_conversation_answers_control_requests_and_stops_at_the_user_line() -> None:
    read_in, write_in = os.pipe()
    read_out, write_out = os.pipe()
    late = _line({"type": "control_request", "request_id": "late", "request": {}})
    os.write(write_in, _line(INITIALIZE) + b"not json\n\n" + _line(USER) + late)
    try:
        conversation = streamin.Conversation(read_in, write_out)
        consumed = conversation.read()
        os.close(write_in)
        rest = conversation.read(to_end=True)
        os.close(write_out)
        answered = [json.loads(line) for line in os.read(read_out, 1 << 20).splitlines()]
    finally:
        for fd in (read_in, read_out):
            os.close(fd)
    assert consumed == _line(INITIALIZE) + b"not json\n\n" + _line(USER)
    assert rest == late
    first, second = answered
    assert first["type"] == "control_response"
    assert first["response"]["subtype"] == "success"
    assert first["response"]["request_id"] == "req_1_abcd"
    assert first["response"]["response"]["claude_code_version"] == "2.1.328"
    assert second["response"]["subtype"] == "error"


def test_conversation_returns_everything_at_end_of_input() -> None:
    read_in, write_in = os.pipe()
    os.write(write_in, _line(INITIALIZE)[:-1])
    os.close(write_in)
    read_out, write_out = os.pipe()
    try:
        assert streamin.Conversation(read_in, write_out).read() == _line(INITIALIZE)[:-1]
    finally:
        for fd in (read_in, read_out, write_out):
            os.close(fd)


def test_conversation_survives_a_reader_that_went_away() -> None:
    read_in, write_in = os.pipe()
    read_out, write_out = os.pipe()
    os.close(read_out)
    os.write(write_in, _line(INITIALIZE) + _line(USER))
    try:
        assert streamin.Conversation(read_in, write_out).read().endswith(_line(USER))
    finally:
        for fd in (read_in, write_in, write_out):
            os.close(fd)


@pytest.mark.parametrize(
    ("subtype", "response"),
    [
        ("set_model", {}),
        ("set_permission_mode", {}),
        ("interrupt", {}),
        ("mcp_status", {"mcpServers": []}),
    ],
)
def test_other_control_requests_succeed(subtype: str, response: dict[str, object]) -> None:
    answer = streamin.respond({"request_id": "r", "request": {"subtype": subtype}})
    assert answer == {
        "type": "control_response",
        "response": {"subtype": "success", "request_id": "r", "response": response},
    }


def test_unknown_control_requests_are_refused() -> None:
    answer = streamin.respond({"request_id": "r", "request": {"subtype": "rewind_files"}})
    assert answer["response"] == {
        "subtype": "error",
        "request_id": "r",
        "error": "Unsupported control request subtype: rewind_files",
    }


def test_first_user_message_joins_text_blocks() -> None:
    blocks = {"type": "user", "message": {"content": [{"text": "a"}, {"text": "b"}, "x", {}]}}
    stdin = "\n".join([json.dumps(INITIALIZE), "[1]", json.dumps(blocks)])
    assert streamin.first_user_message(stdin) == "ab"
    assert streamin.first_user_message(json.dumps({"type": "user", "message": None})) is None


def _script(tmp_path: Path, steps: list[object]) -> dict[str, str]:
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"cli": "claude", "seed": "sdk", "steps": steps}))
    return {SCRIPT_ENV: str(script), RECORD_ENV: str(tmp_path / "record.jsonl")}


def _records(tmp_path: Path) -> list[dict[str, object]]:
    text = (tmp_path / "record.jsonl").read_text()
    return [json.loads(line) for line in text.splitlines()]


def test_replay_takes_the_prompt_from_stdin_given_up_front(tmp_path: Path) -> None:
    env = _script(tmp_path, ["init", {"structured_output": {"a": 1}}, "result"])
    result = replay("claude", SDK_ARGV, env, _line(INITIALIZE) + _line(USER))
    assert result.exit_code == 0
    lines = [json.loads(line) for line in result.stdout.decode().splitlines()]
    assert lines[-1]["structured_output"] == {"a": 1}
    [record] = _records(tmp_path)
    assert record["prompt"] == "Explain the failure."
    assert record["schema"] == {"type": "object"}


@pytest.mark.parametrize("stdin", [b"", _line(INITIALIZE)])
def test_input_ending_before_a_user_line_is_no_turn(tmp_path: Path, stdin: bytes) -> None:
    env = _script(tmp_path, ["init", "result"])
    result = replay("claude", SDK_ARGV, env, stdin)
    assert (result.chunks, result.exit_code) == ((), 0)
    assert _records(tmp_path)[0]["prompt"] is None


def test_replay_answers_version_without_a_script(tmp_path: Path) -> None:
    record = tmp_path / "record.jsonl"
    result = replay("claude", ["--version"], {RECORD_ENV: str(record)})
    assert (result.stdout, result.exit_code) == (b"2.1.328 (Claude Code)\n", 0)
    assert json.loads(record.read_text())["prompt"] is None


# -- the installed fake-claude, talking to an SDK-like peer -------------------------


def _read(process: subprocess.Popen[bytes], until_eof: bool, timeout: float = 10) -> bytes:
    """One line of stdout (or all of it), failing instead of blocking past `timeout`."""
    assert process.stdout is not None
    deadline = time.monotonic() + timeout
    data = b""
    with selectors.DefaultSelector() as selector:
        selector.register(process.stdout, selectors.EVENT_READ)
        while until_eof or not data.endswith(b"\n"):
            assert selector.select(deadline - time.monotonic()), "fake-claude stopped answering"
            chunk = os.read(process.stdout.fileno(), 1 if not until_eof else 65536)
            if not chunk:
                assert until_eof, "fake-claude closed stdout early"
                break
            data += chunk
    return data


@pytest.mark.subprocess
def test_fake_claude_converses_like_the_cli(tmp_path: Path) -> None:
    env = {**os.environ, **_script(tmp_path, ["init", {"structured_output": {"a": 1}}, "result"])}
    process = subprocess.Popen(
        [find_executable("claude"), *SDK_ARGV],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    assert process.stdin is not None
    try:
        process.stdin.write(_line(INITIALIZE))
        process.stdin.flush()
        # The SDK waits for this answer before it sends the prompt.
        answer = json.loads(_read(process, until_eof=False))
        assert answer["response"]["request_id"] == "req_1_abcd"
        process.stdin.write(_line(USER))
        process.stdin.flush()
        stdout = b"".join(_read(process, until_eof=False) for _ in range(4))
        # Like the real CLI, the session stays open after the result until stdin ends,
        # and control requests are still answered meanwhile.
        time.sleep(0.2)
        assert process.poll() is None
        process.stdin.write(_line({**INITIALIZE, "request": {"subtype": "set_model"}}))
        process.stdin.flush()
        assert json.loads(_read(process, until_eof=False))["response"]["subtype"] == "success"
        process.stdin.close()
        assert _read(process, until_eof=True) == b""
        assert process.wait(timeout=10) == 0
    finally:
        process.kill()
        process.wait()
        for stream in (process.stdin, process.stdout, process.stderr):
            if stream is not None:
                stream.close()
    lines = [json.loads(line) for line in stdout.decode().splitlines()]
    assert [line["type"] for line in lines] == ["system", "assistant", "user", "result"]
    assert lines[-1]["structured_output"] == {"a": 1}
    [record] = _records(tmp_path)
    assert record["prompt"] == "Explain the failure."
    assert record["schema"] == {"type": "object"}


@pytest.mark.subprocess
def test_fake_claude_that_crashes_waits_for_nobody(tmp_path: Path) -> None:
    # A run scripted to exit nonzero ends without waiting for the end of stdin,
    # which the TypeScript SDK keeps open until a result arrives.
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"cli": "claude", "seed": "sdk", "steps": ["init"], "exit": 1}))
    env = {**os.environ, SCRIPT_ENV: str(script)}
    process = subprocess.Popen(
        [find_executable("claude"), *SDK_ARGV],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    assert process.stdin is not None
    try:
        process.stdin.write(_line(INITIALIZE) + _line(USER))
        process.stdin.flush()
        assert process.wait(timeout=10) == 1
    finally:
        process.kill()
        process.wait()
        for stream in (process.stdin, process.stdout, process.stderr):
            if stream is not None:
                stream.close()


@pytest.mark.subprocess
@pytest.mark.parametrize(
    ("argv", "stdout", "status"),
    [
        (["-v"], b"2.1.328 (Claude Code)\n", 0),
        (["--version"], b"2.1.328 (Claude Code)\n", 0),
        # A refused command line exits before reading the SDK's requests.
        ([*SDK_ARGV[:5], "--json-schema", "[1]", "--input-format", "stream-json"], b"", 1),
    ],
)
def test_fake_claude_does_not_wait_for_stdin_when_the_cli_would_not(
    tmp_path: Path, argv: list[str], stdout: bytes, status: int
) -> None:
    env = {**os.environ, **_script(tmp_path, ["init", "result"])}
    process = subprocess.Popen(
        [find_executable("claude"), *argv],
        stdin=subprocess.PIPE,  # open and silent, like an SDK's
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    try:
        assert process.stdout is not None
        assert process.wait(timeout=10) == status
        assert process.stdout.read() == stdout
    finally:
        process.kill()
        process.wait()
        for stream in (process.stdin, process.stdout, process.stderr):
            if stream is not None:
                stream.close()
