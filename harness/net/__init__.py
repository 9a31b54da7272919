"""
HTTP for the harness: the subset of httpx's API the harness uses, on the
standard library.

The reference models talk to the scripted model APIs through a `Client`
whose transport answers in process (`MockTransport`); the ``http:`` target
and the recorder talk to real servers through the same `Client` over a
socket (`harness.net.wire`).  httpx did this before; it brought anyio, whose
pytest plugin then loaded in every pytest run of any environment the harness
was installed in (docs/benchmarks.md).  The names are httpx's, so a call site
reads as before; the error classes live in `harness.exceptions`.  There is
no ``iter_lines`` on purpose: httpx's ends a line at U+2028 and the other
``str.splitlines`` breaks, the binaries do not, so readers split the text
with `harness.catalogue.lines`.

May import: `harness.exceptions` only (it sits beside the layers: any of
them may use it).
"""

from __future__ import annotations

from harness.exceptions import (
    ConnectError,
    ConnectTimeout,
    HTTPError,
    NetworkError,
    ProtocolError,
    ReadError,
    ReadTimeout,
    RemoteProtocolError,
    TimeoutException,
    TransportError,
    UnsupportedProtocol,
    WriteError,
    WriteTimeout,
)
from harness.net.client import Client, MockTransport, Transport
from harness.net.message import URL, Headers, Request, Response, Timeout

__all__ = [
    "URL",
    "Client",
    "ConnectError",
    "ConnectTimeout",
    "HTTPError",
    "Headers",
    "MockTransport",
    "NetworkError",
    "ProtocolError",
    "ReadError",
    "ReadTimeout",
    "RemoteProtocolError",
    "Request",
    "Response",
    "Timeout",
    "TimeoutException",
    "Transport",
    "TransportError",
    "UnsupportedProtocol",
    "WriteError",
    "WriteTimeout",
]
