"""
Splitting one run across CI machines, and putting the reports back together.

``harness run --shard K/N`` runs the scenarios whose id hashes to K among N
(SHA-256 of the id, so a scenario stays in its shard whatever is added to the
catalogue, and every target of a scenario runs in the same shard, which the
model-api differential needs).  Beside its reports, a shard writes
`MANIFEST` (`shard.json`): what the run was (paths, targets, baselines,
whether commands were allowed) and every case's result.  ``harness merge``
checks that the manifests are the N shards of one run and renders the
reports from all their results, as the one run would have: byte-identical
but for junit.xml's measured times.

Only plain JSON is read back; a manifest that does not parse or does not
fit is a usage error naming the file.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.exceptions import Problem

#: The file a shard writes beside its reports.
MANIFEST = "shard.json"
#: Bumped when the manifest changes shape.
VERSION = 1
#: The largest N a run may be split into.
MAX_SHARDS = 1000
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


@dataclass(frozen=True)
class Run:
    """What a run was, all its shards alike: the run ``harness merge`` stands in for."""

    paths: tuple[str, ...]
    targets: tuple[str, ...]
    baselines: str | None
    allow_exec: bool

    def to_json(self) -> dict[str, Any]:
        return {
            "paths": list(self.paths),
            "targets": list(self.targets),
            "baselines": self.baselines,
            "allow_exec": self.allow_exec,
        }


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
        }
        return json.dumps(document, ensure_ascii=False, sort_keys=True, indent=1) + "\n"


def read(folder: Path) -> tuple[Manifest | None, Problem | None]:
    """The manifest in a shard's report folder, or the problem with it."""
    path = folder / MANIFEST
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        why = f"no {MANIFEST}: not the reports of a `harness run --shard K/N`"
        return None, Problem(str(folder), 1, 1, "<folder>", why)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        return None, Problem(str(path), 1, 1, "<document>", f"unreadable: {error}")
    try:
        if data["version"] != VERSION:
            raise ValueError(f"version {data['version']!r}, not {VERSION}")
        raw = data["run"]
        run = Run(
            tuple(map(str, raw["paths"])),
            tuple(map(str, raw["targets"])),
            None if raw["baselines"] is None else str(raw["baselines"]),
            bool(raw["allow_exec"]),
        )
        manifest = Manifest(
            parse(str(data["shard"])),
            run,
            tuple(map(json.dumps, data["results"])),
            tuple(map(json.dumps, data["abouts"])),
        )
    except (KeyError, TypeError, ValueError) as error:
        return None, Problem(str(path), 1, 1, "<document>", f"not a shard manifest: {error}")
    return manifest, None


def check(manifests: list[tuple[Path, Manifest]]) -> Problem | None:
    """Whether ``manifests`` are the N shards of one run, each once."""
    first_path, first = manifests[0]
    n = first.shard[1]
    seen: dict[int, Path] = {}
    for path, manifest in manifests:
        if manifest.run != first.run or manifest.shard[1] != n:
            why = f"a shard of another run than {first_path} (paths, targets, options or N differ)"
            return Problem(str(path / MANIFEST), 1, 1, "run", why)
        k = manifest.shard[0]
        if k in seen:
            why = f"shard {k}/{n} again (also in {seen[k]})"
            return Problem(str(path / MANIFEST), 1, 1, "shard", why)
        seen[k] = path
    missing = [f"{k}/{n}" for k in range(1, n + 1) if k not in seen]
    if missing:
        return Problem(str(first_path / MANIFEST), 1, 1, "shard", f"missing {', '.join(missing)}")
    return None
