"""
Broken scenario files: each gives exactly one clear line and exit status 2.

The table is the specification: every row is one kind of mistake a scenario
author makes, with the line and field the message must point at.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from harness import engine
from harness.catalogue import loader
from harness.catalogue.scenario import Request
from harness.cli import main
from tests.lintcheck import assert_one_clear_line

GOOD = """\
id: a-good-scenario
title: A good scenario
description: Used as the base that each broken case changes in one place.
clauses: [CDX-01]
tags: [codex]
seam: agent-cli
request:
  driver: codex
  schema: {type: object}
provider:
  steps: [thread.started, turn.started, {agent_message: '{}'}, turn.completed]
expect:
  status: ok
  value: {}
"""


def _broken(old: str, new: str) -> str:
    assert old in GOOD, old
    return GOOD.replace(old, new, 1)


CASES = [
    # (name, document, line, field, message fragment)
    (
        "yaml-syntax",
        _broken("title: A good scenario", "title: [unclosed"),
        3,
        "<document>",
        "invalid YAML",
    ),
    (
        "duplicate-key",
        _broken("tags: [codex]", "tags: [codex]\ntags: [again]"),
        6,
        "tags",
        "duplicate key 'tags'",
    ),
    (
        "unsafe-tag",
        _broken("title: A good scenario", "title: !!python/object/apply:os.system [ls]"),
        2,
        "title",
        "is not allowed",
    ),
    ("not-a-mapping", "- just\n- a list\n", 1, "<document>", "must be a mapping"),
    ("empty-file", "", 1, "<document>", "must be a mapping"),
    (
        "missing-title",
        _broken("title: A good scenario\n", ""),
        1,
        "title",
        "required field is missing",
    ),
    (
        "unknown-field",
        _broken("tags: [codex]", "tags: [codex]\ndescripton: typo"),
        6,
        "descripton",
        "unknown field 'descripton'",
    ),
    (
        "wrong-type",
        _broken("clauses: [CDX-01]", "clauses: CDX-01"),
        4,
        "clauses",
        "is not of type 'array'",
    ),
    ("bad-id", _broken("id: a-good-scenario", "id: Not A Good Id"), 1, "id", "does not match"),
    (
        "unknown-clause",
        _broken("clauses: [CDX-01]", "clauses: [CDX-01, CDX-99]"),
        4,
        "clauses[1]",
        "unknown clause 'CDX-99'",
    ),
    ("unknown-seam", _broken("seam: agent-cli", "seam: agent_cli"), 6, "seam", "is not one of"),
    (
        "unknown-driver",
        _broken("driver: codex", "driver: gemini"),
        8,
        "request.driver",
        "is not one of",
    ),
    (
        "unknown-event",
        _broken("thread.started, turn.started", "thread.started, turn.begun"),
        11,
        "provider.steps[1]",
        "unknown codex event 'turn.begun'",
    ),
    (
        "step-two-keys",
        _broken("{agent_message: '{}'}", "{raw: x, stderr: y}"),
        11,
        "provider.steps[2]",
        "has too many properties",
    ),
    (
        "negative-sleep",
        _broken("{agent_message: '{}'}", "{sleep: -1}"),
        11,
        "provider.steps[2].sleep",
        "less than the minimum",
    ),
    (
        "missing-schema-file",
        _broken("schema: {type: object}", "schema_file: nowhere.json"),
        9,
        "request.schema_file",
        "no such file",
    ),
    (
        "two-schema-sources",
        _broken("schema: {type: object}", "schema: {}\n  schema_text: '{}'"),
        10,
        "request.schema_text",
        "give one schema source",
    ),
    (
        "unknown-error-kind",
        _broken("status: ok", "error: kaboom"),
        13,
        "expect.error",
        "is not one of",
    ),
    (
        "cause-without-execution-error",
        _broken("status: ok", "error: policy_violation\n  cause: signal"),
        14,
        "expect.cause",
        "cause applies only to execution_error",
    ),
    (
        "value-and-no-value",
        _broken("value: {}", "value: {}\n  no_value: true"),
        15,
        "expect.no_value",
        "contradicts 'value'",
    ),
    (
        "bad-target-key",
        _broken("value: {}", "value: {}\nby_target: {Bad_Kind: {}}"),
        15,
        "by_target",
        "does not match",
    ),
    (
        "timeout-too-long",
        _broken("driver: codex", "driver: codex\n  timeout: 1000"),
        9,
        "request.timeout",
        "greater than the maximum",
    ),
    (
        "null-with-nothing-to-unset",
        _broken("schema: {type: object}", "schema_file: null"),
        9,
        "request.schema_file",
        "there is no 'schema_file' to unset",
    ),
    (
        "bad-prompt-pattern",
        _broken("status: ok", "status: ok\n  provider: {prompt_match: ['(unclosed']}"),
        14,
        "expect.provider.prompt_match[0]",
        "not a regular expression",
    ),
    (
        "bad-message-pattern",
        _broken("status: ok", "error: policy_violation\n  message_match: '[a-'"),
        14,
        "expect.message_match",
        "not a regular expression",
    ),
    (
        "schema-pointer-without-slash",
        _broken("status: ok", "status: ok\n  provider: {schema_at: [{pointer: type, value: x}]}"),
        14,
        "expect.provider.schema_at[0].pointer",
        "does not match",
    ),
    (
        "schema-point-value-and-absent",
        _broken(
            "status: ok",
            "status: ok\n  provider: {schema_at: [{pointer: /type, value: x, absent: true}]}",
        ),
        14,
        "expect.provider.schema_at[0]",
        "valid under each of",
    ),
    (
        "audit-value-and-none",
        _broken("status: ok", "status: ok\n  audit_value: 1\n  no_audit_value: true"),
        15,
        "expect.no_audit_value",
        "contradicts 'audit_value'",
    ),
    (
        "choice-without-reference",
        _broken("tags: [codex]", "tags: [codex, choice]"),
        5,
        "tags",
        "exactly when it is tagged 'choice'",
    ),
    (
        "reference-without-choice",
        _broken("  value: {}\n", "  value: {}\nby_target: {reference: {status: ok}}\n"),
        5,
        "tags",
        "exactly when it is tagged 'choice'",
    ),
    (
        "record-name-not-a-name",
        _broken(
            "schema: {type: object}", "schema_type: {root: R, types: {'Grid Point': {a: int}}}"
        ),
        9,
        "request.schema_type.types.Grid Point",
        "not a name of the type language",
    ),
    (
        "record-name-built-in",
        _broken("schema: {type: object}", "schema_type: {root: R, types: {callable: {a: int}}}"),
        9,
        "request.schema_type.types.callable",
        "is a built-in type",
    ),
    (
        "unknown-signal",
        _broken("turn.completed]", "turn.completed]\n  signal: SIGFOO"),
        12,
        "provider.signal",
        "is not one of",
    ),
]


@pytest.mark.parametrize(
    ("document", "line", "field", "fragment"),
    [pytest.param(*case[1:], id=case[0]) for case in CASES],
)
def test_one_clear_line(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    document: str,
    line: int,
    field: str,
    fragment: str,
) -> None:
    assert_one_clear_line(tmp_path, capsys, document, line, field, fragment)


def test_at_least_fifteen_kinds() -> None:
    assert len(CASES) >= 15


def test_duplicate_ids_across_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "a.yaml").write_text(GOOD)
    (tmp_path / "b.yaml").write_text(GOOD)
    assert main(["lint", str(tmp_path)]) == 4
    out = capsys.readouterr().out
    assert f"{tmp_path / 'b.yaml'}:1:1: id: duplicate id 'a-good-scenario'" in out


def _lint_family(
    tmp_path: Path, family: str, capsys: pytest.CaptureFixture[str]
) -> tuple[Path, str]:
    """``family`` written to a file and linted: it must fail (4); the file and what lint said."""
    path = tmp_path / "family.yaml"
    path.write_text(family)
    assert main(["lint", str(path)]) == 4
    return path, capsys.readouterr().out.strip()


def test_family_case_problem_points_into_the_case(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    family = textwrap.dedent(
        """\
        family: fam
        seam: agent-cli
        request: {driver: codex, schema: {type: object}}
        provider: {steps: [thread.started]}
        expect: {status: ok, value: {}}
        cases:
          - id: fam-one
            title: One
            description: Fine.
            clauses: [CDX-01]
          - id: fam-two
            title: Two
            description: Broken clause.
            clauses: [NOPE-01]
        """
    )
    path, out = _lint_family(tmp_path, family, capsys)
    assert out == f"{path}:14:15: clauses[0]: unknown clause 'NOPE-01' (did you mean 'NEG-01'?)"


def test_a_shared_field_wrong_in_every_case_is_said_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    family = textwrap.dedent(
        """\
        family: fam
        seam: agent-cli
        clauses: [CDX-01]
        request: {driver: codex, schema: {type: object}}
        provider: {steps: [thread.started]}
        expect: {status: ok, value: {}, nope: 1}
        cases:
          - {id: fam-one, title: One, description: One.}
          - {id: fam-two, title: Two, description: Two.}
          - {id: fam-three, title: Three, description: Three.}
        """
    )
    path, out = _lint_family(tmp_path, family, capsys)
    lines = out.splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith(f"{path}:6:")


def test_family_case_unsets_a_family_field(tmp_path: Path) -> None:
    """``null`` in a case removes what the family sets: no schema, no exit status."""
    (tmp_path / "s.json").write_text('{"type": "object"}')
    family = textwrap.dedent(
        """\
        family: fam
        seam: agent-cli
        request: {driver: codex, schema_file: s.json}
        provider: {steps: [thread.started], exit: 3}
        expect: {status: ok, value: {}}
        cases:
          - id: fam-with
            title: With
            description: The family's schema and exit status.
            clauses: [CDX-01]
          - id: fam-without
            title: Without
            description: Neither.
            clauses: [CDX-01]
            request: {schema_file: null}
            provider: {exit: null}
        """
    )
    path = tmp_path / "family.yaml"
    path.write_text(family)
    loaded = loader.load([path])
    assert loaded.problems == ()
    with_, without = loaded.scenarios
    assert isinstance(with_.request, Request)
    assert isinstance(without.request, Request)
    assert with_.request.schema == b'{"type": "object"}'
    assert with_.script is not None
    assert with_.script.exit == 3
    assert without.request.schema is None
    assert without.script is not None
    assert without.script.exit is None


def test_catalogue_lints_clean(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["lint", "scenarios"]) == 0
    assert "scenarios OK" in capsys.readouterr().out


def test_run_and_pytest_surface_the_same_line(tmp_path: Path) -> None:
    path = tmp_path / "broken.yaml"
    path.write_text(_broken("clauses: [CDX-01]", "clauses: [CDX-99]"))
    session = engine.Session((path,), ("reference",), tmp_path, None)
    [problem] = session.catalogue().problems
    assert str(problem).startswith(f"{path}:4:11: clauses[0]: unknown clause 'CDX-99'")
