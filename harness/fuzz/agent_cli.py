"""
The agent-cli fuzzer: generated CLI transcripts and requests for any adaptor.

A case is the ``request`` and ``provider`` of an agent-cli scenario: what the
consumer asks for (a schema or none, a malformed document, the invalid-value
policy, run or stream, the approval policy) and what the fake CLI prints,
built from every event of that CLI's wire format in a plausible order and
then disturbed (garbage and foreign lines, stderr, events after the end,
exits, signals, short pauses, a hang the request's timeout must cut).  The
reference adaptor is the truth; the two canonical outcomes are compared on
the fields a conforming adaptor must reproduce, and the written expectation
is the reference's outcome in those fields.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st

from harness.catalogue import agents
from harness.catalogue.outcome import Outcome
from harness.fuzz import jsonschemas as js
from harness.fuzz.verdict import AGREE, DISAGREE, Difference, Judgement, errored
from harness.seams.case import CaseResult
from harness.seams.model_api.values import show_value

Json = Any
Draw = st.DrawFn
Step = str | dict[str, Json]

DRIVERS = agents.DRIVERS
#: The fields of the canonical outcome a conforming adaptor reproduces; ``message``
#: is free text and ``calls`` carry each adaptor's own flags, so neither is compared.
FIELDS = (
    "status",
    "error",
    "cause",
    "value",
    "mechanism",
    "diagnostics",
    "launches",
    "text",
    "raw",
    "provider.output_format",
    "provider.schema",
)
#: A request's timeout: long enough for any transcript, short enough for a hang.
TIMEOUT = 3.0
_FIELD_CLAUSES = {"diagnostics": "POL-04", "value": "DEC-01", "provider.schema": "SCH-06"}
GARBAGE = ("panic: something went wrong\n", '{"type":"item.completed","item":{"id"\n', "\n", "ok\n")
FOREIGN_LINE = {"type": "x.unknown", "data": 1}


def _answer_text(draw: Draw, schema: Json) -> str:
    """The text a model answers with: JSON of a value, or something around it."""
    value = show_value(js.tool_input(draw, schema))
    how = draw(st.integers(0, 8))
    wrapped = (
        value,
        value,
        value,
        f"  \n{value}\n",
        f"```json\n{value}\n```",
        f"{value} {value}",
        f"{value} trailing",
        "Looking at the log.",
        "",
    )
    return wrapped[how]


def _codex_steps(draw: Draw, schema: Json) -> list[Step]:
    steps: list[Step] = ["thread.started", "turn.started"]
    if js.rarely(draw, 4):
        extra: tuple[Step, ...] = ("warning", {"reasoning": "thinking"})
        steps.append(draw(st.sampled_from(extra)))
    for _ in range(draw(st.integers(0, 3))):
        if js.rarely(draw, 5):
            steps.append({"agent_message.started": ""})
        steps.append({"agent_message": _answer_text(draw, schema)})
    end = draw(st.integers(0, 5))
    if end == 4:
        errors: tuple[Step, ...] = ({"error": "Reconnecting... 1/5"}, "error")
        steps.append(draw(st.sampled_from(errors)))
    terminal: tuple[Step, ...] = ("turn.completed", "turn.completed", "turn.completed")
    steps += [terminal[end]] if end < 3 else ["turn.failed"] if end < 5 else []
    return steps


def _result_fields(draw: Draw, value: Json) -> dict[str, Json]:
    kind = draw(st.integers(0, 6))
    if kind <= 2:
        return {}
    if kind == 3:
        return {"subtype": "error_max_structured_output_retries"}
    if kind == 4:
        return {"is_error": True, "result": "API Error: 500"}
    if kind == 5:
        return {"structured_output": value}
    return {"drop": [draw(st.sampled_from(("session_id", "is_error", "result", "subtype")))]}


#: A refusal stop: continued once, ended without the object, or retried on a fallback model.
_REFUSALS: tuple[Step, ...] = (
    {"refusal_continue": {}},
    {"refusal": {}},
    {"refusal_fallback": {"to": "claude-sonnet-4-5"}},
)


def _claude_steps(draw: Draw, schema: Json) -> list[Step]:
    """Claude Code (and CodeBuddy, which mirrors it) in print mode."""
    steps: list[Step] = ["init"]
    value = js.tool_input(draw, schema)
    for _ in range(draw(st.integers(0, 3))):
        kind = draw(st.integers(0, 11))
        if kind == 0:
            steps.append({"text": draw(st.sampled_from(("Looking.", '{"a": 1}', "")))})
        elif kind == 1:
            steps.append({"structured_output_rejected": {"input": js.tool_input(draw, schema)}})
        elif kind == 2:
            steps.append("enforce_reminder")
        elif kind == 3:
            steps.append({"api_retry": {"attempt": 1, "status": 529, "delay_ms": 500}})
        elif kind == 4:
            steps.append({"thinking": {"thinking": "Let me see."}})
        elif kind == 5:
            steps.append({"tool": {"name": "Bash", "input": {"command": "ls"}, "output": "a"}})
        elif kind == 6:
            steps.append({"api_error_message": "API Error: Connection error."})
        elif kind == 7:
            steps.append({"model_fallback": {"to": "claude-sonnet-4-5"}})
        elif kind == 8:
            steps.append(draw(st.sampled_from(_REFUSALS)))
        else:
            steps.append({"structured_output": js.tool_input(draw, schema)})
    if not js.rarely(draw, 4):
        steps.append({"structured_output": value})
    if not js.rarely(draw, 6):
        steps.append({"result": _result_fields(draw, value)})
    return steps


def _cursor_steps(draw: Draw, schema: Json) -> list[Step]:
    steps: list[Step] = ["init"]
    if js.rarely(draw, 2):
        steps.append("user")
    steps += [{"assistant": _answer_text(draw, schema)} for _ in range(draw(st.integers(0, 3)))]
    end = draw(st.integers(0, 5))
    if end <= 2:
        steps.append("result")
    elif end == 3:
        steps.append({"result": {"result": _answer_text(draw, schema)}})
    elif end == 4:
        steps.append({"result": {"subtype": "error", "is_error": True}})
    return steps


#: A transcript generator per wire (the CLIs that print alike share one).
_STEPS: Mapping[agents.Wire, Callable[[Draw, Json], list[Step]]] = {
    "codex": _codex_steps,
    "claude": _claude_steps,
    "cursor": _cursor_steps,
}


def _disturbed(draw: Draw, steps: list[Step]) -> dict[str, Json]:
    """The transcript with at most one disturbance, and how the process ends."""
    steps = list(steps)
    how = draw(st.integers(0, 12))
    at = draw(st.integers(0, len(steps)))
    disturbance: dict[int, Step] = {
        1: {"raw": draw(st.sampled_from(GARBAGE))},
        2: {"line": FOREIGN_LINE},
        3: {"stderr": "warning: something\n"},
        4: {"sleep": 0.05},
        5: steps[at - 1] if at else {"stderr": ""},
    }
    if how in disturbance:
        steps.insert(at, disturbance[how])
    elif how == 6 and steps:
        del steps[at - 1 if at else 0]
    elif how == 7:
        steps.insert(at, {"hang": True})
    provider: dict[str, Json] = {"steps": steps}
    if how == 8:
        provider["exit"] = draw(st.sampled_from((1, 2, 127, 255)))
    elif how == 9:
        provider["signal"] = draw(st.sampled_from(("SIGKILL", "SIGTERM", "SIGSEGV")))
    return provider


def _schema_source(draw: Draw) -> dict[str, Json]:
    kind = draw(st.integers(0, 9))
    if kind <= 6:
        return {"schema": js.root_schema(draw)}
    if kind == 7:
        return {}
    bad = ("not json", "", '{"type":"object"} {}', '{"type": "object", "minimum": "x"}')
    return {"schema_text": draw(st.sampled_from(bad))}


@st.composite
def agent_cases(draw: Draw, drivers: tuple[str, ...]) -> dict[str, Json]:
    """One agent-cli case: a request for one driver and the fake CLI's transcript."""
    driver = draw(st.sampled_from(drivers))
    source = _schema_source(draw)
    request: dict[str, Json] = {"driver": driver, **source}
    options = (
        ("on_invalid", ("return",)),
        ("mode", ("stream",)),
        ("approval", ("ask",)),
        ("schema_name", ("diagnosis", "  padded name  ", "名前")),
        ("schema_description", ("What failed.", " \n")),
    )
    for key, values in options:
        if js.rarely(draw, 5):
            request[key] = draw(st.sampled_from(values))
    request["timeout"] = TIMEOUT
    steps = _STEPS[agents.get(driver).wire](draw, source.get("schema", {}))
    return {"request": request, "provider": _disturbed(draw, steps)}


def project(outcome: Outcome) -> dict[str, Json]:
    """The part of a canonical outcome a conforming adaptor must reproduce."""
    last = outcome.calls[-1] if outcome.calls else None
    return {
        "status": outcome.status,
        "error": outcome.error,
        "cause": outcome.cause,
        "value": None if outcome.value is None else {"value": outcome.value.value},
        "mechanism": outcome.mechanism,
        "diagnostics": [d.to_json() for d in outcome.diagnostics],
        "launches": outcome.launches,
        "text": outcome.text,
        "raw": None if outcome.raw is None else outcome.raw.value,
        "provider.output_format": None if last is None else last.output_format,
        "provider.schema": None if last is None or last.schema is None else last.schema.value,
    }


def _verdict(seen: dict[str, Json]) -> str:
    if seen["status"] == "ok":
        return "ok"
    cause = f" ({seen['cause']})" if seen["cause"] else ""
    return f"{seen['error']}{cause}"


@dataclass(frozen=True)
class AgentCliFuzzer:
    """The agent-cli seam's fuzzer, over the given drivers."""

    drivers: tuple[str, ...] = DRIVERS
    seam: str = "agent-cli"
    label: str = "agent"

    def cases(self) -> st.SearchStrategy[dict[str, Json]]:
        return agent_cases(self.drivers)

    def classes(self, case: dict[str, Json]) -> tuple[str, ...]:
        """No registry of classes on this seam yet: ``--stats`` lists none."""
        return ()

    def class_names(self) -> tuple[str, ...]:
        return ()

    def judge(self, truth: CaseResult, other: CaseResult) -> Judgement:
        failed = errored(truth, other)
        if failed is not None:
            return failed
        assert isinstance(truth.outcome, Outcome)
        assert isinstance(other.outcome, Outcome)
        left, right = project(truth.outcome), project(other.outcome)
        found = tuple(
            Difference(name, name, left[name], right[name])
            for name in FIELDS
            if show_value(left[name]) != show_value(right[name])
        )
        if not found:
            return Judgement(AGREE, truth=truth, other=other)
        verdicts = ("status", "error", "cause")
        label = None
        if any(d.field in verdicts for d in found):
            label = f"verdict: the other says {_verdict(right)} where the truth does not"
        return Judgement(DISAGREE, found, truth=truth, other=other, label=label)

    def clauses(self, case: dict[str, Json], judgement: Judgement) -> list[str]:
        found = [_FIELD_CLAUSES[f] for f in judgement.fields if f in _FIELD_CLAUSES]
        return list(dict.fromkeys([agents.get(case["request"]["driver"]).clause, *found]))

    def expectation(self, judgement: Judgement) -> dict[str, Json]:
        """The reference's outcome in every compared field, as expectation fields."""
        assert judgement.truth is not None
        assert isinstance(judgement.truth.outcome, Outcome)
        seen = project(judgement.truth.outcome)
        out: dict[str, Json] = {"status": seen["status"]}
        for name in ("error", "cause"):
            if seen[name] is not None:
                out[name] = seen[name]
        if seen["value"] is None:
            out["no_value"] = True
        else:
            out["value"] = seen["value"]["value"]
        out["mechanism"] = seen["mechanism"]
        # A diagnostic without a keyword (a decode failure) is written without one.
        out["diagnostics"] = [
            {k: v for k, v in d.items() if v is not None} for d in seen["diagnostics"]
        ]
        out["launches"] = seen["launches"]
        out["text"] = seen["text"]
        out["raw"] = seen["raw"]
        if seen["launches"]:
            provider: dict[str, Json] = {}
            if seen["provider.output_format"] is not None:
                provider["output_format"] = seen["provider.output_format"]
            if seen["provider.schema"] is None:
                provider["no_schema"] = True
            else:
                provider["schema"] = seen["provider.schema"]
            out["provider"] = provider
        return out
