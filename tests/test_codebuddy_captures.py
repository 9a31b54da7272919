"""
The captures of the real CodeBuddy Code 2.117.0 (tests/data/captures/codebuddy):
what they hold, the binary printing them again, and ``fake-codebuddy`` printing
them field by field.

The binary's reruns fail, not skip, when it is missing (``HARNESS_REAL_CLIS=off``
leaves them out); runs the CLI never ends by itself (HTTP errors, the endless
re-asking) are kept as data but not rerun, since each costs its whole timeout.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import providers_fake
from harness.catalogue import loader
from harness.catalogue.scenario import Seam
from harness.record import importer
from harness.systems.profiles import WRAPPED_PARAMETERS
from tests import codebuddy_captures as captures
from tests.capture_compare import compare_codebuddy
from tests.realbin import real_binary

GOOD, BAD = captures.GOOD, captures.BAD
#: The fake's scripts for the captures no agent-cli scenario replays (the adaptor never
#: asks for text output; two calls in one message); the others' are their scenarios'.
STEPS: dict[str, list[object]] = {
    "success-text": ["init", {"structured_output": GOOD}, {"text": "Done."}, "result"],
    "two-calls-one-message": [
        "init",
        {
            "structured_output_calls": [
                {
                    "id": "call_fake00000000",
                    "input": BAD,
                    "error": "Output does not match required schema: root: must have required "
                    "property 'fixes', /cause: must be string",
                },
                {"id": "call_fake00000001", "input": GOOD},
            ]
        },
        {"text": "Done."},
        "result",
    ],
}
#: Captures the fake does not reproduce, and why.
NOT_REPLAYED = {
    "schema-not-json": "the adaptor refuses the schema before launch; the CLI takes it",
    "schema-invalid": "the adaptor refuses the schema before launch; the CLI takes it",
}


def _meta(name: str) -> dict[str, Any]:
    return json.loads((captures.FOLDER / f"{name}.meta.json").read_text())  # type: ignore[no-any-return]


def test_every_capture_is_a_case_and_says_how_it_was_taken() -> None:
    stored = sorted(p.name.removesuffix(".meta.json") for p in captures.FOLDER.glob("*.meta.json"))
    assert stored == sorted(captures.CASES)
    for name, case in captures.CASES.items():
        meta = _meta(name)
        assert (captures.FOLDER / f"{name}.stdout").is_file()
        assert meta["model_script"] == case.script, name
        assert meta["argv"][:4] == ["codebuddy", "-p", "--output-format", case.output_format]
        assert meta["argv"][-1] == captures.PROMPT
        assert meta["cli"] == "codebuddy 2.117.0"
        assert meta["timed_out"] is (meta["exit_code"] == -9), name
        for request in meta["requests_to_model_api"]:
            assert request["path"] == "/v1/chat/completions"
            assert request["structured_output_tool"]["strict"] is False
        assert "<work>" not in json.dumps(meta["argv"]), "no machine path in the argv"


def _rerunnable() -> list[str]:
    return sorted(
        n for n, c in captures.CASES.items() if c.deterministic and not _meta(n)["timed_out"]
    )


@pytest.mark.subprocess
@pytest.mark.parametrize("name", _rerunnable())
def test_real_codebuddy_prints_its_capture_again(name: str) -> None:
    real_binary("codebuddy")
    meta = _meta(name)
    run, fake = captures.run(captures.CASES[name])
    assert not run.timed_out, f"{name}: killed after {run.seconds:.1f}s"
    assert run.exit_code == meta["exit_code"]
    assert captures.masked(run.stderr.decode(), run.workdir) == meta["stderr"]
    stdout = captures.masked(run.stdout.decode(), run.workdir).encode()
    assert compare_codebuddy(stdout, (captures.FOLDER / f"{name}.stdout").read_bytes()) == []
    fake.assert_no_unexpected()
    assert len(fake.requests) == meta["requests_made"]
    kept = captures.requests_of(fake, run.workdir)[: captures.KEPT_REQUESTS]
    try:
        schema = json.loads(captures.CASES[name].schema)
    except ValueError:
        schema = None  # `not json`: the CLI sends the wrapper
    assert _racy(kept, schema) == _racy(meta["requests_to_model_api"], schema)


def _racy(views: list[Any], schema: object) -> list[Any]:
    """The requests with the StructuredOutput parameters the CLI races on (docs/codebuddy.md)."""
    out = []
    for view in views:
        tool = dict(view["structured_output_tool"])
        if tool.get("parameters") in (schema, WRAPPED_PARAMETERS):
            tool["parameters"] = "<the schema or the wrapper>"
        out.append({**view, "structured_output_tool": tool})
    return out


def _replayed() -> list[str]:
    return [n for n in _rerunnable() if n not in NOT_REPLAYED]


@pytest.mark.parametrize("name", _replayed())
def test_fake_codebuddy_prints_the_capture(
    name: str, catalogue: loader.Loaded, tmp_path: Path
) -> None:
    meta = _meta(name)
    found = [
        s
        for s in catalogue.scenarios
        if s.capture == f"codebuddy-{name}" and s.seam is Seam.AGENT_CLI
    ]
    if found:
        assert found[0].script is not None
        steps = found[0].script.to_json(found[0].id)["steps"]
    else:
        steps = STEPS[name]
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"seed": name, "steps": steps}))
    env = {providers_fake.SCRIPT_ENV: str(script), "HOME": "/home/probe"}
    replay = providers_fake.replay("codebuddy", meta["argv"][1:], env)
    stdout = b"".join(c[1] for c in replay.chunks if c[0] == "stdout")
    stderr = b"".join(c[1] for c in replay.chunks if c[0] == "stderr")
    assert (replay.exit_code, stderr.decode()) == (meta["exit_code"], meta["stderr"])
    assert compare_codebuddy(stdout, (captures.FOLDER / f"{name}.stdout").read_bytes()) == []


def test_every_replayed_capture_but_text_has_a_scenario(catalogue: loader.Loaded) -> None:
    named = {
        s.capture
        for s in catalogue.scenarios
        if s.capture and s.capture.startswith("codebuddy-") and s.seam is Seam.AGENT_CLI
    }
    assert named == {f"codebuddy-{n}" for n in _replayed() if n not in STEPS}


@pytest.mark.parametrize(
    "name",
    [
        "success-json",
        "prose-only-json",
        "success-stream",
        "invalid-then-valid",
        "two-calls-one-message",
        "unknown-tool",
    ],
)
def test_real_output_imports_as_events(name: str) -> None:
    """``harness import --driver codebuddy`` explains the real array or lines item by item."""
    schema = Path(__file__).resolve().parent.parent / "scenarios/agent-cli/schemas/diagnosis.json"
    done = importer.import_transcript(
        importer.Options("codebuddy", captures.FOLDER / f"{name}.stdout", schema)
    )
    kinds = [step if isinstance(step, str) else next(iter(step)) for step in done.steps]
    assert not {"raw", "line"} & set(kinds), kinds
    assert kinds[0] == "init"
    assert kinds[-1] == "result"
