"""
Claude Code's validation in the reference model, held to the real binary's answers.

``tests/data/claude-validation.jsonl`` holds 638 StructuredOutput calls and
schema arguments as the real claude 2.1.328 answered them against the fake
API (recorded: the schema text, the tool input, and the ``is_error``
tool_result the binary sent back, ``null`` when it accepted the call, or the
reason it refused the schema before the run): hand-written classes, random
nested schemas, the input rewriting, the 11,024-character cap, and one bad
``pattern`` per JavaScriptCore error message.  The reference's validator
(`harness.systems.claude.validator`, Ajv 8.18.0 under Node) must give each
answer byte for byte.  The catalogue's model-api scenarios show the same on
the `real` target; this file is the wide net, and runs without the binary.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from harness.exceptions import ValidationTimedOut, ValidatorUnavailable
from harness.systems.claude import validator
from tests.realbin import real_binary

DATA = Path(__file__).resolve().parent / "data" / "claude-validation.jsonl"
ORACLE = Path(__file__).resolve().parent / "oracles" / "claude_routines.mjs"
RECORDED = [json.loads(line) for line in DATA.read_text(encoding="utf-8").splitlines()]


def _answer(case: dict[str, Any]) -> dict[str, Any]:
    compiled = validator.compile_schema(case["schema"])
    if isinstance(compiled, validator.Refusal):
        return {"refused": compiled.reason}
    return {"error": validator.check(case["schema"], case["input"]).error}


def test_every_recorded_answer_of_the_binary() -> None:
    differ = []
    for case in RECORDED:
        expected = {k: case[k] for k in ("refused", "error") if k in case}
        got = _answer(case)
        if got != expected:
            differ.append((case["id"], expected, got))
    assert differ == []
    kinds = {k for case in RECORDED for k in case if k in ("refused", "error")}
    assert kinds == {"refused", "error"}
    assert sum(1 for c in RECORDED if c.get("error")) > 400  # mostly rejected calls


SCHEMA = json.dumps(
    {
        "type": "object",
        "properties": {
            "cause": {"type": "string"},
            "fixes": {"type": "array", "items": {"type": "string"}},
        },
        "required": ["cause", "fixes"],
        "additionalProperties": False,
    }
)


def test_the_input_is_rewritten_before_it_is_judged() -> None:
    schema = json.dumps(
        {"type": "object", "properties": {"n": {"type": "number"}, "s": {"type": "string"}}}
    )
    verdict = validator.check(schema, r'{"n": "5", "s": "caf\\u00e9", "__proto__": 1}')
    assert verdict.error is None
    assert verdict.prepared == {"n": 5, "s": "café"}
    # Anything but an object is validated spread into one; the conversation keeps it as it was.
    spread = validator.check(SCHEMA, '"ab"')
    assert spread.prepared == "ab"
    assert spread.validated == {"0": "a", "1": "b"}


def test_numbers_are_javascript_numbers() -> None:
    schema = json.dumps({"type": "object", "properties": {"c": {"const": 9007199254740993}}})
    compiled = validator.compile_schema(schema)
    assert isinstance(compiled, validator.Schema)
    assert compiled.wire == {"type": "object", "properties": {"c": {"const": 9007199254740992}}}
    assert validator.check(schema, '{"c": 9007199254740992}').error is None


def test_strict_mode_warnings_are_kept_for_stderr() -> None:
    compiled = validator.compile_schema(
        json.dumps({"type": "object", "properties": {"a": {"maximum": 1}}})
    )
    assert isinstance(compiled, validator.Schema)
    assert compiled.warnings == (
        'strict mode: missing type "number" for keyword "maximum" at "#/properties/a" '
        "(strictTypes)",
    )


#: Integer settings as the binary reads them; the oracle test asks the binary's own
#: reader about every one of them too.
ENV_INTS: list[tuple[str | None, int | None]] = [
    ("3abc", 3),
    (" 2", 2),
    ("0x10", 0),
    ("-1", -1),
    ("1e2", 100),
    ("", None),
    ("abc", None),
    ("2.9", 2),
    ("1.5e0", None),
    ("1_0", 1),
    ("1_000", 1000),
    ("1,000", 1000),
    ("+3", 3),
    (None, None),
]


@pytest.mark.parametrize(("raw", "value"), ENV_INTS)
def test_environment_integers_are_read_as_the_binary_reads_them(
    raw: str | None, value: int | None
) -> None:
    assert validator.env_int(raw) == value


def test_a_catastrophic_pattern_is_stopped_by_the_watchdog(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(validator, "WATCHDOG", 1.0)
    schema = json.dumps(
        {"type": "object", "properties": {"a": {"type": "string", "pattern": "^(a+)+$"}}}
    )
    started = time.monotonic()
    with pytest.raises(ValidationTimedOut) as stopped:
        validator._WORKER.ask(
            {"op": "check", "schema": schema, "input": json.dumps({"a": "a" * 41 + "b"})},
            watchdog=1.0,
        )
    assert time.monotonic() - started < 5
    assert "backtracking budget" in str(stopped.value)
    # The worker was killed; the next question starts a fresh one.
    assert validator.check(SCHEMA, '{"cause": "c", "fixes": []}').error is None


def test_the_worker_never_outlives_the_harness(tmp_path: Path) -> None:
    # A harness process that dies without closing its worker: the kernel ends the worker too.
    script = (
        "import os, sys\n"
        "from harness.systems.claude import validator\n"
        "validator.env_int('1')\n"
        "print(validator._WORKER._process.pid, flush=True)\n"
        "os.kill(os.getpid(), 9)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        cwd=Path(__file__).resolve().parents[1],
    )
    assert done.returncode == -signal.SIGKILL, done.stderr
    pid = int(done.stdout.split()[0])
    for _ in range(50):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.1)
    os.kill(pid, signal.SIGKILL)
    pytest.fail("the validator worker outlived its harness")


def test_a_missing_package_names_the_command(monkeypatch: pytest.MonkeyPatch) -> None:
    validator.shutdown()
    monkeypatch.setattr(validator, "PACKAGE", Path("/nonexistent"))
    with pytest.raises(ValidatorUnavailable) as missing:
        validator.env_int("1")
    assert "npm ci --prefix harness/systems/claude/ajv" in str(missing.value)
    monkeypatch.undo()
    assert validator.env_int("1") == 1


def test_no_reference_is_ever_fetched() -> None:
    # The binary never fetches a $ref (probed with a listener); neither does its model.
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        listener.settimeout(0.5)
        port = listener.getsockname()[1]
        for ref in (f"http://127.0.0.1:{port}/s.json", "file:///etc/hostname", "#/nope"):
            schema = json.dumps({"type": "object", "properties": {"a": {"$ref": ref}}})
            refused = validator.compile_schema(schema)
            assert isinstance(refused, validator.Refusal)
            assert refused.reason == f"can't resolve reference {ref} from id #"
        with pytest.raises(TimeoutError):
            listener.accept()


def test_environment_integers_agree_with_the_binary_routine() -> None:
    # The binary's own reader of integer settings, run from the installed package
    # (tests/oracles/), on values no scenario could afford (1,000 attempts) or spell.
    binary = real_binary("claude").resolve()
    values: list[str | None] = [
        "3abc", " 2", "0x10", "-1", "1e2", "1e1", "", "abc", "0", "2.9", "1.5e0", "1_0",
        "+3", "1_000", "1,000", "1 000", "1\u00a0000", "12,34", "-2e0", ".5e1", "1e400",
        "\u0663", "\t7\n", "99999999999999999999", "0b11", "1e-1", None,
    ]  # fmt: skip
    values += [raw for raw, _ in ENV_INTS if raw not in values]
    feed = "".join(json.dumps({"routine": "env_int", "value": v}) + "\n" for v in values)
    done = subprocess.run(
        ["node", str(ORACLE), str(binary)],
        input=feed,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    answers = [json.loads(line)["answer"] for line in done.stdout.split("\n") if line]
    assert [validator.env_int(v) for v in values] == answers
    told = dict(zip(values, answers, strict=True))
    assert [told[raw] for raw, _ in ENV_INTS] == [value for _, value in ENV_INTS]
