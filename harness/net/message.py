"""
HTTP messages as `harness.net`'s callers use them: URL, headers, timeouts,
a request, and a response whose body may still be arriving.

The shapes are httpx's (its subset this project used), so a call site reads
as before.  A response's body is any iterable of bytes: a socket's, or an
in-process handler's.  Whatever that iterable raises is turned into the one
tree of `harness.exceptions.HTTPError` here (`translated`), so a scripted
fake that raises ``TimeoutError`` or ``http.client.IncompleteRead`` looks,
to the code reading it, exactly like a server that was too slow or hung up.
"""

from __future__ import annotations

import codecs
import http.client
import json as jsonlib
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from email.message import Message
from types import TracebackType
from typing import Any
from urllib.parse import unquote, urlsplit

from harness.exceptions import (
    ConnectError,
    ConnectTimeout,
    HTTPError,
    ReadError,
    ReadTimeout,
    RemoteProtocolError,
    WriteError,
    WriteTimeout,
)

#: What a body is decoded with when its content type names no charset (httpx's default).
DEFAULT_ENCODING = "utf-8"
#: The words httpx gives a body cut short; some reasons quote them.
CUT_SHORT = "peer closed connection without sending complete message body"

_TIMEOUTS: dict[str, type[HTTPError]] = {"connect": ConnectTimeout, "write": WriteTimeout}
_FAILURES: dict[str, type[HTTPError]] = {"connect": ConnectError, "write": WriteError}


def translated(error: BaseException, phase: str = "read") -> HTTPError | None:
    """
    ``error`` as `harness.net` raises it, given the phase of the exchange it
    happened in (``connect``, ``write`` or ``read``); None for an error that is
    not a transport's (a bug, which must keep its own type).
    """
    if isinstance(error, HTTPError):
        return error
    if isinstance(error, TimeoutError):
        return _TIMEOUTS.get(phase, ReadTimeout)(str(error) or "timed out")
    if isinstance(error, http.client.IncompleteRead):
        return RemoteProtocolError(CUT_SHORT)
    if isinstance(error, http.client.RemoteDisconnected):
        return RemoteProtocolError("Server disconnected without sending a response.")
    if isinstance(error, http.client.HTTPException):
        return RemoteProtocolError(f"{type(error).__name__}: {error}")
    if isinstance(error, OSError):
        return _FAILURES.get(phase, ReadError)(str(error) or type(error).__name__)
    return None


@dataclass(frozen=True)
class URL:
    """An absolute http(s) URL, split as the transports need it."""

    text: str

    def __str__(self) -> str:
        return self.text

    @property
    def scheme(self) -> str:
        return urlsplit(self.text).scheme.lower()

    @property
    def host(self) -> str:
        return urlsplit(self.text).hostname or ""

    @property
    def port(self) -> int | None:
        return urlsplit(self.text).port

    @property
    def path(self) -> str:
        """The path, percent-decoded, without the query."""
        return unquote(urlsplit(self.text).path) or "/"

    @property
    def target(self) -> str:
        """The request-target on the wire: the path as written, and its query."""
        parts = urlsplit(self.text)
        return (parts.path or "/") + (f"?{parts.query}" if parts.query else "")


class Headers(Mapping[str, str]):
    """
    Header fields in the order received, names case-insensitive; a name
    given twice reads as its values joined by ", " (as httpx reads them).
    """

    def __init__(self, fields: Iterable[tuple[str, str]] | Mapping[str, str] | None = None):
        pairs = fields.items() if isinstance(fields, Mapping) else (fields or ())
        #: The fields as given, names in their own case (what is sent).
        self.raw: tuple[tuple[str, str], ...] = tuple((str(k), str(v)) for k, v in pairs)

    def __getitem__(self, name: str) -> str:
        wanted = name.lower()
        values = [v for k, v in self.raw if k.lower() == wanted]
        if not values:
            raise KeyError(name)
        return ", ".join(values)

    def __iter__(self) -> Iterator[str]:
        return iter(dict.fromkeys(k.lower() for k, _ in self.raw))

    def __len__(self) -> int:
        return len({k.lower() for k, _ in self.raw})

    def __repr__(self) -> str:
        return f"Headers({list(self.raw)!r})"


@dataclass(frozen=True)
class Timeout:
    """
    Seconds each wait may take (None: no limit), and ``exchange``, the
    seconds the whole exchange may take: connecting, sending, the status
    line and headers, and reading the body.  httpx has no ``exchange``: it
    bounds each read, so a server trickling bytes gets a fresh timeout per
    byte; with ``exchange`` every wait is cut to the time the exchange has left.
    """

    connect: float | None = 5.0
    read: float | None = 5.0
    write: float | None = 5.0
    exchange: float | None = None

    @classmethod
    def of(cls, value: Timeout | float | None) -> Timeout:
        """A `Timeout` from what a caller passes: one, or seconds for every wait."""
        if isinstance(value, Timeout):
            return value
        return cls(value, value, value)


class Request:
    """One request: method, absolute URL, headers, body, and the timeouts it is sent with."""

    def __init__(
        self,
        method: str,
        url: str | URL,
        *,
        content: bytes | None = None,
        json: Any = None,
        headers: Iterable[tuple[str, str]] | Mapping[str, str] | None = None,
        timeout: Timeout | float | None = None,
    ) -> None:
        fields = list(Headers(headers).raw)
        if json is not None and content is None:
            content = jsonlib.dumps(json, ensure_ascii=False).encode()
            if "content-type" not in Headers(fields):
                fields.append(("content-type", "application/json"))
        self.method = method.upper()
        self.url = url if isinstance(url, URL) else URL(url)
        self.headers = Headers(fields)
        self.content = content or b""
        self.timeout = Timeout.of(timeout)

    def read(self) -> bytes:
        return self.content

    def __repr__(self) -> str:
        return f"<Request [{self.method} {self.url}]>"


class Response:
    """
    One answer.  Its body is read once, as it arrives (`iter_bytes`,
    `iter_text`), or whole (`read`, then `content`, `text`, `json`); closing
    the response (or leaving its ``with``) gives the connection back.
    """

    def __init__(
        self,
        status_code: int,
        *,
        headers: Iterable[tuple[str, str]] | Mapping[str, str] | None = None,
        content: bytes | None = None,
        text: str | None = None,
        json: Any = None,
        stream: Iterable[bytes] | None = None,
        request: Request | None = None,
    ) -> None:
        fields = list(Headers(headers).raw)
        typed = "content-type" in Headers(fields)
        if text is not None:
            content = text.encode()
            fields += [] if typed else [("content-type", "text/plain; charset=utf-8")]
        elif json is not None:
            content = jsonlib.dumps(json, ensure_ascii=False).encode()
            fields += [] if typed else [("content-type", "application/json")]
        self.status_code = status_code
        self.headers = Headers(fields)
        self._request = request
        self._content: bytes | None = content if stream is None else None
        self._stream = iter(stream if stream is not None else ())
        self._closers: list[Any] = []

    def __repr__(self) -> str:
        return f"<Response [{self.status_code}]>"

    @property
    def request(self) -> Request:
        """The request answered (set by the client that sent it)."""
        if self._request is None:
            raise RuntimeError("this response was not sent for a request")
        return self._request

    @request.setter
    def request(self, request: Request) -> None:
        self._request = request

    # -- the body as it arrives ---------------------------------------------------------

    def iter_bytes(self) -> Iterator[bytes]:
        """The body's chunks as they arrive (none empty); all of it if already read."""
        if self._content is not None:
            if self._content:
                yield self._content
            return
        try:
            for chunk in self._stream:
                if chunk:
                    yield chunk
        except Exception as error:
            found = translated(error)
            if found is None or found is error:
                raise
            raise found from error

    def iter_text(self) -> Iterator[str]:
        """The body decoded as it arrives (undecodable bytes replaced, as httpx does)."""
        decoder = codecs.getincrementaldecoder(self.encoding)(errors="replace")
        for chunk in self.iter_bytes():
            text = decoder.decode(chunk)
            if text:
                yield text
        text = decoder.decode(b"", final=True)
        if text:
            yield text

    @property
    def encoding(self) -> str:
        """The content type's charset when Python knows it, else UTF-8."""
        message = Message()
        message["content-type"] = self.headers.get("content-type", "")
        charset = message.get_param("charset")
        if isinstance(charset, str):
            try:
                return codecs.lookup(charset).name
            except LookupError:
                pass
        return DEFAULT_ENCODING

    # -- the body whole -----------------------------------------------------------------

    def read(self) -> bytes:
        if self._content is None:
            self._content = b"".join(self.iter_bytes())
        return self._content

    @property
    def content(self) -> bytes:
        return self.read()

    @property
    def text(self) -> str:
        return codecs.decode(self.read(), self.encoding, errors="replace")

    def json(self) -> Any:
        return jsonlib.loads(self.read())

    # -- the connection -----------------------------------------------------------------

    def on_close(self, closer: Any) -> None:
        """Call ``closer()`` when the response is closed (the transport's release)."""
        self._closers.append(closer)

    def close(self) -> None:
        closers, self._closers = self._closers, []
        for closer in closers:
            closer()

    def __enter__(self) -> Response:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()
