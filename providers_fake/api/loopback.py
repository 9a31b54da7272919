"""
The scripted model API over a real socket, for CLIs running as processes.

The real ``claude`` and ``codex`` binaries (and any adaptor's own HTTP stack)
can only be pointed at a URL, so the fake is served by a stdlib HTTP/1.1
server on 127.0.0.1.  The port is chosen by the OS (port 0), so any number of
servers can run side by side, as under ``pytest -n 2``; nothing is ever bound
beyond loopback.  `LoopbackServer` is a context manager: leaving it stops the
server and closes connections a client kept alive, even after an error.

Stdlib only, so it can run wherever the fake CLIs run.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from providers_fake.api.fake import ScriptedModelAPI

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Sequence
    from types import TracebackType

    from providers_fake.api.script import Script
    from providers_fake.api.wire import Reply

LOOPBACK = "127.0.0.1"


class HeldClock:
    """
    How long the fake has held back an answer (a step's ``delay``): the time
    during which at least one reply was waiting, overlapping holds counted
    once.  This is the clock a caller's timeout runs on when the client is a
    real CLI: it counts what the script makes the CLI wait for, never how long
    the CLI itself takes to start or to think, which depends on the machine.
    """

    def __init__(self, now: Callable[[], float] = time.monotonic) -> None:
        self._now = now
        self._lock = threading.Lock()
        self._holding = 0
        self._since = 0.0
        self._total = 0.0

    @contextlib.contextmanager
    def holding(self) -> Iterator[None]:
        with self._lock:
            if self._holding == 0:
                self._since = self._now()
            self._holding += 1
        try:
            yield
        finally:
            with self._lock:
                self._holding -= 1
                if self._holding == 0:
                    self._total += self._now() - self._since

    def held(self) -> float:
        """Seconds during which some answer was held back, so far."""
        with self._lock:
            running = self._now() - self._since if self._holding else 0.0
            return self._total + running


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, fake: ScriptedModelAPI) -> None:
        super().__init__((LOOPBACK, 0), _Handler)
        self.fake = fake
        self.connections: set[socket.socket] = set()
        self.connections_lock = threading.Lock()
        self.clock = HeldClock()

    def handle_error(self, request: object, client_address: object) -> None:
        """Silent: a client resetting its connection (a CLI killed or retrying) is no fault."""


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive and chunked streams, like the real APIs
    server_version = "fake-model-api"
    timeout = 30  # an idle kept-alive connection gives its thread back eventually
    server: _Server

    def setup(self) -> None:
        super().setup()
        with self.server.connections_lock:
            self.server.connections.add(self.connection)

    def finish(self) -> None:
        try:
            super().finish()
        finally:
            with self.server.connections_lock:
                self.server.connections.discard(self.connection)

    def log_message(self, format: str, *args: object) -> None:
        """Silent: the recording is the log, and stderr belongs to the test runner."""

    def do_POST(self) -> None:
        self._serve()

    do_GET = do_PUT = do_DELETE = do_PATCH = do_HEAD = do_POST

    def _read_body(self) -> bytes:
        if self.headers.get("transfer-encoding", "").lower() == "chunked":
            data = b""
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    self.rfile.readline()
                    return data
                data += self.rfile.read(size)
                self.rfile.readline()
        return self.rfile.read(int(self.headers.get("content-length") or 0))

    def _serve(self) -> None:
        body = self._read_body()
        reply = self.server.fake.handle(self.command, self.path, list(self.headers.items()), body)
        if reply.delay:
            with self.server.clock.holding():
                time.sleep(reply.delay)
        try:
            self._send(reply)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True  # the client gave up (e.g. its own timeout)

    def _send(self, reply: Reply) -> None:
        self.send_response(reply.status)
        for name, value in reply.headers:
            self.send_header(name, value)
        if reply.streaming:
            self.send_header("transfer-encoding", "chunked")
            self.end_headers()
            for chunk in reply.chunks:
                self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                self.wfile.flush()
            if not reply.cut:
                self.wfile.write(b"0\r\n\r\n")
        else:
            body = reply.body
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(reply.sent)
        self.wfile.flush()
        if reply.cut:
            self.close_connection = True
            self.connection.shutdown(socket.SHUT_RDWR)


class LoopbackServer:
    """
    `fake` served on ``http://127.0.0.1:PORT`` while the context is open.

    ``url`` is the base URL for ``ANTHROPIC_BASE_URL``; Codex wants
    ``url + "/v1"`` as its provider's ``base_url``.
    """

    def __init__(
        self, fake: ScriptedModelAPI | Script | Sequence[object] | dict[str, object]
    ) -> None:
        self.fake = fake if isinstance(fake, ScriptedModelAPI) else ScriptedModelAPI(fake)
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self._port: int | None = None

    @property
    def port(self) -> int:
        """The OS-chosen port (still known after `close`, for messages)."""
        if self._port is None:
            raise RuntimeError("the loopback server was never started")
        return self._port

    @property
    def url(self) -> str:
        return f"http://{LOOPBACK}:{self.port}"

    def held(self) -> float:
        """Seconds the fake has held back answers so far (`HeldClock`); 0 once closed."""
        server = self._server
        return 0.0 if server is None else server.clock.held()

    def __enter__(self) -> LoopbackServer:
        self._server = _Server(self.fake)
        self._port = int(self._server.server_address[1])
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.05},
            name=f"fake-model-api:{self.port}",
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
        self.close()

    def close(self) -> None:
        """Stop serving, close kept-alive connections, release the port; idempotent."""
        server, self._server = self._server, None
        if server is None:
            return
        server.shutdown()
        with server.connections_lock:
            for connection in list(server.connections):
                with contextlib.suppress(OSError):  # already closed by the client
                    connection.shutdown(socket.SHUT_RDWR)
        server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
