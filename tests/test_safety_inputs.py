"""
Bad input is one clear line, read within bounds, never a traceback or a hang.

Scenario and baseline files are untrusted: each hostile or broken file below
ends as one ``file:line:col: field: message`` problem from the loader (and so
from ``harness lint``), and reading it is bounded in size, depth and count
before anything is built.  A scenario can only name files inside its
catalogue; the fake's script and the protocol server refuse what they cannot
serve the same way.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from harness.baselines import verdicts as baseline
from harness.catalogue import loader, yamlpos
from harness.catalogue.files import MAX_BYTES
from harness.targets import serve as serve_module
from harness.targets.serve import serve

HEADER = "title: t\ndescription: d\nclauses: [CDX-01]\nseam: agent-cli\n"
STEPS = (
    "provider: {steps: [thread.started]}\n"
    "expect: {error: execution_error, cause: missing_terminal}\n"
)

ROOT = Path(__file__).resolve().parent.parent


def _scenario(folder: Path, body: str, name: str = "case.yaml") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(body, encoding="utf-8")
    return folder


def _deep(tmp: Path) -> Path:
    return _scenario(tmp, "id: x\nrequest: " + "[" * 600 + "]" * 600 + "\n")


def _big(tmp: Path) -> Path:
    return _scenario(tmp, "id: x\nitems:\n" + "  - a\n" * (MAX_BYTES // 4))


def _many(tmp: Path) -> Path:
    return _scenario(tmp, "id: x\nitems: [" + "1," * (yamlpos.MAX_NODES + 10) + "]\n")


def _bomb(tmp: Path) -> Path:
    lines = ["a: &a [x, x, x, x, x, x, x, x, x, x]"]
    for this, last in zip("bcdefg", "abcdef", strict=True):
        lines.append(f"{this}: &{this} [" + ", ".join([f"*{last}"] * 10) + "]")
    return _scenario(tmp, "\n".join(lines) + "\n")


def _latin1(tmp: Path) -> Path:
    tmp.mkdir(parents=True, exist_ok=True)
    (tmp / "case.yaml").write_bytes(b"id: x\ntitle: caf\xe9\n")
    return tmp


def _fifo(tmp: Path) -> Path:
    tmp.mkdir(parents=True, exist_ok=True)
    os.mkfifo(tmp / "case.yaml")
    return tmp


def _tag(tmp: Path) -> Path:
    return _scenario(
        tmp, 'id: ok\ntags: ["codex\\n"]\n' + HEADER + "request: {driver: codex}\n" + STEPS
    )


def _id(tmp: Path) -> Path:
    return _scenario(tmp, 'id: "ok\\n"\n' + HEADER + "request: {driver: codex}\n" + STEPS)


def _sleep(tmp: Path) -> Path:
    body = "id: ok\n" + HEADER + "request: {driver: codex}\n"
    return _scenario(tmp, body + "provider: {steps: [{sleep: 1.0e+300}]}\nexpect: {}\n")


BAD_FILES: dict[str, tuple[Callable[[Path], Path], str]] = {
    "deep": (_deep, f"nested deeper than {yamlpos.MAX_DEPTH} levels"),
    "big": (_big, f"file is larger than {yamlpos.MAX_BYTES} bytes"),
    "many": (_many, f"document is too large (over {yamlpos.MAX_NODES} values)"),
    "alias-bomb": (_bomb, f"document is too large (over {yamlpos.MAX_NODES} values)"),
    "latin-1": (_latin1, "not UTF-8: invalid continuation byte at byte 16"),
    "fifo": (_fifo, "not a regular file"),
    "tag-with-newline": (_tag, "'codex\\n' does not match"),
    "id-with-newline": (_id, "'ok\\n' does not match"),
    "sleep-1e300": (_sleep, "1e+300 is greater than the maximum of 60"),
}


@pytest.mark.parametrize("kind", sorted(BAD_FILES))
def test_a_hostile_scenario_file_is_one_line(tmp_path: Path, kind: str) -> None:
    make, message = BAD_FILES[kind]
    loaded = loader.load([make(tmp_path / "catalogue")])
    assert loaded.scenarios == ()
    assert len(loaded.problems) == 1, loaded.problems
    [problem] = loaded.problems
    assert message in problem.message
    assert str(problem).startswith(f"{tmp_path / 'catalogue' / 'case.yaml'}:")


@pytest.mark.subprocess
def test_lint_of_a_fifo_does_not_block(tmp_path: Path) -> None:
    folder = _fifo(tmp_path / "catalogue")
    harness = Path(sys.executable).parent / "harness"
    done = subprocess.run(
        [str(harness), "lint", str(folder)], capture_output=True, timeout=60, check=False
    )
    assert done.returncode == 4
    assert (
        done.stdout.decode().strip()
        == f"{folder / 'case.yaml'}:1:1: <document>: not a regular file"
    )


@pytest.mark.subprocess
def test_a_fake_given_an_endless_sleep_says_so_in_one_line(tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    script.write_text('{"cli": "codex", "seed": "s", "steps": [{"sleep": 1e300}]}')
    fake = Path(sys.executable).parent / "fake-codex"
    env = {**os.environ, "HARNESS_FAKE_SCRIPT": str(script)}
    done = subprocess.run(
        [str(fake), "exec", "--json", "hi"], env=env, capture_output=True, timeout=60, check=False
    )
    assert done.returncode == 2
    assert done.stderr.decode().strip().splitlines() == [
        "fake-codex: step 0: 'sleep' must be a number of seconds from 0 to 3600"
    ]


def _with_schema_file(tmp: Path, reference: str) -> Path:
    body = f"id: ok\n{HEADER}request: {{driver: codex, schema_file: {json.dumps(reference)}}}\n"
    return _scenario(tmp / "catalogue" / "agent-cli" / "codex", body + STEPS)


@pytest.mark.parametrize(
    ("reference", "message"),
    [
        ("/etc/passwd", "give a path relative to the scenario file"),
        ("../../../../outside.json", "outside the catalogue folder"),
        ("link.json", "outside the catalogue folder"),
        ("/proc/self/environ", "give a path relative to the scenario file"),
        ("../../../../../../../../proc/self/environ", "outside the catalogue folder"),
        ("folder", "not a regular file"),
        ("huge.json", f"larger than {MAX_BYTES} bytes"),
        ("missing.json", "no such file"),
    ],
)
def test_a_schema_file_stays_inside_the_catalogue(
    tmp_path: Path, reference: str, message: str
) -> None:
    (tmp_path / "outside.json").write_text('{"type": "object"}')
    family = _with_schema_file(tmp_path, reference)
    (family / "link.json").symlink_to(tmp_path / "outside.json")
    (family / "folder").mkdir()
    (family / "huge.json").write_bytes(b" " * (MAX_BYTES + 1))
    loaded = loader.load([family])
    assert loaded.scenarios == ()
    assert [p.field for p in loaded.problems] == ["request.schema_file"]
    assert message in loaded.problems[0].message


def test_a_shared_schema_file_of_the_catalogue_is_fine(tmp_path: Path) -> None:
    family = _with_schema_file(tmp_path, "../schemas/shared.json")
    shared = tmp_path / "catalogue" / "agent-cli" / "schemas"
    shared.mkdir()
    (shared / "shared.json").write_text('{"type": "object"}')
    for given in (family, family / "case.yaml", tmp_path / "catalogue"):
        loaded = loader.load([given])
        assert (len(loaded.scenarios), loaded.problems) == (1, ()), given


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"target: x\nknown_failures: []\ntitle: caf\xe9\n", "not UTF-8"),
        (b"target: x\nknown_failures: " + b"[" * 300 + b"]" * 300 + b"\n", "nested deeper"),
    ],
    ids=["latin-1", "deep"],
)
def test_a_broken_baseline_is_one_line(tmp_path: Path, content: bytes, message: str) -> None:
    path = tmp_path / "x.yaml"
    path.write_bytes(content)
    loaded, problems = baseline.load(path, {"a": None})
    assert loaded is None
    assert len(problems) == 1
    assert message in problems[0].message
    assert str(problems[0]).startswith(f"{path}:")


@pytest.mark.parametrize(
    ("line", "answer"),
    [
        ("[1, 2]", "protocol error: a JSON list, not an object"),
        ("not json", "protocol error: a line that is not JSON"),
        ('{"cmd": "dance", "seq": 3}', "unknown command 'dance'"),
        ('{"cmd": "run", "seq": 4}', "KeyError"),
        ("[" * 30_000 + "]" * 30_000, "a line that is not JSON (nested deeper than 128 levels)"),
        ('{"a": "' + "\u2028" * 10 + '"', "a line that is not JSON"),
        ('{"cmd": "x", "pad": "' + "x" * (1 << 20) + '"}', "a line longer than 65536 bytes"),
    ],
    ids=["list", "not-json", "unknown", "key-error", "deep", "separators", "too-long"],
)
def test_harness_serve_answers_a_bad_line_and_goes_on(
    line: str, answer: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(serve_module, "MAX_LINE", 65536)
    out = io.StringIO()
    lines = [line, '{"cmd": "start", "seq": 0, "version": 1}', '{"cmd": "stop", "seq": 1}']
    assert serve(io.BytesIO(("\n".join(lines) + "\n").encode()), out) == 0
    first, second = (json.loads(reply) for reply in out.getvalue().splitlines())
    assert first["errored"] is True
    assert answer in first["message"]
    assert second["ready"] is True


@pytest.mark.subprocess
def test_lint_of_every_hostile_file_at_once_is_one_line_each_in_bounded_memory(
    tmp_path: Path,
) -> None:
    for kind, (make, _) in sorted(BAD_FILES.items()):
        make(tmp_path / "catalogue" / kind)
    harness = Path(sys.executable).parent / "harness"
    # A wrapper of its own reports the peak of exactly this one child.
    measure = (
        "import resource, subprocess, sys; "
        "done = subprocess.run(sys.argv[1:], capture_output=True); "
        "sys.stdout.buffer.write(done.stdout); "
        "print(done.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, "
        "file=sys.stderr)"
    )
    done = subprocess.run(
        [sys.executable, "-c", measure, str(harness), "lint", str(tmp_path / "catalogue")],
        capture_output=True,
        timeout=300,
        check=False,
    )
    status, peak_kib = map(int, done.stderr.decode().split())
    lines = done.stdout.decode().strip().splitlines()
    assert status == 4
    assert len(lines) == len(BAD_FILES), lines
    assert "Traceback" not in done.stdout.decode()
    assert peak_kib < 300 * 1024


def test_a_scenario_linked_from_outside_the_catalogue_is_refused(tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere.yaml"
    outside.write_text((ROOT / "scenarios/agent-cli/codex/candidates.yaml").read_text())
    folder = tmp_path / "catalogue"
    folder.mkdir()
    (folder / "linked.yaml").symlink_to(outside)
    loaded = loader.load([folder])
    assert loaded.scenarios == ()
    assert [str(p) for p in loaded.problems] == [
        f"{folder / 'linked.yaml'}:1:1: <document>: a link to outside the catalogue folder {folder}"
    ]


@pytest.mark.subprocess
def test_a_reader_that_goes_away_is_no_traceback(tmp_path: Path) -> None:
    """`harness list | head -1`: quiet, as git and pytest are."""
    harness = Path(sys.executable).parent / "harness"
    process = subprocess.Popen(
        [str(harness), "list", str(ROOT / "scenarios")],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stdout is not None
    process.stdout.readline()
    process.stdout.close()  # the reader has what it wanted
    _, err = process.communicate(timeout=120)
    assert err.decode() == ""
    assert process.returncode in (0, 141)  # 141: the pipe closed before the end


def test_record_resolves_a_relative_binary(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from harness.record import recorder  # noqa: PLC0415

    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "claude").write_text("#!/bin/sh\n")
    monkeypatch.chdir(tmp_path)
    options = recorder.Options(cli="claude", argv=("-p", "x"), binary=Path("bin/claude"))
    assert recorder._binary(options) == tmp_path / "bin" / "claude"
