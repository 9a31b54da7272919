"""
``harness fuzz``: a small fixed-seed budget per seam, and the machinery on its own.

The budgets are what CI can afford (seconds): the two reference launchers
must agree on every generated agent-cli case, and the reference models
with themselves on generated model-api cases, so a regression in a model,
the fakes or the pipeline shows here.  A plausible but wrong adaptor must be
found, shrunk and written as a scenario that lints, passes on the reference
and fails on it; a target that answers garbage is errored, never a crash;
and no generated case runs a command unless the user allows it.
"""

from __future__ import annotations

import json
import sys
import tempfile
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import pytest
import yaml
from hypothesis import strategies as st

from harness import cli, targets
from harness.catalogue import loader
from harness.fuzz import model_api, verdict, write
from harness.fuzz import run as fuzz_run
from harness.fuzz.agent_cli import DRIVERS, AgentCliFuzzer, agent_cases
from harness.fuzz.codex_cases import codex_cases
from harness.fuzz.run import generate
from harness.fuzz.verdict import AGREE, DISAGREE, Difference, Judgement
from harness.seams.case import CaseResult, execute
from harness.seams.model_api.values import ModelApiOutcome, SeenRequest

NAIVE = "naive=python:tests.adaptors:naive_inprocess"


def fuzz(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, list[str]]:
    status = cli.main(["fuzz", *args])
    return status, capsys.readouterr().out.splitlines()


def _cases(
    strategy: st.SearchStrategy[dict[str, Any]], count: int, seed: int = 0
) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    generate(strategy, count, seed, lambda case, _: found.append(case))
    return found


def test_the_reference_launchers_agree_on_generated_agent_cli_cases(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    args = ["--seam", "agent-cli", "--target", "reference-inproc", "--out", str(tmp_path / "o")]
    status, out = fuzz(capsys, *args, "--examples", "20", "--seed", "11")
    assert out[-1] == "fuzz: 20 cases, 20 agree, 0 disagree, 0 errored", out
    assert status == 0
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize(("cli_name", "count"), [("claude", 10), ("codex", 6), ("codebuddy", 8)])
def test_the_reference_models_agree_with_themselves(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, cli_name: str, count: int
) -> None:
    status, out = fuzz(
        capsys,
        *("--seam", "model-api", "--cli", cli_name, "--examples", str(count), "--seed", "5"),
        *("--target", "reference", "--against", "reference-inproc", "--out", str(tmp_path)),
    )
    assert out[-1] == f"fuzz: {count} cases, {count} agree, 0 disagree, 0 errored", out
    assert status == 0


def test_a_wrong_adaptor_is_found_shrunk_and_written(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    args = ["--seam", "agent-cli", "--target", NAIVE, "--against", "reference-inproc"]
    args += ["--examples", "30", "--seed", "6", "--driver", "codex", "--shrink-budget", "40"]
    status, out = fuzz(capsys, *args, "--out", str(tmp_path / "a"))
    assert status == 1
    assert out[-1].startswith("fuzz: 30 cases, ")
    assert " 0 disagree" not in out[-1]
    loaded = loader.load([tmp_path / "a"])
    assert loaded.problems == ()
    assert loaded.scenarios
    naive, reference = targets.create(NAIVE), targets.create("reference-inproc")
    for scenario in loaded.scenarios:
        assert execute(scenario, reference).status == "passed", scenario.id
        assert execute(scenario, naive).status == "failed", scenario.id
        assert "flaky" not in "\n".join(out)
    # The same seed gives the same cases, classes and files; the database replays them.
    again, out2 = fuzz(capsys, *args, "--out", str(tmp_path / "b"))
    assert again == status
    assert [line.replace("/b/", "/a/") for line in out2] == out
    first = sorted(p.name for p in (tmp_path / "a").glob("*.yaml"))
    assert first == sorted(p.name for p in (tmp_path / "b").glob("*.yaml"))
    for name in first:
        text = (tmp_path / "b" / name).read_text().replace("/b/", "/a/")
        assert text == (tmp_path / "a" / name).read_text()


@pytest.mark.parametrize(
    "spec",
    [
        "junk=python:tests.adaptors:garbage",
        "junk=python:tests.adaptors:explodes",
        f"junk=cmd:{sys.executable} -c 'import sys; sys.exit(3)'",
    ],
    ids=["garbage", "raises", "dies"],
)
def test_a_target_that_misbehaves_is_errored_not_a_crash(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    spec: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A temporary folder of its own: another worker's fuzz run may hold one meanwhile.
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    status, out = fuzz(
        capsys,
        *("--seam", "agent-cli", "--target", spec, "--against", "reference-inproc"),
        *("--examples", "4", "--seed", "1", "--shrink-budget", "2", "--out", str(tmp_path / "out")),
    )
    assert status == 1
    assert out[-1] == "fuzz: 4 cases, 0 agree, 0 disagree, 4 errored"
    # A target that answers nothing errors its case; one that cannot start is not run.
    assert any(
        "errored: other (junk) errored" in line or "other (junk) skipped: not run" in line
        for line in out
    )
    assert loader.load([tmp_path / "out"]).problems == ()
    assert list(scratch.iterdir()) == []


def test_a_bad_invocation_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["fuzz", "--seam", "model-api"]) == 4
    assert "needs --cli" in capsys.readouterr().err
    assert cli.main(["fuzz", "--seam", "agent-cli"]) == 4
    assert "needs --target" in capsys.readouterr().err
    assert cli.main(["fuzz", "--seam", "agent-cli", "--target", "real"]) == 4
    assert "does not serve the agent-cli seam" in capsys.readouterr().err


def test_no_generated_case_runs_a_command_unless_allowed() -> None:
    safe = _cases(model_api.claude_cases(False, 12.0), 300)
    assert not any(model_api.needs_exec(case) for case in safe)
    allowed = _cases(model_api.claude_cases(True, 12.0), 300)
    assert any(model_api.needs_exec(case) for case in allowed)
    codex = _cases(codex_cases(False, 12.0), 100)
    assert not any(model_api.needs_exec(case) for case in codex)
    # CodeBuddy answers a tool it does not have "not found": its unknown-tool cases run nothing.
    codebuddy = _cases(model_api.codebuddy_cases(False, 12.0), 100)
    assert any("tool_name" in str(case) for case in codebuddy)
    assert not any(model_api.needs_exec(case) for case in codebuddy)


def test_generation_is_deterministic_and_seeded() -> None:
    strategy = agent_cases(DRIVERS)
    first = [write.key(c) for c in _cases(strategy, 30, seed=4)]
    assert first == [write.key(c) for c in _cases(strategy, 30, seed=4)]
    assert len(set(first)) == 30
    assert first != [write.key(c) for c in _cases(strategy, 30, seed=5)]


@pytest.mark.parametrize("which", ["agent", "claude", "codex", "codebuddy"])
def test_every_generated_case_is_a_scenario_that_loads_as_written(
    which: str, tmp_path: Path
) -> None:
    strategies: dict[str, tuple[write.Fuzzer, st.SearchStrategy[dict[str, Any]]]] = {
        "agent": (AgentCliFuzzer(), agent_cases(DRIVERS)),
        "claude": (model_api.ModelApiFuzzer("claude"), model_api.claude_cases(True, 12.0)),
        "codex": (model_api.ModelApiFuzzer("codex"), codex_cases(False, 12.0)),
        "codebuddy": (
            model_api.ModelApiFuzzer("codebuddy"),
            model_api.codebuddy_cases(False, 12.0),
        ),
    }
    fuzzer, strategy = strategies[which]
    for case in _cases(strategy, 40, seed=9):
        doc = write.document(fuzzer, case)
        text = write.dump(doc)
        assert json.dumps(yaml.safe_load(text)) == json.dumps(doc)
        assert write.load(text, tmp_path / "case.yaml").id == doc["id"]


def test_a_class_names_the_verdict_or_the_fields() -> None:
    verdict = model_api.label(
        (
            Difference("exit_code", "exit_code", 1, 0),
            Difference("final.result", "final.result", "a", "b"),
        )
    )
    assert verdict == "exit_code 1 vs 0"
    fields = model_api.label(
        (
            Difference("status", "status", "passed", "failed"),
            Difference("requests.model", "requests[0].model", "x", "y"),
        )
    )
    assert fields == "requests.model"
    plain = Judgement(DISAGREE, (Difference("diagnostics", "diagnostics", [], [1]),))
    assert plain.signature == "diagnostics"
    worded = Judgement("errored", reason="other (x) errored: took 12.5 s on 'abc'")
    assert worded.signature == "errored: other (x) errored: took N s on '…'"


def test_a_terminal_gets_a_progress_line_and_a_pipe_does_not(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    args = ["--seam", "agent-cli", "--target", "reference-inproc", "--examples", "3"]
    args += ["--out", str(tmp_path)]
    status, piped = fuzz(capsys, *args)
    assert status == 0
    assert not any("\r" in line for line in piped)
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    assert cli.main(["fuzz", *args]) == 0
    shown = capsys.readouterr().out
    assert "\rfuzz: 3 cases, 3 agree, 0 disagree, 0 errored (of 3)" in shown
    assert shown.splitlines()[-1] == piped[-1]


def _seen(model: str | None, *, side: str | None = None, unexpected: str | None = None) -> Any:
    return SeenRequest(model, None, None, None, [], unexpected=unexpected, side=side)


def _outcome(*requests: Any) -> ModelApiOutcome:
    return ModelApiOutcome("claude", 0, "", False, (), None, requests=requests)


def test_a_written_expectation_counts_the_conversation_and_names_side_requests() -> None:
    # A release that checks connectivity first (2.1.235: HEAD /api/hello) makes a
    # request the scenario's count leaves out; the findings' counts must too, or no
    # finding on such a release replays.
    truth = _outcome(_seen(None, side="HEAD /api/hello"), _seen("m"), _seen("m"))
    other = _outcome(_seen("m"), _seen("m"))
    written = model_api._requests("claude", truth, other, set())
    assert written == {
        "requests": 2,
        "no_unexpected_requests": True,
        "side_requests": ["HEAD /api/hello"],
    }
    # Both sides check alike: nothing to say about it.
    assert "side_requests" not in model_api._requests("claude", truth, truth, set())
    beyond = _outcome(_seen("m"), _seen("m", unexpected="unexpected request #2"))
    assert model_api._requests("claude", beyond, beyond, set()) == {"requests": 1}


def test_a_codex_runs_files_are_judged_and_written_absent_or_present() -> None:
    # -o's file is what codex itself wrote; the truth leaving none is written as null.
    fuzzer = model_api.ModelApiFuzzer("codex")
    truth = ModelApiOutcome("codex", 1, "", False, (), None)
    other = replace(truth, files=(("last.txt", ""),))
    judged = fuzzer.judge(_result(truth), _result(other))
    assert judged.agreement == DISAGREE
    assert [d.field for d in judged.differences] == ["files"]
    assert fuzzer.expectation(judged)["files"] == {"last.txt": None}
    assert fuzzer.judge(_result(other), _result(other)).agreement == AGREE
    # Claude's files are left to its scenarios: a Bash command may write anything.
    claude = model_api.ModelApiFuzzer("claude")
    mine, theirs = replace(truth, cli="claude"), replace(other, cli="claude")
    assert "files" not in {
        d.field for d in claude.judge(_result(mine), _result(theirs)).differences
    }


def _result(outcome: ModelApiOutcome) -> CaseResult:
    return CaseResult("fuzz-case", "t", "passed", outcome)


def test_a_written_expectation_counts_the_calls_of_each_message_where_they_differ() -> None:
    """Several calls of one message sent back otherwise than the truth: `calls_per_message`."""
    calls: list[dict[str, object]] = [
        {"role": "assistant", "tool_calls": [{"id": "a"}, {"id": "b"}]}
    ]
    split: list[dict[str, object]] = [
        {"role": "assistant", "tool_calls": [{"id": i}]} for i in "ab"
    ]
    field = {"requests.messages_after_prompt"}

    def asked(messages: list[dict[str, object]]) -> ModelApiOutcome:
        return _outcome(
            SeenRequest("m", None, None, None, []), SeenRequest("m", None, None, None, messages)
        )

    written = model_api._requests("codebuddy", asked(split), asked(calls), field)
    assert written["calls_per_message"] == [[], [1, 1]]
    assert "calls_per_message" not in model_api._requests(
        "codebuddy", asked(split), asked(split), field
    )


def test_a_written_expectation_names_what_the_judged_target_added_and_lacked() -> None:
    """A text only the truth sent: `messages_after_prompt_contain`; only the other: `_lack`."""
    field = {"requests.messages_after_prompt"}

    def asked(*texts: str) -> ModelApiOutcome:
        messages: list[dict[str, object]] = [{"role": "user", "content": t} for t in texts]
        return _outcome(SeenRequest("m", None, None, None, messages))

    truth, other = asked("Go on.", "No response requested."), asked("Go on.", "Added.")
    written = model_api._requests("claude", truth, other, field)
    assert written["messages_after_prompt_contain"] == ["No response requested."]
    assert written["messages_after_prompt_lack"] == ["Added."]
    same = model_api._requests("claude", truth, truth, field)
    assert "messages_after_prompt_lack" not in same
    assert "messages_after_prompt_contain" not in same


class _SameOutcome:
    """A seam's judge reduced to its core: the outcomes are equal or not."""

    def judge(self, truth: CaseResult, other: CaseResult) -> verdict.Judgement:
        same = truth.outcome == other.outcome
        found = () if same else (verdict.Difference("x", "x", truth.outcome, other.outcome),)
        return verdict.Judgement(AGREE if same else DISAGREE, found, truth=truth, other=other)


@pytest.mark.parametrize(
    ("kind", "truths", "agreement", "raced", "runs"),
    [
        pytest.param("real", ["b", "a"], AGREE, True, 3, id="real-truth-races"),
        pytest.param("real", ["b", "b", "b"], DISAGREE, False, 4, id="real-truth-holds"),
        pytest.param("reference", ["b", "a"], DISAGREE, False, 2, id="reference-never-rerun"),
    ],
)
def test_a_real_truth_is_run_again_before_a_disagreement_counts(
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    kind: str,
    truths: list[str],
    agreement: str,
    raced: bool,
    runs: int,
) -> None:
    """The other did "a"; the truth's runs come out as ``truths`` (first, then reruns)."""
    calls: list[str] = []
    left = iter(truths)

    def fake_execute(scenario: object, target: Any, options: object = None) -> CaseResult:
        calls.append(target.name)
        outcome = "a" if target.name == "other" else next(left)
        return CaseResult("case", target.name, "passed", outcome)  # type: ignore[arg-type]

    monkeypatch.setattr(fuzz_run, "execute", fake_execute)
    truth, other = SimpleNamespace(name="truth", kind=kind), SimpleNamespace(name="other")
    judge = fuzz_run.Judge(_SameOutcome(), truth, other, tmp_path)  # type: ignore[arg-type]
    judged = judge.judge(cast(Any, None))
    assert (judged.agreement, judged.raced, len(calls)) == (agreement, raced, runs)
    tally = fuzz_run.Tally()
    tally.add({}, b"", judged)
    assert ("with a rerun of the truth" in tally.line()) is raced
