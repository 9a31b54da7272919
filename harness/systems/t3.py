"""
The reference model of T3's ``delegate_task`` with ``resultSchema`` (seed 003, T3-01..06).

``delegate_task`` takes an optional ``resultSchema``.  Without it nothing
changes: the child's last message is the task's result text and
``typedResult`` is ``null`` (T3-01).  With it, the schema is stored on the
child thread as ``delegatedResultSchema``, so every later turn on that
thread is constrained too (T3-02), and each turn maps it to the child's
provider: Claude's ``outputFormat``, Codex's per-turn ``outputSchema`` on
``turn/start`` (T3-03).  At publication the final answer is parsed into
``resultValue``; ``task_status`` and the wait-mode result expose it as
``typedResult: {value}`` (T3-04).  A provider that cannot enforce a schema
says so in ``orchestrator_capabilities`` and ``delegate_task`` refuses with
``result_schema_unsupported`` before anything runs: no prose fallback
(T3-05).  Values are JSON all the way, never re-typed text, so a string
holding ``\\(`` comes back with the same bytes (T3-06).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final

from harness.catalogue.jsonvalue import dumps
from harness.catalogue.outcome import Outcome
from harness.catalogue.scenario import Json
from harness.systems.turns import Runner, TurnInput

UNSUPPORTED: Final = "result_schema_unsupported"

#: How a schema reaches one provider's turn: the options it adds.
SchemaOption = Callable[[Any], dict[str, Any]]


@dataclass(frozen=True)
class ChildAdapter:
    """What the orchestrator knows about one child provider."""

    #: The reference pipeline's driver for this provider's fake CLI; None: none here.
    driver: str | None
    #: How ``resultSchema`` maps onto the provider's turn; None: it cannot enforce one.
    schema_option: SchemaOption | None

    @property
    def can_enforce(self) -> bool:
        return self.schema_option is not None


#: Provider → adapter.  Cursor and OpenCode expose no native schema option.
ADAPTERS: Final[dict[str, ChildAdapter]] = {
    "claude": ChildAdapter(
        "claude", lambda s: {"outputFormat": {"type": "json_schema", "schema": s}}
    ),
    "codex": ChildAdapter("codex", lambda s: {"outputSchema": s}),
    "cursor": ChildAdapter("cursor", None),
    "opencode": ChildAdapter(None, None),
}


def _error(code: str, message: str) -> dict[str, Any]:
    return {"error": {"code": code, "message": message}}


@dataclass
class _Thread:
    provider: str
    #: ``delegatedResultSchema``: every turn on this thread is held to it.
    schema: Json | None
    turns: list[dict[str, Any]] = field(default_factory=list)

    def to_json(self, thread_id: str) -> dict[str, Any]:
        out: dict[str, Any] = {"threadId": thread_id, "provider": self.provider}
        if self.schema is not None:
            out["delegatedResultSchema"] = self.schema.value
        out["turns"] = self.turns
        return out


@dataclass
class _Task:
    thread_id: str
    status: str = "running"
    result: str = ""
    #: The parsed final answer; only with a schema and a successful turn.
    value: Json | None = None

    def status_json(self, task_id: str) -> dict[str, Any]:
        typed = None if self.value is None else {"value": self.value.value}
        return {
            "taskId": task_id,
            "status": self.status,
            "summary": self.result,
            "typedResult": typed,
        }


@dataclass
class T3:
    """One orchestrator: its child threads and tasks, and the runner behind them."""

    runner: Runner
    threads: dict[str, _Thread] = field(default_factory=dict)
    tasks: dict[str, _Task] = field(default_factory=dict)

    # -- tools ---------------------------------------------------------------

    def orchestrator_capabilities(self, _arguments: dict[str, Any]) -> dict[str, Any]:
        return {
            "providers": [
                {"provider": name, "canEnforceResultSchema": adapter.can_enforce}
                for name, adapter in ADAPTERS.items()
            ]
        }

    def delegate_task(self, arguments: dict[str, Any], binding: dict[str, Any]) -> dict[str, Any]:
        provider = arguments.get("provider")
        adapter = ADAPTERS.get(provider) if isinstance(provider, str) else None
        if adapter is None:
            return _error("unknown_provider", f"no provider {provider!r}")
        schema = Json.of(arguments["resultSchema"]) if "resultSchema" in arguments else None
        if schema is not None and not adapter.can_enforce:
            # T3-05: refuse before any thread or turn exists; never degrade to prose.
            return _error(UNSUPPORTED, f"{provider} cannot enforce a result schema")
        if adapter.driver is None:
            return _error("provider_unavailable", f"{provider} cannot run here")
        thread_id = f"thread-{len(self.threads) + 1}"
        task_id = f"task-{len(self.tasks) + 1}"
        self.threads[thread_id] = _Thread(str(provider), schema)
        task = self.tasks[task_id] = _Task(thread_id)
        self._turn(task, str(arguments.get("prompt", "")), binding)
        if arguments.get("wait") is True:
            return task.status_json(task_id)
        return {"taskId": task_id, "status": task.status}

    def task_status(self, arguments: dict[str, Any]) -> dict[str, Any]:
        task_id = arguments.get("taskId")
        task = self.tasks.get(task_id) if isinstance(task_id, str) else None
        if task is None:
            return _error("unknown_task", f"no task {task_id!r}")
        return task.status_json(str(task_id))

    # -- binding-only operations -------------------------------------------------

    def follow_up(self, task_id: str, body: dict[str, Any]) -> dict[str, Any]:
        task = self.tasks.get(task_id)
        if task is None:
            return _error("unknown_task", f"no task {task_id!r}")
        arguments = body.get("arguments", {})
        self._turn(task, str(arguments.get("prompt", "")), body)
        return {"taskId": task_id, "status": task.status}

    def thread(self, task_id: str) -> dict[str, Any]:
        task = self.tasks.get(task_id)
        if task is None:
            return _error("unknown_task", f"no task {task_id!r}")
        return self.threads[task.thread_id].to_json(task.thread_id)

    # -- turns ---------------------------------------------------------------

    def _turn(self, task: _Task, prompt: str, binding: dict[str, Any]) -> None:
        thread = self.threads[task.thread_id]
        adapter = ADAPTERS[thread.provider]
        assert adapter.driver is not None
        # The schema comes from the thread, not the call: follow-ups stay constrained.
        options = {}
        if thread.schema is not None and adapter.schema_option is not None:
            options = adapter.schema_option(thread.schema.value)
        thread.turns.append({"options": options})
        outcome = self.runner(
            TurnInput(
                driver=adapter.driver,
                prompt=prompt,
                schema=thread.schema,
                timeout=float(binding.get("timeout", 10.0)),
                provider=binding.get("provider", {}),
            )
        )
        _publish(task, outcome, constrained=thread.schema is not None)


def _publish(task: _Task, outcome: Outcome, *, constrained: bool) -> None:
    """Record the child's final answer on the task (T3-04)."""
    if constrained and outcome.status == "ok" and outcome.value is not None:
        # The structured answer is published as the final message, as JSON text,
        # and parsed once into the value; nothing re-types it.
        task.status = "completed"
        task.value = outcome.value
        task.result = dumps(outcome.value.value)
    elif not constrained and outcome.error in (None, "decode_error"):
        # Freeform: the last message is the result; a JSON-looking text stays text.
        task.status = "completed"
        task.value = None
        task.result = outcome.text or ""
    else:
        task.status = "failed"
        task.value = None
        task.result = outcome.message or ""
