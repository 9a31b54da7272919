"""
A service under test is held to a deadline per call and a size per answer.

A service that trickles its answer a byte at a time gets no fresh timeout per
read, one that answers without end is cut at `MAX_BODY`, and one whose JSON
holds NaN (which no report could print) is refused: each is one errored case
with its reason, and the run goes on.
"""

from __future__ import annotations

import contextlib
import re
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from harness.catalogue import loader
from harness.seams.case import execute
from harness.targets import HttpService
from harness.targets.http import MAX_BODY
from tests.peak import LIMIT_MIB, finish

HARNESS = Path(sys.executable).parent / "harness"
THRONG = Path(__file__).resolve().parent.parent / "scenarios" / "service-api" / "throng"

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


@pytest.mark.subprocess
@pytest.mark.parametrize(
    "answer",
    [_trickle_head, _endless_head, _endless],
    ids=["trickle-head", "endless-head", "endless"],
)
def test_a_run_against_a_misbehaving_service_stays_under_300_mib(answer: Answer) -> None:
    """The whole command, not just the call: its peak resident set, read by wait4."""
    argv = [str(HARNESS), "run", str(THRONG), "-k", "throng-format-absent", "--reports", ""]
    with _serving(answer) as url:
        process = subprocess.Popen(
            [*argv, "--target", f"http:{url}"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT
        )
        output, peak = finish(process, timeout=120)
    shown = output.decode(errors="replace")[-2000:]
    assert process.returncode == 1, shown  # the errored case fails the run, and nothing more
    assert re.search(r": 0 passed, 0 failed, [1-9]\d* errored, 0 skipped", shown), shown
    assert "Traceback" not in shown
    assert peak < LIMIT_MIB, f"{peak:.0f} MiB"
    print(f"peak {peak:.0f} MiB")
