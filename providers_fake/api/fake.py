"""
The scripted model API: routes a request, picks its step, records it.

One object serves the three APIs (``/v1/messages``, ``/v1/responses`` and
``.../chat/completions``) from one
script and one request counter, and both transports call the same `handle`.
It is thread-safe because the loopback server answers each connection on its
own thread and a CLI may open several.

Some releases send requests beside the conversation: Claude Code up to
2.1.289 sends ``HEAD /api/hello`` at start-up, a connectivity check whose
answer it never reads.  Those are *side requests* (`SIDE`): answered ``200``
with no body, recorded like every request with what they are in `side`, and
neither answered by the script nor counted among the model requests, so one
script serves every version of a CLI.

A request the script did not foresee is never answered as if it had been: it
gets an error that names it (a 500 ``api_error`` "fake: unexpected request
#N ..." past the end of a non-repeating script, a 404 for an endpoint the fake
does not serve, a 400 for a body that is not JSON) and is kept in
`unexpected`, so a test sees it even when the CLI swallows the error.
"""

from __future__ import annotations

import json
import threading

from providers_fake.api import anthropic, chat, openai
from providers_fake.api.record import RecordedRequest, redact_headers
from providers_fake.api.script import Answer, HttpError, Script, steps_summary
from providers_fake.api.wire import Reply, json_reply

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

_ENDPOINTS = {"/v1/messages": "anthropic", "/v1/responses": "openai", "/chat/completions": "chat"}
#: Requests a CLI makes beside the conversation (method, path suffix), and what they are.
SIDE = {("HEAD", "/api/hello"): "connectivity check"}


def side_request(method: str, path: str) -> str | None:
    """What a request beside the conversation is (`SIDE`), or None for any other."""
    bare = path.split("?", 1)[0].rstrip("/")
    return next(
        (what for (m, end), what in SIDE.items() if m == method and bare.endswith(end)), None
    )


def api_for(method: str, path: str) -> str | None:
    """Which API a request is for; a path prefix is allowed (Foundry's ``/anthropic/v1/...``)."""
    bare = path.split("?", 1)[0].rstrip("/")
    if method != "POST":
        return None
    return next((api for suffix, api in _ENDPOINTS.items() if bare.endswith(suffix)), None)


class ScriptedModelAPI:
    """
    A fake Anthropic Messages, OpenAI Responses and Chat Completions API replaying `script`.

    `script` may be a `Script` or its JSON form (a capture's ``model_script``).
    """

    def __init__(self, script: Script | Sequence[object] | dict[str, object]) -> None:
        self.script = script if isinstance(script, Script) else Script.from_json(script)
        self._lock = threading.Lock()
        self._records: list[RecordedRequest] = []
        self._answered = 0  # model requests so far: the next step's index

    def handle(self, method: str, path: str, headers: list[tuple[str, str]], body: bytes) -> Reply:
        """Record one request and decide its answer (the transport sends it)."""
        with self._lock:
            index = len(self._records)
            api = api_for(method, path)
            parsed = _parse(body)
            step: int | None = None
            unexpected: str | None = None
            side = side_request(method, path)
            if side is not None:
                reply = Reply(200, (("request-id", anthropic.request_id(index)),), ())
            elif api is None:
                unexpected = f"no such endpoint: {method} {path}"
                reply = _unexpected(404, "not_found_error", unexpected, index)
            elif not isinstance(parsed, dict):
                unexpected = "the body is not a JSON object"
                reply = _unexpected(400, "invalid_request_error", unexpected, index)
            else:
                step = self._answered
                chosen = self.script.step_for(step)
                self._answered += 1
                if chosen is None:
                    unexpected = self._beyond(step, method, path, parsed)
                    reply = _unexpected(500, "api_error", unexpected, index)
                    step = None
                else:
                    reply = _render(api, chosen, parsed, step)
            self._records.append(
                RecordedRequest(
                    index=index,
                    method=method,
                    path=path,
                    headers=redact_headers(headers),
                    raw_body=body,
                    body=parsed,
                    api=api or "unknown",
                    step=step,
                    status=reply.status,
                    unexpected=unexpected,
                    side=side,
                )
            )
            return reply

    def _beyond(self, number: int, method: str, path: str, body: dict[str, object]) -> str:
        steps = self.script.steps
        return (
            f"unexpected request #{number + 1}: the script has {len(steps)} step(s) "
            f"({steps_summary(steps)}) and does not repeat the last; "
            f"{method} {path} model={body.get('model')!r}"
        )

    @property
    def requests(self) -> list[RecordedRequest]:
        """Every request so far, in arrival order (a copy)."""
        with self._lock:
            return list(self._records)

    @property
    def model_requests(self) -> list[RecordedRequest]:
        """The requests the script answered (what a scenario counts)."""
        return [r for r in self.requests if r.unexpected is None and r.side is None]

    @property
    def side_requests(self) -> list[RecordedRequest]:
        """The requests beside the conversation (`SIDE`), answered without the script."""
        return [r for r in self.requests if r.side is not None]

    @property
    def models(self) -> list[object]:
        """The ``model`` of each answered request: where a fallback shows."""
        return [r.model for r in self.model_requests]

    @property
    def unexpected(self) -> list[RecordedRequest]:
        return [r for r in self.requests if r.unexpected is not None]

    def assert_no_unexpected(self) -> None:
        """Fail loudly, naming each unexpected request."""
        odd = self.unexpected
        if odd:
            raise AssertionError(
                "fake model API got unexpected requests:\n"
                + "\n".join(f"  {r.describe()}" for r in odd)
            )


def _parse(body: bytes) -> object:
    try:
        return json.loads(body) if body else None
    except ValueError:
        return None


def _render(api: str, step: Answer | HttpError, request: dict[str, object], index: int) -> Reply:
    if isinstance(step, HttpError):
        return _ERRORS[api](step, index)
    return _ANSWERS[api](step, request, index)


#: Each API's renderers (the script is the same for all three).
_ERRORS = {
    "anthropic": anthropic.error_reply,
    "openai": openai.error_reply,
    "chat": chat.error_reply,
}
_ANSWERS = {
    "anthropic": anthropic.answer_reply,
    "openai": openai.answer_reply,
    "chat": chat.answer_reply,
}


def _unexpected(status: int, kind: str, why: str, index: int) -> Reply:
    """An error in the Anthropic shape (which OpenAI clients also surface as text)."""
    body = {"type": "error", "error": {"type": kind, "message": f"fake: {why}"}}
    headers = (("request-id", anthropic.request_id(index)), ("x-should-retry", "false"))
    return json_reply(status, body, headers)
