"""
The scripted model API in process, for httpx clients: through respx, or
through a plain ``httpx.MockTransport`` (`transport`).

`install` adds one route to a ``respx.MockRouter`` that hands every request
under `base_url` to the same `ScriptedModelAPI.handle` the loopback server
uses, so an in-process test and a subprocess test of one script see the same
bytes.  respx resolves a response's headers synchronously, so a step's delay
holds back the body instead (``time.sleep`` for sync clients,
``asyncio.sleep`` for async ones, never blocking an event loop), and a cut
stream raises the ``httpx.RemoteProtocolError`` a dropped connection gives.
A delay longer than the request's read timeout raises ``httpx.ReadTimeout``
once that timeout has passed, as a client talking to a real socket would see;
with ``virtual_time`` it raises at once, for a caller whose only clock is that
timeout (the reference models: a timeout kills the run, so waiting it out
changes nothing but the wall clock).

`transport` is the same answer as a transport for one client, with no
respx: the harness's reference target uses it, so that respx (whose pytest
plugin would load in every test run of an environment the package is
installed in) is the project's test dependency only.

respx and httpx are imported here only, so the loopback path stays stdlib-only.
"""

from __future__ import annotations

import asyncio
import time

import httpx

from providers_fake.api.fake import ScriptedModelAPI

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Iterator

    import respx

    from providers_fake.api.wire import Reply

ANTHROPIC_BASE_URL = "https://api.anthropic.com"
OPENAI_BASE_URL = "https://api.openai.com"


class _ReplyStream(httpx.SyncByteStream, httpx.AsyncByteStream):
    """A `Reply`'s body for either kind of client, with its delay and its cut."""

    def __init__(self, reply: Reply, request: httpx.Request, virtual_time: bool = False) -> None:
        self._reply = reply
        self._request = request
        self._virtual = virtual_time
        timeout = request.extensions.get("timeout", {})
        read = timeout.get("read") if isinstance(timeout, dict) else None
        self._read_timeout: float | None = read if isinstance(read, (int, float)) else None

    def _waits(self) -> tuple[float, bool]:
        """How long the body is held back, and whether the client gives up first."""
        delay, limit = self._reply.delay, self._read_timeout
        if limit is not None and delay > limit:
            return (0.0 if self._virtual else limit), True
        return delay, False

    def _timeout(self) -> httpx.ReadTimeout:
        return httpx.ReadTimeout(
            "timed out (fake: delay beyond the read timeout)", request=self._request
        )

    def _parts(self) -> list[bytes]:
        reply = self._reply
        return list(reply.chunks) if reply.streaming else [reply.sent]

    def _cut(self) -> httpx.RemoteProtocolError:
        return httpx.RemoteProtocolError(
            "peer closed connection without sending complete message body (fake: cut)"
        )

    def __iter__(self) -> Iterator[bytes]:
        wait, gives_up = self._waits()
        if wait:
            time.sleep(wait)
        if gives_up:
            raise self._timeout()
        yield from self._parts()
        if self._reply.cut:
            raise self._cut()

    async def __aiter__(self) -> AsyncIterator[bytes]:
        wait, gives_up = self._waits()
        if wait:
            await asyncio.sleep(wait)
        if gives_up:
            raise self._timeout()
        for part in self._parts():
            yield part
        if self._reply.cut:
            raise self._cut()


def to_httpx(
    fake: ScriptedModelAPI, request: httpx.Request, virtual_time: bool = False
) -> httpx.Response:
    """Answer one httpx request from `fake` (the side effect behind `install`)."""
    path = request.url.raw_path.decode("ascii")
    headers = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in request.headers.raw]
    reply = fake.handle(request.method, path, headers, request.read())
    stream = _ReplyStream(reply, request, virtual_time)
    return httpx.Response(reply.status, headers=list(reply.headers), stream=stream)


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


def transport(
    fake: ScriptedModelAPI, base_url: str, *, virtual_time: bool = False
) -> httpx.MockTransport:
    """
    A transport answering every request under `base_url` from `fake`, as
    `install` routes them; a request anywhere else cannot connect, as on a
    machine with no network.
    """
    base = base_url.rstrip("/")

    def handler(request: httpx.Request) -> httpx.Response:
        if not str(request.url).startswith(base):
            raise httpx.ConnectError(f"{request.url}: not the fake's {base}", request=request)
        return to_httpx(fake, request, virtual_time)

    return httpx.MockTransport(handler)
