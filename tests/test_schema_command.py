"""``harness schema``: one schema put to the adaptor contract and each CLI release."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from harness import cli
from harness.compat import values
from harness.compat.systems import SYSTEMS
from tests.realbin import real_binary

PLAIN = {
    "type": "object",
    "properties": {
        "n": {"type": "integer"},
        "tags": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["n", "tags"],
    "additionalProperties": False,
}
DRAFT_04 = {"$schema": "http://json-schema.org/draft-04/schema#", "type": "object"}
BIG_CONST = {"type": "object", "properties": {"id": {"const": 9007199254740993}}}
PRECISION = {"type": "object", "properties": {"p": {"type": "number", "multipleOf": 0.01}}}


def _write(tmp_path: Path, name: str, schema: object) -> str:
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(schema))
    return str(path)


def _rows(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, list[dict[str, Any]]]:
    code = cli.main(["schema", *argv, "--json"])
    out = capsys.readouterr().out
    return code, [json.loads(line) for line in out.splitlines()]


def test_a_plain_schema_is_taken_by_every_system(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, rows = _rows(capsys, _write(tmp_path, "plain", PLAIN))
    assert code == 0
    assert [(r["system"], r["release"]) for r in rows] == [
        ("adaptor", "seed-001"),
        ("claude", SYSTEMS["claude"].pinned),
        ("codex", SYSTEMS["codex"].pinned),
    ]
    fields = {"schema", "system", "release", "accepted", "error", "wire_schema", "strict"}
    for row in rows:
        assert fields | {"differences", "agree"} <= set(row)
        assert row["accepted"] is True
        assert row["error"] is None
        assert row["wire_schema"] == PLAIN
        assert row["agree"] is None
    assert [r["strict"] for r in rows] == [None, None, True]  # codex sends strict text.format


def test_a_refusal_is_in_the_cli_s_own_words(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, rows = _rows(capsys, _write(tmp_path, "old", DRAFT_04), "--cli", "claude")
    assert code == 1
    claude = rows[1]
    assert claude["accepted"] is False
    assert claude["wire_schema"] is None
    assert claude["error"] == (
        "Error: --json-schema is not a valid JSON Schema: "
        'no schema with key or ref "http://json-schema.org/draft-04/schema#"'
    )


def test_the_wire_schema_shows_what_json_parse_did_and_the_values_it_parts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, rows = _rows(capsys, _write(tmp_path, "big", BIG_CONST), "--cli", "claude")
    assert code == 0
    adaptor, claude = rows
    assert claude["how"] == "rewritten"
    assert claude["wire_schema"] == {
        "type": "object",
        "properties": {"id": {"const": 9007199254740992}},
    }
    found = [d for d in claude["differences"] if isinstance(d, dict)]
    assert {"value": found[0]["value"]} == {"value": {"id": 9007199254740992}}
    assert found[0]["claude 2.1.328"] == "accepts"
    assert str(found[0]["adaptor"]).startswith("/id: const")
    assert adaptor["differences"] == claude["differences"]


def test_releases_are_asked_each_with_its_own_validator(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    schema = _write(tmp_path, "precision", PRECISION)
    release = ("--release", "claude=2.1.328", "--release", "claude=2.1.235", "--cli", "claude")
    code, rows = _rows(capsys, schema, *release)
    assert code == 0
    assert [r["release"] for r in rows] == ["seed-001", "2.1.328", "2.1.235"]
    verdicts = [d for d in rows[0]["differences"] if isinstance(d, dict)]
    # B-16: 2.1.235 divides exactly, 2.1.328 rounds with Ajv's multipleOfPrecision 6.
    parted = [d for d in verdicts if d["claude 2.1.235"] != d["claude 2.1.328"]]
    assert parted, verdicts


def test_the_text_report_diffs_the_wire_schema(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(["schema", _write(tmp_path, "big", BIG_CONST), "--cli", "claude"]) == 0
    out = capsys.readouterr().out
    assert "claude 2.1.328: accepted; sends the model the schema rewritten" in out
    assert '-      "const": 9007199254740993' in out
    assert '+      "const": 9007199254740992' in out
    assert "values the layers judge differently:" in out


def test_the_same_schema_gives_the_same_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    schema = _write(tmp_path, "ticket", {**PRECISION, **BIG_CONST})
    outputs = []
    for _ in range(2):
        cli.main(["schema", schema, "--cli", "claude", "--json"])
        outputs.append(capsys.readouterr().out)
    assert outputs[0] == outputs[1]


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["missing.json"], "missing.json: cannot read"),
        (["{fifo}"], "not a regular file"),
        (["{plain}", "--cli", "cursor"], "--cli 'cursor': choose from"),
        (["{plain}", "--release", "claude"], "give CLI=VERSION"),
        (["{plain}", "--cli", "codex", "--release", "claude=2.1.328"], "not among --cli"),
    ],
)
def test_bad_arguments_are_one_line_and_exit_4(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], said: str
) -> None:
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    plain = _write(tmp_path, "plain", PLAIN)
    given = [a.format(fifo=fifo, plain=plain) for a in argv]
    assert cli.main(["schema", *given]) == 4
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert said in err[0]


def test_an_oversized_file_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "huge.json"
    path.write_text(" " * (2 * 1024 * 1024) + "{}")
    assert cli.main(["schema", str(path)]) == 4
    assert "over the" in capsys.readouterr().err


def test_probes_aim_at_what_parts_validators() -> None:
    probes = list(values._probes(PRECISION))
    assert {"p": 0.01 * 3} in probes  # 0.030000000000000002: a fraction doubles cannot hold
    assert {"id": 9007199254740992} in list(values._probes(BIG_CONST))


@pytest.mark.subprocess
def test_against_real_the_reference_agrees_on_a_sample(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    real_binary("claude")
    real_binary("codex")
    files = [
        _write(tmp_path, n, s) for n, s in (("plain", PLAIN), ("old", DRAFT_04), ("big", BIG_CONST))
    ]
    code, rows = _rows(capsys, *files, "--against", "real")
    assert code == 1  # draft-04 is refused by claude
    clis = [r for r in rows if r["system"] != "adaptor"]
    assert len(clis) == 6
    assert all(r["agree"] is True for r in clis), [r.get("disagree") for r in clis]
    refused = next(r for r in clis if r["system"] == "claude" and "old" in str(r["schema"]))
    assert isinstance(refused["real"], dict)
    assert refused["real"]["accepted"] is False


def test_the_differential_sees_what_the_user_supplied() -> None:
    """Masks reach what the CLI generates, never a schema, a tool input or the answer."""
    from harness.reports import differential  # noqa: PLC0415
    from harness.seams.model_api.values import ModelApiOutcome, SeenRequest, stable  # noqa: PLC0415

    uuid = "123e4567-e89b-12d3-a456-426614174000"
    schema = {"type": "object", "properties": {"timestamp": {"const": uuid}}}
    line = {"type": "result", "uuid": uuid, "structured_output": {"timestamp": uuid}}
    assert stable(line) == {
        "type": "result",
        "uuid": "<volatile>",
        "structured_output": {"timestamp": uuid},
    }

    def outcome(const: str) -> ModelApiOutcome:
        shown = {"type": "object", "properties": {"timestamp": {"const": const}}}
        seen = SeenRequest("m", shown, None, None, None)
        return ModelApiOutcome("claude", 0, "", False, (), None, (seen,))

    left = differential.project(outcome(uuid))
    right = differential.project(outcome(uuid.replace("1", "2")))
    assert left["requests"][0]["input_schema"] == schema
    found = differential.differences(left, right)
    assert [d.field for d in found] == ["requests.input_schema"], found


def test_a_schema_over_linux_s_argument_cap_cannot_start_claude_but_codex_takes_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    properties = {f"p{i}": {"type": "string", "description": "x" * 40} for i in range(3000)}
    code, rows = _rows(
        capsys, _write(tmp_path, "big", {"type": "object", "properties": properties})
    )
    assert code == 1
    adaptor, claude, codex = rows
    assert claude["accepted"] is False
    assert "MAX_ARG_STRLEN" in claude["error"]
    assert codex["accepted"] is True  # codex reads the schema from a file
    assert adaptor["accepted"] is True


def test_a_corpus_is_counted_per_system(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "corpus"
    folder.mkdir()
    for name, schema in (("plain", PLAIN), ("old", DRAFT_04), ("big", BIG_CONST)):
        _write(folder, name, schema)
    (folder / "broken.json").write_text("{not json")
    report = tmp_path / "report"
    code = cli.main(["schema", "--corpus", str(folder), "--cli", "claude", "--report", str(report)])
    assert code == 0  # no reference-vs-binary disagreement without --against real
    data = json.loads((report / "schemas.json").read_text())
    claude = data["systems"]["claude 2.1.328"]
    assert (claude["schemas"], claude["accepted"]) == (4, 2)
    assert claude["refused"] == {"$schema: draft-04, which Ajv does not know": 1, "not JSON": 1}
    assert claude["rewritten"] == 1  # the big const, rounded by JSON.parse
    page = (report / "schemas.md").read_text()
    assert "| claude 2.1.328 | 4 | 2 | 2 | 1 | 0 | 0 |" in page
    assert capsys.readouterr().out == page


def test_a_schema_near_the_bound_is_still_asked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Escaped as a string the question outgrows the scenario bound; it is asked as a value."""
    quoted = '"' * 200  # each quote is escaped once in the file, twice in the question
    properties = {f"p{i}": {"type": "string", "description": quoted} for i in range(2_000)}
    path = _write(tmp_path, "near", {"type": "object", "properties": properties})
    size = Path(path).stat().st_size
    assert 800_000 < size < 1024 * 1024 < 2 * size  # the escaping would push it over
    code, rows = _rows(capsys, path, "--cli", "codex")
    assert code == 0
    assert [r["accepted"] for r in rows] == [True, True]
    assert rows[1]["wire_schema"] == json.loads(Path(path).read_text())
