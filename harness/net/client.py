"""
The client: a base URL, default timeouts, and a transport that answers.

`Transport` is the seam: `MockTransport` hands each request to a function in
process (the reference services, the scripted model APIs, a test's broken
service), `harness.net.wire.HTTPTransport` sends it over a socket.  The
client is the same either way, so the code under test is driven by exactly
the code that would drive a real server.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Iterator, Mapping
from types import TracebackType
from typing import Any, Protocol

from harness.net.message import URL, Request, Response, Timeout, translated


class Transport(Protocol):
    """Sends a request and returns its answer, the body possibly still to come."""

    def handle_request(self, request: Request) -> Response: ...

    def close(self) -> None: ...


class MockTransport:
    """
    Answers every request with ``handler(request)``, in process.  What the
    handler raises is translated as a socket's error would be (a
    ``ConnectionRefusedError`` is a `ConnectError`), so a handler may speak
    the standard library's exceptions.
    """

    def __init__(self, handler: Callable[[Request], Response]) -> None:
        self.handler = handler

    def handle_request(self, request: Request) -> Response:
        try:
            return self.handler(request)
        except Exception as error:
            found = translated(error, "connect" if isinstance(error, ConnectionError) else "read")
            if found is None or found is error:
                raise
            raise found from error

    def close(self) -> None:
        pass


#: A client's timeouts unless it is given others: 5 s each wait, as httpx's.
DEFAULT_TIMEOUT = Timeout()
#: "Use the client's timeout" (None would mean no timeout at all).
_DEFAULT: Any = object()
Fields = Iterable[tuple[str, str]] | Mapping[str, str] | None


class Client:
    """
    Requests relative to ``base_url`` through ``transport`` (a socket's by
    default).  Never reads proxy settings from the environment and never
    follows a redirect: what is asked is what is reached.
    """

    def __init__(
        self,
        *,
        base_url: str = "",
        transport: Transport | None = None,
        timeout: Timeout | float | None = DEFAULT_TIMEOUT,
    ) -> None:
        self.base_url = base_url
        self.timeout = Timeout.of(timeout)
        if transport is None:
            from harness.net.wire import HTTPTransport  # noqa: PLC0415 - sockets only when used

            transport = HTTPTransport()
        self.transport = transport

    def _url(self, url: str) -> URL:
        if "://" in url or not self.base_url:
            return URL(url)
        return URL(self.base_url.rstrip("/") + "/" + url.lstrip("/"))

    def build_request(
        self,
        method: str,
        url: str,
        *,
        content: bytes | None = None,
        json: Any = None,
        headers: Fields = None,
        timeout: Timeout | float | None = _DEFAULT,
    ) -> Request:
        chosen = self.timeout if timeout is _DEFAULT else timeout
        return Request(
            method, self._url(url), content=content, json=json, headers=headers, timeout=chosen
        )

    def send(self, request: Request, *, stream: bool = False) -> Response:
        """The answer to ``request``; read whole unless ``stream`` (then close it)."""
        response = self.transport.handle_request(request)
        response.request = request
        if not stream:
            try:
                response.read()
            finally:
                response.close()
        return response

    def request(
        self,
        method: str,
        url: str,
        *,
        content: bytes | None = None,
        json: Any = None,
        headers: Fields = None,
        timeout: Timeout | float | None = _DEFAULT,
    ) -> Response:
        request = self.build_request(
            method, url, content=content, json=json, headers=headers, timeout=timeout
        )
        return self.send(request)

    @contextlib.contextmanager
    def stream(
        self,
        method: str,
        url: str,
        *,
        content: bytes | None = None,
        json: Any = None,
        headers: Fields = None,
        timeout: Timeout | float | None = _DEFAULT,
    ) -> Iterator[Response]:
        """The answer with its body still to read, closed when the block ends."""
        request = self.build_request(
            method, url, content=content, json=json, headers=headers, timeout=timeout
        )
        response = self.send(request, stream=True)
        try:
            yield response
        finally:
            response.close()

    def get(self, url: str, **options: Any) -> Response:
        return self.request("GET", url, **options)

    def head(self, url: str, **options: Any) -> Response:
        return self.request("HEAD", url, **options)

    def post(self, url: str, **options: Any) -> Response:
        return self.request("POST", url, **options)

    def close(self) -> None:
        self.transport.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()
