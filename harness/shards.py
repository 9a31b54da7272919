"""
Splitting one run across CI machines, and putting the reports back together.

``harness run --shard K/N`` runs the scenarios whose id hashes to K among N
(SHA-256 of the id, so a scenario stays in its shard whatever is added to the
catalogue, and every target of a scenario runs in the same shard, which the
model-api differential needs).  Beside its reports, a shard writes
`MANIFEST` (`shard.json`): what the run was (`Run`: the catalogue by the
digest of its files, where it lay, the targets, the selection, the baselines,
whether commands were allowed, the digest of the harness that ran it), every
case's result, and the digest of those results.

``harness merge`` trusts none of it.  Each file it reads is a regular file
under `MAX_BYTES`, parsed with a depth limit (`read`); the manifests must be
the N shards of one run of one catalogue by one harness (`check`); the
catalogue is found by its digest, wherever the merge runs (`locate`); and the
results must partition the run's cases exactly, each consistent with its
verdict, recomputed from the recorded outcome and the scenario's expectation
(`verify`).  Anything else is one line naming the file and what is wrong.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from harness.exceptions import Problem

#: The file a shard writes beside its reports.
MANIFEST = "shard.json"
#: Bumped when the manifest changes shape.
VERSION = 2
#: The largest N a run may be split into.
MAX_SHARDS = 1000
#: The largest manifest read (a whole run's results, outcomes included, is
#: about 20 MB for the project's own `make run`).
MAX_BYTES = 128 * 1024 * 1024
#: The deepest nesting of a manifest's JSON (results are a few levels deep;
#: outcomes hold the targets' JSON values, bounded by the catalogue's).
MAX_DEPTH = 64
_SPEC = re.compile(r"([1-9][0-9]*)/([1-9][0-9]*)")


def parse(spec: str) -> tuple[int, int]:
    """``"K/N"`` as (K, N); ValueError with the reason if it is not one."""
    found = _SPEC.fullmatch(spec.strip())
    if found is None:
        raise ValueError(f"--shard {spec!r}: give K/N, e.g. 1/4")
    k, n = int(found[1]), int(found[2])
    if k > n or n > MAX_SHARDS:
        raise ValueError(f"--shard {spec!r}: K must be 1..N and N at most {MAX_SHARDS}")
    return k, n


def belongs(scenario: str, shard: tuple[int, int] | None) -> bool:
    """Whether ``scenario`` runs in ``shard`` (every scenario does without one)."""
    if shard is None:
        return True
    k, n = shard
    digest = hashlib.sha256(scenario.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") % n == k - 1


def catalogue_digest(paths: Iterable[Path]) -> str:
    """
    The identity of a catalogue: SHA-256 over every file under ``paths``
    (name relative to its path, and content), so the same files give the
    same digest in a checkout, in the wheel's bundled copy or on another
    machine, and an edited scenario another.  Files the scenarios reach
    outside ``paths`` (a shared schema) are not in it; the merge's own
    check of each verdict against the scenarios as loaded again covers them.
    """
    digest = hashlib.sha256()
    for root in paths:
        files = sorted(root.rglob("*")) if root.is_dir() else [root]
        for file in files:
            if not file.is_file():
                continue
            name = file.relative_to(root).as_posix() if root.is_dir() else file.name
            content = file.read_bytes()
            digest.update(f"{name}\0{len(content)}\0".encode())
            digest.update(content)
        digest.update(b"\1")
    return digest.hexdigest()


@cache
def harness_digest() -> str:
    """The identity of this harness: SHA-256 over its modules and schemas."""
    package = Path(__file__).resolve().parent
    digest = hashlib.sha256()
    for file in sorted([*package.rglob("*.py"), *package.glob("schemas/**/*.json")]):
        if "bundled" in file.relative_to(package).parts:
            continue
        content = file.read_bytes()
        digest.update(f"{file.relative_to(package).as_posix()}\0{len(content)}\0".encode())
        digest.update(content)
    return digest.hexdigest()


@dataclass(frozen=True)
class Run:
    """What a run was, all its shards alike: the run ``harness merge`` stands in for."""

    #: The catalogue's paths as given, from the run's folder (for the reader).
    paths: tuple[str, ...]
    #: `catalogue_digest` of those paths: the catalogue's identity.
    catalogue: str
    #: Where the catalogue lay (absolute), and whether it was the bundled one.
    where: tuple[str, ...]
    bundled: bool
    targets: tuple[str, ...]
    #: The baselines folder as given from the run's folder, and where it lay.
    baselines: str | None
    baselines_at: str | None
    allow_exec: bool
    #: The selection: pytest's ``-k`` and ``-m`` (``--tag``), and ``--harness-cli``.
    keyword: str = ""
    markers: str = ""
    clis: tuple[str, ...] = ()
    #: `harness_digest` of the harness that ran it.
    harness: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "paths": list(self.paths),
            "catalogue": self.catalogue,
            "where": list(self.where),
            "bundled": self.bundled,
            "targets": list(self.targets),
            "baselines": self.baselines,
            "baselines_at": self.baselines_at,
            "allow_exec": self.allow_exec,
            "keyword": self.keyword,
            "markers": self.markers,
            "clis": list(self.clis),
            "harness": self.harness,
        }

    @classmethod
    def from_json(cls, raw: dict[str, Any]) -> Run:
        def strings(key: str) -> tuple[str, ...]:
            if not isinstance(raw[key], list) or not all(isinstance(x, str) for x in raw[key]):
                raise TypeError(f"run.{key}: not a list of strings")
            return tuple(raw[key])

        def text(key: str) -> str:
            if not isinstance(raw[key], str):
                raise TypeError(f"run.{key}: not a string")
            return str(raw[key])

        baselines, baselines_at = raw["baselines"], raw["baselines_at"]
        if not all(b is None or isinstance(b, str) for b in (baselines, baselines_at)):
            raise TypeError("run.baselines: not a string")
        if not isinstance(raw["allow_exec"], bool) or not isinstance(raw["bundled"], bool):
            raise TypeError("run.allow_exec, run.bundled: not booleans")
        return cls(
            strings("paths"),
            text("catalogue"),
            strings("where"),
            raw["bundled"],
            strings("targets"),
            baselines,
            baselines_at,
            raw["allow_exec"],
            text("keyword"),
            text("markers"),
            strings("clis"),
            text("harness"),
        )


def _cases_digest(results: Sequence[str], abouts: Sequence[str]) -> str:
    """SHA-256 of the results and what was seen of the targets, as the manifest holds them."""
    document = {
        "results": [json.loads(r) for r in results],
        "abouts": [json.loads(a) for a in abouts],
    }
    canonical = json.dumps(document, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Manifest:
    """
    One shard: which of how many, the run, its results (as the engine encodes
    them) and what it saw of each target (`harness.targets.announce.About`).
    """

    shard: tuple[int, int]
    run: Run
    results: tuple[str, ...]
    abouts: tuple[str, ...] = ()

    def to_json(self) -> str:
        document = {
            "version": VERSION,
            "shard": f"{self.shard[0]}/{self.shard[1]}",
            "run": self.run.to_json(),
            "results": [json.loads(r) for r in self.results],
            "abouts": [json.loads(a) for a in self.abouts],
            "cases": _cases_digest(self.results, self.abouts),
        }
        return json.dumps(document, ensure_ascii=False, sort_keys=True, indent=1) + "\n"


def read_bounded(path: Path, limit: int = MAX_BYTES) -> bytes:
    """
    The bytes of ``path``, a regular file of at most ``limit`` bytes; OSError
    or ValueError saying why not (a device, a FIFO, a folder: refused before
    it is opened for reading, so nothing blocks or streams forever).
    """
    status = os.stat(path)
    if not stat.S_ISREG(status.st_mode):
        raise ValueError("not a regular file")
    if status.st_size > limit:
        raise ValueError(f"{status.st_size} bytes, more than the {limit} a manifest may have")
    descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    with os.fdopen(descriptor, "rb") as file:
        if not stat.S_ISREG(os.fstat(file.fileno()).st_mode):
            raise ValueError("not a regular file")  # swapped since the first look
        data = file.read(limit + 1)
    if len(data) > limit:
        raise ValueError(f"more than the {limit} bytes a manifest may have")
    return data


def depth(value: object) -> int:
    """How deep ``value`` nests (a scalar is 0), without recursion."""
    deepest, stack = 0, [(value, 0)]
    while stack:
        node, level = stack.pop()
        deepest = max(deepest, level)
        if isinstance(node, dict):
            stack += [(v, level + 1) for v in node.values()]
        elif isinstance(node, list):
            stack += [(v, level + 1) for v in node]
    return deepest


def load_json(path: Path) -> Any:
    """A bounded manifest's JSON; ValueError with the reason when it is not one."""
    try:
        data = json.loads(read_bounded(path).decode("utf-8"))
    except RecursionError:
        raise ValueError(f"nested deeper than {MAX_DEPTH}") from None
    except UnicodeDecodeError as error:
        raise ValueError(f"not UTF-8: {error.reason}") from None
    except json.JSONDecodeError as error:
        raise ValueError(f"not JSON: {error}") from None
    if depth(data) > MAX_DEPTH:
        raise ValueError(f"nested deeper than {MAX_DEPTH}")
    return data


def read(folder: Path) -> tuple[Manifest | None, Problem | None]:
    """The manifest in a shard's report folder, or the problem with it."""
    path = folder / MANIFEST
    if not os.path.lexists(path):
        why = f"no {MANIFEST}: not the reports of a `harness run --shard K/N`"
        return None, Problem(str(folder), 1, 1, "<folder>", why)
    try:
        data = load_json(path)
    except (OSError, ValueError) as error:
        why = error.strerror if isinstance(error, OSError) and error.strerror else str(error)
        return None, Problem(str(path), 1, 1, "<document>", f"unreadable: {why}")
    try:
        if not isinstance(data, dict):
            raise TypeError("not an object")
        if data["version"] != VERSION:
            raise ValueError(f"version {data['version']!r}, not {VERSION}")
        if not isinstance(data["run"], dict):
            raise TypeError("run: not an object")
        if not isinstance(data["results"], list) or not isinstance(data["abouts"], list):
            raise TypeError("results, abouts: not lists")
        manifest = Manifest(
            parse(str(data["shard"])),
            Run.from_json(data["run"]),
            tuple(map(json.dumps, data["results"])),
            tuple(map(json.dumps, data["abouts"])),
        )
    except (KeyError, TypeError, ValueError) as error:
        return None, Problem(str(path), 1, 1, "<document>", f"not a shard manifest: {error}")
    if data.get("cases") != _cases_digest(manifest.results, manifest.abouts):
        why = "the results do not match their digest: edited after the run"
        return None, Problem(str(path), 1, 1, "cases", why)
    return manifest, None


def check(manifests: list[tuple[Path, Manifest]]) -> Problem | None:
    """Whether ``manifests`` are the N shards of one run, each once, by this harness."""
    first_path, first = manifests[0]
    n = first.shard[1]
    seen: dict[int, Path] = {}
    for path, manifest in manifests:
        where = str(path / MANIFEST)
        if manifest.run.harness != harness_digest():
            why = "made by another harness than this one (its modules differ): merge with that one"
            return Problem(where, 1, 1, "run.harness", why)
        if manifest.run.catalogue != first.run.catalogue:
            why = (
                f"a shard of another catalogue ({manifest.run.catalogue[:12]}) than "
                f"{first_path}'s ({first.run.catalogue[:12]})"
            )
            return Problem(where, 1, 1, "run.catalogue", why)
        mine = (manifest.run.targets, manifest.run.baselines, manifest.run.allow_exec)
        selection = (
            manifest.run.paths,
            manifest.run.keyword,
            manifest.run.markers,
            manifest.run.clis,
        )
        theirs = (first.run.targets, first.run.baselines, first.run.allow_exec)
        chosen = (first.run.paths, first.run.keyword, first.run.markers, first.run.clis)
        if mine != theirs or selection != chosen or manifest.shard[1] != n:
            why = f"a shard of another run than {first_path} (paths, targets, options, N)"
            return Problem(where, 1, 1, "run", why)
        k = manifest.shard[0]
        if k in seen:
            why = f"shard {k}/{n} again (also in {seen[k]})"
            return Problem(where, 1, 1, "shard", why)
        seen[k] = path
    missing = [f"{k}/{n}" for k in range(1, n + 1) if k not in seen]
    if missing:
        return Problem(str(first_path / MANIFEST), 1, 1, "shard", f"missing {', '.join(missing)}")
    return None


def locate(run: Run, here: Path, bundled: Path, source: Path) -> tuple[Path, ...] | Problem:
    """
    The catalogue ``run`` ran, found by its digest wherever the merge runs:
    the bundled catalogue, the paths as given from ``here``, or where it lay.
    """
    candidates: list[tuple[Path, ...]] = []
    if run.bundled:
        candidates.append((bundled,))
    candidates.append(tuple(here / p for p in run.paths))
    candidates.append(tuple(Path(p) for p in run.where))
    for paths in candidates:
        if all(p.exists() for p in paths) and catalogue_digest(paths) == run.catalogue:
            return paths
    looked = ", ".join(" ".join(map(str, paths)) for paths in candidates)
    why = f"the catalogue {run.catalogue[:12]} the shards ran is not here (looked in {looked})"
    return Problem(str(source), 1, 1, "run.catalogue", why)


def verify(
    manifests: list[tuple[Path, Manifest]],
    expected: set[str],
    consistent: Callable[[dict[str, Any]], str | None],
) -> Problem | None:
    """
    Whether the shards' results partition ``expected`` (``scenario@target``
    case ids) exactly, each in the shard its scenario hashes to, and each
    consistent with its verdict (``consistent`` says why one is not).
    """
    where: dict[str, str] = {}
    for path, manifest in manifests:
        source = str(path / MANIFEST)
        for index, text in enumerate(manifest.results):
            record = json.loads(text)
            field = f"results[{index}]"
            try:
                case = f"{record['scenario']}@{record['target']}"
            except (KeyError, TypeError):
                return Problem(source, 1, 1, field, "not a case result")
            if case not in expected:
                return Problem(source, 1, 1, field, f"{case}: not a case of the run's catalogue")
            if case in where:
                return Problem(source, 1, 1, field, f"{case} again (also in {where[case]})")
            if not belongs(str(record["scenario"]), manifest.shard):
                k, n = manifest.shard
                return Problem(source, 1, 1, field, f"{case} does not belong to shard {k}/{n}")
            why = consistent(record)
            if why is not None:
                return Problem(source, 1, 1, field, f"{case}: {why}")
            where[case] = source
    gap = sorted(expected - where.keys())
    if gap:
        more = f" and {len(gap) - 1} more" if len(gap) > 1 else ""
        first = str(manifests[0][0] / MANIFEST)
        return Problem(first, 1, 1, "results", f"no shard has {gap[0]}{more}")
    return None
