"""
The scripted model API as a `harness.net` transport, for the reference models.

A reference model (`harness.systems.claude`, `harness.systems.codex`) talks
to its model API through a `harness.net.Client`; with this transport the
client reaches the scripted fake in process (`providers_fake.api.inprocess`),
which acts each step out with the standard library's exceptions, and the
client translates them as it would a socket's.  A request anywhere but under
``base_url`` cannot connect, as on a machine with no network.
"""

from __future__ import annotations

from harness import net
from providers_fake.api import inprocess
from providers_fake.api.fake import ScriptedModelAPI


def transport(
    fake: ScriptedModelAPI, base_url: str, *, virtual_time: bool = False
) -> net.MockTransport:
    """A transport answering every request under ``base_url`` from ``fake``."""
    base = base_url.rstrip("/")

    def handler(request: net.Request) -> net.Response:
        if not str(request.url).startswith(base):
            raise net.ConnectError(f"{request.url}: not the fake's {base}", request=request)
        answered = inprocess.answer(
            fake,
            request.method,
            request.url.target,
            list(request.headers.raw),
            request.content,
            read_timeout=request.timeout.read,
            virtual_time=virtual_time,
        )
        return net.Response(answered.status, headers=answered.headers, stream=answered)

    return net.MockTransport(handler)
