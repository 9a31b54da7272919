"""
CLI versions as a dimension: version targets, per-version expectations, side
requests, the profiles of the reference models, the drift report, clauses by version.

Everything here runs offline: a fake ``npm`` stands in for the registry, and
the real binaries other than the pinned pair are never needed.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from harness import exitcodes, targets
from harness.catalogue import loader
from harness.catalogue.scenario import Seam
from harness.catalogue.versions import VersionRange, check_version, common
from harness.cli import main
from harness.exceptions import BadTargetSpec
from harness.reports import differential, drift, render, versions
from harness.reports.versions import TargetInfo
from harness.seams.case import CaseResult
from harness.seams.model_api.expect import ModelApiExpectation, compare
from harness.seams.model_api.values import ModelApiOutcome, SeenRequest
from harness.systems.claude.profile import CLAUDE, ClaudeProfile
from harness.systems.profiles import CODEBUDDY, CODEX, CodeBuddyProfile, CodexProfile
from providers_fake.api import ScriptedModelAPI, realcli
from tests.lintcheck import assert_one_clear_line

ROOT = Path(__file__).resolve().parents[1]

# -- versions and ranges ------------------------------------------------------------------


def test_ranges_hold_what_they_say() -> None:
    older = VersionRange.parse("<2.1.260")
    middle = VersionRange.parse(">=2.1.281,<2.1.287")
    assert "2.1.235" in older
    assert "2.1.260" not in older
    assert "2.1.99" in older  # numeric, not text order
    assert "2.1.286" in middle
    assert "2.1.287" not in middle
    assert common(older, middle) is None
    assert common(VersionRange.parse("<2.1.290"), middle) == "2.1.281"
    assert common(VersionRange.parse("!=2.1.300"), VersionRange.parse("==2.1.300")) is None


@pytest.mark.parametrize("text", ["", "2.1", "~=2.1.0", "<2.1.*", "<2.1.x", "<2.1.260,", "latest"])
def test_a_bad_range_says_why(text: str) -> None:
    with pytest.raises(ValueError, match=r"version|comparison"):
        VersionRange.parse(text)


def test_a_version_is_three_numbers() -> None:
    assert check_version("2.1.235") is None
    assert "MAJOR.MINOR.PATCH" in (check_version("v2.1.235") or "")
    assert "MAJOR.MINOR.PATCH" in (check_version("2.01.3") or "")


# -- targets ---------------------------------------------------------------------------------


def test_real_targets_name_versions_the_rest_at_the_pin() -> None:
    pinned = targets.create("real")
    assert targets.versions_of(pinned) == realcli.PINNED
    old = targets.create("real:claude=2.1.235")
    assert targets.versions_of(old) == {**realcli.PINNED, "claude": "2.1.235"}
    both = targets.create("mine=real:codex=0.171.0,claude=2.1.332")
    assert both.name == "mine"
    assert targets.versions_of(both) == {**realcli.PINNED, "claude": "2.1.332", "codex": "0.171.0"}
    codebuddy = targets.create("real:codebuddy=2.117.0")
    assert targets.versions_of(codebuddy) == realcli.PINNED
    reference = targets.create("reference:claude=2.1.235")
    assert targets.versions_of(reference)["claude"] == "2.1.235"
    assert reference.seams == frozenset({Seam.MODEL_API})


@pytest.mark.parametrize(
    ("spec", "fragment"),
    [
        ("real:claude=latest", "'latest' is not a version"),
        ("real:gemini=1.0.0", "CLI one of claude, codebuddy, codex"),
        ("real:claude=2.1.235,claude=2.1.236", "claude is given twice"),
        ("real:claude", "give CLI=VERSION"),
        ("reference:codex=0.171", "is not a version"),
    ],
)
def test_a_bad_version_spec_is_one_line(
    spec: str, fragment: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(BadTargetSpec, match="target"):
        targets.create(spec)
    assert (
        main(["run", "scenarios/model-api/claude/happy-json.yaml", "--target", spec])
        == exitcodes.USAGE
    )
    out, err = capsys.readouterr()
    assert out == ""
    assert err.count("\n") == 1, err
    assert fragment in err


def _fake_npm(folder: Path) -> Path:
    """An ``npm`` that knows one version of each CLI and installs a stub of it."""
    bin_dir = folder / "bin"
    bin_dir.mkdir()
    script = bin_dir / "npm"
    script.write_text(
        "#!/bin/sh\n"
        'if [ "$1" = view ]; then\n'
        '  case "$2" in\n'
        "    @anthropic-ai/claude-code@2.1.235) echo 2.1.235 ;;\n"
        "    *@[0-9]*) echo 'npm error 404 No match found' >&2; exit 1 ;;\n"
        '    *) echo "$2" ;;\n'
        "  esac\n"
        "  exit 0\n"
        "fi\n"
        # npm install --prefix DIR ... PKG@VER: a package.json and an executable.
        "prefix=$3; for last; do :; done; version=${last##*@}\n"
        'mkdir -p "$prefix/node_modules/@anthropic-ai/claude-code" "$prefix/node_modules/.bin"\n'
        'printf \'{"version": "%s"}\' "$version" '
        '> "$prefix/node_modules/@anthropic-ai/claude-code/package.json"\n'
        "printf '#!/bin/sh\\necho stub\\n' > \"$prefix/node_modules/.bin/claude\"\n"
        'chmod +x "$prefix/node_modules/.bin/claude"\n'
    )
    script.chmod(0o755)
    return bin_dir


def test_an_unpublished_version_is_one_line_and_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", f"{_fake_npm(tmp_path)}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv(realcli.DIR_ENV, str(tmp_path / "cache"))
    argv = ["run", "scenarios/model-api/claude/happy-json.yaml"]
    assert main([*argv, "--target", "real:claude=2.1.244"]) == exitcodes.USAGE
    out, err = capsys.readouterr()
    assert out == ""
    lines = [line for line in err.splitlines() if not line.startswith("harness: installing")]
    assert lines == [
        "harness: target 'real:claude=2.1.244': @anthropic-ai/claude-code@2.1.244 "
        "is not published on the npm registry"
    ]
    assert not list((tmp_path / "cache").glob(".claude-*")), "no half-made install is left"


def test_a_codebuddy_no_known_sdk_ships_is_one_line_and_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """CodeBuddy Code comes inside @tencent-ai/agent-sdk: a version no known release ships."""
    monkeypatch.setenv("PATH", f"{_fake_npm(tmp_path)}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv(realcli.DIR_ENV, str(tmp_path / "cache"))
    argv = ["run", "scenarios/model-api/claude/happy-json.yaml"]
    assert main([*argv, "--target", "real:codebuddy=2.0.0"]) == exitcodes.USAGE
    out, err = capsys.readouterr()
    lines = [line for line in err.splitlines() if not line.startswith("harness: installing")]
    assert (out, lines) == (
        "",
        [
            "harness: target 'real:codebuddy=2.0.0': no @tencent-ai/agent-sdk release known "
            "to ship CodeBuddy Code 2.0.0 (known: 2.117.0)"
        ],
    )


def test_codebuddy_is_found_in_its_own_folder_at_its_cli_version(tmp_path: Path) -> None:
    """The pinned CodeBuddy lives in DIR/codebuddy-2.117.0 and is read at the SDK's ``cli/``."""
    with pytest.raises(FileNotFoundError, match=r"CodeBuddy Code 2.117.0 .* is not installed"):
        realcli.locate("codebuddy", tmp_path)
    cli = tmp_path / "codebuddy-2.117.0" / "node_modules" / "@tencent-ai" / "agent-sdk" / "cli"
    (cli / "bin").mkdir(parents=True)
    (cli / "package.json").write_text('{"version": "2.117.0"}')
    (cli / "bin" / "codebuddy").write_text("#!/bin/sh\n")
    (cli / "bin" / "codebuddy").chmod(0o755)
    assert realcli.locate("codebuddy", tmp_path) == cli / "bin" / "codebuddy"
    (cli / "package.json").write_text('{"version": "2.116.0"}')
    with pytest.raises(FileNotFoundError, match=r"is version 2\.116\.0"):
        realcli.locate("codebuddy", tmp_path)


def test_a_published_version_is_installed_once_into_its_own_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", f"{_fake_npm(tmp_path)}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv(realcli.DIR_ENV, str(tmp_path / "cache"))
    target = targets.create("real:claude=2.1.235")
    with pytest.raises(FileNotFoundError, match=r"install-real-clis.sh \S+ claude=2.1.235"):
        realcli.locate("claude", version="2.1.235")
    targets.prepare(target)
    binary = realcli.locate("claude", version="2.1.235")
    assert binary == tmp_path / "cache" / "claude-2.1.235" / "node_modules" / ".bin" / "claude"
    assert isinstance(target, targets.AgentBinary)
    assert target.binary("claude") == binary
    (tmp_path / "bin" / "npm").unlink()  # a second prepare finds it and asks npm nothing
    targets.prepare(target)


def test_a_reference_is_added_at_the_versions_of_each_real_target() -> None:
    given: tuple[str, ...] = (
        "reference",
        "real",
        "real:claude=2.1.235",
        "old=real:claude=2.1.235,codex=0.171.0",
    )
    assert targets.with_companions(given) == (
        *given,
        "reference:claude=2.1.235",
        "reference:claude=2.1.235,codex=0.171.0",
    )
    assert targets.with_companions(("real:claude=2.1.235",)) == ("real:claude=2.1.235",)
    inproc = ("reference-inproc", "real:codex=0.171.0")
    assert targets.with_companions(inproc)[-1] == "reference-inproc:codex=0.171.0"
    given = ("reference:claude=2.1.235", "real")
    assert targets.with_companions(given) == (*given, "reference")


# -- by_version ------------------------------------------------------------------------------

CLAUDE_DOC = """\
id: a-versioned-scenario
title: A scenario with per-version expectations
description: The base each broken case changes in one place.
clauses: [LOOP-04]
seam: model-api
request:
  cli: claude
  schema: {type: object}
provider:
  model_script: [{tool: {cause: c}}]
expect:
  exit_code: 0
  requests: 1
  line_types: []
  no_structured_output: true
  stderr_contains: hello
by_version:
  claude:
    "<2.1.260":
      because: B-03
      breaks: [LOOP-04]
      expect: {exit_code: 1}
    ">=2.1.250,<2.1.270":
      because: an overlap on another field is fine
      expect: {requests: 2}
      unchecked: [stderr_contains]
"""


def _versioned(old: str, new: str) -> str:
    assert old in CLAUDE_DOC, old
    return CLAUDE_DOC.replace(old, new, 1)


VERSION_CASES = [
    ("other-cli", _versioned("  claude:\n", "  codex:\n"), 18, "by_version.codex", "runs claude"),
    (
        "bad-range",
        _versioned('"<2.1.260"', '"<2.1"'),
        19,
        "by_version.claude.<2.1",
        "is not a version",
    ),
    (
        "shared-field",
        _versioned("expect: {requests: 2}", "expect: {exit_code: 2}"),
        23,
        "by_version.claude.>=2.1.250,<2.1.270",
        "shares 2.1.250 with '<2.1.260' and both set exit_code",
    ),
    (
        "breaks-uncited",
        _versioned("breaks: [LOOP-04]", "breaks: [LOOP-05]"),
        21,
        "by_version.claude.<2.1.260.breaks[0]",
        "LOOP-05 is not one of the scenario's clauses",
    ),
    (
        "given-and-unchecked",
        _versioned("unchecked: [stderr_contains]", "unchecked: [requests]"),
        26,
        "by_version.claude.>=2.1.250,<2.1.270.unchecked",
        "requests is given in expect and unchecked both",
    ),
    (
        "no-because",
        _versioned("      because: B-03\n", ""),
        19,
        "by_version.claude.<2.1.260.because",
        "required",
    ),
    (
        "unknown-field",
        _versioned("expect: {exit_code: 1}", "expect: {exit: 1}"),
        22,
        "by_version.claude.<2.1.260.expect.exit",
        "unknown field",
    ),
    (
        # A rule's expectation is held to the decisive fields too: printing a result
        # line there makes its is_error decisive.
        "decisive-field-of-a-rule",
        _versioned(
            "expect: {requests: 2}", "expect: {line_types: [result/success], subtype: success}"
        ),
        25,
        "by_version.claude.>=2.1.250,<2.1.270.expect",
        "give is_error: whether the result line is an error",
    ),
]  # fmt: skip


@pytest.mark.parametrize(
    ("document", "line", "field", "fragment"),
    [case[1:] for case in VERSION_CASES],
    ids=[case[0] for case in VERSION_CASES],
)
def test_a_broken_by_version_gives_one_clear_line(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    document: str,
    line: int,
    field: str,
    fragment: str,
) -> None:
    assert_one_clear_line(tmp_path, capsys, document, line, field, fragment)


def test_by_version_is_refused_on_other_seams(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    document = (
        "id: an-adaptor-scenario\ntitle: T\ndescription: D\nclauses: [CDX-01]\nseam: agent-cli\n"
        "request: {driver: codex, schema: {type: object}}\n"
        "provider: {steps: [thread.started, turn.started, {agent_message: '{}'}, turn.completed]}\n"
        "expect: {status: ok}\n"
        "by_version: {claude: {'<2.1.0': {because: x, unchecked: [requests]}}}\n"
    )
    assert_one_clear_line(tmp_path, capsys, document, 9, "by_version", "only model-api scenarios")


def test_a_rule_may_leave_a_decisive_field_unchecked_by_name(tmp_path: Path) -> None:
    """`unchecked` waives a decisive field on those versions (each rule says why)."""
    path = tmp_path / "waived.yaml"
    path.write_text(
        _versioned("unchecked: [stderr_contains]", "unchecked: [stderr_contains, line_types]")
    )
    assert loader.load([path]).problems == ()


def test_the_rules_of_a_version_patch_its_expectation(tmp_path: Path) -> None:
    path = tmp_path / "good.yaml"
    path.write_text(CLAUDE_DOC)
    loaded = loader.load([path])
    assert loaded.problems == ()
    scenario = loaded.scenarios[0]
    pin = scenario.expectation_for("real", {"claude": "2.1.328"})
    assert pin == scenario.expect
    old = scenario.expectation_for("real", {"claude": "2.1.235"})
    assert isinstance(old, ModelApiExpectation)
    assert (old.exit_code, old.requests, old.stderr_contains) == (1, 1, "hello")
    overlap = scenario.expectation_for("reference", {"claude": "2.1.255"})
    assert isinstance(overlap, ModelApiExpectation)
    assert (overlap.exit_code, overlap.requests, overlap.stderr_contains) == (1, 2, None)
    assert scenario.expectation_for("cmd", {}) == scenario.expect  # no versions: no rule
    assert [r.breaks for r in scenario.rules_for({"claude": "2.1.235"})] == [("LOOP-04",)]


# -- side requests ---------------------------------------------------------------------------


def test_a_connectivity_check_is_answered_recorded_and_not_counted() -> None:
    fake = ScriptedModelAPI([{"text": "hi"}])
    reply = fake.handle("HEAD", "/api/hello", [], b"")
    assert reply.status == 200
    fake.handle("POST", "/v1/messages?beta=true", [], json.dumps({"model": "m"}).encode())
    assert [r.side for r in fake.requests] == ["connectivity check", None]
    assert len(fake.model_requests) == 1
    assert fake.unexpected == []
    fake.assert_no_unexpected()
    assert fake.handle("GET", "/api/hello", [], b"").status == 404  # only what CLIs send


def _outcome(
    side: tuple[str, ...] = (), cli: str = "claude", exit_code: int = 0
) -> ModelApiOutcome:
    requests = [SeenRequest(None, None, None, None, [], side=s) for s in side]
    requests.append(SeenRequest("m", None, None, None, []))
    final = {"type": "result", "subtype": "success"}
    return ModelApiOutcome(cli, exit_code, "", False, (final,), final, tuple(requests))


def test_expectations_see_side_requests_only_when_they_ask() -> None:
    outcome = _outcome(("HEAD /api/hello",))
    assert compare(ModelApiExpectation(requests=1, no_unexpected_requests=True), outcome) == ()
    asked = compare(ModelApiExpectation(side_requests=()), outcome)
    assert [m.field for m in asked] == ["side_requests"]
    projected = differential.project(outcome)
    assert projected["side_requests"] == ["HEAD /api/hello"]
    assert len(projected["requests"]) == 1


# -- profiles --------------------------------------------------------------------------------


def test_every_behaviour_covers_every_version_once() -> None:
    assert CLAUDE.check() == []
    assert CODEX.check() == []
    assert CODEBUDDY.check() == []


def test_a_profile_has_a_field_per_behaviour() -> None:
    fields = set(ClaudeProfile.__dataclass_fields__) - {"version"}
    assert fields == set(CLAUDE.behaviours)
    assert set(CodexProfile.__dataclass_fields__) - {"version"} == set(CODEX.behaviours)
    assert set(CodeBuddyProfile.__dataclass_fields__) - {"version"} == set(CODEBUDDY.behaviours)


def test_every_row_cites_its_evidence() -> None:
    for entry in (*CLAUDE.entries, *CODEX.entries, *CODEBUDDY.entries):
        assert "docs/versions.md" in entry.evidence, entry


def test_the_pinned_profile_is_the_pinned_model() -> None:
    pin = ClaudeProfile.of()
    assert pin.version == realcli.CLAUDE_VERSION == CLAUDE.pinned
    assert (pin.default_model, pin.output_ceiling(pin.default_model)) == ("claude-opus-5-5", 128000)
    assert len(pin.bad_request_retries) + 1 == 6
    old = ClaudeProfile.of("2.1.235")
    assert (old.default_model, old.output_ceiling("claude-opus-5-5")) == ("claude-opus-5", 64000)
    assert old.display_name("Opus 5") == "Opus 5 (1M context)"
    assert ClaudeProfile.of("9.0.0").wraps_notes  # a version past the newest row: the newest
    assert CodexProfile.of("0.171.0").accept_encoding == "zstd,gzip"


def test_the_words_and_models_of_older_releases() -> None:
    """B-27 to B-30 as the profile gives them to the model's tools and model choice."""
    from harness.systems.claude import permissions, tools  # noqa: PLC0415
    from providers_fake.cli.claude import data  # noqa: PLC0415

    cwd = Path("/w/p")
    old, pin = ClaudeProfile.of("2.1.280"), ClaudeProfile.of()
    blocked = permissions.bash("rm x", cwd, allowed=False, asks=old.asks_approval).refusal
    assert blocked == (
        "rm in '/w/p/x' was blocked. For security, Claude Code may only remove files from "
        "the allowed working directories for this session: '/w/p'."
    )
    asked = permissions.bash("rm x", cwd, allowed=False, asks=pin.asks_approval).refusal
    assert asked is not None
    assert asked.startswith("rm in '/w/p/x' needs approval. The path is")
    for each in (old, pin):  # neither release names a path for these
        refusal = permissions.bash("chmod +x a", cwd, allowed=False, asks=each.asks_approval)
        assert refusal.refusal == permissions.APPROVAL
    hint = tools.no_such_tool("bash", case_hint=ClaudeProfile.of("2.1.281").case_hint)
    assert hint == "Error: No such tool available: bash"
    assert tools.no_such_tool("bash", case_hint=ClaudeProfile.of("2.1.282").case_hint).endswith(
        "call Bash instead."
    )
    middle = [ClaudeProfile.of(v).missing_as_unknown for v in ("2.1.259", "2.1.260", "2.1.285")]
    assert middle == [False, True, False]
    early = ClaudeProfile.of("2.1.235")
    aliases, known = dict(early.model_aliases), early.known_models()
    assert data.chosen_model("HAIKU", aliases, known) == "claude-haiku-4-5-20251001"
    assert data.chosen_model("Claude-Opus-5-5[1m]", aliases, known) == "Claude-Opus-5-5"
    assert dict(pin.model_aliases) == data.MODEL_ALIASES
    assert pin.known_models() == data.KNOWN_MODELS
    assert (early.agent(), pin.agent()) == (
        "claude-code_2-1-235_agent",
        "claude-code_2-1-328_agent",
    )
    assert (early.quiet_notice, early.cwd_notes, pin.quiet_notice, pin.cwd_notes) == (
        False, False, True, True,
    )  # fmt: skip


def test_a_table_with_a_gap_or_an_overlap_says_so() -> None:
    from harness.systems.profiles import Table, entry  # noqa: PLC0415  (this test's own table)

    table = Table(
        "x",
        "1.0.0",
        (
            entry("a", "<1.0.0", 1, "docs/versions.md"),
            entry("a", ">1.0.0", 2, "docs/versions.md"),
            entry("b", "<2.0.0", 1, "docs/versions.md"),
            entry("b", ">=1.5.0", 2, "docs/versions.md"),
        ),
    )
    assert table.check() == [
        "x a: no row holds 1.0.0",
        "x b: '<2.0.0' and '>=1.5.0' both hold 1.5.0",
    ]


# -- drift and clauses by version ------------------------------------------------------------


def _result(target: str, outcome: ModelApiOutcome, scenario: str = "model-s") -> CaseResult:
    return CaseResult(scenario, target, "passed", outcome)


KINDS = {"real:claude=2.1.235": "real", "real": "real", "reference": "reference"}
VERSIONS = {
    "real:claude=2.1.235": {"claude": "2.1.235", "codex": "0.169.0"},
    "real": {"claude": "2.1.328", "codex": "0.169.0"},
    "reference": {"claude": "2.1.328", "codex": "0.169.0"},
}


def test_drift_follows_each_scenario_across_versions() -> None:
    results = [
        _result("real:claude=2.1.235", _outcome(("HEAD /api/hello",), exit_code=1)),
        _result("real", _outcome()),
        _result("reference", _outcome()),
        _result("real", _outcome(cli="codex"), scenario="model-c"),
    ]
    found = drift.build(results, KINDS, {"model-s": "claude", "model-c": "codex"}, VERSIONS)
    assert found.clis == (("claude", ("2.1.235", "2.1.328")),)
    assert dict(found.sources) == {"claude": drift.REAL}
    (row,) = found.rows
    assert [c.differences[0].field for c in row.changes] == ["exit_code"]
    assert [d.field for d in row.changes[0].differences] == ["exit_code", "side_requests"]
    text = drift.markdown(found)
    assert "## claude: 2.1.235 → 2.1.328 (real binaries)" in text
    assert "- 2.1.235 → 2.1.328: 1 of 1 scenarios change" in text
    assert "`preconnect`: true → false" in text  # the profile rows that change there
    assert json.loads(json.dumps(found.to_json()))["clis"] == {"claude": ["2.1.235", "2.1.328"]}
    pinned = {"real": "real", "reference": "reference"}
    empty = drift.build(results[1:3], pinned, {"model-s": "claude"}, VERSIONS)
    assert "nothing to compare" in drift.markdown(empty)


def test_without_several_real_versions_the_profiles_drift() -> None:
    kinds = {"reference": "reference", "reference:claude=2.1.235": "reference"}
    versions_ = {
        "reference": {"claude": "2.1.328"},
        "reference:claude=2.1.235": {"claude": "2.1.235"},
    }
    results = [_result(name, _outcome()) for name in kinds]
    found = drift.build(results, kinds, {"model-s": "claude"}, versions_)
    assert dict(found.sources) == {"claude": drift.MODELLED}
    assert "these are the reference model's profiles" in drift.markdown(found)


def test_the_differential_pairs_outcomes_of_one_version() -> None:
    kinds = {**KINDS, "reference:claude=2.1.235": "reference"}
    versions_ = {**VERSIONS, "reference:claude=2.1.235": VERSIONS["real:claude=2.1.235"]}
    results = [_result(name, _outcome()) for name in kinds]
    found = differential.pairs(results, kinds, {"model-s": "claude"}, versions_)
    assert [(p.reference, p.real) for p in found] == [
        ("reference", "real"),
        ("reference:claude=2.1.235", "real:claude=2.1.235"),
    ]
    codex = differential.pairs(results, kinds, {"model-s": "codex"}, versions_)
    assert len(codex) == 2  # each real target with the reference at all its versions


def test_clauses_hold_or_not_per_version(catalogue: loader.Loaded) -> None:
    scenario = next(s for s in catalogue.scenarios if s.id == "model-claude-midstream-error-json")
    info = [
        TargetInfo("real:claude=2.1.235", "real", (("claude", "2.1.235"),)),
        TargetInfo("real", "real", (("claude", "2.1.328"),)),
        TargetInfo("real:claude=2.1.332", "real", (("claude", "2.1.332"),)),
    ]
    results = [
        CaseResult(scenario.id, "real:claude=2.1.235", "passed"),
        CaseResult(scenario.id, "real", "passed"),
        CaseResult(scenario.id, "real:claude=2.1.332", "failed"),
    ]
    found = {v.version: v.state for v in versions.verdicts([scenario], results, info)}
    assert found == {"2.1.235": "does not hold", "2.1.328": "holds", "2.1.332": "fails"}
    report = render.Report.build([scenario], results, (), ROOT, info=info)
    text = render.coverage(report)
    assert "| LOOP-15 | does not hold | holds | FAILS |" in text
    assert (
        "LOOP-15 on claude 2.1.235: does not hold: model-claude-midstream-error-json: B-11" in text
    )
    assert "## Clauses that do not hold on every version" in render.catalogue(report)
    assert "- `real:claude=2.1.235` (real): claude 2.1.235" in render.matrix(report)


# -- the catalogue on the profiles of other releases -----------------------------------------


@pytest.mark.parametrize(
    "spec", ["reference-inproc:claude=2.1.235", "reference-inproc:claude=2.1.332,codex=0.171.0"]
)
def test_the_profiles_meet_the_catalogue_at_their_releases(
    catalogue: loader.Loaded, spec: str
) -> None:
    """Every model-api scenario, with its rules for the release, on that release's profile."""
    from harness.seams import RunOptions  # noqa: PLC0415
    from harness.seams.case import execute  # noqa: PLC0415

    target = targets.create(spec)
    scenarios = [s for s in catalogue.scenarios if s.seam is Seam.MODEL_API]
    results = [execute(s, target, RunOptions(allow_exec=True)) for s in scenarios]
    failing = [f"{r.scenario}: {r.status} {r.reason or ''} {r.mismatches}" for r in results
               if r.status not in {"passed", "skipped"}]  # fmt: skip
    assert failing == []
