"""
Scripted fake model APIs: the Anthropic Messages API and the OpenAI Responses API.

On the model-api seam the system under test is the agent CLI itself, so the
fake stands where the model would be: it answers each request with the next
step of a script (a StructuredOutput call, text, an HTTP error, a broken or
truncated stream, a delay) and records every request so a scenario can check
what the CLI sent.  The same `ScriptedModelAPI` is served in process through
any client (`inprocess.answer`; the harness's `harness.net` transport, or
httpx through respx with `install_respx`) or to other processes by
`LoopbackServer` on 127.0.0.1.

Importing this package pulls in the stdlib only; respx and httpx (which are
not dependencies of the package) are loaded when `install_respx` is first
called.
"""

from __future__ import annotations

from providers_fake.api.fake import ScriptedModelAPI, api_for
from providers_fake.api.loopback import LOOPBACK, LoopbackServer
from providers_fake.api.record import ENFORCE_PREFIX, RecordedRequest
from providers_fake.api.script import (
    FOUNDRY_MESSAGE,
    STRUCTURED_OUTPUT,
    Answer,
    HttpError,
    Script,
    ScriptError,
    Step,
    ToolUse,
    foundry_unsupported,
    http_error,
    overloaded,
    rate_limited,
    server_error,
    text,
    tool_call,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    import respx

__all__ = [
    "ENFORCE_PREFIX",
    "FOUNDRY_MESSAGE",
    "LOOPBACK",
    "STRUCTURED_OUTPUT",
    "Answer",
    "HttpError",
    "LoopbackServer",
    "RecordedRequest",
    "Script",
    "ScriptError",
    "ScriptedModelAPI",
    "Step",
    "ToolUse",
    "api_for",
    "foundry_unsupported",
    "http_error",
    "install_respx",
    "overloaded",
    "rate_limited",
    "server_error",
    "text",
    "tool_call",
]


def install_respx(
    router: respx.MockRouter,
    fake: ScriptedModelAPI,
    base_url: str = "https://api.anthropic.com",
    *,
    virtual_time: bool = False,
) -> respx.Route:
    """Route every request under `base_url` on a respx `router` to `fake` (see `respx_route`)."""
    from providers_fake.api.respx_route import install  # noqa: PLC0415 - keeps httpx out

    return install(router, fake, base_url, virtual_time=virtual_time)
