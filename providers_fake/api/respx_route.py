"""
The scripted model API for httpx clients, through respx.

`install` adds one route to a ``respx.MockRouter`` that hands every request
under `base_url` to `providers_fake.api.inprocess.answer`, and acts the
answer out in httpx's terms: the body waits with ``time.sleep`` for sync
clients and ``asyncio.sleep`` for async ones (never blocking an event loop),
a client that would give up raises ``httpx.ReadTimeout``, and a cut stream
raises the ``httpx.RemoteProtocolError`` a dropped connection gives.

httpx and respx are not dependencies of the package (the harness speaks
`harness.net`); this module is for a user's own httpx code, and it is the
only one that imports them.
"""

from __future__ import annotations

import asyncio
import time

import httpx

from providers_fake.api.fake import ScriptedModelAPI
from providers_fake.api.inprocess import ANTHROPIC_BASE_URL, GAVE_UP, InProcessAnswer, answer

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Iterator

    import respx


class _ReplyStream(httpx.SyncByteStream, httpx.AsyncByteStream):
    """An answer's body for either kind of httpx client, with its delay and its cut."""

    def __init__(self, answered: InProcessAnswer, request: httpx.Request) -> None:
        self._answer = answered
        self._request = request

    def _timeout(self) -> httpx.ReadTimeout:
        return httpx.ReadTimeout(GAVE_UP, request=self._request)

    def _cut(self) -> httpx.RemoteProtocolError:
        return httpx.RemoteProtocolError(
            "peer closed connection without sending complete message body (fake: cut)"
        )

    def __iter__(self) -> Iterator[bytes]:
        wait, gives_up = self._answer.waits()
        if wait:
            time.sleep(wait)
        if gives_up:
            raise self._timeout()
        yield from self._answer.parts()
        if self._answer.reply.cut:
            raise self._cut()

    async def __aiter__(self) -> AsyncIterator[bytes]:
        wait, gives_up = self._answer.waits()
        if wait:
            await asyncio.sleep(wait)
        if gives_up:
            raise self._timeout()
        for part in self._answer.parts():
            yield part
        if self._answer.reply.cut:
            raise self._cut()


def to_httpx(
    fake: ScriptedModelAPI, request: httpx.Request, virtual_time: bool = False
) -> httpx.Response:
    """Answer one httpx request from `fake` (the side effect behind `install`)."""
    timeout = request.extensions.get("timeout", {})
    read = timeout.get("read") if isinstance(timeout, dict) else None
    answered = answer(
        fake,
        request.method,
        request.url.raw_path.decode("ascii"),
        [(k.decode("latin-1"), v.decode("latin-1")) for k, v in request.headers.raw],
        request.read(),
        read_timeout=read if isinstance(read, (int, float)) else None,
        virtual_time=virtual_time,
    )
    stream = _ReplyStream(answered, request)
    return httpx.Response(answered.status, headers=answered.headers, stream=stream)


def install(
    router: respx.MockRouter,
    fake: ScriptedModelAPI,
    base_url: str = ANTHROPIC_BASE_URL,
    *,
    virtual_time: bool = False,
) -> respx.Route:
    """
    Route every request under `base_url` on `router` to `fake`.

    Install once per base URL (``ANTHROPIC_BASE_URL``, ``OPENAI_BASE_URL`` or
    your own); requests to paths the fake does not serve are still answered
    (404) and recorded as unexpected rather than escaping the mock.
    """

    def side_effect(request: httpx.Request) -> httpx.Response:
        return to_httpx(fake, request, virtual_time)

    route: respx.Route = router.route(url__startswith=base_url.rstrip("/")).mock(
        side_effect=side_effect
    )
    return route
