"""
The scripted model API in process, for any client: no socket, the same bytes.

`answer` hands one request to the same `ScriptedModelAPI.handle` the loopback
server uses, so an in-process test and a subprocess test of one script see
the same bytes, and returns it as an `InProcessAnswer`: status and headers at
once, then a body that acts out the step.  A step's delay holds back the body
(headers come at once in process); a delay longer than the request's read
timeout raises ``TimeoutError`` once that timeout has passed, as a socket
would, or at once with ``virtual_time``, for a caller whose only clock is
that timeout (the reference models: a timeout kills the run, so waiting it
out changes nothing but the wall clock); a cut stream raises
``http.client.IncompleteRead`` after what was sent, as a dropped connection
does.  Only the standard library's exceptions are raised, so any client can
translate them as it translates a socket's: the harness's `harness.net`
transport does, and `providers_fake.api.respx_route` does for httpx clients.
"""

from __future__ import annotations

import http.client
import time
from collections.abc import Iterator
from dataclasses import dataclass

from providers_fake.api.fake import ScriptedModelAPI
from providers_fake.api.wire import Reply

ANTHROPIC_BASE_URL = "https://api.anthropic.com"
OPENAI_BASE_URL = "https://api.openai.com"
#: What the body raises when the client would have given up waiting for it.
GAVE_UP = "timed out (fake: delay beyond the read timeout)"


@dataclass(frozen=True)
class InProcessAnswer:
    """One `Reply` as a client in process receives it."""

    reply: Reply
    read_timeout: float | None = None
    virtual_time: bool = False

    @property
    def status(self) -> int:
        return self.reply.status

    @property
    def headers(self) -> list[tuple[str, str]]:
        return list(self.reply.headers)

    def waits(self) -> tuple[float, bool]:
        """How long the body is held back, and whether the client gives up first."""
        delay, limit = self.reply.delay, self.read_timeout
        if limit is not None and delay > limit:
            return (0.0 if self.virtual_time else limit), True
        return delay, False

    def parts(self) -> list[bytes]:
        reply = self.reply
        return list(reply.chunks) if reply.streaming else [reply.sent]

    def __iter__(self) -> Iterator[bytes]:
        """The body, after its delay; raises where a socket's reader would."""
        wait, gives_up = self.waits()
        if wait:
            time.sleep(wait)
        if gives_up:
            raise TimeoutError(GAVE_UP)
        yield from self.parts()
        if self.reply.cut:
            raise cut_short()


def cut_short() -> http.client.IncompleteRead:
    """The error of a body the fake cut (the connection dropped before its end)."""
    return http.client.IncompleteRead(b"")


def answer(
    fake: ScriptedModelAPI,
    method: str,
    target: str,
    headers: list[tuple[str, str]],
    body: bytes,
    *,
    read_timeout: float | None = None,
    virtual_time: bool = False,
) -> InProcessAnswer:
    """Answer one request (``target``: its path and query) from ``fake``."""
    reply = fake.handle(method, target, headers, body)
    return InProcessAnswer(reply, read_timeout, virtual_time)
