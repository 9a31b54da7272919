"""
The service-api conformance binding on the wire: JSON over HTTP with httpx.

A service under test is reached by base URL.  Every exchange is one JSON
request and one JSON answer; the binding (see `harness.seams.service.throng` and `.t3`)
decides which paths are called and what the answers mean.  This module only
turns transport trouble into one clear reason: a service that is down, too
slow, or answers with something that is not JSON raises `ServiceFailed`, the
case is recorded as ``errored`` and the run goes on.  Any JSON answer, with
any status, is data for the comparison, never an error of the harness.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass
from types import TracebackType
from typing import Any

import httpcore
import httpx

from harness.catalogue.jsonvalue import JSONError, parse_exact
from harness.exceptions import ServiceFailed

#: Seconds a service may take beyond the scenario's own turn timeout.
GRACE = 5.0
_SHOWN = 200
#: The largest answer read from a service (the binding's answers are a few KB).
MAX_BODY = 8 * 1024 * 1024


@dataclass(frozen=True)
class Reply:
    """One answer of the service: its HTTP status and its decoded JSON body."""

    status: int
    body: Any


class _Deadline(threading.local):
    """When the exchange under way must be over (``time.monotonic``), if one is."""

    at: float | None = None

    def left(self, timeout: float | None) -> float | None:
        if self.at is None:
            return timeout
        left = self.at - time.monotonic()
        if left <= 0:
            raise httpcore.ReadTimeout("the exchange took longer than its budget")
        return left if timeout is None else min(timeout, left)


class _DeadlineStream(httpcore.NetworkStream):
    """A socket whose every read and write waits no longer than the exchange may last."""

    def __init__(self, inner: httpcore.NetworkStream, deadline: _Deadline) -> None:
        self.inner = inner
        self.deadline = deadline

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self.inner.read(max_bytes, self.deadline.left(timeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self.inner.write(buffer, self.deadline.left(timeout))

    def close(self) -> None:
        self.inner.close()

    def start_tls(
        self,
        ssl_context: Any,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore.NetworkStream:
        tls = self.inner.start_tls(ssl_context, server_hostname, self.deadline.left(timeout))
        return _DeadlineStream(tls, self.deadline)

    def get_extra_info(self, info: str) -> Any:
        return self.inner.get_extra_info(info)


class _DeadlineBackend(httpcore.NetworkBackend):
    """
    httpx bounds each read, not an exchange: a service that trickles its
    status line and headers a byte at a time would get a fresh timeout per
    byte.  Its connections are made here, so every wait is cut to the time
    the exchange has left, headers included.
    """

    def __init__(self, deadline: _Deadline) -> None:
        self.inner = httpcore.SyncBackend()
        self.deadline = deadline

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Any = None,
    ) -> httpcore.NetworkStream:
        stream = self.inner.connect_tcp(
            host, port, self.deadline.left(timeout), local_address, socket_options
        )
        return _DeadlineStream(stream, self.deadline)

    def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Any = None
    ) -> httpcore.NetworkStream:
        stream = self.inner.connect_unix_socket(path, self.deadline.left(timeout), socket_options)
        return _DeadlineStream(stream, self.deadline)

    def sleep(self, seconds: float) -> None:
        self.inner.sleep(seconds)


class Connection:
    """One scenario's conversation with one service; closes its client on exit."""

    def __init__(self, client: httpx.Client, where: str, grace: float = GRACE) -> None:
        self.client = client
        self.where = where
        self.grace = grace
        self._deadline = _Deadline()

    @classmethod
    def to(cls, url: str, grace: float = GRACE) -> Connection:
        """A connection over the network to the service at ``url``, each exchange bounded."""
        transport = httpx.HTTPTransport()
        connection = cls(httpx.Client(base_url=url, transport=transport), url, grace)
        # httpx has no hook for the socket layer but its pool's network backend.
        transport._pool = httpcore.ConnectionPool(
            network_backend=_DeadlineBackend(connection._deadline)
        )
        return connection

    def __enter__(self) -> Connection:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.client.close()

    def call(self, method: str, path: str, body: Any = None, *, timeout: float = 0.0) -> Reply:
        """
        One JSON exchange; ``timeout`` is the work the call may do (a turn), on
        top of the connection's grace.
        """
        budget = timeout + self.grace
        what = f"{method} {path}"
        try:
            status, content, kind = self._exchange(method, path, body, budget, what)
        except httpx.TimeoutException:
            raise ServiceFailed(
                f"{self.where}: {what} got no answer within {budget:.1f} s"
            ) from None
        except httpx.ConnectError as error:
            raise ServiceFailed(f"{self.where}: cannot connect for {what}: {error}") from None
        except httpx.HTTPError as error:
            raise ServiceFailed(
                f"{self.where}: {what} failed: {type(error).__name__}: {error}"
            ) from None
        try:
            decoded = parse_exact(content.decode("utf-8"))
        except (UnicodeDecodeError, JSONError) as error:
            shown = content[:_SHOWN].decode("utf-8", "replace")
            raise ServiceFailed(
                f"{self.where}: {what} answered {status} with a body that is "
                f"not JSON ({kind}): {shown!r} ({error})"
            ) from None
        return Reply(status, decoded)

    def _exchange(
        self, method: str, path: str, body: Any, budget: float, what: str
    ) -> tuple[int, bytes, str]:
        """
        The answer's status, body and content type, read within ``budget``
        seconds in all (a service that trickles its answer byte by byte is
        not given a fresh timeout per read) and `MAX_BODY` bytes.
        """
        deadline = time.monotonic() + budget
        self._deadline.at = deadline
        try:
            return self._read(method, path, body, budget, what)
        finally:
            self._deadline.at = None

    def _read(
        self, method: str, path: str, body: Any, budget: float, what: str
    ) -> tuple[int, bytes, str]:
        deadline = time.monotonic() + budget
        content = bytearray()
        with self.client.stream(
            method,
            path,
            content=None if body is None else json.dumps(body).encode(),
            headers={"content-type": "application/json", "accept": "application/json"},
            timeout=budget,
        ) as response:
            for chunk in response.iter_bytes():
                content += chunk
                if len(content) > MAX_BODY or time.monotonic() > deadline:
                    break
            kind = response.headers.get("content-type", "no content type")
        # Raised out here: a frozen exception cannot pass through the stream's exit.
        if len(content) > MAX_BODY:
            raise ServiceFailed(f"{self.where}: {what} answered more than {MAX_BODY} bytes")
        if time.monotonic() > deadline:
            raise httpx.ReadTimeout("the answer took longer than its budget")
        return response.status_code, bytes(content), kind
