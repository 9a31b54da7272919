"""
T3 scenarios on the service-api seam: delegate a task, follow up, read its status.

The binding asks ``orchestrator_capabilities`` what each provider can
enforce, calls ``delegate_task`` (with ``resultSchema`` when the scenario
gives one, in wait mode when it asks), runs the scenario's follow-up turns
on the child thread, then reads ``task_status`` and the child thread (its
``delegatedResultSchema`` and the provider options of every turn).  Each
turn's child is the fake CLI of the delegated provider.

``typedResult``, ``status`` and ``summary`` are checked on every surface
that exposes them: ``task_status`` always, and the wait-mode result of
``delegate_task`` when the scenario waits.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, ClassVar
from urllib.parse import quote

from harness.catalogue import agents
from harness.catalogue.outcome import ProviderCall
from harness.catalogue.scenario import Json, ProviderExpectation
from harness.catalogue.seam import Report
from harness.seams import promises
from harness.seams.agent_cli import provider_expectation
from harness.seams.compare import Mismatch
from harness.seams.service import common
from harness.targets.http import Connection
from harness.targets.workspace import Workspace

_TOOLS = "/conformance/t3/tools"
_TASKS = "/conformance/t3/tasks"


@dataclass(frozen=True)
class T3Request:
    """One delegation: provider, task, optional ``resultSchema``, follow-up turns."""

    service: ClassVar[str] = "t3"

    agent: str
    task: str = "Check why the build fails and report."
    result_schema: Json | None = None
    wait: bool = False
    follow_ups: tuple[str, ...] = ()
    timeout: float = 10.0


@dataclass(frozen=True)
class T3Expectation:
    """Only the fields given are checked; ``typed_result`` may expect ``null``."""

    capabilities: tuple[tuple[str, bool], ...] = ()
    error: str | None = None
    status: str | None = None
    summary: str | None = None
    summary_contains: str | None = None
    typed_result: Json | None = None
    thread_schema: Json | None = None
    options: tuple[tuple[str, Json], ...] = ()
    options_unset: tuple[str, ...] = ()
    launches: int | None = None
    provider: ProviderExpectation | None = None


@dataclass(frozen=True)
class T3Outcome:
    """The answers as the orchestrator gave them, and what the fake measured."""

    seam: ClassVar[str] = "service-api"
    service: ClassVar[str] = "t3"

    capabilities: Json
    delegate: Json
    waited: bool = False
    follow_ups: Json = field(default_factory=lambda: Json.of([]))
    status: Json | None = None
    thread: Json | None = None
    launches: int = 0
    calls: tuple[ProviderCall, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "service": self.service,
            "capabilities": self.capabilities.value,
            "delegate_task": self.delegate.value,
            "waited": self.waited,
            "follow_ups": self.follow_ups.value,
            "task_status": None if self.status is None else self.status.value,
            "thread": None if self.thread is None else self.thread.value,
            "launches": self.launches,
            "calls": common.calls_json(self.calls),
        }

    def summary(self) -> str:
        error = common.at(self.delegate.value, "error", "code")
        if error is not common.MISSING:
            return f"delegate_task failed: {error}"
        status = None if self.status is None else self.status.value
        return f"task {common.at(status, 'status')}, typedResult {common.at(status, 'typedResult')}"


#: What every T3 expectation pins (`harness.seams.promises`).
DECISIVE = (
    promises.Decisive(("status", "error"), "how the delegation ends"),
    promises.Decisive(
        ("typed_result",), "what the parent reads", lambda r, e: e.get("status") == "completed"
    ),
    promises.Decisive(("launches",), "whether the agent CLI ran"),
)
#: Terms of art a T3 description may name, and the check each calls for.
PHRASES = (
    promises.Phrase(r"\btypedResult\b", ("typed_result",)),
    promises.Phrase(r"\bcanEnforceResultSchema\b", ("capabilities",)),
    promises.Phrase(r"\bdelegatedResultSchema\b", ("thread_schema",)),
    promises.Phrase(r"\boutputFormat\b|\boutputSchema\b", ("options", "options_unset")),
)


class T3:
    """See the module docstring."""

    def cli(self, request: dict[str, Any]) -> str | None:
        agent = request["agent"]
        return agent if agent in agents.DRIVERS else None

    def check(self, doc: dict[str, Any], report: Report) -> None:
        request = doc["request"]
        if request.get("wait") and request.get("follow_ups"):
            report(
                ("request", "follow_ups"),
                "the wait-mode result is the first turn's; do not combine wait and follow_ups",
            )
        scripted = len(doc.get("provider", {}).get("follow_ups", ()))
        if scripted > len(request.get("follow_ups", ())):
            report(("provider", "follow_ups"), "more follow-up scripts than request.follow_ups")
        common.check_options(doc, report)
        promises.check(doc, DECISIVE, PHRASES, report)

    def request(self, raw: dict[str, Any]) -> T3Request:
        schema = Json.of(raw["result_schema"]) if "result_schema" in raw else None
        return T3Request(
            agent=raw["agent"],
            task=raw.get("task", T3Request.task),
            result_schema=schema,
            wait=raw.get("wait", False),
            follow_ups=tuple(raw.get("follow_ups", ())),
            timeout=float(raw.get("timeout", T3Request.timeout)),
        )

    def expectation(self, raw: dict[str, Any]) -> T3Expectation:
        return T3Expectation(
            capabilities=tuple(sorted(raw.get("capabilities", {}).items())),
            error=raw.get("error"),
            status=raw.get("status"),
            summary=raw.get("summary"),
            summary_contains=raw.get("summary_contains"),
            typed_result=Json.of(raw["typed_result"]) if "typed_result" in raw else None,
            thread_schema=Json.of(raw["thread_schema"]) if "thread_schema" in raw else None,
            options=common.options_from(raw.get("options", {})),
            options_unset=tuple(raw.get("options_unset", ())),
            launches=raw.get("launches"),
            provider=provider_expectation(raw["provider"]) if "provider" in raw else None,
        )

    def observe(self, request: object, connection: Connection, workspace: Workspace) -> T3Outcome:
        assert isinstance(request, T3Request), request

        def tool(name: str, body: dict[str, Any], timeout: float = 0.0) -> Any:
            path = f"{_TOOLS}/{name}"
            reply = connection.call("POST", path, body, timeout=timeout)
            return common.ok(connection, reply, f"POST {path}")

        capabilities = tool("orchestrator_capabilities", {"arguments": {}})
        arguments: dict[str, Any] = {"provider": request.agent, "prompt": request.task}
        if request.result_schema is not None:
            arguments["resultSchema"] = request.result_schema.value
        if request.wait:
            arguments["wait"] = True
        turn = {"timeout": request.timeout}
        delegate = tool(
            "delegate_task",
            {"arguments": arguments, "provider": workspace.provider().to_json(), **turn},
            request.timeout,
        )
        task_id = common.at(delegate, "taskId")
        follow_ups: list[Any] = []
        status = thread = None
        if isinstance(task_id, str) and common.at(delegate, "error") is common.MISSING:
            base = f"{_TASKS}/{quote(task_id, safe='')}"
            for launch, prompt in enumerate(request.follow_ups, start=1):
                body = {
                    "arguments": {"prompt": prompt},
                    "provider": workspace.provider(launch).to_json(),
                    **turn,
                }
                reply = connection.call("POST", f"{base}/follow-up", body, timeout=request.timeout)
                follow_ups.append(common.ok(connection, reply, f"POST {base}/follow-up"))
            status = tool("task_status", {"arguments": {"taskId": task_id}})
            thread = common.ok(
                connection, connection.call("GET", f"{base}/thread"), f"GET {base}/thread"
            )
        calls = workspace.calls()
        return T3Outcome(
            capabilities=Json.of(capabilities),
            delegate=Json.of(delegate),
            waited=request.wait,
            follow_ups=Json.of(follow_ups),
            status=common.maybe(status),
            thread=common.maybe(thread),
            launches=len(calls),
            calls=calls,
        )

    def compare(self, expect: object, actual: common.ServiceOutcome) -> tuple[Mismatch, ...]:
        assert isinstance(expect, T3Expectation), expect
        assert isinstance(actual, T3Outcome), actual
        return tuple(_mismatches(expect, actual))

    def outcome_from_json(self, data: dict[str, Any]) -> T3Outcome:
        return T3Outcome(
            capabilities=Json.of(data["capabilities"]),
            delegate=Json.of(data["delegate_task"]),
            waited=bool(data.get("waited", False)),
            follow_ups=Json.of(data.get("follow_ups", [])),
            status=common.maybe(data.get("task_status")),
            thread=common.maybe(data.get("thread")),
            launches=int(data.get("launches", 0)),
            calls=common.calls_from(data),
        )

    def describe(self, expect: object) -> list[str]:
        assert isinstance(expect, T3Expectation), expect
        out = [
            f"`{name}` reports canEnforceResultSchema `{str(can).lower()}`"
            for name, can in expect.capabilities
        ]
        if expect.error is not None:
            out.append(f"delegate_task fails with `{expect.error}`")
        if expect.status is not None:
            out.append(f"the task is `{expect.status}`")
        if expect.summary is not None:
            out.append(f"summary: `{expect.summary}`")
        if expect.summary_contains is not None:
            out.append(f"summary contains `{expect.summary_contains}`")
        if expect.typed_result is not None:
            out.append(f"typedResult: `{expect.typed_result.text}`")
        if expect.thread_schema is not None:
            out.append(f"child thread delegatedResultSchema: `{expect.thread_schema.text}`")
        out += [f"every turn sets `{key}` to `{value.text}`" for key, value in expect.options]
        out += [f"no turn sets `{key}`" for key in expect.options_unset]
        return out + common.describe_fake_side(expect.launches, expect.provider)


def _capability(capabilities: Any, name: str) -> Any:
    entries = common.at(capabilities, "providers")
    for entry in entries if isinstance(entries, list) else ():
        if common.at(entry, "provider") == name:
            return common.at(entry, "canEnforceResultSchema")
    return common.MISSING


def _mismatches(expect: T3Expectation, actual: T3Outcome) -> Iterator[Mismatch]:
    for name, can in expect.capabilities:
        got = _capability(actual.capabilities.value, name)
        yield from common.equal(f"capabilities.{name}", can, got)
    delegate = actual.delegate.value
    if expect.error is not None:
        got = common.at(delegate, "error", "code")
        yield from common.equal("delegate_task.error", expect.error, got)
    status = common.MISSING if actual.status is None else actual.status.value
    surfaces = [("task_status", status)] + ([("wait", delegate)] if actual.waited else [])
    for surface, reply in surfaces:
        if expect.status is not None:
            got = common.at(reply, "status")
            yield from common.equal(f"{surface}.status", expect.status, got)
        if expect.summary is not None:
            got = common.at(reply, "summary")
            yield from common.equal(f"{surface}.summary", expect.summary, got)
        if expect.summary_contains is not None:
            got = common.at(reply, "summary")
            yield from common.contains(f"{surface}.summary", expect.summary_contains, got)
        if expect.typed_result is not None:
            got = common.at(reply, "typedResult")
            yield from common.equal(f"{surface}.typedResult", expect.typed_result.value, got)
    thread = common.MISSING if actual.thread is None else actual.thread.value
    if expect.thread_schema is not None:
        got = common.at(thread, "delegatedResultSchema")
        if got is common.MISSING and thread is not common.MISSING:
            got = None  # an optional member: absent means no schema on the thread
        yield from common.equal("thread.delegatedResultSchema", expect.thread_schema.value, got)
    if expect.options or expect.options_unset:
        turns = common.at(thread, "turns")
        if not isinstance(turns, list) or not turns:
            yield Mismatch("thread.turns", "at least one turn", common.shown(turns))
        else:
            for index in range(len(turns)):
                options = common.at(turns, index, "options")
                field = f"thread.turns[{index}].options"
                yield from common.options(field, expect.options, expect.options_unset, options)
    yield from common.fake_side(expect.launches, expect.provider, actual)
