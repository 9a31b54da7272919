"""
``harness init adaptor``: each language's skeleton, written into an empty folder,
passes the catalogue's cases without a schema over the JSON-lines protocol (every
message checked against the protocol schemas) and skips the rest by the
protocol's own means.

Go is not on every machine: CI installs it (.ci/run) and this test fails there
without it; elsewhere the Go case is skipped with the reason.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import time
import tomllib
from functools import cache
from pathlib import Path

import pytest

from harness import exitcodes
from harness.catalogue import loader
from harness.catalogue.scenario import Request, Scenario
from harness.cli import main
from harness.commands import adaptor
from harness.targets.skeleton import SKELETONS, target_name

ROOT = Path(__file__).resolve().parent.parent
TEMPLATES = ROOT / "harness" / "targets" / "skeletons"
AGENT_CLI = ROOT / "scenarios" / "agent-cli"


@cache
def _agent_cli() -> tuple[Scenario, ...]:
    return loader.load([AGENT_CLI]).scenarios


def _no_schema() -> list[str]:
    """The agent-cli cases without a schema: the ones a fresh skeleton passes."""
    return sorted(
        s.id
        for s in _agent_cli()
        if isinstance(s.request, Request)
        and s.request.schema is None
        and s.request.schema_type is None
    )


def _init(language: str, folder: Path, capsys: pytest.CaptureFixture[str]) -> list[str]:
    assert main(["init", "adaptor", "--lang", language, str(folder)]) == exitcodes.OK
    return capsys.readouterr().out.splitlines()


def _run(printed: str, capsys: pytest.CaptureFixture[str], *selection: str) -> str:
    """Run the printed ``harness run`` line, its target checked against the protocol schemas."""
    [harness, *argv] = shlex.split(printed)
    assert harness == "harness"
    at = argv.index("--target") + 1
    argv[at] = argv[at].replace("=cmd:", "=cmd-check:", 1)
    code = main([*argv, *selection, "--reports", ""])
    out = capsys.readouterr().out
    assert code == exitcodes.OK, out
    return out


def test_the_no_schema_tag_marks_exactly_the_cases_without_a_schema() -> None:
    tagged = sorted(s.id for s in _agent_cli() if "no_schema" in s.tags)
    assert tagged == _no_schema()
    assert len(tagged) >= 6  # each driver is among them


def test_the_python_skeleton_passes_the_no_schema_cases_and_skips_the_rest(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "mine"
    wrote, _, run = _init("python", folder, capsys)
    assert wrote.startswith(f"wrote {folder / 'adaptor.py'}: a python adaptor named mine")
    assert run.strip() == f"harness run --target 'mine=cmd:python3 {folder / 'adaptor.py'}'"
    source = (folder / "adaptor.py").read_text()
    assert run.strip() in source  # the header says how to run it
    assert "__" + "NAME__" not in source
    assert os.access(folder / "adaptor.py", os.X_OK)
    # The whole agent-cli catalogue: what it does not do is skipped, never failed.
    out = _run(run, capsys, str(AGENT_CLI))
    total = len(_agent_cli())
    passed = len(_no_schema())
    assert f"mine: {passed} passed, 0 failed, 0 errored, {total - passed} skipped" in out
    assert "skipped by the target: mine does not implement schemas yet" in out
    assert "skipped by the target: mine does not announce the schema_type feature" in out


def test_the_node_skeleton_passes_the_no_schema_cases(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert shutil.which("node"), "node is not installed"
    folder = tmp_path / "Node_Adaptor"
    wrote, _, run = _init("node", folder, capsys)
    assert "a node adaptor named node-adaptor" in wrote
    out = _run(run, capsys, str(AGENT_CLI), "--tag", "no_schema")
    assert f"node-adaptor: {len(_no_schema())} passed, 0 failed, 0 errored, 0 skipped" in out


def _go() -> str:
    found = shutil.which("go")
    if not found:
        if os.environ.get("CI"):
            pytest.fail("CI must have go (.ci/run installs golang-go)")
        pytest.skip("go is not installed (apt-get install golang-go): the Go skeleton is unbuilt")
    return found


def test_the_go_skeleton_builds_and_passes_the_no_schema_cases(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    go = _go()
    folder = tmp_path / "goadaptor"
    _, _, build, run = _init("go", folder, capsys)
    assert build.strip() == f"(cd {folder} && go build -o adaptor)"
    # Offline and local: the skeleton needs nothing but the standard library.
    env = {**os.environ, "GOPROXY": "off", "GOTOOLCHAIN": "local"}
    if not env.get("HOME") and not env.get("GOCACHE"):
        env["GOCACHE"] = str(tmp_path / "go-cache")  # go needs somewhere to cache its builds
    started = time.monotonic()
    built = subprocess.run(
        [go, "build", "-o", "adaptor"],
        check=False,
        cwd=folder,
        env=env,
        capture_output=True,
        timeout=300,
    )
    print(f"go build: {time.monotonic() - started:.1f}s", file=sys.stderr)
    assert built.returncode == 0, built.stderr.decode()
    gofmt = subprocess.run(
        [str(Path(go).resolve().parent / "gofmt"), "-l", "."],
        check=False,
        cwd=folder,
        capture_output=True,
    )
    assert gofmt.stdout == b"", "the Go skeleton is not gofmt-formatted"
    out = _run(run, capsys, str(AGENT_CLI), "--tag", "no_schema")
    assert f"goadaptor: {len(_no_schema())} passed, 0 failed, 0 errored, 0 skipped" in out


@pytest.mark.parametrize("language", sorted(SKELETONS))
def test_every_placeholder_is_filled(
    language: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "x"
    printed = "\n".join(_init(language, folder, capsys)[1:])
    for file in SKELETONS[language].files:
        text = (folder / file).read_text()
        assert not any(p in text for p in ("__" + "NAME__", "__" + "RUN__", "__" + "BUILD__"))
    entry = (folder / SKELETONS[language].files[-1]).read_text()
    for command in printed.splitlines()[1:]:
        assert command.strip() in entry, f"the header does not say {command.strip()!r}"


def test_a_folder_that_is_not_empty_is_refused_and_left_alone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "notes.txt").write_text("mine\n")
    assert main(["init", "adaptor", "--lang", "python", str(tmp_path)]) == exitcodes.USAGE
    out, err = capsys.readouterr()
    assert out == ""
    assert err == (
        f"harness: {tmp_path}: is not empty; harness init writes into a new or empty folder only\n"
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]
    assert main(["init", "adaptor", "--lang", "go", str(tmp_path / "notes.txt")]) == 4
    assert "notes.txt: exists and is not a folder;" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["--lang", "cobol", "x"], "argument --lang: invalid choice: 'cobol'"),
        (["--lang", "python"], "the following arguments are required: DIR"),
        (["--lang", "python", "--name", "Mine", "x"], "target 'Mine': a target's name is"),
        (["--lang", "python", "--name", "differential", "x"], "is reserved"),
    ],
    ids=["language", "no-folder", "bad-name", "reserved-name"],
)
def test_bad_arguments_are_a_usage_error(
    argv: list[str],
    says: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["init", "adaptor", *argv]) == exitcodes.USAGE
    assert says in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("folder", "name"),
    [("mine", "mine"), ("My_Adaptor", "my-adaptor"), ("2fast", "fast"), ("___", "my-adaptor")],
)
def test_the_target_name_comes_from_the_folder(folder: str, name: str) -> None:
    assert target_name(Path(folder)) == name


def test_the_command_lists_the_languages_there_are() -> None:
    assert set(adaptor.LANGUAGES) == set(SKELETONS)
    assert {p.name for p in TEMPLATES.iterdir()} == set(SKELETONS)
    for language, skeleton in SKELETONS.items():
        assert {p.name for p in (TEMPLATES / language).iterdir()} == set(skeleton.files)


def test_the_package_data_ships_every_template() -> None:
    settings = tomllib.loads((ROOT / "pyproject.toml").read_text())
    patterns = settings["tool"]["setuptools"]["package-data"]["harness"]
    shipped = {p for pattern in patterns for p in (ROOT / "harness").glob(pattern)}
    assert {p for p in TEMPLATES.rglob("*") if p.is_file()} <= shipped
