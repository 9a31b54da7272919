"""
Composed YAML documents kept between runs, keyed by the text they came from.

Most of a catalogue load is YAML: libyaml composes nodes and `yamlpos`
builds values and positions from them, about half of the load, for files
that rarely change between two runs.  Like Python's own ``__pycache__``,
the result of a successful load is kept on disk and used again while the
text is the same: a JSON file per text under the user's cache
(``$XDG_CACHE_HOME/structured-output-harness/yaml``), named by the SHA-256
of the text, of `yamlpos`'s own source and of PyYAML's version, so a change
to any of them loads afresh.

Only what loaded cleanly is kept; a problem is found afresh each time.  The
cache is JSON (never pickle): a damaged or foreign file is ignored, not
executed.  A value JSON cannot hold exactly (a YAML timestamp, binary) is
not kept.  The folder is bounded (`MAX_FILES` files, `MAX_TOTAL` bytes, the
least recently written dropped first; a text over `MAX_TEXT` is not kept), and
``HARNESS_CACHE=off`` turns the cache off.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
import tempfile
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

import yaml

from harness.catalogue import yamlpos

#: The most texts kept; past it the least recently written go first.
MAX_FILES = 2000
#: What is kept when the folder is trimmed.
_KEEP = MAX_FILES * 3 // 4
#: The longest text kept (the catalogue's longest file is about 11 KB).
MAX_TEXT = 256 * 1024
#: The largest kept file (positions make it a few times its text).
MAX_BYTES = 16 * MAX_TEXT
#: All kept files together, at most.
MAX_TOTAL = 64 * 1024 * 1024
#: Texts shorter than this load faster than a cache file is read.
MIN_TEXT = 512
SWITCH_ENV = "HARNESS_CACHE"

_SOURCE = hashlib.sha256(Path(yamlpos.__file__).read_bytes()).hexdigest()
_SALT = f"yamlpos {_SOURCE}; PyYAML {yaml.__version__}; format 1\n".encode()


def folder() -> Path:
    """Where kept documents go."""
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "structured-output-harness" / "yaml"


def enabled() -> bool:
    return os.environ.get(SWITCH_ENV, "").strip().lower() not in {"off", "0", "false", "no"}


def read(path: yamlpos.PathLike) -> yamlpos.Located:
    """`yamlpos.read`, with the cache in front of its parse."""
    return yamlpos.read(path, load)


def load(text: str, parse: Callable[[str], yamlpos.Located] = yamlpos.load) -> yamlpos.Located:
    """``parse(text)``, or what it gave for the same text before."""
    if not MIN_TEXT <= len(text) <= MAX_TEXT or not enabled():
        return parse(text)
    key = hashlib.sha256(_SALT + text.encode("utf-8", "surrogatepass")).hexdigest()
    where = folder() / f"{key}.json"
    kept = _read(where)
    if kept is not None:
        return kept
    located = parse(text)  # raises YAMLProblem: nothing is kept
    _write(where, located)
    return located


class KeptMarks(Mapping[yamlpos.Path, tuple[int, int]]):
    """
    Positions read back from the cache, keyed as written (a path's JSON):
    turning every key back into a tuple would cost more than the few
    positions a load asks for.
    """

    def __init__(self, kept: dict[str, list[int]]) -> None:
        self._kept = kept

    def __getitem__(self, path: yamlpos.Path) -> tuple[int, int]:
        line, column = self._kept[_key(path)]
        return (line, column)

    def __iter__(self) -> Iterator[yamlpos.Path]:
        return (tuple(json.loads(key)) for key in self._kept)

    def __len__(self) -> int:
        return len(self._kept)


def _key(path: yamlpos.Path) -> str:
    return json.dumps(path, separators=(",", ":"))


def _read(where: Path) -> yamlpos.Located | None:
    try:
        with open(where, "rb") as handle:
            data = handle.read(MAX_BYTES + 1)
        if len(data) > MAX_BYTES:
            return None
        kept = json.loads(data)
        marks, lines, aliases = kept["marks"], kept["lines"], kept["aliases"]
        if not (isinstance(marks, dict) and isinstance(lines, int) and isinstance(aliases, list)):
            return None
        pairs = tuple((tuple(alias), tuple(anchor)) for alias, anchor in aliases)
        return yamlpos.Located(kept["value"], KeptMarks(marks), lines, pairs)
    except (OSError, ValueError, KeyError, TypeError):
        return None  # not there, or not ours: load afresh


def _exact(value: object) -> bool:
    """Whether ``value`` comes back from JSON as it went in."""
    kind = type(value)
    if kind is dict:
        return all(_exact(v) for v in value.values())  # type: ignore[attr-defined]
    if kind is list:
        return all(_exact(v) for v in value)  # type: ignore[attr-defined]
    if kind is float:
        return not math.isnan(value)  # type: ignore[arg-type]  # NaN != NaN: kept apart
    return kind in {str, int, bool, type(None)}


def _write(where: Path, located: yamlpos.Located) -> None:
    if not _exact(located.value):
        return
    document = {
        "value": located.value,
        "marks": {_key(path): list(located.marks[path]) for path in located.marks},
        "lines": located.lines,
        "aliases": [list(pair) for pair in located.aliases],
    }
    data = json.dumps(document, separators=(",", ":")).encode()
    if len(data) > MAX_BYTES:
        return
    with contextlib.suppress(OSError):  # a read-only or full disk only costs speed
        where.parent.mkdir(parents=True, exist_ok=True)
        handle, name = tempfile.mkstemp(dir=where.parent, suffix=".tmp")
        try:
            with os.fdopen(handle, "wb") as out:
                out.write(data)
            os.replace(name, where)  # whole or absent, even with runs side by side
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(name)  # only left when the write failed
        _trim(where.parent)


def _trim(cache: Path) -> None:
    """
    Keep the folder within `MAX_FILES` and `MAX_TOTAL`, the least recently
    written going first; past a bound it is brought down to three quarters.
    """
    entries = [(entry, _stat(entry)) for entry in os.scandir(cache)]
    total = sum(size for _, (_, size) in entries)
    if len(entries) <= MAX_FILES and total <= MAX_TOTAL:
        return
    entries.sort(key=lambda pair: pair[1][0])
    count = len(entries)
    for entry, (_, size) in entries:
        if count <= _KEEP and total <= MAX_TOTAL * 3 // 4:
            break
        with contextlib.suppress(OSError):
            os.unlink(entry.path)
        count, total = count - 1, total - size


def _stat(entry: os.DirEntry[str]) -> tuple[float, int]:
    """When ``entry`` was written, and its size (a file gone meanwhile: first, empty)."""
    try:
        info = entry.stat()
    except OSError:
        return (0.0, 0)
    return (info.st_mtime, info.st_size)


__all__ = [
    "MAX_FILES",
    "MAX_TEXT",
    "MAX_TOTAL",
    "SWITCH_ENV",
    "KeptMarks",
    "enabled",
    "folder",
    "load",
    "read",
]
