"""The YAML kept between runs: the same documents as a fresh load, or none at all."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

from harness.catalogue import loader, yamlcache, yamlpos

ROOT = Path(__file__).resolve().parents[1]

#: Long enough to be kept (`yamlcache.MIN_TEXT`), with an anchor and an alias.
DOCUMENT = (
    "title: a document long enough to keep\n"
    "shared: &shared {a: 1, b: [true, null, 2.5, -0.0, .inf, '\\udcff']}\n"
    "cases:\n"
    "  - {name: first, <<: *shared}\n"
    "  - name: second\n"
    "    big: 123456789012345678901234567890\n"
    "    again: *shared\n" + "".join(f"pad{i}: '{'x' * 20}'\n" for i in range(24))
)


@pytest.fixture(autouse=True)
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv(yamlcache.SWITCH_ENV, raising=False)
    return tmp_path / "cache" / "structured-output-harness" / "yaml"


def _counting() -> tuple[list[str], object]:
    parsed: list[str] = []

    def parse(text: str) -> yamlpos.Located:
        parsed.append(text)
        return yamlpos.load(text)

    return parsed, parse


def _same(kept: yamlpos.Located, fresh: yamlpos.Located) -> None:
    assert json.dumps(kept.value) == json.dumps(fresh.value)  # types too: 1 is not 1.0
    assert kept.lines == fresh.lines
    assert kept.aliases == fresh.aliases
    assert dict(kept.marks) == dict(fresh.marks)
    for path in fresh.marks:
        assert kept.where(path) == fresh.where(path)


def test_a_kept_document_is_the_fresh_one_and_is_not_parsed_again(cache: Path) -> None:
    assert len(DOCUMENT) >= yamlcache.MIN_TEXT
    parsed, parse = _counting()
    first = yamlcache.load(DOCUMENT, parse)  # type: ignore[arg-type]
    second = yamlcache.load(DOCUMENT, parse)  # type: ignore[arg-type]
    assert len(parsed) == 1
    assert isinstance(second.marks, yamlcache.KeptMarks)
    _same(second, yamlpos.load(DOCUMENT))
    _same(first, second)
    assert [p.suffix for p in cache.iterdir()] == [".json"]  # no temporary file left


def test_another_text_is_another_entry(cache: Path) -> None:
    parsed, parse = _counting()
    yamlcache.load(DOCUMENT, parse)  # type: ignore[arg-type]
    yamlcache.load(DOCUMENT.replace("first", "1st"), parse)  # type: ignore[arg-type]
    assert len(parsed) == 2
    assert len(list(cache.iterdir())) == 2


@pytest.mark.parametrize(
    "damage",
    [b"", b"{", b"[]", b'{"value": 1}', b'{"value": 1, "marks": [], "lines": 1, "aliases": []}'],
    ids=["empty", "truncated", "not-an-object", "fields-missing", "wrong-types"],
)
def test_a_damaged_entry_is_parsed_afresh(cache: Path, damage: bytes) -> None:
    yamlcache.load(DOCUMENT)
    (entry,) = cache.iterdir()
    entry.write_bytes(damage)
    parsed, parse = _counting()
    _same(yamlcache.load(DOCUMENT, parse), yamlpos.load(DOCUMENT))  # type: ignore[arg-type]
    assert len(parsed) == 1


@pytest.mark.parametrize(
    "text",
    [
        DOCUMENT + "when: 2026-12-01\n",  # a timestamp: JSON cannot give it back
        DOCUMENT + "raw: !!binary aGk=\n",
        DOCUMENT + "nan: .nan\n",  # NaN is not equal to itself
        "short: document\n",  # cheaper to parse than to look up
    ],
    ids=["timestamp", "binary", "nan", "short"],
)
def test_what_json_cannot_hold_exactly_is_not_kept(cache: Path, text: str) -> None:
    yamlcache.load(text)
    assert not cache.exists() or not list(cache.iterdir())


def test_a_problem_is_never_kept(cache: Path) -> None:
    broken = DOCUMENT + "title: twice\n"
    for _ in range(2):
        with pytest.raises(yamlpos.YAMLProblem, match="duplicate key"):
            yamlcache.load(broken)
    assert not cache.exists() or not list(cache.iterdir())


def test_switched_off_nothing_is_written(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(yamlcache.SWITCH_ENV, "off")
    parsed, parse = _counting()
    for _ in range(2):
        yamlcache.load(DOCUMENT, parse)  # type: ignore[arg-type]
    assert len(parsed) == 2
    assert not cache.exists()


def test_an_unwritable_cache_only_costs_speed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))
    _same(yamlcache.load(DOCUMENT), yamlpos.load(DOCUMENT))


def test_the_folder_stays_bounded(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(yamlcache, "MAX_FILES", 8)
    monkeypatch.setattr(yamlcache, "_KEEP", 6)
    for i in range(20):
        yamlcache.load(DOCUMENT + f"n: {i}\n")
    kept = sorted(cache.iterdir(), key=os.path.getmtime)
    assert 6 <= len(kept) <= 8
    # The newest stays: it is found again without parsing.
    parsed, parse = _counting()
    yamlcache.load(DOCUMENT + "n: 19\n", parse)  # type: ignore[arg-type]
    assert parsed == []


def test_the_folder_stays_within_its_bytes(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    yamlcache.load(DOCUMENT)
    (entry,) = cache.iterdir()
    monkeypatch.setattr(yamlcache, "MAX_TOTAL", entry.stat().st_size * 4)
    for i in range(10):
        yamlcache.load(DOCUMENT + f"n: {i}\n")
    sizes = [p.stat().st_size for p in cache.iterdir()]
    assert sum(sizes) <= yamlcache.MAX_TOTAL
    assert len(sizes) >= 2


def test_a_text_over_the_bound_is_not_kept(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(yamlcache, "MAX_TEXT", len(DOCUMENT) - 1)
    yamlcache.load(DOCUMENT)
    assert not cache.exists() or not list(cache.iterdir())


def test_the_catalogue_loads_the_same_kept_or_afresh(monkeypatch: pytest.MonkeyPatch) -> None:
    scenarios = [ROOT / "scenarios"]
    monkeypatch.setenv(yamlcache.SWITCH_ENV, "off")
    afresh = loader.load(scenarios)
    monkeypatch.delenv(yamlcache.SWITCH_ENV)
    loader.load(scenarios)  # fills the cache
    kept = loader.load(scenarios)
    assert kept.scenarios == afresh.scenarios
    assert [s.line for s in kept.scenarios] == [s.line for s in afresh.scenarios]
    assert kept.problems == afresh.problems


def _plant(where: Path, kind: str, text: str, other: str) -> None:
    """An entry of ``kind`` at the name ``text``'s entry would have."""
    digest = hashlib.sha256(yamlcache._SALT + text.encode()).hexdigest()
    entry = where / f"{digest}.json"
    forged = yamlpos.load(other)  # another file's scenarios: what a planted entry would say
    body = json.dumps(
        {
            "text": digest,
            "value": forged.value,
            "marks": {yamlcache._key(p): list(forged.marks[p]) for p in forged.marks},
            "lines": forged.lines,
            "aliases": [],
        }
    ).encode()
    own = yamlcache._secret()
    assert own is not None
    deep = b"[" * 100_000 + b"]" * 100_000
    planted = {
        "unsealed": body,  # the format before seals
        "foreign-key": yamlcache._MAGIC + yamlcache._seal(b"k" * 32, digest, body) + b"\n" + body,
        "other-text": yamlcache._MAGIC
        + yamlcache._seal(own, "0" * 64, body)  # sealed for another text, renamed
        + b"\n"
        + body,
        "tampered": yamlcache._MAGIC
        + yamlcache._seal(own, digest, body)
        + b"\n"
        + body.replace(b'"lines":', b'"lines":1'),
        "deep-sealed": yamlcache._MAGIC + yamlcache._seal(own, digest, deep) + b"\n" + deep,
        "deep-unsealed": deep,
        "oversized": b" " * (yamlcache.MAX_BYTES + 1),
        "fifo": b"",
    }[kind]
    where.mkdir(parents=True, exist_ok=True)
    if kind == "fifo":
        os.mkfifo(entry)
    else:
        entry.write_bytes(planted)


PLANTED = [
    "unsealed",
    "foreign-key",
    "other-text",
    "tampered",
    "deep-sealed",
    "deep-unsealed",
    "oversized",
    "fifo",
]


@pytest.mark.parametrize("kind", PLANTED)
def test_a_planted_entry_is_a_miss_and_changes_no_verdict(cache: Path, kind: str) -> None:
    from harness import targets  # noqa: PLC0415
    from harness.seams.case import execute  # noqa: PLC0415

    folder = ROOT / "scenarios" / "agent-cli" / "codex"
    files = sorted(folder.glob("*.yaml"))
    texts = [f.read_text() for f in files]

    def verdicts() -> list[tuple[str, str, str]]:
        loaded = loader.load([folder])
        assert loaded.problems == ()
        target = targets.create("reference-inproc")
        return [(s.id, repr(s.expect), execute(s, target).status) for s in loaded.scenarios]

    with pytest.MonkeyPatch.context() as off:
        off.setenv(yamlcache.SWITCH_ENV, "off")
        fresh = verdicts()
    for i, text in enumerate(texts):
        if len(text) >= yamlcache.MIN_TEXT:
            _plant(cache, kind, text, texts[(i + 1) % len(texts)])
    parsed, parse = _counting()
    for text in texts:
        if len(text) >= yamlcache.MIN_TEXT:
            yamlcache.load(text, parse)  # type: ignore[arg-type]
    assert len(parsed) == sum(len(t) >= yamlcache.MIN_TEXT for t in texts)  # every one a miss
    assert verdicts() == fresh
