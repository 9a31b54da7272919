"""
The service-api conformance binding on the wire: JSON over HTTP with `harness.net`.

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
import time
from dataclasses import dataclass
from types import TracebackType
from typing import Any

from harness import net
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


class Connection:
    """One scenario's conversation with one service; closes its client on exit."""

    def __init__(self, client: net.Client, where: str, grace: float = GRACE) -> None:
        self.client = client
        self.where = where
        self.grace = grace

    @classmethod
    def to(cls, url: str, grace: float = GRACE) -> Connection:
        """A connection over the network to the service at ``url``, each exchange bounded."""
        return cls(net.Client(base_url=url), url, grace)

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
        except net.TimeoutException:
            raise ServiceFailed(
                f"{self.where}: {what} got no answer within {budget:.1f} s"
            ) from None
        except net.ConnectError as error:
            raise ServiceFailed(f"{self.where}: cannot connect for {what}: {error}") from None
        except net.HTTPError as error:
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
        content = bytearray()
        with self.client.stream(
            method,
            path,
            content=None if body is None else json.dumps(body).encode(),
            headers={"content-type": "application/json", "accept": "application/json"},
            # Every wait, status line and headers included, is cut to what is left.
            timeout=net.Timeout(budget, budget, budget, exchange=budget),
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
            raise net.ReadTimeout("the answer took longer than its budget")
        return response.status_code, bytes(content), kind
