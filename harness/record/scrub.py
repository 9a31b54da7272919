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

import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

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


def hide_text(text: str, secrets: tuple[str, ...]) -> str:
    """`text` with every secret, and everything shaped like an API key, replaced."""
    for secret in secrets:
        text = text.replace(secret, REDACTED)
    return _KEY_SHAPES.sub(REDACTED, text)


def hide_secrets(document: dict[str, Any], secrets: tuple[str, ...]) -> dict[str, Any]:
    hidden: dict[str, Any] = walk(document, lambda text: hide_text(text, secrets))
    return hidden


def assert_clean(text: str, secrets: tuple[str, ...], where: str) -> None:
    """Refuse to write `text` if any secret survived (in any spelling YAML may give it)."""
    for secret in secrets:
        spellings = {secret, json.dumps(secret)[1:-1]}
        if any(s in text for s in spellings):
            raise CannotWrite(where, "", "a credential would be written; nothing was written")
    if _KEY_SHAPES.search(text):
        raise CannotWrite(
            where, "", "an API-key-shaped value would be written; nothing was written"
        )
