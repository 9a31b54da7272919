"""
A service under test is held to a deadline per call and a size per answer.

A service that trickles its answer a byte at a time gets no fresh timeout per
read, one that answers without end is cut at `MAX_BODY`, and one whose JSON
holds NaN (which no report could print) is refused: each is one errored case
with its reason, and the run goes on.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import pytest

from harness.catalogue import loader
from harness.seams.case import execute
from harness.targets import HttpService
from harness.targets.http import MAX_BODY

Answer = Callable[[socket.socket], None]


def _trickle(client: socket.socket) -> None:
    client.sendall(b"HTTP/1.1 202 Accepted\r\ncontent-type: application/json\r\n")
    client.sendall(b"content-length: 400\r\n\r\n")
    for _ in range(400):
        client.sendall(b" ")
        time.sleep(0.1)


def _trickle_head(client: socket.socket) -> None:
    # The status line and headers a byte at a time: each read is quick, the whole is not.
    for byte in b"HTTP/1.1 202 Accepted\r\ncontent-type: application/json\r\n" + b"x" * 400:
        client.sendall(bytes([byte]))
        time.sleep(0.1)


def _endless_head(client: socket.socket) -> None:
    # Slow enough that the deadline comes before the 100th field (which http.client
    # refuses as a protocol error: a head that size sent at once is not this case).
    client.sendall(b"HTTP/1.1 202 Accepted\r\n")
    for _ in range(4000):
        client.sendall(b"x-more: more\r\n")
        time.sleep(0.02)


def _endless(client: socket.socket) -> None:
    client.sendall(b"HTTP/1.1 202 Accepted\r\ncontent-type: application/json\r\n\r\n")
    block = b"[" * 65536
    for _ in range(2 * MAX_BODY // len(block)):
        client.sendall(block)


def _nan(client: socket.socket) -> None:
    body = b'{"sandboxId": NaN}'
    head = f"HTTP/1.1 202 Accepted\r\ncontent-length: {len(body)}\r\n\r\n".encode()
    client.sendall(head + body)


@contextmanager
def _serving(answer: Answer) -> Iterator[str]:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    stop = threading.Event()

    def loop() -> None:
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                client, _ = server.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            with client:
                client.recv(65536)
                with contextlib.suppress(OSError):  # the harness gave up: that is the point
                    answer(client)

    thread = threading.Thread(target=loop, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.getsockname()[1]}"
    finally:
        stop.set()
        server.close()
        thread.join(timeout=5)


@pytest.mark.parametrize(
    ("answer", "reason"),
    [
        (_trickle, "got no answer within 1.0 s"),
        (_trickle_head, "got no answer within 1.0 s"),
        (_endless_head, "got no answer within 1.0 s"),
        (_endless, f"answered more than {MAX_BODY} bytes"),
        (_nan, "NaN is not valid JSON"),
    ],
    ids=["trickle", "trickle-head", "endless-head", "endless", "nan"],
)
def test_a_misbehaving_service_is_one_errored_case(
    catalogue: loader.Loaded, answer: Answer, reason: str
) -> None:
    scenario = next(s for s in catalogue.scenarios if s.id == "throng-format-absent")
    with _serving(answer) as url:
        started = time.monotonic()
        result = execute(scenario, HttpService(f"http:{url}", url, grace=1.0))
        elapsed = time.monotonic() - started
    assert result.status == "errored"
    assert reason in (result.reason or "")
    assert elapsed < 20  # the trickle alone would take 40 s
    if answer in (_trickle, _trickle_head, _endless_head):
        assert elapsed < 4  # one deadline for the call, headers included
