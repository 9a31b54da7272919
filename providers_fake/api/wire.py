"""
The transport-neutral answer both transports act out.

The Anthropic and OpenAI renderers produce a `Reply`; the loopback server and
the respx routes only send it.  Keeping the bytes decided in one place is what
makes "two transports, one script" true: a scenario cannot pass in process and
fail over a socket because the two paths rendered it differently.
"""

from __future__ import annotations

import json
from dataclasses import dataclass


@dataclass(frozen=True)
class Reply:
    """
    Status, headers and body chunks of one answer.

    ``streaming`` answers are sent chunk by chunk (one SSE event each) with
    chunked transfer encoding, flushed as they go.  ``delay`` is waited before
    the answer (before the body in process, where respx returns headers at
    once).  ``cut`` drops the connection after the chunks, without the final
    empty chunk: what a client sees when the server dies mid-stream; on a
    plain answer it drops it half way through the declared body.
    """

    status: int
    headers: tuple[tuple[str, str], ...]
    chunks: tuple[bytes, ...]
    streaming: bool = False
    delay: float = 0.0
    cut: bool = False

    @property
    def body(self) -> bytes:
        return b"".join(self.chunks)

    @property
    def sent(self) -> bytes:
        """What actually reaches the client of a plain answer (half of it when cut)."""
        body = self.body
        return body[: len(body) // 2] if self.cut and not self.streaming else body


def dumps(value: object) -> str:
    """Compact JSON, non-ASCII kept, like the real APIs."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def sse(event: str, data: object) -> bytes:
    """One server-sent event: ``event:`` line, one ``data:`` line, blank line."""
    return f"event: {event}\ndata: {dumps(data)}\n\n".encode()


def pieces(text: str, size: int = 24) -> list[str]:
    """`text` in deltas of at most `size` characters, as a model streams it."""
    return [text[start : start + size] for start in range(0, len(text), size)]


def json_reply(
    status: int,
    body: object,
    headers: tuple[tuple[str, str], ...],
    *,
    delay: float = 0.0,
    cut: bool = False,
) -> Reply:
    """
    A plain JSON answer; a `str` body is sent verbatim.

    Objects are written with Python's default separators (``", "``,
    ``": "``): Codex prints an HTTP error body as it received it, and the
    captures show the bytes of the fake behind them, which wrote them so.
    """
    data = body.encode() if isinstance(body, str) else json.dumps(body).encode()
    headers = (("content-type", "application/json"), *headers)
    return Reply(status, headers, (data,), streaming=False, delay=delay, cut=cut)


def merge_headers(
    defaults: tuple[tuple[str, str], ...], extra: tuple[tuple[str, str], ...]
) -> tuple[tuple[str, str], ...]:
    """`defaults` with every name in `extra` replaced (case-insensitively), then `extra`."""
    names = {name.lower() for name, _ in extra}
    return tuple((n, v) for n, v in defaults if n.lower() not in names) + extra
