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
cache is JSON (never pickle), and it checks itself: an entry holds the
digest of the text it came from and a seal (an HMAC-SHA256, under a key
made at random for this user and kept beside the folder, over that digest
and the entry's bytes); it is used only when the digest is the one of the
text just read and the seal holds, checked before its JSON is parsed.
Anything else (damaged, truncated, foreign, copied from another text or
another machine, planted) is a miss and the text is parsed afresh, so an
entry can never make a scenario say what its file does not.  Whoever can
read the key can forge an entry: it is the user's own, mode 0600.  A value
JSON cannot hold exactly (a YAML timestamp, binary) is not kept.  The
folder is bounded (`MAX_FILES` files, `MAX_TOTAL` bytes, the least recently
written dropped first; a text over `MAX_TEXT` is not kept), and
``HARNESS_CACHE=off`` turns the cache off.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import math
import os
import secrets
import tempfile
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

import yaml

from harness.catalogue import yamlpos
from harness.catalogue.bounded import read_regular
from harness.exceptions import Unreadable

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
_SALT = f"yamlpos {_SOURCE}; PyYAML {yaml.__version__}; format 2\n".encode()


def folder() -> Path:
    """Where kept documents go."""
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "structured-output-harness" / "yaml"


#: What starts every entry, before its seal.
_MAGIC = b"harness-yaml-cache 2 "
_SEAL_HEX = 64


def _key_file() -> Path:
    return folder().parent / "yaml.key"


def _secret() -> bytes | None:
    """This user's key for the seals, made on first use; None when it cannot be had."""
    where = _key_file()
    with contextlib.suppress(OSError, Unreadable):
        key = read_regular(where, 32)
        if len(key) == 32:
            return key
    key = secrets.token_bytes(32)
    try:
        where.parent.mkdir(parents=True, exist_ok=True)
        handle_fd, name = tempfile.mkstemp(dir=where.parent, suffix=".tmp")
        try:
            with os.fdopen(handle_fd, "wb") as out:
                out.write(key)
            os.replace(name, where)
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(name)
    except OSError:
        return None
    return key


def _seal(key: bytes, digest: str, body: bytes) -> bytes:
    return hmac.new(key, digest.encode() + b"\n" + body, hashlib.sha256).hexdigest().encode()


def enabled() -> bool:
    return os.environ.get(SWITCH_ENV, "").strip().lower() not in {"off", "0", "false", "no"}


def read(path: yamlpos.PathLike) -> yamlpos.Located:
    """`yamlpos.read`, with the cache in front of its parse."""
    return yamlpos.read(path, load)


def load(text: str, parse: Callable[[str], yamlpos.Located] = yamlpos.load) -> yamlpos.Located:
    """``parse(text)``, or what it gave for the same text before."""
    if not MIN_TEXT <= len(text) <= MAX_TEXT or not enabled():
        return parse(text)
    digest = hashlib.sha256(_SALT + text.encode("utf-8", "surrogatepass")).hexdigest()
    secret = _secret()
    if secret is None:
        return parse(text)
    where = folder() / f"{digest}.json"
    kept = _read(where, digest, secret)
    if kept is not None:
        return kept
    located = parse(text)  # raises YAMLProblem: nothing is kept
    _write(where, located, digest, secret)
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


def _read(where: Path, digest: str, secret: bytes) -> yamlpos.Located | None:
    try:
        data = read_regular(where, MAX_BYTES)
    except (OSError, Unreadable):
        return None
    start = len(_MAGIC) + _SEAL_HEX + 1
    if len(data) > MAX_BYTES or not data.startswith(_MAGIC) or data[start - 1 : start] != b"\n":
        return None
    body = data[start:]
    if not hmac.compare_digest(data[len(_MAGIC) : start - 1], _seal(secret, digest, body)):
        return None  # not sealed by this user for this text: load afresh
    try:
        kept = json.loads(body)
        marks, lines, aliases = kept["marks"], kept["lines"], kept["aliases"]
        if kept["text"] != digest or not (
            isinstance(marks, dict) and isinstance(lines, int) and isinstance(aliases, list)
        ):
            return None
        pairs = tuple((tuple(alias), tuple(anchor)) for alias, anchor in aliases)
        return yamlpos.Located(kept["value"], KeptMarks(marks), lines, pairs)
    except (ValueError, KeyError, TypeError, RecursionError):
        return None


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


def _write(where: Path, located: yamlpos.Located, digest: str, secret: bytes) -> None:
    if not _exact(located.value):
        return
    document = {
        "text": digest,
        "value": located.value,
        "marks": {_key(path): list(located.marks[path]) for path in located.marks},
        "lines": located.lines,
        "aliases": [list(pair) for pair in located.aliases],
    }
    body = json.dumps(document, separators=(",", ":")).encode()
    data = _MAGIC + _seal(secret, digest, body) + b"\n" + body
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
