"""
The three ways the fake-API tests reach one scripted fake: in process to the
harness's client (``net``), to httpx through respx (the route users' own httpx
code installs), or over loopback to the harness's socket transport.
"""

from __future__ import annotations

import contextlib
from typing import Any

import httpx
import respx

from harness import net
from harness.systems.inprocess import transport
from providers_fake import api

WAYS = ("net", "respx", "loopback")
BASE = "https://fake.test"


def client_for(stack: contextlib.ExitStack, way: str, fake: api.ScriptedModelAPI) -> Any:
    """A client whose requests reach ``fake`` the ``way`` named, closed with ``stack``."""
    if way == "respx":
        router = stack.enter_context(respx.mock(assert_all_called=False))
        api.install_respx(router, fake, BASE)
        return stack.enter_context(httpx.Client(base_url=BASE, timeout=10))
    if way == "net":
        return stack.enter_context(
            net.Client(base_url=BASE, transport=transport(fake, BASE), timeout=10)
        )
    base = stack.enter_context(api.LoopbackServer(fake)).url
    return stack.enter_context(net.Client(base_url=base, timeout=10))
