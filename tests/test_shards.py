"""
``harness run --shard K/N`` and ``harness merge``: the shards of a run cover
every case once, stay put as the catalogue grows, and merge into the
reports the one run gives (byte-identical but for junit.xml's times), with
its exit status.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from harness import exitcodes, shards
from harness.cli import main, parser

ROOT = Path(__file__).resolve().parent.parent
CLAUDE = str(ROOT / "scenarios" / "agent-cli" / "claude")
NAIVE = "naive=python:tests.adaptors:naive"


def test_every_scenario_is_in_exactly_one_shard_and_stays_there() -> None:
    ids = [f"scenario-{i}" for i in range(400)]
    for n in (1, 2, 3, 7):
        homes = [[k for k in range(1, n + 1) if shards.belongs(i, (k, n))] for i in ids]
        assert all(len(home) == 1 for home in homes)
        sizes = [sum(home == [k] for home in homes) for k in range(1, n + 1)]
        assert min(sizes) > len(ids) / n / 2  # no shard left (nearly) empty
    # A catalogue that grows moves no scenario that was there.
    before = {i: shards.belongs(i, (2, 5)) for i in ids}
    grown = [*ids, *(f"new-{i}" for i in range(100))]
    assert all(shards.belongs(i, (2, 5)) == before[i] for i in grown if i in before)


@pytest.mark.parametrize("spec", ["0/2", "3/2", "1/0", "x", "1/1001", "1/2/3"])
def test_a_bad_shard_is_a_usage_error(spec: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", CLAUDE, "--shard", spec, "--reports", "r"]) == exitcodes.USAGE
    assert "--shard" in capsys.readouterr().err


def _run(reports: Path, baselines: Path, *extra: str) -> int:
    argv = ["run", CLAUDE, "--target", NAIVE, "--target", "reference-inproc"]
    return main([*argv, "--baselines", str(baselines), "--reports", str(reports), *extra])


def _timeless(path: Path) -> bytes:
    return re.sub(rb'time="[0-9.]+"', b'time=""', path.read_bytes())


def test_merged_shards_give_the_one_runs_reports_and_status(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    baselines = tmp_path / "baselines"
    baselines.mkdir()
    # One known failure, and one regression left unlisted: the run fails (1).
    (baselines / "naive.yaml").write_text(
        "target: naive\nknown_failures:\n"
        "  - scenario: claude-structured-output-revalidated\n    reason: trusts the text\n"
    )
    one = tmp_path / "one"
    assert _run(one, baselines) == exitcodes.FAILED
    codes = [_run(tmp_path / f"s{k}", baselines, "--shard", f"{k}/3") for k in (1, 2, 3)]
    assert exitcodes.FAILED in codes
    capsys.readouterr()
    folders = [str(tmp_path / f"s{k}") for k in (3, 1, 2)]  # any order
    merged = tmp_path / "merged"
    assert main(["merge", *folders, "--reports", str(merged)]) == exitcodes.FAILED
    out = capsys.readouterr().out
    assert out.splitlines()[-1] == "harness: exit 1: failed: 1 regression"
    names = sorted(p.name for p in one.iterdir())
    assert names == sorted(p.name for p in merged.iterdir())
    for name in names:
        assert _timeless(one / name) == _timeless(merged / name), name
    assert b"known-failure" in (merged / "junit.xml").read_bytes()


def test_merge_refuses_what_is_not_one_whole_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    argv = ["run", CLAUDE, "--target", "reference-inproc", "-k", "claude-happy"]
    for k in (1, 2):
        main([*argv, "--shard", f"{k}/2", "--reports", f"s{k}"])
    main([*argv, "--shard", "1/3", "--reports", "other"])
    main([*argv, "--reports", "plain"])
    capsys.readouterr()

    def refused(*folders: str) -> str:
        assert main(["merge", *folders, "--reports", "out"]) == exitcodes.USAGE
        last: str = capsys.readouterr().out.strip().splitlines()[-1]
        assert last.startswith("harness: exit 4: usage error: ")
        return last

    assert "shard: missing 2/2" in refused("s1")
    assert "shard 1/2 again" in refused("s1", "s2", "s1")
    assert "a shard of another run" in refused("s1", "s2", "other")
    assert "no shard.json" in refused("s1", "plain")
    assert not (tmp_path / "out").exists()


def test_the_example_workflow_runs_shards_and_merges_them() -> None:
    """examples/ci/harness.yml: its harness commands parse, one shard job per shard."""
    workflow = yaml.safe_load((ROOT / "examples" / "ci" / "harness.yml").read_text())
    count = int(workflow["env"]["SHARDS"])
    assert workflow["jobs"]["shard"]["strategy"]["matrix"]["shard"] == list(range(1, count + 1))
    assert workflow["jobs"]["merge"]["needs"] == "shard"
    commands = [
        step["run"]
        for job in workflow["jobs"].values()
        for step in job["steps"]
        if step.get("run", "").startswith("harness ")
    ]
    assert [c.split()[1] for c in commands] == ["run", "merge"]
    for command in commands:
        line = command.split("||")[0].replace("$TARGETS", workflow["env"]["TARGETS"])
        line = line.replace("${{ matrix.shard }}", "2").replace("$SHARDS", str(count))
        args = parser().parse_args(shlex.split(line)[1:])
        if args.command == "run":
            assert shards.parse(args.shard) == (2, count)


# -- issues 21.7 and 22.2: merge anywhere, and shards verified ------------------------


def _shard_pair(root: Path, catalogue: str) -> list[Path]:
    folders = []
    for k in (1, 2):
        folder = root / f"s{k}"
        argv = ["run", catalogue, "--target", NAIVE, "--target", "reference-inproc"]
        main([*argv, "--shard", f"{k}/2", "--reports", str(folder)])
        folders.append(folder)
    return folders


@pytest.fixture(scope="module")
def pair(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """Two shards of one run of the claude folder: passes, and the naive adaptor's failures."""
    return _shard_pair(tmp_path_factory.mktemp("pair"), CLAUDE)


def _merge(capsys: pytest.CaptureFixture[str], *folders: Path, reports: Path) -> tuple[int, str]:
    capsys.readouterr()
    code = main(["merge", *map(str, folders), "--reports", str(reports)])
    captured = capsys.readouterr()
    assert "Traceback" not in captured.out + captured.err
    return code, captured.out.strip().splitlines()[-1]


def test_merge_works_from_any_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # The shards name the catalogue relatively, as the user gave it ...
    shutil.copytree(ROOT / "scenarios" / "agent-cli", tmp_path / "project" / "agent-cli")
    monkeypatch.chdir(tmp_path / "project")
    folders = _shard_pair(tmp_path / "project", "agent-cli/claude")
    manifest = json.loads((folders[0] / shards.MANIFEST).read_text())
    assert manifest["run"]["paths"] == ["agent-cli/claude"]
    assert re.fullmatch(r"[0-9a-f]{64}", manifest["run"]["catalogue"])
    # ... and the merge, elsewhere, finds it by its digest.
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")
    code, last = _merge(capsys, *folders, reports=tmp_path / "merged")
    assert code == exitcodes.FAILED
    assert last == "harness: exit 1: failed: 2 regressions"
    assert (tmp_path / "merged" / "report.json").exists()


def test_shards_of_different_catalogues_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    for name in ("a", "b"):
        shutil.copytree(ROOT / "scenarios" / "agent-cli", tmp_path / name / "agent-cli")
    edited = next((tmp_path / "b" / "agent-cli" / "claude").glob("*.yaml"))
    edited.write_text(edited.read_text() + "\n# edited\n")
    argv = ["run", "--target", "reference-inproc"]
    assert main([*argv, "a/agent-cli/claude", "--shard", "1/2", "--reports", "s1"]) == 0
    assert main([*argv, "b/agent-cli/claude", "--shard", "2/2", "--reports", "s2"]) == 0
    code, last = _merge(capsys, tmp_path / "s1", tmp_path / "s2", reports=tmp_path / "out")
    assert code == exitcodes.USAGE
    assert re.fullmatch(
        r"harness: exit 4: usage error: \S+/s2/shard.json:1:1: run.catalogue: a shard of another "
        r"catalogue \([0-9a-f]{12}\) than \S+/s1's \([0-9a-f]{12}\)",
        last,
    )
    assert not (tmp_path / "out").exists()


def _forged(pair: list[Path], tmp_path: Path, edit: Any, *, digest: bool = True) -> list[Path]:
    """Copies of ``pair`` whose manifests ``edit`` changed, their digest made to fit."""
    copies = []
    for folder in pair:
        copy = tmp_path / folder.name
        shutil.copytree(folder, copy)
        copies.append(copy)
    documents = [json.loads((c / shards.MANIFEST).read_text()) for c in copies]
    edit(documents)
    for copy, document in zip(copies, documents, strict=True):
        if digest:
            results = tuple(json.dumps(r) for r in document["results"])
            abouts = tuple(json.dumps(a) for a in document["abouts"])
            document["cases"] = shards._cases_digest(results, abouts)
        (copy / shards.MANIFEST).write_text(json.dumps(document))
    return copies


def _first(documents: list[dict[str, Any]], status: str) -> dict[str, Any]:
    return next(r for d in documents for r in d["results"] if r["status"] == status)


def _set_passed(documents: list[dict[str, Any]]) -> None:
    failed = _first(documents, "failed")
    failed.update(status="passed", mismatches=[], verdict=None, note=None)


def _drop(documents: list[dict[str, Any]]) -> None:
    documents[1]["results"].pop()


def _duplicate(documents: list[dict[str, Any]]) -> None:
    documents[1]["results"].append(documents[0]["results"][0])


def _foreign(documents: list[dict[str, Any]]) -> None:
    documents[0]["results"][0]["scenario"] = "no-such-scenario"


def _edit_value(documents: list[dict[str, Any]]) -> None:
    passed = next(
        r
        for d in documents
        for r in d["results"]
        if r["status"] == "passed" and (r["outcome"] or {}).get("value") is not None
    )
    passed["outcome"]["value"] = {"edited": True}


@pytest.mark.parametrize(
    ("edit", "why"),
    [
        (_set_passed, r"results\[\d+\]: \S+@naive: recorded passed, but its outcome gives failed"),
        (_drop, r"results: no shard has \S+"),
        (_duplicate, r"results\[\d+\]: \S+ again \(also in \S+/s1/shard.json\)"),
        (_foreign, r"results\[0\]: no-such-scenario@\S+: not a case of the run's catalogue"),
        (_edit_value, r"results\[\d+\]: \S+: recorded passed, but its outcome gives failed"),
    ],
    ids=["status-edited", "dropped", "duplicated", "foreign", "value-edited"],
)
def test_a_forged_shard_is_refused_with_one_line(
    pair: list[Path], tmp_path: Path, capsys: pytest.CaptureFixture[str], edit: Any, why: str
) -> None:
    forged = _forged(pair, tmp_path, edit)
    code, last = _merge(capsys, *forged, reports=tmp_path / "out")
    assert code == exitcodes.USAGE
    assert re.fullmatch(rf"harness: exit 4: usage error: \S+/shard.json:1:1: {why}", last), last
    assert not (tmp_path / "out").exists()


def test_an_edit_that_keeps_the_old_digest_is_refused(
    pair: list[Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    forged = _forged(pair, tmp_path, _set_passed, digest=False)
    code, last = _merge(capsys, *forged, reports=tmp_path / "out")
    assert code == exitcodes.USAGE
    assert last.endswith(
        "shard.json:1:1: cases: the results do not match their digest: edited after the run"
    )


def test_the_pair_itself_merges(
    pair: list[Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The forgeries above are refused for their edit: the untouched copies merge."""
    code, last = _merge(capsys, *_forged(pair, tmp_path, lambda _: None), reports=tmp_path / "o")
    assert code == exitcodes.FAILED
    assert last == "harness: exit 1: failed: 2 regressions"


def _zero(path: Path) -> None:
    path.symlink_to("/dev/zero")


def _fifo(path: Path) -> None:
    os.mkfifo(path)


def _huge(path: Path) -> None:
    with path.open("wb") as file:
        file.truncate(300 * 1024 * 1024)  # sparse: 300 MB that take no disk


def _deep(path: Path) -> None:
    path.write_text("[" * 100_000 + "]" * 100_000)


def _deep_enough(path: Path) -> None:
    path.write_text("[" * 200 + "]" * 200)


@pytest.mark.parametrize(
    ("make", "why"),
    [
        (_zero, "unreadable: not a regular file"),
        (_fifo, "unreadable: not a regular file"),
        (_huge, "unreadable: 314572800 bytes, more than the 134217728 a manifest may have"),
        (_deep, "unreadable: nested deeper than 64"),
        (_deep_enough, "unreadable: nested deeper than 64"),
    ],
    ids=["dev-zero", "fifo", "300-MB", "deep-100000", "deep-200"],
)
def test_a_hostile_manifest_file_is_one_line(
    pair: list[Path], tmp_path: Path, capsys: pytest.CaptureFixture[str], make: Any, why: str
) -> None:
    hostile = tmp_path / "s1"
    hostile.mkdir()
    make(hostile / shards.MANIFEST)
    code, last = _merge(capsys, hostile, pair[1], reports=tmp_path / "out")
    assert code == exitcodes.USAGE
    assert (
        last == f"harness: exit 4: usage error: {hostile / shards.MANIFEST}:1:1: <document>: {why}"
    )
