"""
Generated provider scripts: invariants that must hold for every event stream.

Thousands of random Codex and Claude transcripts (valid events, raw garbage,
stray exits and signals) go through the reference pipeline in process.
Whatever happens, the pipeline returns a well-formed outcome, never a
candidate from a failed or missing terminal, and never raises.
"""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness import targets
from harness.catalogue.outcome import Outcome
from harness.catalogue.scenario import Expectation, Json, Request, Scenario, Script, Seam, Step
from harness.seams.case import execute
from harness.targets.protocol import problems

SCHEMA = b'{"type":"object","properties":{"a":{"type":"integer"}},"required":["a"]}'
VALID = '{"a":1}'

texts = st.sampled_from([VALID, '{"a":"x"}', "prose", "", '```json\n{"a":1}\n```', '{"a":1} {}'])

codex_steps = st.one_of(
    st.sampled_from(["thread.started", "turn.started", "turn.completed", "warning"]).map(Step),
    texts.map(lambda t: Step("agent_message", Json.of(t))),
    texts.map(lambda t: Step("agent_message.started", Json.of(t))),
    st.just(Step("turn.failed", Json.of("boom"))),
    st.just(Step("error", Json.of("oops"))),
    st.sampled_from(["{not json\n", "plain words\n", "[1,2]\n", "\n"]).map(
        lambda r: Step("raw", Json.of(r))
    ),
)

claude_steps = st.one_of(
    st.sampled_from(["init", "enforce_reminder"]).map(Step),
    texts.map(lambda t: Step("text", Json.of(t))),
    st.sampled_from([{"a": 1}, {"a": "x"}, {}]).map(
        lambda v: Step("structured_output", Json.of(v))
    ),
    st.sampled_from(
        [
            None,
            {"subtype": "error_max_structured_output_retries", "errors": ["no"]},
            {"is_error": True, "api_error_status": 529, "result": "API Error: 529"},
            {"subtype": "error_during_execution", "errors": ["x"]},
            {"structured_output": "__absent__"},
            {"result": VALID},
        ]
    ).map(lambda a: Step("result", None if a is None else Json.of(a))),
    st.sampled_from(["{broken\n", "garbage\n"]).map(lambda r: Step("raw", Json.of(r))),
)


def _scenario(
    cli: str, steps: list[Step], exit: int | None, sig: str | None, mode: str
) -> Scenario:
    return Scenario(
        id="generated",
        title="generated",
        description="generated",
        clauses=("CDX-04",),
        seam=Seam.AGENT_CLI,
        request=Request(driver=cli, schema=SCHEMA, mode=mode, timeout=5.0),
        expect=Expectation(),
        path=Path("generated.yaml"),
        script=Script(cli=cli, steps=tuple(steps), exit=exit, signal=sig),
    )


FAILING_EVENTS = {"turn.failed", "error"}
exits = st.one_of(st.none(), st.sampled_from([0, 1, 2, 137]))
signals = st.one_of(st.none(), st.sampled_from(["SIGKILL", "SIGTERM"]))
TARGET = targets.create("reference-inproc")


def _check(scenario: Scenario) -> Outcome:
    result = execute(scenario, TARGET)
    assert result.status == "passed", result.reason  # an empty expectation always passes
    outcome = result.outcome
    assert isinstance(outcome, Outcome), outcome  # agent-cli's seam outcome
    assert problems("outcome", outcome.to_json()) == []
    assert outcome.launches == 1
    if outcome.value is not None:
        assert outcome.value.value == {"a": 1}
        assert outcome.status == "ok"
    return outcome


# Mostly well-framed streams (thread first, terminal last) so that the
# interesting cases, a clean frame with one bad event inside, come up often.
codex_streams = st.builds(
    lambda head, middle, tail: [Step("thread.started")] * head + middle + tail,
    st.booleans(),
    st.lists(codex_steps, max_size=6),
    st.sampled_from([[Step("turn.completed")], [Step("turn.completed")], []]),
)


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(codex_streams, exits, signals)
def test_codex_streams(steps: list[Step], exit: int | None, sig: str | None) -> None:
    outcome = _check(_scenario("codex", steps, exit, sig, "run"))
    kinds = [s.kind for s in steps]
    if (
        FAILING_EVENTS & set(kinds)
        or sig is not None
        or (exit not in (None, 0))
        or "turn.completed" not in kinds
    ):
        assert outcome.value is None, kinds


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.builds(
        lambda head, middle: [Step("init")] * head + middle,
        st.booleans(),
        st.lists(claude_steps, max_size=7),
    ),
    exits,
    signals,
    st.sampled_from(["run", "stream"]),
)
def test_claude_streams(steps: list[Step], exit: int | None, sig: str | None, mode: str) -> None:
    outcome = _check(_scenario("claude", steps, exit, sig, mode))
    results = [s for s in steps if s.kind == "result"]
    last = {} if not results or results[-1].arg is None else results[-1].arg.value
    failed_terminal = (
        not results or last.get("subtype", "success") != "success" or last.get("is_error") is True
    )
    if failed_terminal or sig is not None:
        assert outcome.value is None
