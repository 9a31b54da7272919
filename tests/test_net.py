"""
`harness.net`, the harness's HTTP: what its callers rely on, over a real socket.

The reference models, the ``http:`` target and the recorder are tested through
it elsewhere (tests/test_service_api.py, test_safety_http.py, test_record.py,
and the fakes over loopback in test_fake_apis.py); these are the transport's
own promises: a connection kept for the next request and replaced when the
server closed it, every failure one of its error classes, a body read as it
arrives and decoded across chunk boundaries, and a whole-exchange deadline.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import pytest

from harness import net

Answer = Callable[[socket.socket, int], None]


@contextmanager
def _serving(answer: Answer) -> Iterator[tuple[str, list[int]]]:
    """A server answering each request with ``answer(client, n)``; yields (URL, connections)."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    server.settimeout(0.2)
    accepted: list[int] = []
    stop = threading.Event()

    def serve(client: socket.socket) -> None:
        with client:
            served = 0
            while not stop.is_set():
                head = b""
                while b"\r\n\r\n" not in head:
                    data = client.recv(65536)
                    if not data:
                        return
                    head += data
                try:
                    answer(client, served)
                except OSError:
                    return
                served += 1

    def loop() -> None:
        while not stop.is_set():
            try:
                client, _ = server.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            accepted.append(1)
            threading.Thread(target=serve, args=(client,), daemon=True).start()

    thread = threading.Thread(target=loop, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.getsockname()[1]}", accepted
    finally:
        stop.set()
        server.close()
        thread.join(timeout=5)


def _ok(body: bytes, *, close: bool = False) -> bytes:
    head = f"HTTP/1.1 200 OK\r\ncontent-length: {len(body)}\r\n"
    return (head + ("connection: close\r\n" if close else "") + "\r\n").encode() + body


def test_a_connection_is_kept_for_the_next_request_and_replaced_once_closed() -> None:
    def answer(client: socket.socket, served: int) -> None:
        client.sendall(_ok(b"one" if served == 0 else b"two"))
        if served == 1:
            client.shutdown(socket.SHUT_RDWR)  # the server drops the idle connection

    with _serving(answer) as (url, accepted), net.Client(base_url=url) as client:
        assert client.get("/").text == "one"
        assert client.get("/").text == "two"
        assert len(accepted) == 1  # kept alive
        time.sleep(0.1)
        assert client.get("/").text == "one"  # a fresh connection, not a failed request
        assert len(accepted) == 2


@pytest.mark.parametrize(
    ("wire", "error"),
    [
        (b"HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\nhalf", net.RemoteProtocolError),
        (b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n4\r\npart\r\n", None),
        (b"not http at all\r\n\r\n", net.RemoteProtocolError),
        (b"", net.RemoteProtocolError),
    ],
    ids=["short-body", "cut-chunks", "not-http", "hung-up"],
)
def test_a_broken_answer_is_one_error_class(wire: bytes, error: type[Exception] | None) -> None:
    def answer(client: socket.socket, served: int) -> None:
        client.sendall(wire)
        client.shutdown(socket.SHUT_RDWR)

    with _serving(answer) as (url, _), net.Client(base_url=url) as client:
        if error is None:  # the chunks so far arrive; the cut shows when the body ends
            with client.stream("GET", "/") as response:
                chunks = response.iter_bytes()
                assert next(chunks) == b"part"
                with pytest.raises(net.RemoteProtocolError):
                    next(chunks)
        else:
            with pytest.raises(error):
                client.get("/")


def test_a_refused_connection_and_a_foreign_scheme_are_errors_of_their_own() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with net.Client() as client:
        with pytest.raises(net.ConnectError):
            client.get(f"http://127.0.0.1:{port}/")
        with pytest.raises(net.UnsupportedProtocol):
            client.get("ftp://127.0.0.1/")


def test_the_exchange_deadline_covers_the_status_line() -> None:
    def answer(client: socket.socket, served: int) -> None:
        for byte in b"HTTP/1.1 200 OK\r\n":
            client.sendall(bytes([byte]))
            time.sleep(0.05)

    with _serving(answer) as (url, _), net.Client(base_url=url) as client:
        started = time.monotonic()
        with pytest.raises(net.ReadTimeout):
            client.get("/", timeout=net.Timeout(1.0, 1.0, 1.0, exchange=0.3))
        assert time.monotonic() - started < 0.6  # each byte alone would never time out


def test_text_is_decoded_across_chunks_by_the_charset() -> None:
    pieces = [b"\xe2\x80", b"\xa8|\xe9"]
    utf8 = net.Response(200, stream=pieces)
    # A character split between chunks comes whole; a byte that is no UTF-8 is replaced.
    assert list(utf8.iter_text()) == ["\u2028|", "\ufffd"]
    latin = net.Response(
        200, headers={"Content-Type": "text/plain; charset=latin-1"}, content=b"\xe9"
    )
    assert latin.text == "é"
    assert latin.headers["content-type"] == latin.headers.get("CONTENT-TYPE")


def test_headers_keep_order_and_join_a_repeated_name() -> None:
    headers = net.Headers([("Set-Cookie", "a"), ("x-one", "1"), ("set-cookie", "b")])
    assert headers["set-cookie"] == "a, b"
    assert list(headers) == ["set-cookie", "x-one"]
    assert headers.raw[0] == ("Set-Cookie", "a")
