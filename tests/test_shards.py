"""
``harness run --shard K/N`` and ``harness merge``: the shards of a run cover
every case once, stay put as the catalogue grows, and merge into the
reports the one run gives (byte-identical but for junit.xml's times), with
its exit status.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

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
