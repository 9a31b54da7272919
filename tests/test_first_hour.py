"""
The first hour of a new user (issue 16): each rough edge met while validating
one's own adaptor, held in place.

Help and version; target specs by a declared grammar; ``python:`` adaptors
(imported from the current folder, skipping, tracebacks); announced drivers
and features; an adaptor that cannot start; lint in one pass with "did you
mean"; tags; the pytest plugin's silence elsewhere; where reports go;
``HARNESS_REAL_CLIS=off`` in the Makefile; the differing part of a long
value.  Baseline diffs and stale entries are in tests/test_baselines.py,
``harness show`` in tests/test_cli.py, the documented commands in
tests/test_docs.py.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import re
import subprocess
import sys
import textwrap
import tomllib
from importlib.metadata import version
from pathlib import Path

import pytest

from harness import cli, targets
from harness.catalogue import yamlpos
from harness.catalogue.loader import Loaded
from harness.catalogue.scenario import Scenario
from harness.cli import main
from harness.exceptions import BadTargetSpec, NoSuchTarget
from harness.reports.differential import Difference
from harness.seams.case import execute
from harness.targets.announce import Implementation
from harness.targets.protocol import ProtocolAdaptor

ROOT = Path(__file__).resolve().parent.parent
SCENARIOS = ROOT / "scenarios"


def _by_id(catalogue: Loaded, *ids: str) -> list[Scenario]:
    found = {s.id: s for s in catalogue.scenarios}
    return [found[i] for i in ids]


# -- 1. help and version -------------------------------------------------------------


def _subcommands() -> dict[str, argparse.ArgumentParser]:
    action = next(a for a in cli.parser()._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


def test_help_says_what_the_tool_does_and_lists_every_command(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["--help"])
    assert exit_.value.code == 0
    out = capsys.readouterr().out
    assert "conformance harness for structured output from coding agents" in " ".join(out.split())
    for name in _subcommands():
        assert re.search(rf"^\s+{re.escape(name)}\s+\S", out, re.MULTILINE), name
    # Plain text, not reStructuredText: no backticks anywhere in any help.
    assert "`" not in out
    for name, sub in _subcommands().items():
        assert "`" not in sub.format_help(), name


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["--version"])
    assert exit_.value.code == 0
    assert capsys.readouterr().out == f"harness {version('structured-output-harness')}\n"


def test_run_help_lists_every_target_kind_the_name_form_and_paths(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit):
        main(["run", "--help"])
    out = capsys.readouterr().out
    listed = re.findall(r"^  (\S+)\s{2,}", out.split("Targets (")[1], re.MULTILINE)
    assert sorted(listed) == sorted(kind.usage(name) for name, kind in targets.KINDS.items())
    assert "NAME=" in out
    assert re.search(r"^  PATHS\s+scenario files or folders", out, re.MULTILINE)


def test_help_answers_without_loading_the_harness() -> None:
    # SIGTERM is an orderly stop, and help is instant, because nothing heavy loads first.
    code = textwrap.dedent(
        """\
        import sys
        from harness import cli
        for argv in (["--help"], ["run", "--help"], ["--version"]):
            try:
                cli.main(argv)
            except SystemExit:
                pass
        print(sorted(m for m in sys.modules if m.startswith(("harness", "jsonschema", "httpx"))))
        """
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = ast.literal_eval(done.stdout.strip().splitlines()[-1])
    front = ["harness", "harness.cli", "harness.exceptions", "harness.exitcodes"]
    # The commands' table, whose modules load the rest of the harness only when they run.
    commands = [m for m in loaded if m.startswith("harness.commands")]
    assert "harness.commands" in commands
    # The agent CLIs' registry (dataclasses only), which the commands' choices come from.
    registry = ["harness.catalogue", "harness.catalogue.agents"]
    assert sorted(set(loaded) - set(commands)) == sorted([*front, *registry, "harness.signals"])


# -- 2. target specs ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("real:anything", "'anything': give CLI=VERSION, CLI one of claude, codebuddy, codex"),
        ("real:", "real needs CLI=VERSION[,CLI=VERSION] (use: real[:CLI=VERSION[,CLI=VERSION]])"),
        ("reference:anything", "'anything': give CLI=VERSION"),
        ("reference-inproc:claude=2.1", "claude: "),
        ("mine=real:x", "'x': give CLI=VERSION"),
        ("real:claude=2.1.235,claude=2.1.236", "claude is given twice"),
        ("cmd", "cmd needs COMMAND (use: cmd:COMMAND)"),
        ("cmd-check:", "cmd-check needs COMMAND"),
        ("python", "python needs MODULE:FUNCTION"),
        ("python:nomodule", "give it as python:MODULE:FUNCTION"),
        ("http", "http needs BASE_URL"),
        ("http:sut.test", "give a base URL, as in http:http://127.0.0.1:8080"),
        ("Mine=cmd:x", "a target's name is lower-case letters, digits and dashes"),
    ],
)
def test_a_spec_with_an_argument_its_kind_does_not_take_is_a_usage_error(
    spec: str, message: str
) -> None:
    with pytest.raises(BadTargetSpec) as raised:
        targets.create(spec)
    assert message in str(raised.value)


def test_the_argument_grammar_is_declared_per_kind() -> None:
    usages = {name: kind.usage(name) for name, kind in targets.KINDS.items()}
    assert usages["real"] == "real[:CLI=VERSION[,CLI=VERSION]]"
    assert usages["reference"] == "reference[:CLI=VERSION[,CLI=VERSION]|contract=NAME]"
    assert usages["cmd"] == "cmd:COMMAND"
    assert usages["python"] == "python:MODULE:FUNCTION"
    with pytest.raises(NoSuchTarget, match=re.escape("cmd:COMMAND")):
        targets.create("cmdd:harness serve")
    assert targets.create("reference").name == "reference"
    assert targets.create("mine=reference-inproc").name == "mine"


def test_a_bad_spec_is_one_line_before_anything_runs(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["run", str(SCENARIOS / "agent-cli/codex"), "--target", "real:anything"]) == 4
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == (
        "harness: target 'real:anything': 'anything': give CLI=VERSION, "
        "CLI one of claude, codebuddy, codex\n"
    )


# -- 3. python: adaptors -------------------------------------------------------------

_ADAPTOR = """\
import json

CALLED = []


def run(message):
    CALLED.append(message["scenario"])
    if message["request"]["mode"] == "stream":
        return {"skipped": True, "reason": "no streaming yet"}
    raise ValueError("not written yet: " + message["scenario"])
"""


@pytest.fixture
def in_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh working folder; sys.path and sys.modules as they were afterwards."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.setattr(sys, "modules", dict(sys.modules))
    return tmp_path


def test_a_python_adaptor_in_the_current_folder_is_found(
    in_folder: Path, catalogue: Loaded
) -> None:
    (in_folder / "first_hour_adaptor.py").write_text(_ADAPTOR)
    target = targets.create("mine=python:first_hour_adaptor:run")
    happy, streamed = _by_id(catalogue, "codex-happy", "claude-exhausted")
    result = execute(happy, target)
    assert result.status == "errored"
    lines = (result.reason or "").splitlines()
    assert lines[0] == "ValueError: not written yet: codex-happy"
    # The adaptor's own frames, with paths relative to the working folder.
    assert '  File "first_hour_adaptor.py", line 10, in run' in lines
    assert "pyadaptor" not in (result.reason or "")
    skipped = execute(streamed, target)
    assert (skipped.status, skipped.reason) == ("skipped", "no streaming yet")


def test_what_cannot_be_imported_is_one_line(in_folder: Path) -> None:
    with pytest.raises(BadTargetSpec) as raised:
        targets.create("python:first_hour_missing:run")
    assert "cannot import 'first_hour_missing' (is it on the path?" in str(raised.value)
    (in_folder / "first_hour_broken.py").write_text("def run(message)\n    return {}\n")
    with pytest.raises(BadTargetSpec) as raised:
        targets.create("python:first_hour_broken:run")
    assert "first_hour_broken.py:1: SyntaxError" in str(raised.value)
    (in_folder / "first_hour_needs.py").write_text("import first_hour_dependency\n")
    with pytest.raises(BadTargetSpec) as raised:
        targets.create("python:first_hour_needs:run")
    assert "importing 'first_hour_needs' failed: ModuleNotFoundError" in str(raised.value)
    (in_folder / "first_hour_bad_announce.py").write_text(
        "IMPLEMENTATION = {'name': 'x', 'version': '1', 'drivers': ['gemini']}\n"
        "def run(message):\n    return {}\n"
    )
    with pytest.raises(BadTargetSpec, match=r"IMPLEMENTATION: implementation.drivers: unknown"):
        targets.create("python:first_hour_bad_announce:run")


def test_a_skip_needs_a_reason(in_folder: Path, catalogue: Loaded) -> None:
    (in_folder / "first_hour_mute.py").write_text(
        "def run(message):\n    return {'skipped': True}\n"
    )
    result = execute(
        _by_id(catalogue, "codex-happy")[0], targets.create("python:first_hour_mute:run")
    )
    assert result.status == "errored"
    assert "a skipped answer needs a reason" in (result.reason or "")


# -- 4. announced drivers and features ---------------------------------------------------

_ANNOUNCING = """\
IMPLEMENTATION = {"name": "codex-only", "version": "0.3.0", "language": "python",
                  "drivers": ["codex"], "features": []}


def run(message):
    assert message["request"]["driver"] == "codex", "sent a case it cannot serve"
    assert message["request"]["schema_type"] is None, "sent a schema_type case"
    return {"skipped": True, "reason": "called"}
"""


def test_cases_an_adaptor_says_it_cannot_serve_are_skipped_unsent(
    in_folder: Path, catalogue: Loaded
) -> None:
    (in_folder / "first_hour_codex_only.py").write_text(_ANNOUNCING)
    target = targets.create("python:first_hour_codex_only:run")
    claude, derived, codex = _by_id(
        catalogue, "claude-happy-json", "sch-derive-record", "codex-happy"
    )
    assert [
        (r.status, r.reason) for r in (execute(s, target) for s in (claude, derived, codex))
    ] == [
        ("skipped", "codex-only does not announce the claude driver (drivers: codex)"),
        (
            "skipped",
            "codex-only does not announce the schema_type feature: schemas derived from a type "
            "in the harness's own type language (request.schema_type)",
        ),
        ("skipped", "called"),
    ]


_PROTOCOL_ADAPTOR = """\
import json, sys
from harness.targets import serve

for line in sys.stdin:
    message = json.loads(line)
    if message["cmd"] == "stop":
        break
    reply = serve._answer(message)
    if message["cmd"] == "start":
        reply["implementation"] = {"name": "tiny", "version": "9.9.9", "language": "python",
                                   "drivers": ["codex"], "features": ["native"]}
    elif message["request"]["driver"] != "codex":
        reply = {"seq": message["seq"], "errored": True, "message": "sent a claude case"}
    print(json.dumps(reply), flush=True)
"""


def test_a_protocol_adaptor_is_held_to_its_announcement_and_named_in_the_reports(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    script = tmp_path / "tiny.py"
    script.write_text(_PROTOCOL_ADAPTOR)
    reports = tmp_path / "reports"
    argv = ["run", str(SCENARIOS / "agent-cli/codex"), str(SCENARIOS / "agent-cli/claude")]
    argv += ["--target", f"tiny=cmd-check:{sys.executable} {script}", "--reports", str(reports)]
    argv += ["-k", "codex-happy or claude-happy-json"]
    assert main(argv) == 0
    assert "harness: tiny: 1 passed, 0 failed, 0 errored, 1 skipped" in capsys.readouterr().out
    matrix = (reports / "matrix.md").read_text()
    assert "| tiny | cmd | tiny 9.9.9 (python) | codex | native |" in matrix
    about = json.loads((reports / "report.json").read_text())["about"]
    assert about[0]["implementation"]["version"] == "9.9.9"


def test_an_announcement_is_checked() -> None:
    with pytest.raises(ValueError, match=r"implementation\.drivers must be a list"):
        Implementation.from_json({"name": "x", "version": "1"})
    with pytest.raises(ValueError, match=r"implementation\.version must be a non-empty string"):
        Implementation.from_json({"name": "x", "drivers": []})
    assert Implementation.from_json({"name": "x", "version": "1", "drivers": []}).features == set()


# -- 5. an adaptor that cannot start ---------------------------------------------------


def test_an_adaptor_that_cannot_start_is_one_failure(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    reports = tmp_path / "reports"
    argv = ["run", str(SCENARIOS / "agent-cli/codex"), "--target", "mine=cmd:/nonexistent/adaptor"]
    assert main([*argv, "--reports", str(reports)]) == 1
    out = capsys.readouterr().out
    assert out.count("did not start") == 1
    assert "harness: mine: did not start: cannot start /nonexistent/adaptor: " in out
    assert re.search(r"^harness: mine: \d+ case\(s\) not run$", out, re.MULTILINE)
    assert "errored" not in out.split("short test summary")[-1]
    matrix = (reports / "matrix.md").read_text()
    assert "| mine | cmd | **did not start**: cannot start /nonexistent/adaptor" in matrix
    junit = (reports / "junit.xml").read_text()
    assert junit.count("<error ") == 1
    assert '<testcase classname="mine" name="(start)" time="0.000">' in junit
    cases = json.loads((reports / "report.json").read_text())["cases"]
    assert {(c["status"], c["reason"]) for c in cases} == {
        ("skipped", "not run: mine did not start")
    }


def test_an_adaptor_that_cannot_start_is_started_once(tmp_path: Path, catalogue: Loaded) -> None:
    starts = tmp_path / "starts"
    script = tmp_path / "dies.py"
    script.write_text(f"open({str(starts)!r}, 'a').write('started\\n')\nraise SystemExit(1)\n")
    adaptor = ProtocolAdaptor("dies", (sys.executable, str(script)))
    cases = _by_id(catalogue, "codex-happy", "codex-two-messages", "claude-happy-json")
    results = [execute(s, adaptor) for s in cases]
    assert [r.reason for r in results] == ["not run: dies did not start"] * 3
    assert starts.read_text() == "started\n"
    assert adaptor.not_started == "adaptor exited with status 1 before answering"


def test_no_baseline_is_written_for_an_adaptor_that_did_not_start(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "mine.yaml"
    argv = ["baseline", str(SCENARIOS / "agent-cli/codex"), "--target", "mine=cmd:/nonexistent"]
    assert main([*argv, "-o", str(out)]) == 4
    assert "harness: mine did not start: cannot start /nonexistent" in capsys.readouterr().err
    assert not out.exists()


# -- 7. lint and tags --------------------------------------------------------------


def test_lint_reports_every_problem_of_a_file_in_one_pass(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    family = tmp_path / "family.yaml"
    family.write_text(
        textwrap.dedent(
            """\
            family: fam
            seam: agent-cli
            request: {driver: codex, schema: {type: object}}
            cases:
              - id: fam-one
                title: One
                description: Misspelt key and event.
                clauses: [CDX-01]
                provider: {steps: [thread.started, turn.complete]}
                expcet: {status: ok}
              - id: fam-two
                title: Two
                description: Misspelt clause and driver.
                clauses: [CDX-1]
                request: {driver: codx}
                provider: {steps: [thread.started]}
                expect: {stauts: ok}
            """
        )
    )
    assert main(["lint", str(family)]) == 4
    lines = [line.removeprefix(f"{family}:") for line in capsys.readouterr().out.splitlines()]
    assert [line.split(" (known:")[0] for line in lines] == [
        "5:5: expect: required field is missing",
        "9:40: provider.steps[1]: unknown codex event 'turn.complete' "
        "(did you mean 'turn.completed'?)",
        "10:5: expcet: unknown field 'expcet' (did you mean 'expect'?)",
        "14:15: clauses[0]: unknown clause 'CDX-1' (did you mean 'CDX-01'?)",
        "15:15: request.driver: 'codx' is not one of codex, claude, cursor, codebuddy "
        "(did you mean 'codex'?)",
        "17:14: expect.stauts: unknown field 'stauts' (did you mean 'status'?)",
    ]


def test_an_unknown_tag_lists_the_known_ones(capsys: pytest.CaptureFixture[str]) -> None:
    codex = str(SCENARIOS / "agent-cli/codex")
    assert main(["run", codex, "--tag", "codx", "--reports", ""]) == 4
    assert capsys.readouterr().err == (
        "harness: unknown tag 'codx' (did you mean 'codex'?) "
        "(known: capture, choice, codex, failure, no_schema)\n"
    )
    assert main(["list", codex, "--tag", "nope"]) == 4
    assert "(known: capture, choice, codex, failure, no_schema)" in capsys.readouterr().err
    assert main(["list", codex, "--tags"]) == 0
    tags = [line.split()[0] for line in capsys.readouterr().out.splitlines()]
    assert tags == ["capture", "choice", "codex", "failure", "no_schema"]


def test_a_raw_byte_is_written_as_a_surrogate_escape() -> None:
    # libyaml refuses the escape; the document is then read by the pure-Python loader.
    located = yamlpos.load('steps: [{raw: "a\\udcffb"}]\n')
    assert located.value == {"steps": [{"raw": "a\udcffb"}]}
    assert "a\udcffb".encode("utf-8", "surrogateescape") == b"a\xffb"


# -- 9. the pytest plugin elsewhere -------------------------------------------------------


def test_the_plugin_is_silent_and_idle_in_a_suite_that_does_not_use_it(tmp_path: Path) -> None:
    (tmp_path / "test_other.py").write_text(
        textwrap.dedent(
            """\
            import sys

            def test_nothing_of_the_harness_is_loaded():
                heavy = ("harness.engine", "harness.targets")
                assert not any(m.startswith(heavy) for m in sys.modules)
            """
        )
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "harness" not in done.stdout + done.stderr
    assert "rejected" not in done.stdout


# -- 10. where reports go ------------------------------------------------------------------


def test_reports_go_where_asked_and_never_over_the_projects_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    project = tmp_path / "project"
    (project / "reports").mkdir(parents=True)
    (project / "reports" / "matrix.md").write_text("committed\n")
    monkeypatch.chdir(project)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    argv = ["run", str(SCENARIOS / "agent-cli/codex"), "--target", "reference-inproc"]
    assert main([*argv, "-k", "codex-happy"]) == 0
    out = capsys.readouterr().out
    assert (project / "reports" / "matrix.md").read_text() == "committed\n"
    folder = cli.default_reports()
    assert folder.parent == tmp_path / "cache" / "structured-output-harness" / "reports"
    assert folder.name.startswith("project-")
    assert (folder / "matrix.md").exists()
    assert f"harness: reports written to {folder}" in out


def test_a_run_over_part_of_the_catalogue_reads_a_baseline_of_the_whole(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    baselines = tmp_path / "baselines"
    baselines.mkdir()
    (baselines / "mine.yaml").write_text(
        "target: mine\nknown_failures:\n"
        "  - scenario: claude-happy-json\n    reason: outside this run, not judged\n"
        "  - scenario: codex-hapy\n    reason: misspelt\n"
    )
    argv = ["run", str(SCENARIOS / "agent-cli/codex"), "--target", "mine=reference-inproc"]
    argv += ["-k", "codex-happy", "--baselines", str(baselines), "--reports", ""]
    # Not judged, and said in one line, the misspelling named with its likely fix...
    assert main(argv) == 0
    unmet = [line for line in capsys.readouterr().out.splitlines() if "not judged" in line]
    assert len(unmet) == 1
    assert "unknown scenario 'codex-hapy' (did you mean 'codex-happy'?)" in unmet[0]
    # ...and an error where the baseline and the catalogue belong together.
    assert main([*argv, "--strict-baseline"]) == 4
    rejected = [line for line in capsys.readouterr().out.splitlines() if "rejected" in line]
    assert len(rejected) == 1
    assert rejected[0].endswith(
        "known_failures[1].scenario: unknown scenario 'codex-hapy' (did you mean 'codex-happy'?)"
    )


def test_a_baselines_folder_that_is_not_there_is_said(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["run", str(SCENARIOS / "agent-cli/codex"), "--baselines", "no-such-folder"]
    assert main(argv) == 4
    assert capsys.readouterr().err == "harness: --baselines no-such-folder: no such folder\n"


# -- 11. set-up -----------------------------------------------------------------------


def test_make_run_leaves_the_real_clis_out_when_switched_off() -> None:
    def dry(*extra: str) -> str:
        done = subprocess.run(
            ["make", "-n", "run", *extra], cwd=ROOT, capture_output=True, text=True, check=True
        )
        return done.stdout

    assert "--target real" in dry()
    assert "install-real-clis" in dry()
    off = dry("HARNESS_REAL_CLIS=off")
    assert "--target real" not in off
    assert "install-real-clis" not in off
    assert "--reports reports" in off  # make run asks for the committed reports by name


def test_the_license_is_an_spdx_string() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert project["project"]["license"] == "MIT"


# -- 12. the differing part of a long value ------------------------------------------------


def test_a_long_value_is_shown_by_its_differing_parts() -> None:
    prose = "Output does not match required schema: root: must have required property 'fixes'"
    block = {"type": "tool_result", "content": prose, "tool_use_id": "toolu_" + "x" * 200}
    marked = {**block, "cache_control": {"type": "ephemeral"}}
    reference = [{"role": "user", "content": "y" * 300}, {"role": "user", "content": [block]}]
    real = [{"role": "user", "content": "y" * 300}, {"role": "user", "content": [marked]}]
    difference = Difference("requests.messages", "requests[2].messages", reference, real)
    [part] = difference.parts()
    assert part.at == "requests[2].messages[1].content[0].cache_control"
    assert part.shown() == ("<absent>", '{"type": "ephemeral"}')
    assert difference.parts_left_out() == 0
    # Of equal shape but different everywhere: one part per member, at most five shown.
    many = Difference("x", "x", list(range(8)), [str(i) for i in range(8)])
    assert [p.at for p in many.parts()] == [f"x[{i}]" for i in range(5)]
    assert many.parts_left_out() == 3
    # JSON, not Python, decides what differs.
    assert [p.at for p in Difference("x", "x", [1, True], [True, 1]).parts()] == ["x[0]", "x[1]"]
