"""
A loopback HTTP server in a thread that answers with any ``harness.net`` handler.

It puts the in-process reference service (or a deliberately broken one) behind
a real socket, so the ``http:`` target is also tested over the wire and not
only through a mock transport.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from harness import net

Handle = Callable[[net.Request], net.Response]


def _base_url(address: object) -> str:
    """
    The URL of a bound IPv4 server: ``socketserver`` types the address for
    every socket family (a Unix path, a buffer), but this one is ``(host, port)``.
    """
    assert isinstance(address, tuple), address
    host, port = address[:2]
    assert isinstance(host, str), address
    assert isinstance(port, int), address
    return f"http://{host}:{port}"


def _handler(handle: Handle) -> type[BaseHTTPRequestHandler]:
    class Bridge(BaseHTTPRequestHandler):
        def _answer(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            body = self.rfile.read(length) if length else b""
            request = net.Request(
                self.command,
                _base_url(self.server.server_address) + self.path,
                content=body,
                headers=dict(self.headers.items()),
            )
            response = handle(request)
            content = response.read()
            self.send_response(response.status_code)
            for key, value in response.headers.items():
                if key.lower() not in {"content-length", "transfer-encoding"}:
                    self.send_header(key, value)
            self.send_header("content-length", str(len(content)))
            self.end_headers()
            self.wfile.write(content)

        do_GET = do_POST = _answer

        def log_message(self, format: str, *args: object) -> None:
            pass

    return Bridge


class _Quiet(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: object, client_address: object) -> None:
        pass  # a client that gave up on a slow answer is the point of some tests


@contextmanager
def serving(handle: Handle) -> Iterator[str]:
    """Serve ``handle`` on 127.0.0.1; yield the base URL; stop afterwards."""
    server = _Quiet(("127.0.0.1", 0), _handler(handle))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield _base_url(server.server_address)
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
