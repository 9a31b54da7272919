"""
``harness import``: every real capture becomes a scenario that prints it again.

For each saved stdout among the real CLIs' captures (tests/data/captures/)
the imported scenario must (1) lint, (2) make the fake CLI print the capture
again, field for field and byte for byte once the volatile values are taken
from the capture, with the capture's exit status, and (3) give, on the
reference pipeline, an outcome that meets the expectation of the capture's
own scenario in the catalogue.
Then the parts on their own: framings, verbatim fallbacks, bad input.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest

import providers_fake
from harness import seams, targets
from harness.adaptor.environment import adaptor_environment
from harness.adaptor.launch import EXECUTABLES, Finished
from harness.adaptor.pipeline import Provider, run
from harness.catalogue import loader
from harness.catalogue.outcome import Outcome
from harness.catalogue.scenario import Request, Scenario, Seam
from harness.cli import main
from harness.exceptions import CannotWrite
from harness.record import importer
from harness.record.matcher import VOLATILE, graft
from harness.record.transcript import frame
from providers_fake.cli.jsonout import dumps_js
from tests import captures
from tests.capture_compare import CAPTURE_SCHEMAS, compare_to_capture

ROOT = Path(__file__).resolve().parent.parent
DIAGNOSIS = ROOT / "scenarios" / "agent-cli" / "schemas" / "diagnosis.json"


def _import(name: str, tmp_path: Path) -> tuple[importer.Imported, Scenario]:
    meta = captures.meta(name)
    schema = DIAGNOSIS
    if name in CAPTURE_SCHEMAS:
        schema = tmp_path / "schema.json"
        schema.write_text(CAPTURE_SCHEMAS[name])
    out = tmp_path / f"{name}.yaml"
    options = importer.Options(
        driver=name.split("-", 1)[0],
        transcript=captures.CAPTURES / f"{name}.stdout",
        schema=schema,
        exit_code=meta["exit_code"],
        out=out,
    )
    done = importer.import_transcript(options)
    out.write_text(done.text)
    loaded = loader.load([out])
    assert loaded.problems == ()
    [scenario] = loaded.scenarios
    return done, scenario


class _Replayed:
    """The fake launched as the reference pipeline launches it: its stdout and status."""

    def __init__(self) -> None:
        self.replay: providers_fake.Replay | None = None

    def launch(
        self, argv: Sequence[str], env: Mapping[str, str], timeout: float, cwd: Path
    ) -> Finished:
        cli = {exe: cli for cli, exe in EXECUTABLES.items()}[argv[0]]
        self.replay = providers_fake.replay(cli, list(argv[1:]), env)
        return Finished(self.replay.stdout, self.replay.stderr, self.replay.exit_code)


def _replay(scenario: Scenario, tmp_path: Path) -> providers_fake.Replay | None:
    assert scenario.script is not None
    script = tmp_path / "script.json"
    script.write_text(json.dumps(scenario.script.to_json(scenario.id)))
    env = {**adaptor_environment(), providers_fake.SCRIPT_ENV: str(script)}
    launcher = _Replayed()
    assert isinstance(scenario.request, Request), scenario.id
    run(scenario.request, Provider(dict(EXECUTABLES), env, tmp_path), launcher)
    return launcher.replay


@pytest.mark.parametrize("name", captures.names())
def test_an_imported_capture_replays_it_and_agrees_with_its_scenario(
    name: str, tmp_path: Path, catalogue: loader.Loaded
) -> None:
    done, scenario = _import(name, tmp_path)
    meta, expected = captures.meta(name), captures.stdout(name)
    replay = _replay(scenario, tmp_path)
    if replay is None:  # the pipeline refuses the schema before any launch
        assert expected == b""
    else:
        assert replay.exit_code == meta["exit_code"]
        assert compare_to_capture(replay.stdout, expected) == []
        assert _bytes_aside_volatile(replay.stdout, expected, name.split("-", 1)[0])
    [original] = [s for s in catalogue.scenarios if s.capture == name and s.seam is Seam.AGENT_CLI]
    assert seams.require("agent-cli").compare(original.expect, done.outcome) == ()
    # The captures come from the fake model API, so every line has a semantic event.
    assert _verbatim(done.steps) == []


def _verbatim(steps: tuple[object, ...]) -> list[object]:
    return [s for s in steps if isinstance(s, dict) and {"line", "raw"} & set(s)]


def _bytes_aside_volatile(mine: bytes, theirs: bytes, cli: str) -> bool:
    """Each line equal byte for byte once its volatile values are the capture's."""
    a, b = mine.decode().split("\n"), theirs.decode().split("\n")
    if len(a) != len(b):
        return False
    for line, wanted in zip(a, b, strict=True):
        if line == wanted:
            continue
        if dumps_js(graft(json.loads(line), json.loads(wanted), VOLATILE[cli])) != wanted:
            return False
    return True


def test_the_reference_outcome_is_the_expectation(tmp_path: Path) -> None:
    transcript = tmp_path / "run.jsonl"
    transcript.write_text(
        '{"type":"thread.started","thread_id":"t"}\n{"type":"turn.started"}\n'
        '{"type":"item.completed","item":{"id":"item_0","type":"agent_message","text":"{\\"cause\\":\\"x\\"}"}}\n'
        '{"type":"turn.completed","usage":{"input_tokens":1}}\n'
    )
    out = tmp_path / "case.yaml"
    status = main(["import", "--driver", "codex", str(transcript), "--schema", str(DIAGNOSIS),
                   "--out", str(out)])  # fmt: skip
    assert status == 0
    [scenario] = loader.load([out]).scenarios
    reference = targets.create("reference-inproc")
    outcome = seams.require("agent-cli").observe(scenario, reference, seams.RunOptions())
    assert seams.require("agent-cli").compare(scenario.expect, outcome) == ()
    assert isinstance(outcome, Outcome)
    assert outcome.error == "policy_violation"
    steps = [s.kind for s in scenario.script.steps] if scenario.script else []
    # A usage figure the fake never prints: the line stays verbatim, the others are events.
    assert steps == ["thread.started", "turn.started", "agent_message", "line"]


@pytest.mark.parametrize(
    ("text", "kinds"),
    [
        ("not json\n", ["raw"]),
        ('{"type":"mystery","n":0.00000015}\n', ["raw"]),  # Python would write 1.5e-07
        ('{"type":"mystery"}', ["raw"]),  # no final newline: only raw prints that
        ('{\n  "pretty": true\n}\n', ["raw"]),
        ('{"type":"mystery","x":[1,2]}\n', ["line"]),
        ("\n", ["raw"]),
        ("", []),
    ],
)
def test_what_no_event_prints_is_kept_verbatim(text: str, kinds: list[str], tmp_path: Path) -> None:
    transcript = tmp_path / "out.txt"
    transcript.write_bytes(text.encode())
    done = importer.import_transcript(importer.Options("claude", transcript, DIAGNOSIS))
    assert [next(iter(s)) if isinstance(s, dict) else s for s in done.steps] == kinds
    [scenario] = _loaded(done.text, tmp_path)
    replay = _replay(scenario, tmp_path)
    assert replay is not None
    assert replay.stdout == text.encode()


def test_control_characters_escapes_and_deep_nesting_survive(tmp_path: Path) -> None:
    transcript = tmp_path / "out.txt"
    deep = b"[" * 5000 + b"]" * 5000  # deeper than Python's json will parse
    transcript.write_bytes(b'{"type":"x"}\nbroken \x00 \x1b[31m\n{"v":"\\ud800"}\n' + deep + b"\n")
    done = importer.import_transcript(importer.Options("cursor", transcript, None))
    [scenario] = _loaded(done.text, tmp_path)
    replay = _replay(scenario, tmp_path)
    assert replay is not None
    assert replay.stdout == transcript.read_bytes()


def test_bytes_that_are_not_utf8_are_refused_where_they_are(tmp_path: Path) -> None:
    transcript = tmp_path / "out.bin"
    transcript.write_bytes(b'{"type":"x"}\nok \xff\xfe\n')
    with pytest.raises(CannotWrite) as refused:
        importer.import_transcript(importer.Options("cursor", transcript, None))
    assert str(refused.value) == f"{transcript}:2:4: not UTF-8, so no scenario can print it again"


def _loaded(text: str, tmp_path: Path) -> tuple[Scenario, ...]:
    path = tmp_path / "imported.yaml"
    path.write_text(text, encoding="utf-8")
    loaded = loader.load([path])
    assert loaded.problems == ()
    return loaded.scenarios


def test_codebuddy_arrays_and_cursor_json_are_explained_by_events(tmp_path: Path) -> None:
    """The two other CLIs: a history array, and a lone result whose fragments are hidden."""
    scripts: dict[str, list[object]] = {
        "codebuddy": ["init", {"structured_output": {"cause": "c", "fixes": []}}, "result"],
        "cursor": [{"assistant": '{"cause":'}, {"assistant": '"c","fixes":[]}'}, "result"],
    }
    for driver, steps in scripts.items():
        printed = _printed(driver, steps, tmp_path)
        transcript = tmp_path / f"{driver}.out"
        transcript.write_bytes(printed)
        done = importer.import_transcript(importer.Options(driver, transcript, DIAGNOSIS))
        assert _verbatim(done.steps) == []
        [scenario] = _loaded(done.text, tmp_path)
        replay = _replay(scenario, tmp_path)
        assert replay is not None
        assert _same_aside_volatile(replay.stdout, printed, driver)


def _printed(driver: str, steps: list[object], tmp_path: Path) -> bytes:
    document = {
        "id": f"probe-{driver}",
        "title": "t",
        "description": "d",
        "clauses": ["CLA-01"],
        "seam": "agent-cli",
        "request": {"driver": driver, "schema": json.loads(DIAGNOSIS.read_text())},
        "provider": {"steps": steps},
        "expect": {"status": "ok", "no_value": True},  # never compared: only stdout is
    }
    path = tmp_path / f"probe-{driver}.yaml"
    path.write_text(json.dumps(document))
    [scenario] = loader.load([path]).scenarios
    replay = _replay(scenario, tmp_path)
    assert replay is not None
    return replay.stdout


def _same_aside_volatile(mine: bytes, theirs: bytes, cli: str) -> bool:
    a, b = frame(mine.decode()), frame(theirs.decode())
    return len(a.records) == len(b.records) and all(
        dumps_js(graft(x.value, y.value, VOLATILE[cli])) == dumps_js(y.value)
        for x, y in zip(a.records, b.records, strict=True)
    )


def test_an_exit_status_no_event_gives_is_kept(tmp_path: Path) -> None:
    transcript = tmp_path / "run.jsonl"
    transcript.write_text('{"type":"thread.started","thread_id":"t"}\n')
    done = importer.import_transcript(importer.Options("codex", transcript, None, exit_code=3))
    [scenario] = _loaded(done.text, tmp_path)
    assert scenario.script is not None
    assert scenario.script.exit == 3


def test_bad_input_is_one_line_and_nothing_is_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "never.yaml"
    missing = tmp_path / "missing.jsonl"
    status = main(["import", "--driver", "claude", str(missing), "--out", str(out)])
    assert status == 4
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert err[0].startswith(f"harness: {missing}: cannot read")
    assert not out.exists()
    with pytest.raises(CannotWrite, match="--schema"):
        importer.import_transcript(importer.Options("claude", DIAGNOSIS, tmp_path / "nope.json"))
