"""
The model-api differential: the comparison, the expectations file, the gate,
and the reference models against the real CLIs on every model-api scenario.
"""

from __future__ import annotations

import json
import re
import textwrap
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, cast

import pytest

from harness import engine, targets
from harness.catalogue import loader
from harness.catalogue.scenario import Seam, VersionRule
from harness.catalogue.versions import VersionRange
from harness.cli import main
from harness.reports import differential, render
from harness.reports.differential import Difference, Entry, Pair
from harness.reports.versions import cli_of
from harness.seams import RunOptions
from harness.seams.case import CaseResult, execute
from harness.seams.model_api.expect import FIELDS as EXPECTATION_FIELDS
from harness.seams.model_api.expect import ExpectationPatch, ModelApiExpectation
from harness.seams.model_api.values import (
    ModelApiOutcome,
    ModelApiRequest,
    SeenRequest,
    final_result,
)
from providers_fake.api import realcli

ROOT = Path(__file__).resolve().parent.parent
MODEL_API = ROOT / "scenarios" / "model-api"
EXPECTATIONS = ROOT / "baselines" / "differential.yaml"
KINDS = {"reference": "reference", "reference-inproc": "reference", "real": "real", "x": "cmd"}

#: The bundled catalogue's Bash cases run, confined, as under `make test`.
EXEC = RunOptions(allow_exec=True)


def _outcome(cli: str = "claude", **changes: Any) -> ModelApiOutcome:
    lines: tuple[object, ...] = (
        {"type": "system", "subtype": "init", "tools": ["Bash"], "session_id": "s-1"},
        {
            "type": "result",
            "subtype": "success",
            "is_error": False,
            "num_turns": 2,
            "structured_output": {"a": 1},
            "usage": {"input_tokens": 30},
            "total_cost_usd": 0.1,
            "session_id": "s-1",
        },
    )
    base = ModelApiOutcome(
        cli=cli,
        exit_code=0,
        stderr="",
        timed_out=False,
        lines=lines,
        final=final_result(cli, lines),
        requests=(
            SeenRequest("m1", {"type": "object"}, None, None, []),
            SeenRequest("m1", {"type": "object"}, None, None, [{"content": "retry"}]),
        ),
    )
    return replace(base, **changes)


def _result(
    target: str,
    outcome: ModelApiOutcome | None = None,
    status: str = "passed",
    scenario: str = "model-s",
    reason: str | None = None,
) -> CaseResult:
    return CaseResult(scenario, target, status, outcome, reason=reason)


def _pair(reference: ModelApiOutcome, real: ModelApiOutcome, status: str = "passed") -> Pair:
    return differential.compare(_result("reference", reference), _result("real", real, status))


# -- the comparison ---------------------------------------------------------------


def test_what_a_model_need_not_reproduce_is_not_compared() -> None:
    other = _outcome()
    lines = list(other.lines)
    lines[0] = {"type": "system", "subtype": "init", "tools": [], "session_id": "s-2"}
    final = dict(other.final or {}, usage={"input_tokens": 99}, total_cost_usd=7, session_id="x")
    lines[1] = final
    pair = _pair(_outcome(), replace(other, lines=tuple(lines), final=final))
    assert (pair.agreement, pair.differences, pair.unexplained) == ("agree", (), False)


def test_each_differing_field_is_named_with_both_values() -> None:
    final = dict(_outcome().final or {}, num_turns=3)
    real = _outcome(
        exit_code=1,
        final=final,
        requests=(
            SeenRequest("m1", {"type": "object"}, None, None, []),
            SeenRequest("m2", {"type": "object"}, None, None, [{"content": "retry"}]),
            SeenRequest("m2", {"type": "object"}, None, None, []),
        ),
    )
    pair = _pair(_outcome(), real, status="failed")
    assert pair.agreement == "disagree"
    assert pair.unexplained
    assert pair.fields == ("status", "exit_code", "final.num_turns", "requests", "requests.model")
    assert pair.differences[-1] == Difference("requests.model", "requests[1].model", "m1", "m2")
    assert pair.differences[0] == Difference("status", "status", "passed", "failed")


def test_a_success_against_an_error_subtype_is_reported_not_a_crash() -> None:
    """The racy stop_reason is left out of a failed result only: the shapes differ."""
    exhausted = dict(
        _outcome().final or {},
        subtype="error_max_structured_output_retries",
        is_error=True,
        stop_reason=None,
    )
    success = dict(_outcome().final or {}, stop_reason="tool_use")
    pair = _pair(_outcome(final=success), _outcome(exit_code=1, final=exhausted), "failed")
    assert pair.agreement == "disagree"
    assert "final.stop_reason" in pair.fields
    [stop] = [d for d in pair.differences if d.field == "final.stop_reason"]
    assert (stop.reference, stop.real) == ("tool_use", differential.ABSENT)


def test_codex_compares_its_synthesized_final_only() -> None:
    lines: tuple[object, ...] = (
        {"type": "thread.started", "thread_id": "t-1"},
        {"type": "item.completed", "item": {"type": "agent_message", "text": '{"a": 1}'}},
        {"type": "turn.completed", "usage": {"input_tokens": 3}},
    )
    codex = _outcome("codex", lines=lines, final=final_result("codex", lines))
    assert set(differential.project(codex)) >= {"final.type", "final.structured_output"}
    assert "final.subtype" not in differential.project(codex)
    broken = {"type": "item.completed", "item": {"type": "agent_message", "text": "prose"}}
    other = (*lines[:1], broken, lines[2])
    pair = _pair(codex, replace(codex, lines=other, final=final_result("codex", other)))
    assert pair.fields == ("final.result", "final.structured_output")


def test_a_side_that_did_not_run_is_not_comparable() -> None:
    errored = _result("real", status="errored", reason="FileNotFoundError: no claude\nmore")
    pair = differential.compare(_result("reference", _outcome()), errored)
    assert pair.agreement == "not comparable"
    assert pair.not_comparable == "real errored: FileNotFoundError: no claude"
    skipped = _result("reference", status="skipped", reason="off")
    pair = differential.compare(skipped, errored)
    assert (
        pair.not_comparable == "reference skipped: off; real errored: FileNotFoundError: no claude"
    )
    assert not pair.unexplained


def test_every_reference_kind_is_paired_with_every_real_kind() -> None:
    results = [
        _result("reference", _outcome()),
        _result("reference-inproc", _outcome()),
        _result("real", _outcome(exit_code=1)),
        _result("x", _outcome()),
        _result("real", _outcome(), scenario="agent-cli-one"),
    ]
    found = differential.pairs(results, KINDS, {"model-s": "claude"})
    assert [(p.reference, p.real, p.fields) for p in found] == [
        ("reference", "real", ("exit_code",)),
        ("reference-inproc", "real", ("exit_code",)),
    ]
    assert differential.pairs(results, {"reference": "reference"}, {"model-s": "claude"}) == ()


def test_long_values_are_cut_around_where_they_differ() -> None:
    difference = Difference("stderr", "stderr", "x" * 500 + "left", "x" * 500 + "right")
    left, right = difference.shown(limit=40)
    assert (left[0], right[0]) == ("…", "…")
    assert left.endswith('left"')
    assert right.endswith('right"')
    assert len(left) <= 42
    assert Difference("exit_code", "exit_code", 0, 1).shown() == ("0", "1")


# -- expectations: explained, unexplained, stale ---------------------------------------


def _disagreeing(*fields: str, scenario: str = "model-s") -> Pair:
    found = tuple(Difference(f, f, 0, 1) for f in fields)
    return Pair(scenario, "reference", "passed", "real", "passed", found)


def test_an_entry_explains_a_disagreement_on_the_fields_it_lists() -> None:
    entry = Entry("model-s", ("exit_code", "stderr"), "the binary prints a banner")
    judged = differential.judge([_disagreeing("exit_code", "stderr")], [entry])
    assert judged.pairs[0].explained == "the binary prints a banner"
    assert (judged.unexplained, judged.stale, judged.failing) == ((), (), False)


def test_a_field_the_entry_does_not_list_is_unexplained() -> None:
    entry = Entry("model-s", ("exit_code",), "why")
    judged = differential.judge([_disagreeing("exit_code", "line_types")], [entry])
    assert judged.failing
    assert [p.fields for p in judged.unexplained] == [("exit_code", "line_types")]


def test_entries_that_explain_nothing_any_more_are_stale() -> None:
    agreeing = replace(_disagreeing(), scenario="model-t")
    entries = [
        Entry("model-s", ("exit_code", "stderr"), "one field agrees now"),
        Entry("model-t", ("exit_code",), "the whole scenario agrees now"),
        Entry("model-u", ("exit_code",), "not compared in this run"),
    ]
    not_compared = replace(_disagreeing(scenario="model-u"), not_comparable="real errored: x")
    judged = differential.judge([_disagreeing("exit_code"), agreeing, not_compared], entries)
    assert judged.failing
    assert [(s.entry.scenario, s.why) for s in judged.stale] == [
        ("model-s", "stderr agree now; remove them from the entry"),
        ("model-t", "the scenario agrees now; remove the entry"),
    ]
    assert judged.unexplained == ()


def _rule(text: str, *unchecked: str, because: str = "racy there") -> VersionRule:
    patch = ExpectationPatch(ModelApiExpectation(), unchecked=unchecked)
    return VersionRule("claude", VersionRange.parse(text), because, patch)


def test_a_version_rule_waives_the_fields_it_leaves_unchecked_on_its_releases() -> None:
    results = [
        _result("reference", _outcome()),
        _result("real", _outcome(lines=_outcome().lines[1:], exit_code=2)),
    ]
    kinds = {"reference": "reference", "real": "real"}
    rules = {"model-s": (_rule("<2.1.300", "line_types", "exit_code"),)}

    def judged(version: str) -> Pair:
        versions = {name: {"claude": version} for name in kinds}
        [pair] = differential.judge(
            differential.pairs(results, kinds, {"model-s": "claude"}, versions, rules)
        ).pairs
        return pair

    old = judged("2.1.235")
    assert (old.fields, old.waived) == (("exit_code", "line_types"), ("line_types", "exit_code"))
    assert old.explained == "claude <2.1.300: racy there"
    assert not old.unexplained
    new = judged("2.1.328")
    assert (new.waived, new.explained, new.unexplained) == ((), None, True)


def test_an_entry_is_still_needed_for_what_the_rule_does_not_waive() -> None:
    pair = replace(_disagreeing("line_types", "stderr"), waived=("line_types",), waived_because="x")
    entry = Entry("model-s", ("stderr",), "a banner")
    assert differential.judge([pair], [entry]).pairs[0].explained == "a banner"
    assert differential.judge([pair]).pairs[0].unexplained
    # An entry for a field only the rule's waiver needs is stale.
    waived_only = Entry("model-s", ("line_types", "stderr"), "both")
    [stale] = differential.judge([pair], [waived_only]).stale
    assert stale.why == "line_types agree now; remove them from the entry"


def test_every_expectation_field_says_which_projection_fields_it_waives() -> None:
    assert set(differential.WAIVES) == set(EXPECTATION_FIELDS)
    waived = {f for fields in differential.WAIVES.values() for f in fields}
    assert waived <= set(differential.FIELDS)


# -- the expectations file ----------------------------------------------------


def _write(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "differential.yaml"
    path.write_text(textwrap.dedent(body))
    return path


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        pytest.param(
            """\
            entries:
              - scenario: model-nope
                fields: [exit_code]
                reason: typo
            """,
            "2:5: entries[0].scenario: unknown model-api scenario 'model-nope'",
            id="unknown-scenario",
        ),
        pytest.param(
            """\
            entries:
              - scenario: model-s
                fields: [usage]
                reason: not a projection field
            """,
            "3:14: entries[0].fields[0]: 'usage' is not one of",
            id="unknown-field",
        ),
        pytest.param(
            """\
            entries:
              - scenario: model-s
                fields: [exit_code]
            """,
            "2:5: entries[0]: 'reason' is a required property",
            id="no-reason",
        ),
        pytest.param(
            """\
            entries:
              - scenario: model-s
                fields: []
                reason: nothing listed
            """,
            "3:5: entries[0].fields: [] should be non-empty",
            id="no-fields",
        ),
        pytest.param(
            """\
            entries:
              - scenario: model-s
                fields: [exit_code]
                reason: one
              - scenario: model-s
                fields: [stderr]
                reason: two
            """,
            "5:5: entries[1]: duplicate of entry 0",
            id="duplicate",
        ),
        pytest.param(
            """\
            entries:
              - scenario: model-s
                fields: [exit_code]
                reason: the binary differs
                pairs: all
            """,
            "2:5: entries[0]: Additional properties are not allowed ('pairs' was unexpected)",
            id="unknown-key",
        ),
        pytest.param("entries: [\n", "2:1: <document>: invalid YAML", id="bad-yaml"),
        pytest.param(
            "entries: {}\n",
            "1:1: entries: {} is not of type 'array'",
            id="not-a-list",
        ),
    ],
)
def test_a_bad_expectations_file_gives_one_clear_line(
    tmp_path: Path, body: str, expected: str
) -> None:
    path = _write(tmp_path, body)
    entries, problems = differential.load(path, ["model-s"])
    assert entries is None
    assert len(problems) == 1, problems
    line = str(problems[0])
    assert re.fullmatch(re.escape(str(path)) + r":\d+:\d+: [^:]+: [^\n]+", line), line
    assert line.startswith(f"{path}:{expected}"), line


def test_the_file_names_exactly_the_projection_fields() -> None:
    schema = json.loads((ROOT / "harness/schemas/differential.schema.json").read_text())
    items = schema["properties"]["entries"]["items"]["properties"]["fields"]["items"]
    assert tuple(items["enum"]) == differential.FIELDS


def test_the_repository_expectations_load(catalogue: loader.Loaded) -> None:
    known = [s.id for s in catalogue.scenarios if s.seam is Seam.MODEL_API]
    entries, problems = differential.load(EXPECTATIONS, known)
    assert problems == []
    assert entries is not None


# -- reports and the gate ------------------------------------------------------


def test_differential_md_names_every_disagreement_with_both_values() -> None:
    entry = Entry("model-s", ("exit_code",), "the binary exits 1 here")
    found = [
        replace(_disagreeing("exit_code"), scenario="model-s"),
        Pair(
            "model-t",
            "reference",
            "passed",
            "real",
            "failed",
            (Difference("stderr", "stderr", "", "boom | bang"),),
        ),
        Pair("model-u", "reference", "passed", "real", "errored", not_comparable="real errored: x"),
        Pair("model-v", "reference", "passed", "real", "passed"),
    ]
    stale = Entry("model-v", ("stderr",), "fixed since")
    judged = differential.judge(found, [entry, stale])
    report = render.Report.build([], [], [], ROOT, judged)
    text = render.differential(report)
    assert "4 pairs, 1 agree, 2 disagree (1 expected), 1 not comparable; 1 stale entry." in text
    assert (
        "| model-s | reference: passed | real: passed | [expected](#model-s-reference-real): "
        in text
    )
    assert (
        "| model-t | reference: passed | real: failed | [DISAGREE](#model-t-reference-real)" in text
    )
    assert (
        "| model-u | reference: passed | real: errored | not comparable (real errored: x) |" in text
    )
    assert '@@ stderr @@\n- reference: ""\n+ real: "boom | bang"' in text
    assert "- `model-s` on exit_code: the binary exits 1 here" in text
    assert "- `model-v` (stderr): the scenario agrees now; remove the entry" in text
    document = json.loads(render.to_json(report))["differential"]
    assert document["summary"] == {
        "pairs": 4,
        "agree": 1,
        "disagree": 2,
        "expected": 1,
        "unexplained": 1,
        "not_comparable": 1,
        "stale": 1,
    }
    assert document["pairs"][1]["differences"] == [
        {"field": "stderr", "reference": "", "real": "boom | bang"}
    ]
    empty = render.Report.build([], [], [], ROOT)
    assert render.differential(empty).count("\n") == 3
    assert "nothing to compare" in render.differential(empty)


def test_the_summary_names_unexplained_disagreements(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    session = engine.Session((MODEL_API,), ("reference", "reference-inproc"), tmp_path, None)
    session.results = [
        _result("reference", _outcome(), scenario="model-codex-happy"),
        _result("reference-inproc", _outcome(exit_code=3), scenario="model-codex-happy"),
    ]
    # Both are reference kinds: nothing is paired, whatever they show.
    assert not any("differential" in line for line in session.summary_lines())
    monkeypatch.setattr(
        session, "kinds", lambda: {"reference": "reference", "reference-inproc": "real"}
    )
    lines = session.summary_lines()
    assert "harness: differential: 1 pairs, 0 agree, 1 disagree (0 expected)" in "\n".join(lines)
    assert (
        "harness: differential: unexplained disagreement: model-codex-happy "
        "(reference against reference-inproc) on exit_code"
    ) in lines
    assert session.differential().failing


@dataclass(frozen=True)
class _Mirror:
    """A target of kind ``real`` that answers with the reference models: it always agrees."""

    name: str
    kind: str = "real"
    seams: frozenset[Seam] = frozenset({Seam.MODEL_API})


def test_a_stale_entry_fails_the_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(targets.KINDS, "mirror", targets.Kind(lambda spec, _: _Mirror(spec)))
    baselines = tmp_path / "baselines"
    baselines.mkdir()
    argv = ["run", str(MODEL_API), "--target", "reference-inproc", "--target", "mirror"]
    argv += ["-k", "model-codex-happy", "--baselines", str(baselines)]
    argv += ["--reports", str(tmp_path / "reports")]
    assert main(argv) == 0, capsys.readouterr().out
    assert "harness: differential: 1 pairs, 1 agree" in capsys.readouterr().out
    markdown = (tmp_path / "reports" / "differential.md").read_text()
    assert "| model-codex-happy | reference-inproc: passed | mirror: passed | agree |" in markdown

    (baselines / "differential.yaml").write_text(
        "entries:\n  - scenario: model-codex-happy\n    fields: [exit_code]\n    reason: gone\n"
    )
    assert main(argv) == 1
    out = capsys.readouterr().out
    assert "stale entry for model-codex-happy: the scenario agrees now; remove the entry" in out

    # A run over part of the catalogue does not judge entries for the rest.
    (baselines / "differential.yaml").write_text(
        "entries:\n  - scenario: model-elsewhere\n    fields: [exit_code]\n    reason: not here\n"
    )
    assert main(argv) == 0
    assert "(not compared in this run)" in (tmp_path / "reports" / "differential.md").read_text()
    capsys.readouterr()

    (baselines / "differential.yaml").write_text("entries:\n  - scenario: model-nope\n")
    assert main(argv) == 4
    out = capsys.readouterr().out
    assert re.search(r"differential\.yaml:2:5: entries\[0\]: 'fields' is a required", out), out


# -- the reference models against the real CLIs -----------------------------------


@pytest.mark.subprocess
def test_the_reference_models_agree_with_the_real_clis(catalogue: loader.Loaded) -> None:
    """
    Every model-api scenario of claude and codex, on `reference` and on `real`:
    no unexplained disagreement.  CodeBuddy's catalogue runs in `make run` (its
    bounded cases wait out a 30 s timeout each); two of its pairs run below.
    """
    if not realcli.enabled():
        pytest.skip(f"{realcli.SWITCH_ENV}=off")
    scenarios = [
        s for s in catalogue.scenarios if s.seam is Seam.MODEL_API and cli_of(s) != "codebuddy"
    ]
    assert len(scenarios) >= 21
    both = [targets.create("reference"), targets.create("real")]
    # The reference runs in process, one case at a time; the real binaries are
    # subprocesses, three at a time (much of a run is the binary waiting out its own
    # retry delays), but for the cases that kill them after a few seconds, which run
    # alone so that they start in time.
    hurried = {s.id for s in scenarios if cast(ModelApiRequest, s.request).timeout < 10}
    with ThreadPoolExecutor(3) as pool:
        real = dict(
            zip(
                [s.id for s in scenarios if s.id not in hurried],
                pool.map(
                    lambda s: execute(s, both[1], EXEC),
                    [s for s in scenarios if s.id not in hurried],
                ),
                strict=True,
            )
        )
        references = [execute(s, both[0], EXEC) for s in scenarios]
    real |= {s.id: execute(s, both[1], EXEC) for s in scenarios if s.id in hurried}
    results = [r for ref in references for r in (ref, real[ref.scenario])]
    entries, problems = differential.load(EXPECTATIONS, [s.id for s in scenarios])
    assert problems == []
    kinds = {t.name: t.kind for t in both}
    judged = differential.judge(
        differential.pairs(
            results,
            kinds,
            {s.id: cli_of(s) or "" for s in scenarios},
            {t.name: targets.versions_of(t) for t in both},
            {s.id: s.by_version for s in scenarios},
        ),
        entries or (),
    )
    assert len(judged.pairs) == len(scenarios)
    # A side the catalogue skips (with its reason) cannot be compared; one that
    # errored (a missing binary, a crash) fails this test like a disagreement.
    named = [
        f"{p.scenario}: {p.not_comparable}"
        for p in judged.pairs
        if p.not_comparable and "errored" in (p.reference_status, p.real_status)
    ]
    compared = [p for p in judged.pairs if p.not_comparable is None]
    assert len(compared) >= 21, [p.not_comparable for p in judged.pairs]
    # Every case passes on both sides, but those no fake can put a real binary in,
    # which the real target skips with the scenario's own reason.
    beyond = {s.id: cast(ModelApiRequest, s.request).beyond_offline() for s in scenarios}
    for result in results:
        wanted = beyond[result.scenario] if result.target == "real" else None
        if wanted is None:
            assert result.status == "passed", (result.case_id, result.mismatches, result.reason)
        else:
            assert (result.status, result.reason) == ("skipped", wanted)
    for pair in judged.unexplained:
        shown = (f"{d.at}: reference {d.shown()[0]}, real {d.shown()[1]}" for d in pair.differences)
        named.append(f"{pair.scenario}: " + "; ".join(shown))
    named += [f"stale entry for {s.entry.scenario}: {s.why}" for s in judged.stale]
    assert named == [], "\n".join(named)


#: CodeBuddy pairs the suite compares (its whole catalogue runs in `make run`): a
#: success that goes on after the call (C-01), a rejected call (C-02), the re-asks (C-03).
CODEBUDDY_PAIRS = ("model-codebuddy-invalid-then-valid", "model-codebuddy-result-is-the-first-turn")


@pytest.mark.subprocess
def test_the_codebuddy_model_agrees_with_the_real_binary(catalogue: loader.Loaded) -> None:
    """Two codebuddy scenarios on `reference` and on `real`: they agree field by field."""
    if not realcli.enabled():
        pytest.skip(f"{realcli.SWITCH_ENV}=off")
    scenarios = [s for s in catalogue.scenarios if s.id in CODEBUDDY_PAIRS]
    assert len(scenarios) == len(CODEBUDDY_PAIRS)
    both = [targets.create("reference"), targets.create("real")]
    with ThreadPoolExecutor(2) as pool:
        real = list(pool.map(lambda s: execute(s, both[1], EXEC), scenarios))
    results = [*(execute(s, both[0], EXEC) for s in scenarios), *real]
    judged = differential.judge(
        differential.pairs(
            results,
            {t.name: t.kind for t in both},
            {s.id: "codebuddy" for s in scenarios},
            {t.name: targets.versions_of(t) for t in both},
        )
    )
    assert [r.status for r in results] == ["passed"] * len(results), [r.reason for r in results]
    assert [(p.scenario, p.agreement) for p in judged.pairs] == [
        (name, "agree") for name in sorted(CODEBUDDY_PAIRS)
    ], [(p.scenario, p.fields) for p in judged.pairs]
    compared = [p for p in judged.pairs if p.not_comparable is None]
    assert len(compared) == len(CODEBUDDY_PAIRS)
