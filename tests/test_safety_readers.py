"""
Every reader is bounded and every parser depth-limited.

What the harness and its fakes read from outside (a transcript to import, a
schema or script file, stdin, a JSON line) may be a FIFO that blocks, a
device that never ends, or JSON nested 10^5 deep: each ends as one line or
an errored case, quickly and in bounded memory, never as a hang or a
traceback.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from harness.catalogue import jsonvalue

BIN = Path(sys.executable).parent
ROOT = Path(__file__).resolve().parent.parent
DEEP = "[" * 100_000 + "]" * 100_000


def _run(
    argv: list[str], tmp_path: Path, stdin: str | None = None, **env: str
) -> tuple[int, str, int]:
    """Exit status, stderr and peak memory (KiB) of one command, within 60 s."""
    measure = (
        "import resource, subprocess, sys; "
        "stdin = open(sys.argv[1], 'rb') if sys.argv[1] else subprocess.DEVNULL; "
        "done = subprocess.run(sys.argv[2:], stdin=stdin, capture_output=True, timeout=60); "
        "sys.stdout.buffer.write(done.stderr); "
        "print(done.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, "
        "file=sys.stderr)"
    )
    done = subprocess.run(
        [sys.executable, "-c", measure, stdin or "", *argv],
        capture_output=True,
        timeout=90,
        check=False,
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT), **env},
    )
    status, peak = map(int, done.stderr.decode().split()[-2:])
    return status, done.stdout.decode(), peak


def test_deep_json_is_a_json_error_not_a_recursion_error() -> None:
    for text in (DEEP, "[" * 129 + "]" * 129, '{"a": ' * 200 + "1" + "}" * 200):
        with pytest.raises(jsonvalue.JSONError, match="nested deeper than 128 levels"):
            jsonvalue.loads(text)
        with pytest.raises(jsonvalue.JSONError, match="nested deeper than 128 levels"):
            jsonvalue.parse_exact(text)
    fine = "[" * 128 + "]" * 128
    assert jsonvalue.loads(fine) == jsonvalue.parse_exact(fine)
    # Brackets inside strings are text, not nesting.
    assert jsonvalue.loads('["' + "[" * 500 + '\\"{"]') == ["[" * 500 + '"{']


@pytest.mark.subprocess
@pytest.mark.parametrize(
    ("make", "expected"),
    [
        ("fifo", "not a regular file"),
        ("zero", "not a regular file"),
        ("deep", "wrote <stdout>"),
        ("deep-in-event", "wrote <stdout>"),
    ],
)
def test_import_of_a_hostile_transcript_is_one_line(
    tmp_path: Path, make: str, expected: str
) -> None:
    path = tmp_path / "transcript.jsonl"
    if make == "fifo":
        os.mkfifo(path)
    elif make == "zero":
        path = Path("/dev/zero")
    elif make == "deep":
        path.write_text(DEEP + "\n")
    else:
        path.write_text('{"type": "x", "v": ' + DEEP + "}\n")
    status, err, peak = _run(
        [str(BIN / "harness"), "import", str(path), "--driver", "claude"], tmp_path
    )
    assert expected in err
    assert "Traceback" not in err
    assert status == (4 if "regular" in expected else 0), err
    assert peak < 300 * 1024


@pytest.mark.subprocess
@pytest.mark.parametrize(
    ("fake", "argv", "stdin", "script", "expected"),
    [
        (
            "fake-codex",
            ["exec", "--json"],
            "/dev/zero",
            "ok",
            "stdin is larger than 16777216 bytes",
        ),
        (
            "fake-claude",
            ["-p", "--input-format", "stream-json", "--output-format", "stream-json", "--verbose"],
            "/dev/zero",
            "ok",
            "stdin is larger than 16777216 bytes",
        ),
        (
            "fake-codex",
            ["exec", "--json", "--output-schema", "fifo", "hi"],
            None,
            "ok",
            "Failed to read output schema file fifo: not a regular file",
        ),
        ("fake-codex", ["exec", "--json", "hi"], None, "fifo", "not a regular file"),
        ("fake-codex", ["exec", "--json", "hi"], None, "/dev/zero", "not a regular file"),
        ("fake-codex", ["exec", "--json", "hi"], None, "deep", "is not valid JSON"),
    ],
    ids=[
        "codex-stdin-zero",
        "claude-sdk-stdin-zero",
        "schema-fifo",
        "script-fifo",
        "script-zero",
        "script-deep",
    ],
)
def test_a_fake_reads_bounded_and_never_blocks(
    tmp_path: Path, fake: str, argv: list[str], stdin: str | None, script: str, expected: str
) -> None:
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "ok.json").write_text(json.dumps({"cli": fake.split("-")[1], "steps": []}))
    (tmp_path / "deep").write_text(DEEP)
    named = (
        script
        if script.startswith("/")
        else str(tmp_path / (script + ".json" if script == "ok" else script))
    )
    status, err, peak = _run([str(BIN / fake), *argv], tmp_path, stdin, HARNESS_FAKE_SCRIPT=named)
    assert expected in err
    assert "Traceback" not in err
    assert status != 0
    assert peak < 300 * 1024
