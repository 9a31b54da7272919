"""
"Did you mean ...?" for a name that is not one of the known ones.

Misspelt keys, events, drivers, clause ids and tags are the commonest
mistakes in a hand-written scenario; naming the closest known name turns a
trip to the reference into a one-character fix.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable


def did_you_mean(word: object, known: Iterable[str]) -> str:
    """`` (did you mean 'x'?)`` for the closest known name, or ``""`` if none is close."""
    if not isinstance(word, str):
        return ""
    names = sorted(set(known))
    # Case is a common slip, and difflib weighs it like any other letter.
    close = [k for k in names if k.lower() == word.lower()][:1]
    close = close or difflib.get_close_matches(word, names, n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""
