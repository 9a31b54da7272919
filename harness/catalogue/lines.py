"""
Lines as the binaries mean them.

``str.splitlines()`` (and httpx's ``iter_lines``) end a line at eleven
characters, U+2028, U+2029, U+0085 and the ASCII separators among them;
the CLIs do not.  A JSON-lines stream (a CLI's ``--json`` output, an SDK's
stdin, a fake's records) ends a line at "\\n" only, so a model's answer
holding a raw U+2028 stays inside its line; a server-sent-events stream
ends a line at CR, LF or CRLF only (the HTML standard's event-stream
grammar).  Every reader of real or reference output splits here.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

_SSE_END = re.compile(r"\r\n|\r|\n")
#: What JSON counts as whitespace (RFC 8259): a line of only these is blank.
JSON_SPACE = " \t\r\n"


def json_lines(text: str) -> list[str]:
    """The lines of a JSON-lines text: ended by "\\n" only; no empty last line."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def sse_lines(chunks: Iterable[str]) -> Iterator[str]:
    """
    The lines of an event stream arriving in ``chunks`` (``iter_text``),
    ended by CR, LF or CRLF only; a CR at the end of a chunk waits for the
    next, which may start with its LF.
    """
    pending = ""
    for chunk in chunks:
        pending += chunk
        parts = _SSE_END.split(pending[:-1] if pending.endswith("\r") else pending)
        rest = "\r" if pending.endswith("\r") else ""
        pending = parts.pop() + rest
        yield from parts
    if pending:
        yield from _SSE_END.split(pending.removesuffix("\r"))
