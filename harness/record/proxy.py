"""
The recording proxy: a loopback HTTP server between a CLI and its model API.

The CLI's base URL points here; each request is sent on to the upstream API
with `harness.net` and the answer is streamed back chunk by chunk as it arrives, so
an SSE answer reaches the CLI at the pace the model wrote it, while a copy is
kept for the scenario.  A connection the upstream drops mid-answer is dropped
towards the CLI the same way (no final chunk), which is the stream cut the
scenario must reproduce.

What is kept (`Exchange`) holds no credential: request headers are not kept
at all, and the values of the credential headers the CLI sent are collected
apart (`Proxy.secrets`) only so the writer can prove the file is free of them.
Sizes are bounded (request and answer bodies, number of exchanges) and every
upstream wait has a timeout; the server binds 127.0.0.1 on an OS-chosen port.
"""

from __future__ import annotations

import contextlib
import re
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType

from harness import net
from harness.adaptor.environment import looks_secret

LOOPBACK = "127.0.0.1"
#: Bounds: one request body, one answer body, and the exchanges of one recording.
MAX_REQUEST_BYTES = 32 * 1024 * 1024
MAX_ANSWER_BYTES = 32 * 1024 * 1024
MAX_EXCHANGES = 500
#: Headers that belong to one connection, never forwarded (RFC 9110 section 7.6.1).
_HOP_BY_HOP = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-authenticate",
        "proxy-authorization",
        "proxy-connection",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
        "host",
        "content-length",
        "accept-encoding",
        "content-encoding",
    }
)
#: Request headers that carry the user's credentials.
CREDENTIAL_HEADERS = frozenset({"authorization", "x-api-key", "api-key", "cookie"})
#: Request headers of the APIs' own protocol, which carry no credential.
PROTOCOL_HEADERS = frozenset(
    {"accept", "accept-language", "anthropic-beta", "anthropic-version", "content-type"}
    | {"openai-beta", "originator", "user-agent", "version", "x-app", "connection"}
)
#: Answer headers a CLI acts on (retries), kept for the script.
KEPT_ANSWER_HEADERS = ("retry-after", "retry-after-ms", "x-should-retry", "content-type")


def credential_header(name: str, value: str) -> bool:
    """
    Whether a request header may carry a credential: a credential header, one
    whose name says so (``x-my-token``), or any header outside the APIs' own
    protocol whose value looks like a token (a custom header a CLI was told
    to send: ``ANTHROPIC_CUSTOM_HEADERS``).
    """
    if name in CREDENTIAL_HEADERS or looks_secret(name):
        return True
    if name in PROTOCOL_HEADERS or name.startswith("x-stainless-"):
        return False
    return _TOKEN.fullmatch(value) is not None


#: A value shaped like a token: long, one word, letters and digits.
_TOKEN = re.compile(r"(?=[^\s]*[A-Za-z])(?=[^\s]*[0-9])[^\s]{12,}")


@dataclass(frozen=True)
class Exchange:
    """
    One request the CLI made and what the upstream answered.

    ``body`` is the upstream's answer: read to its end even when the CLI
    hung up first (`_drain`), else as far as the CLI read it; ``cut`` says the upstream
    (or the bound on answer size) ended it before its end; ``failure`` names
    why there was no upstream answer at all (the CLI got a 400 it does not retry).
    """

    index: int
    method: str
    path: str
    request_body: bytes
    status: int
    headers: tuple[tuple[str, str], ...]
    body: bytes
    cut: bool
    seconds_to_headers: float
    failure: str | None = None

    def header(self, name: str) -> str | None:
        return next((v for k, v in self.headers if k == name), None)


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, proxy: Proxy) -> None:
        super().__init__((LOOPBACK, 0), _Handler)
        self.proxy = proxy
        self.connections: set[socket.socket] = set()
        self.lock = threading.Lock()

    def handle_error(self, request: object, client_address: object) -> None:
        """Silent: a CLI closing its connection is not the recording's business."""


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "harness-record"
    timeout = 60
    server: _Server

    def setup(self) -> None:
        super().setup()
        with self.server.lock:
            self.server.connections.add(self.connection)

    def finish(self) -> None:
        try:
            super().finish()
        finally:
            with self.server.lock:
                self.server.connections.discard(self.connection)

    def log_message(self, format: str, *args: object) -> None:
        """Silent: the exchanges are the log."""

    def do_POST(self) -> None:
        self.server.proxy.relay(self)

    do_GET = do_PUT = do_DELETE = do_PATCH = do_HEAD = do_POST

    def read_body(self) -> bytes | None:
        """The request body, or None when it is larger than the bound."""
        if self.headers.get("transfer-encoding", "").lower() == "chunked":
            data = bytearray()
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    self.rfile.readline()
                    return bytes(data)
                if len(data) + size > MAX_REQUEST_BYTES:
                    return None
                data += self.rfile.read(size)
                self.rfile.readline()
        length = int(self.headers.get("content-length") or 0)
        return None if length > MAX_REQUEST_BYTES else self.rfile.read(length)


class Proxy:
    """
    Relays ``http://127.0.0.1:PORT/PATH`` to ``upstream + PATH`` while the context is open.

    `exchanges` lists what was relayed, in arrival order.
    """

    def __init__(self, upstream: str, *, timeout: float) -> None:
        self.upstream = upstream.rstrip("/")
        self.timeout = timeout
        self._lock = threading.Lock()
        #: Signalled when no relay is under way (`_relaying` is 0).
        self._quiet = threading.Condition(self._lock)
        self._relaying = 0
        self._exchanges: list[Exchange] = []
        self._secrets: set[str] = set()
        self.overflow: str | None = None
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self._client: net.Client | None = None
        self.port = 0

    @property
    def url(self) -> str:
        return f"http://{LOOPBACK}:{self.port}"

    @property
    def exchanges(self) -> list[Exchange]:
        """
        What was relayed, once the relays under way are done: a CLI that exits
        as it hangs up leaves its last answer being read on (`_drain`).  The
        wait is bounded; a relay still under way after it shows as unanswered.
        """
        with self._lock:
            self._quiet.wait_for(lambda: self._relaying == 0, timeout=_DRAIN_SECONDS + 1)
            return sorted(self._exchanges, key=lambda e: e.index)

    @property
    def secrets(self) -> frozenset[str]:
        """The credential values the CLI sent (kept in memory only, to check the file)."""
        with self._lock:
            return frozenset(self._secrets)

    def __enter__(self) -> Proxy:
        limits = net.Timeout(connect=15.0, read=self.timeout, write=30.0)
        # A net.Client reads no proxy settings from the environment and follows no
        # redirect: the recording is of this upstream only.
        self._client = net.Client(timeout=limits)
        self._server = _Server(self)
        self.port = int(self._server.server_address[1])
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.05},
            name=f"harness-record:{self.port}",
            daemon=True,
        )
        self._thread.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        server, self._server = self._server, None
        if server is not None:
            server.shutdown()
            with server.lock:
                for connection in list(server.connections):
                    with contextlib.suppress(OSError):
                        connection.shutdown(socket.SHUT_RDWR)
            server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        if self._client is not None:
            self._client.close()

    # -- one request ------------------------------------------------------------------

    def _number(self) -> int | None:
        with self._lock:
            index = len(self._exchanges)
            if index >= MAX_EXCHANGES:
                self.overflow = f"more than {MAX_EXCHANGES} requests"
                return None
            # The slot is taken now, so concurrent requests keep their arrival order.
            self._exchanges.append(
                Exchange(
                    index, "", "", b"", 0, (), b"", False, 0.0, "no answer before the run ended"
                )
            )
            return index

    def _keep(self, exchange: Exchange) -> None:
        with self._lock:
            self._exchanges[exchange.index] = exchange

    def relay(self, handler: _Handler) -> None:
        """Forward one request and stream its answer back, keeping a copy."""
        with self._lock:
            self._relaying += 1
        try:
            self._relay(handler)
        finally:
            with self._lock:
                self._relaying -= 1
                self._quiet.notify_all()

    def _relay(self, handler: _Handler) -> None:
        index = self._number()
        body = handler.read_body()
        if index is None or body is None:
            if body is None:
                self.overflow = f"a request body larger than {MAX_REQUEST_BYTES} bytes"
            handler.close_connection = True
            _plain(handler, 413, _REFUSED.replace(b"did not answer", b"refused a request (bound)"))
            return
        headers = []
        for name, value in handler.headers.items():
            lower = name.lower()
            if lower in _HOP_BY_HOP:
                continue
            if credential_header(lower, value):
                with self._lock:
                    self._secrets.add(value)
                    self._secrets.add(value.split(" ", 1)[-1])  # a bearer token alone
            headers.append((name, value))
        headers.append(("accept-encoding", "identity"))
        started = time.monotonic()
        assert self._client is not None
        request = self._client.build_request(
            handler.command, self.upstream + handler.path, headers=headers, content=body
        )
        try:
            response = self._client.send(request, stream=True)
        except net.HTTPError as error:
            reason = f"{type(error).__name__}: {error}"
            self._keep(
                Exchange(index, handler.command, handler.path, body, 400, (), b"", False,
                         time.monotonic() - started, reason)
            )  # fmt: skip
            # A status no CLI retries: the recording is over, and the user should hear why soon.
            handler.close_connection = True
            _plain(handler, 400, _REFUSED)
            return
        try:
            waited = time.monotonic() - started
            kept = tuple(
                (k.lower(), v) for k, v in response.headers.items()
                if k.lower() in KEPT_ANSWER_HEADERS
            )  # fmt: skip
            data, cut = self._stream(handler, response)
        finally:
            response.close()
        self._keep(
            Exchange(index, handler.command, handler.path, body, response.status_code, kept,
                     data, cut, waited)
        )  # fmt: skip

    def _stream(self, handler: _Handler, response: net.Response) -> tuple[bytes, bool]:
        """Send the answer on as it arrives; (what was sent, whether it was cut)."""
        handler.send_response(response.status_code)
        for name, value in response.headers.items():
            if name.lower() not in _HOP_BY_HOP:
                handler.send_header(name, value)
        handler.send_header("transfer-encoding", "chunked")
        handler.end_headers()
        data = bytearray()
        cut = False
        chunks = response.iter_bytes()
        try:
            for chunk in chunks:
                if len(data) + len(chunk) > MAX_ANSWER_BYTES:
                    self.overflow = f"an answer larger than {MAX_ANSWER_BYTES} bytes"
                    cut = True
                    break
                data += chunk
                if chunk:
                    handler.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                    handler.wfile.flush()
        except net.HTTPError:
            cut = True  # the upstream dropped the connection (or went silent too long)
        except (BrokenPipeError, ConnectionResetError):
            handler.close_connection = True
            return _drain(chunks, data)
        try:
            if cut:
                handler.close_connection = True
                handler.wfile.flush()
                handler.connection.shutdown(socket.SHUT_RDWR)
            else:
                handler.wfile.write(b"0\r\n\r\n")
                handler.wfile.flush()
        except OSError:
            handler.close_connection = True
        return bytes(data), cut


#: How long an answer the CLI hung up on is read on (each read bounded by the timeout too).
_DRAIN_SECONDS = 5.0


def _drain(chunks: Iterator[bytes], data: bytearray) -> tuple[bytes, bool]:
    """
    Read the rest of an answer the CLI hung up on; (the answer, whether it was cut).

    A CLI may act on a tool call before the stream's last events and exit,
    so how much of the answer it read depends on the machine's load.  What is
    recorded is the upstream's answer, so the rest is read for a little
    while; an answer that does not end by then is kept as far as the CLI
    read it (and the step replays that cut).
    """
    seen = bytes(data)
    until = time.monotonic() + _DRAIN_SECONDS
    try:
        for chunk in chunks:
            if len(data) + len(chunk) > MAX_ANSWER_BYTES or time.monotonic() > until:
                return seen, False
            data += chunk
    except net.HTTPError:
        return seen, False
    return bytes(data), False


_REFUSED = (
    b'{"type": "error", "error": {"type": "invalid_request_error", '
    b'"message": "harness record: the upstream did not answer"}}'
)


def _plain(handler: _Handler, status: int, body: bytes) -> None:
    with contextlib.suppress(OSError):
        handler.send_response(status)
        handler.send_header("content-type", "application/json")
        handler.send_header("x-should-retry", "false")
        handler.send_header("content-length", str(len(body)))
        handler.end_headers()
        handler.wfile.write(body)
        handler.wfile.flush()
