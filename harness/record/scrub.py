"""
What never reaches a written scenario: secrets, per-run ids, and what the user names.

Three passes over the scenario document, each a pure function of it:

* `Volatile` replaces the ids and timestamps the upstream made up
  (``req_...``, ``msg_...``, UUIDs, ISO times) with numbered placeholders,
  the same placeholder for the same value everywhere, so the scripted error
  body and what the CLI printed from it still agree.
* `redact` applies ``--redact``: a JSON pointer (``/provider/model_script/0/tool``)
  names values to hide wherever they occur, any other argument is a regular
  expression; both become ``<redacted>``.
* `hide_secrets` replaces the credentials the CLI sent and anything shaped
  like an API key; `assert_clean` then proves the final text holds none of
  them, or nothing is written.
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any
from urllib.parse import quote, quote_plus

from harness.adaptor.environment import url_passwords
from harness.exceptions import CannotWrite

REDACTED = "<redacted>"
#: Shapes of credentials, whatever variable or header carried them.
_KEY_SHAPES = re.compile(
    r"\bsk-ant-[A-Za-z0-9_\-]{8,}|\bsk-(?:proj-)?[A-Za-z0-9_\-]{16,}"
    r"|(?<=Bearer )[A-Za-z0-9._\-]{8,}"
)
#: Ids and clocks a provider makes up per request (the fakes' own included).
_VOLATILE = re.compile(
    r"\b(?:req|msg|toolu|resp|call|fc|rs|srvtoolu)_[A-Za-z0-9_]{6,}"
    r"|\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b"
    r"|\b\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2})?"
)
#: Placeholders `Volatile` writes: the replay prints the fake's own id there instead.
#: (``<fake-api>`` and ``<work>``, the real target's masks of its port and folder, are
#: the same on replay, so they stay in an expectation.)
PLACEHOLDER = re.compile(r"<(?:id|time)-\d+>")
#: The shortest secret worth looking for (shorter ones would match ordinary words).
_SHORTEST_SECRET = 6


def walk(value: Any, change: Callable[[str], str]) -> Any:
    """`value` with `change` applied to every string in it, keys included."""
    if isinstance(value, str):
        return change(value)
    if isinstance(value, dict):
        return {change(k) if isinstance(k, str) else k: walk(v, change) for k, v in value.items()}
    if isinstance(value, list):
        return [walk(v, change) for v in value]
    return value


@dataclass
class Volatile:
    """Numbered placeholders for made-up ids and times, consistent across a document."""

    seen: dict[str, str] = field(default_factory=dict)

    def __call__(self, text: str) -> str:
        return _VOLATILE.sub(self._placeholder, text)

    def _placeholder(self, match: re.Match[str]) -> str:
        found = match.group(0)
        if found not in self.seen:
            kind = "time" if found[:4].isdigit() and "T" in found else "id"
            self.seen[found] = f"<{kind}-{len(self.seen) + 1}>"
        return self.seen[found]


def stable_prefix(text: str) -> str:
    """The part of `text` before its first id or time (stripped)."""
    cut = min(
        (m.start() for pattern in (_VOLATILE, PLACEHOLDER) for m in [pattern.search(text)] if m),
        default=len(text),
    )
    return text[:cut].rstrip()


def has_volatile(text: str) -> bool:
    return bool(_VOLATILE.search(text) or PLACEHOLDER.search(text))


# -- the user's own redactions ----------------------------------------------------------------


def redact(document: dict[str, Any], rules: Iterable[str]) -> dict[str, Any]:
    """``document`` with every ``--redact`` rule applied (see the module docstring)."""
    for rule in rules:
        if rule.startswith("/"):
            document = _redact_pointer(document, rule)
        else:
            try:
                pattern = re.compile(rule)
            except re.error as error:
                raise CannotWrite("--redact", rule, f"not a regular expression: {error}") from None
            document = walk(document, _substitute(pattern))
    return document


def _substitute(pattern: re.Pattern[str]) -> Callable[[str], str]:
    return lambda text: pattern.sub(REDACTED, text)


def _redact_pointer(document: dict[str, Any], pointer: str) -> dict[str, Any]:
    target: Any = document
    for raw in pointer[1:].split("/"):
        part = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(target, dict) and part in target:
            target = target[part]
        elif isinstance(target, list) and part.isdigit() and int(part) < len(target):
            target = target[int(part)]
        else:
            raise CannotWrite("--redact", pointer, "no such value in the scenario")
    strings = sorted({s for s in _leaves(target, str) if s}, key=len, reverse=True)
    numbers = {n for n in _leaves(target, (int, float)) if not isinstance(n, bool)}

    def hide_text(text: str) -> str:
        for value in strings:
            # The value may also sit inside JSON text (the result string of a CLI).
            text = text.replace(value, REDACTED).replace(json.dumps(value)[1:-1], REDACTED)
        for number in numbers:
            text = re.sub(rf"(?<![\d.]){re.escape(json.dumps(number))}(?![\d.])", REDACTED, text)
        return text

    def hide(value: Any) -> Any:
        if isinstance(value, (int, float)) and not isinstance(value, bool) and value in numbers:
            return REDACTED
        if isinstance(value, str):
            return hide_text(value)
        if isinstance(value, dict):
            return {hide_text(k): hide(v) for k, v in value.items()}
        if isinstance(value, list):
            return [hide(v) for v in value]
        return value

    hidden: dict[str, Any] = hide(document)
    return hidden


def _leaves(value: Any, kind: type | tuple[type, ...]) -> list[Any]:
    if isinstance(value, dict):
        return [leaf for item in value.values() for leaf in _leaves(item, kind)]
    if isinstance(value, list):
        return [leaf for item in value for leaf in _leaves(item, kind)]
    return [value] if isinstance(value, kind) else []


# -- secrets ----------------------------------------------------------------------------------


def secret_values(values: Iterable[str]) -> tuple[str, ...]:
    """The secrets worth looking for, longest first (so a longer one is replaced whole)."""
    kept = {v for v in values if len(v) >= _SHORTEST_SECRET}
    return tuple(sorted(kept, key=len, reverse=True))


def _base64_cores(secret: bytes) -> set[str]:
    """
    What any base64 text holding ``secret`` must contain, at each of the three
    alignments it can start at, standard and URL-safe: the characters its
    bytes alone decide (the first and last may mix with their neighbours').
    """
    cores = set()
    for offset in range(3):
        encoded = base64.b64encode(bytes(offset) + secret).decode().rstrip("=")
        start = -(-offset * 4 // 3)  # the characters the padding bytes touch
        core = encoded[start + 1 : -1] if offset else encoded[:-1]
        if len(core) >= _SHORTEST_SECRET:
            cores |= {core, core.replace("+", "-").replace("/", "_")}
    return cores


@lru_cache(maxsize=64)
def _spellings(secret: str) -> tuple[str, ...]:
    """The ways a secret is commonly written: as is, JSON-escaped, URL-encoded, base64."""
    found = {secret, json.dumps(secret)[1:-1], quote(secret, safe=""), quote_plus(secret)}
    found |= _base64_cores(secret.encode("utf-8", "surrogatepass"))
    return tuple(sorted(found, key=len, reverse=True))


def _piece_length(secret: str) -> int:
    """How long a piece of a secret must be to count as the secret (one half of it does)."""
    return min(len(secret), max(_SHORTEST_SECRET + 2, len(secret) // 3))


@lru_cache(maxsize=16)
def _pieces(secrets: tuple[str, ...]) -> re.Pattern[str] | None:
    """Every piece of every secret long enough to give it away, found overlapping."""
    windows = {
        s[i : i + _piece_length(s)] for s in secrets for i in range(len(s) - _piece_length(s) + 1)
    }
    if not windows:
        return None
    alternatives = "|".join(re.escape(w) for w in sorted(windows, key=len, reverse=True))
    return re.compile(f"(?=({alternatives}))")


def _hide_pieces(text: str, secrets: tuple[str, ...]) -> str:
    """
    ``text`` with every stretch made of pieces of a secret replaced: a secret
    split in two across fields (each half elsewhere) is hidden too.
    """
    pattern = _pieces(secrets)
    if pattern is None:
        return text
    covered: list[tuple[int, int]] = []
    for match in pattern.finditer(text):
        start, end = match.start(), match.start() + len(match.group(1))
        if covered and start <= covered[-1][1]:
            covered[-1] = (covered[-1][0], max(end, covered[-1][1]))
        else:
            covered.append((start, end))
    for start, end in reversed(covered):
        text = text[:start] + REDACTED + text[end:]
    return text


def hide_text(text: str, secrets: tuple[str, ...]) -> str:
    """
    `text` with every secret (as is, JSON-escaped, URL-encoded, base64, or a
    piece of it long enough to give it away), and everything shaped like an
    API key or a password in a URL, replaced.
    """
    for secret in secrets:
        for spelling in _spellings(secret):
            text = text.replace(spelling, REDACTED)
    text = _hide_pieces(text, secrets)
    return url_passwords(_KEY_SHAPES.sub(REDACTED, text))


def hide_secrets(document: dict[str, Any], secrets: tuple[str, ...]) -> dict[str, Any]:
    hidden: dict[str, Any] = walk(document, lambda text: hide_text(text, secrets))
    return hidden


def assert_clean(text: str, secrets: tuple[str, ...], where: str) -> None:
    """Refuse to write `text` if any secret survived (in any spelling YAML may give it)."""
    for secret in secrets:
        if any(s in text for s in _spellings(secret)) or _hide_pieces(text, (secret,)) != text:
            raise CannotWrite(where, "", "a credential would be written; nothing was written")
    if _KEY_SHAPES.search(text):
        raise CannotWrite(
            where, "", "an API-key-shaped value would be written; nothing was written"
        )
