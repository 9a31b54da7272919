"""
Requests over a socket, with the standard library's ``http.client``.

Why ``http.client`` and not httpx or urllib3: installing the harness puts its
dependencies' pytest plugins into every pytest run of the environment, and
httpx brought anyio's (about 0.2 s of every unrelated project's run,
docs/benchmarks.md); the standard library brings none.  Neither httpx nor
urllib3 bounds a whole exchange (each bounds one read, so a server that
trickles its status line a byte at a time gets a fresh timeout per byte);
here every socket wait goes through `_Clock`, which cuts it to the time the
exchange has left (`Timeout.exchange`), status line and headers included.

One idle connection per origin is kept for the next request (a recording
talks to one API many times over TLS); one that the server has closed
meanwhile is seen before it is used (it reads as ready) and replaced.
"""

from __future__ import annotations

import http.client
import io
import select
import socket
import ssl
import threading
import time
from collections.abc import Iterator
from typing import Any

from harness.exceptions import ConnectError, UnsupportedProtocol
from harness.net.message import Request, Response, Timeout, translated

#: The most of a body read from the socket at once.
CHUNK = 64 * 1024
_PORTS = {"http": 80, "https": 443}


class _Clock:
    """The timeouts of the exchange under way on one connection, and its end."""

    def __init__(self) -> None:
        self.timeout = Timeout()
        self.end: float | None = None

    def start(self, timeout: Timeout) -> None:
        self.timeout = timeout
        self.end = None if timeout.exchange is None else time.monotonic() + timeout.exchange

    def wait(self, kind: str) -> float | None:
        """Seconds the next ``kind`` wait may take; TimeoutError once the exchange is over."""
        each: float | None = getattr(self.timeout, kind)
        if self.end is None:
            return each
        left = self.end - time.monotonic()
        if left <= 0:
            raise TimeoutError("the exchange took longer than its budget")
        return left if each is None else min(each, left)


class _TimedReader(io.RawIOBase):
    """The socket's input for ``http.client``: every read waits what the clock allows."""

    def __init__(self, owner: _TimedSocket) -> None:
        self.owner = owner

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        self.owner.sock.settimeout(self.owner.clock.wait("read"))
        return self.owner.sock.recv_into(buffer)

    def close(self) -> None:
        if not self.closed:
            self.owner.released()
        super().close()


class _TimedSocket:
    """
    A socket whose every wait, read or write, is set from the clock first.
    Like a socket's own ``makefile``, a reader keeps it open: ``http.client``
    closes the connection of a last answer before that answer's body is read.
    """

    def __init__(self, sock: socket.socket, clock: _Clock) -> None:
        self.sock = sock
        self.clock = clock
        self.readers = 0
        self.closing = False

    def makefile(self, mode: str, *args: object, **kwargs: object) -> io.BufferedReader:
        self.readers += 1
        return io.BufferedReader(_TimedReader(self))

    def released(self) -> None:
        self.readers -= 1
        if self.closing and self.readers <= 0:
            self.sock.close()

    def sendall(self, data: bytes) -> None:
        self.sock.settimeout(self.clock.wait("write"))
        self.sock.sendall(data)

    def fileno(self) -> int:
        return self.sock.fileno()

    def close(self) -> None:
        self.closing = True
        if self.readers <= 0:
            self.sock.close()


class _Connection(http.client.HTTPConnection):
    """``http.client``'s connection, made and used through `_Clock`'s waits."""

    def __init__(self, host: str, port: int, tls: ssl.SSLContext | None) -> None:
        super().__init__(host, port)
        self.tls = tls
        self.clock = _Clock()

    def connect(self) -> None:
        sock = socket.create_connection((self.host, self.port), self.clock.wait("connect"))
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if self.tls is not None:
            sock.settimeout(self.clock.wait("connect"))
            sock = self.tls.wrap_socket(sock, server_hostname=self.host)
        self.sock = _TimedSocket(sock, self.clock)

    def stale(self) -> bool:
        """Whether the idle connection was closed (or written to) by the server."""
        if self.sock is None:
            return True
        readable, _, _ = select.select([self.sock], [], [], 0)
        return bool(readable)


class HTTPTransport:
    """HTTP/1.1 over TCP (TLS for https), no proxies, no redirects, no compression."""

    def __init__(self, tls: ssl.SSLContext | None = None) -> None:
        self._tls = tls
        self._idle: dict[tuple[str, str, int], _Connection] = {}
        self._lock = threading.Lock()

    def _context(self) -> ssl.SSLContext:
        # Made on the first https request: loading the CA bundle is not free.
        with self._lock:
            if self._tls is None:
                self._tls = ssl.create_default_context()
            return self._tls

    def _connection(self, origin: tuple[str, str, int]) -> _Connection:
        with self._lock:
            idle = self._idle.pop(origin, None)
        if idle is not None and not idle.stale():
            return idle
        if idle is not None:
            idle.close()
        scheme, host, port = origin
        return _Connection(host, port, self._context() if scheme == "https" else None)

    def _release(self, origin: tuple[str, str, int], connection: _Connection) -> None:
        with self._lock:
            if origin not in self._idle:
                self._idle[origin] = connection
                return
        connection.close()

    def handle_request(self, request: Request) -> Response:
        url = request.url
        if url.scheme not in _PORTS or not url.host:
            raise UnsupportedProtocol(f"{url}: not an http or https URL", request=request)
        origin = (url.scheme, url.host, url.port or _PORTS[url.scheme])
        connection = self._connection(origin)
        connection.clock.start(request.timeout)
        phase = "connect"
        try:
            if connection.sock is None:
                connection.connect()
            phase = "write"
            names = {name.lower() for name, _ in request.headers.raw}
            connection.putrequest(
                request.method,
                url.target,
                skip_host="host" in names,
                skip_accept_encoding="accept-encoding" in names,
            )
            for name, value in request.headers.raw:
                connection.putheader(name, value)
            sends_body = request.content or request.method in {"POST", "PUT", "PATCH"}
            if sends_body and "content-length" not in names:
                connection.putheader("content-length", str(len(request.content)))
            connection.endheaders(request.content or None)
            phase = "read"
            answer = connection.getresponse()
        except Exception as error:
            connection.close()
            found = translated(error, phase)
            if isinstance(error, ssl.SSLError) and phase == "connect":
                found = ConnectError(f"{url.host}: TLS: {error}", request=request)
            if found is None or found is error:
                raise
            raise found from error
        response = Response(
            answer.status,
            headers=answer.getheaders(),
            stream=_body(answer),
            request=request,
        )

        def release() -> None:
            if answer.isclosed() and not answer.will_close:
                self._release(origin, connection)
            else:
                connection.close()

        response.on_close(release)
        return response

    def close(self) -> None:
        with self._lock:
            idle, self._idle = list(self._idle.values()), {}
        for connection in idle:
            connection.close()


def _body(answer: http.client.HTTPResponse) -> Iterator[bytes]:
    """The body as it arrives; a body shorter than its length said is a cut one."""
    while True:
        chunk = answer.read1(CHUNK)
        if not chunk:
            break
        yield chunk
    if answer.length:
        raise http.client.IncompleteRead(b"", answer.length)
    # read1 leaves a body of known length open once it is all read: closed here, the
    # connection can be kept for the next request.
    answer.close()
