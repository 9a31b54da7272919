"""
The reference services as one HTTP application, speaking the conformance binding.

`ReferenceService.handle` turns a ``harness.net.Request`` into a
``harness.net.Response``.  The ``reference`` targets mount it behind a
``net.MockTransport``; tests serve it to an ``http:`` target on a loopback socket.
Either way the harness drives it with the same client code as a real
service, so the binding itself is exercised on every run.

Routes (all JSON; ``provider`` and ``timeout`` in a body say where the fake
agent CLI is and how long a turn may take):

- ``POST /api/initialise``: Throng's own endpoint (202 or a 400 field list);
- ``GET /conformance/throng/sandboxes/{id}/options``: the wrapper options;
- ``POST /conformance/throng/sandboxes/{id}/turns``: one turn, its publication;
- ``POST /conformance/t3/tools/{tool}``: ``orchestrator_capabilities``,
  ``delegate_task`` and ``task_status`` with ``{"arguments": …}``;
- ``POST /conformance/t3/tasks/{id}/follow-up``: one more turn on the child thread;
- ``GET /conformance/t3/tasks/{id}/thread``: the child thread and its turns' options.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

from harness import net
from harness.adaptor.launch import Launcher
from harness.catalogue import jsonvalue
from harness.systems.t3 import T3
from harness.systems.throng import Throng
from harness.systems.turns import run_turn

#: A route handler: the path's named groups and the decoded body → (status, JSON body).
Handler = Callable[[dict[str, str], Any], tuple[int, Any]]


@dataclass(frozen=True)
class _Route:
    method: str
    pattern: re.Pattern[str]
    handler: Handler


class ReferenceService:
    """Fresh reference models of Throng and T3 behind one router."""

    def __init__(self, launcher: Launcher) -> None:
        runner = partial(run_turn, launcher)
        self.throng = Throng(runner)
        self.t3 = T3(runner)
        tools: dict[str, Callable[[Any], dict[str, Any]]] = {
            "orchestrator_capabilities": lambda b: self.t3.orchestrator_capabilities(
                b.get("arguments", {})
            ),
            "delegate_task": lambda b: self.t3.delegate_task(b.get("arguments", {}), b),
            "task_status": lambda b: self.t3.task_status(b.get("arguments", {})),
        }

        def tool(groups: dict[str, str], body: Any) -> tuple[int, Any]:
            found = tools.get(groups["tool"])
            if found is None:
                return 404, {"error": f"no tool {groups['tool']!r}"}
            return 200, found(body if isinstance(body, dict) else {})

        def obj(body: Any) -> dict[str, Any]:
            return body if isinstance(body, dict) else {}

        self.routes = (
            _Route("POST", re.compile(r"/api/initialise"), lambda g, b: self.throng.initialise(b)),
            _Route(
                "GET",
                re.compile(r"/conformance/throng/sandboxes/(?P<id>[^/]+)/options"),
                lambda g, b: self.throng.options(g["id"]),
            ),
            _Route(
                "POST",
                re.compile(r"/conformance/throng/sandboxes/(?P<id>[^/]+)/turns"),
                lambda g, b: self.throng.turn(g["id"], obj(b)),
            ),
            _Route("POST", re.compile(r"/conformance/t3/tools/(?P<tool>[^/]+)"), tool),
            _Route(
                "POST",
                re.compile(r"/conformance/t3/tasks/(?P<id>[^/]+)/follow-up"),
                lambda g, b: (200, self.t3.follow_up(g["id"], obj(b))),
            ),
            _Route(
                "GET",
                re.compile(r"/conformance/t3/tasks/(?P<id>[^/]+)/thread"),
                lambda g, b: (200, self.t3.thread(g["id"])),
            ),
        )

    def handle(self, request: net.Request) -> net.Response:
        """Answer one request; every answer is JSON."""
        path = request.url.path
        for route in self.routes:
            match = route.pattern.fullmatch(path)
            if match is None or route.method != request.method:
                continue
            body: Any = None
            if request.content:
                try:
                    body = jsonvalue.loads(request.content)
                except ValueError:
                    return _json(400, {"error": "the request body is not JSON"})
            status, answer = route.handler(match.groupdict(), body)
            return _json(status, answer)
        return _json(404, {"error": f"no route for {request.method} {path}"})


def _json(status: int, body: Any) -> net.Response:
    content = json.dumps(body, ensure_ascii=False).encode()
    return net.Response(status, content=content, headers={"content-type": "application/json"})
