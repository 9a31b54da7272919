"""
The model-api fuzzer: generated schemas, model scripts and settings for claude, codex and codebuddy.

A case is the ``request`` and ``provider`` of a model-api scenario.  Both
targets run it against a fresh fake (`harness.seams.case.execute`), and the
two outcomes are compared on the differential report's projection
(`harness.reports.differential.compare`), the fields a faithful model must
reproduce; the written expectation is what the truth (the real binary) did.

Scripts are built to end on their own within seconds, whatever the binary
makes of them: a step that makes the CLI ask again forever (another tool,
a cut stream, a retryable HTTP error without a retry limit) is never the
last one, which the fake repeats; retryable errors are few and carry short
retry headers; delays are short.  Without ``allow_exec`` no step calls a
tool other than StructuredOutput and no tool is allowed, so no case runs a
command (the real claude runs read-only Bash even without
``--allowedTools``): the seam's own rule, `ModelApiRequest.runs_commands`,
is the one `needs_exec` applies.  With it, steps call Bash (small local
commands) and tools the CLIs do not have.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st

from harness.fuzz import classes, drawing, world
from harness.fuzz import jsonschemas as js
from harness.fuzz.codex_cases import codex_cases
from harness.fuzz.verdict import AGREE, DISAGREE, Difference, Judgement, errored
from harness.reports import differential
from harness.seams.case import CaseResult
from harness.seams.model_api.expect import calls_per_message
from harness.seams.model_api.values import ModelApiOutcome, request_of, show_value

Json = Any
Draw = st.DrawFn
Step = dict[str, Json]

REFUSAL = "I can't help with that request."
#: Commands a generated Bash call may run when the user allows it: small and local.
COMMANDS = ("echo fuzz", "echo fuzz > out.txt", "printf 'a\\nb'", "exit 3", "echo err 1>&2")
#: Statuses the CLIs retry, with short retry headers so that a case stays fast.
RETRYABLE = (529, 429, 500, 503, 408)
RETRY_HEADERS: tuple[dict[str, str], ...] = (
    {"retry-after-ms": "5"},
    {},
    {"retry-after": "0"},
    {"retry-after": "1"},
    {"x-should-retry": "true"},
)
#: Errors that end a claude run at once (or after a quick fixed cascade).
FINAL_ERRORS: tuple[Step, ...] = (
    {"status": 400, "message": "probe: messages.0 something is wrong"},
    {"status": 401},
    {"status": 403},
    {"status": 413},
    {"status": 404},
    {"status": 422, "message": "unprocessable"},
    {"status": 400, "message": "structured_outputs not supported in your workspace."},
    {"status": 500, "headers": {"x-should-retry": "false"}},
    {"status": 400, "body": "not json at all"},
)
#: Environment variables the binary reads, with ordinary and odd values.
CLAUDE_ENV: dict[str, tuple[str, ...]] = {
    "MAX_STRUCTURED_OUTPUT_RETRIES": (
        "1", "2", "0", "-1", " 2 ", "3.5", "1e1", "0x2", "abc", "", "+3", "٣", "2abc", "007",
    ),
    "CLAUDE_CODE_MAX_RETRIES": ("0", "1", "2", "abc", "-1"),
    "ANTHROPIC_MODEL": ("claude-sonnet-4-5", "opus", "haiku", "sonnet", "my-custom-model"),
    "CLAUDE_CODE_MAX_OUTPUT_TOKENS": ("100", "1", "64000", "abc"),
    "MAX_THINKING_TOKENS": ("0", "1024", "abc"),
    "CLAUDE_CODE_EFFORT_LEVEL": ("low", "high", "max", "bogus"),
    "DISABLE_PROMPT_CACHING": ("1",),
}  # fmt: skip
#: CLAUDE_CODE_MAX_RETRIES values that let a retryable error end the script quickly.
FEW_RETRIES = ("0", "1")


def _final_error(draw: Draw, first: bool) -> Step:
    """An error that ends a claude run: the hand-picked ones or a documented kind with its body."""
    if first and js.rarely(draw, 2):
        return draw(st.sampled_from(world.ANTHROPIC_FINAL["prompt_too_long"]))
    if draw(st.booleans()):
        return draw(st.sampled_from(FINAL_ERRORS))
    # A prompt too long later in a session makes the binary compact it (not modelled).
    kinds = [k for k in world.ANTHROPIC_FINAL if first or k != "prompt_too_long"]
    return draw(st.sampled_from(world.ANTHROPIC_FINAL[draw(st.sampled_from(kinds))]))


def _retried(draw: Draw) -> Step:
    """A retryable error: a bare status with a short retry header, or a documented kind."""
    if draw(st.booleans()):
        kind = draw(st.sampled_from(sorted(world.ANTHROPIC_RETRIED)))
        return dict(draw(st.sampled_from(world.ANTHROPIC_RETRIED[kind])))
    step: Step = {"status": draw(st.sampled_from(RETRYABLE))}
    headers = draw(st.sampled_from(RETRY_HEADERS))
    return {**step, "headers": headers} if headers else step


def _claude_answer(
    draw: Draw, schema: Json, final: bool, allow_exec: bool, first: bool = False
) -> Step:
    """A 200 answer or an error; ``final`` ones end the run when repeated."""
    kinds = list(range(11))
    if not final:
        kinds += [12, 14, 11, 13] if allow_exec else [12, 14]
    kind = draw(st.sampled_from(kinds))

    def tool() -> Json:
        return js.tool_input(draw, schema)

    if kind == 0:
        return {"tool": tool()}
    if kind == 1:
        return {"text": drawing.prose(draw)}
    if kind == 2:
        return {"texts": [drawing.prose(draw) for _ in range(draw(st.integers(2, 3)))]}
    if kind == 3:
        return {"text": drawing.prose(draw), "tool": tool()}
    if kind == 4:
        step: Step = {"thinking": "Let me think."}
        return {**step, "tool": tool()} if draw(st.booleans()) else {**step, "text": "Done."}
    if kind == 5:
        calls = [{"input": tool()} for _ in range(draw(st.integers(2, 3)))]
        if allow_exec and draw(st.booleans()):
            calls.insert(
                0, {"name": draw(st.sampled_from(drawing.UNKNOWN_TOOLS)), "input": {"q": 1}}
            )
        return {"tools": calls}
    if kind == 6:
        refused: Step = {"text": REFUSAL, "stop_reason": "refusal"}
        return {**refused, "tool": tool()} if draw(st.booleans()) else refused
    if kind == 7:
        return {"text": "The answer is", "stop_reason": "max_tokens"}
    if kind == 8:
        broken: Step = {"midstream_error": True}
        return {**broken, "tool": tool()} if draw(st.booleans()) else {**broken, "text": "x"}
    if kind == 9:
        return {}
    if kind == 10:
        return _final_error(draw, first)
    if kind == 11:
        return {
            "tool_name": draw(st.sampled_from(drawing.UNKNOWN_TOOLS)),
            "tool": {"q": draw(js.PRIMITIVES)},
        }
    if kind == 12:
        return world.cut_here(draw, "claude", {"tool": tool()})
    if kind == 14:  # a cut anywhere in an answer with prose (inside its tool block, say)
        return world.cut_here(draw, "claude", {"text": drawing.prose(draw), "tool": tool()})
    return {"tool_name": "Bash", "tool": {"command": draw(st.sampled_from(COMMANDS))}}


def _claude_script(
    draw: Draw, schema: Json, env: dict[str, str], allow_exec: bool, resumed: bool
) -> list[Step]:
    budget = drawing.Budget()
    steps: list[Step] = []
    for number in range(draw(st.integers(0, 3))):
        if budget.retries and js.rarely(draw, 4):
            budget.retries -= 1
            step = _retried(draw)
        else:
            first = number == 0 and not resumed
            step = _claude_answer(draw, schema, final=False, allow_exec=allow_exec, first=first)
            if "truncate_after" in step:
                if not budget.cuts:
                    step = {k: v for k, v in step.items() if k != "truncate_after"}
                budget.cuts = 0
        steps.append(drawing.delayed(draw, step, budget))
    first = not steps and not resumed
    last = _claude_answer(draw, schema, final=True, allow_exec=allow_exec, first=first)
    if env.get("CLAUDE_CODE_MAX_RETRIES") in FEW_RETRIES and js.rarely(draw, 4):
        last = {"status": draw(st.sampled_from(RETRYABLE)), "headers": {"retry-after-ms": "5"}}
    return [*steps, drawing.delayed(draw, last, budget)]


def _env(draw: Draw, pools: dict[str, tuple[str, ...]]) -> dict[str, str]:
    names = draw(st.lists(st.sampled_from(sorted(pools)), max_size=2, unique=True))
    return {name: draw(st.sampled_from(pools[name])) for name in sorted(names)}


@st.composite
def claude_cases(draw: Draw, allow_exec: bool, timeout: float) -> dict[str, Json]:
    """One claude case: schema, output format, settings, allowed tools, model script."""
    source = drawing.schema_source(draw)
    schema = source.get("schema", {})
    env = _env(draw, CLAUDE_ENV)
    request: dict[str, Json] = {"cli": "claude", **source}
    if draw(st.booleans()):
        request["output_format"] = "stream-json"
    if env:
        request["env"] = env
    if js.rarely(draw, 5):  # a resumed session: earlier turns take the script's first steps
        request["earlier_prompts"] = list(drawing.EARLIER[: draw(st.integers(1, 2))])
    script = _claude_script(draw, schema, env, allow_exec, bool(request.get("earlier_prompts")))
    if allow_exec and draw(st.booleans()):
        request["allowed_tools"] = ["Bash"]
    overloaded = any(step.get("status") == 529 for step in script[-1:])
    if not overloaded and js.rarely(draw, 8):
        request["fallback_model"] = "claude-sonnet-4-5"
    request["timeout"] = timeout
    return {"request": request, "provider": {"model_script": script}}


#: How many calls a generated CodeBuddy message makes at once.  With three or more,
#: the results of all but the last sometimes go back to the model as the tool's raw
#: output, ``{"content": ..., "error": ...}`` as JSON text, and sometimes as the text
#: alone, run by run (probed on 2.117.0: one, none or all of them), so no rule says
#: which; with two, every probe sent the texts (docs/codebuddy.md).
CALLS_AT_ONCE = 2


def _codebuddy_answer(draw: Draw, schema: Json, final: bool) -> Step:
    """
    A 200 answer; the ``final`` one, which the fake repeats, is prose, so that
    every run ends by itself within four turns (rule C-03): a repeated call would
    keep CodeBuddy asking forever (C-01, C-02), and an HTTP error or a mid-stream
    error makes it wait for minutes (C-05), so neither is generated.
    """
    kinds = [0, 1] if final else [0, 1, 2, 3, 3, 3, 4, 5, 6]
    kind = draw(st.sampled_from(kinds))

    def tool() -> Json:
        return js.tool_input(draw, schema)

    if kind == 0:
        return {"text": draw(st.sampled_from([p for p in drawing.PROSE if p]))}
    if kind == 1:
        return {"texts": draw(st.lists(st.sampled_from(drawing.PROSE[:2]), min_size=2, max_size=2))}
    if kind == 2:  # two calls: of three or more, what goes back races (CALLS_AT_ONCE)
        return {"tools": [{"input": tool()} for _ in range(CALLS_AT_ONCE)]}
    if kind == 3:
        return {"tool": tool()}
    if kind == 4:
        return {"tool_name": draw(st.sampled_from(drawing.UNKNOWN_TOOLS)), "tool": {"q": 1}}
    if kind == 5:
        return {"text": draw(st.sampled_from(drawing.PROSE[:2])), "tool": tool()}
    return {"tool": tool(), "truncate_after": draw(st.integers(1, 6))}


@st.composite
def codebuddy_cases(draw: Draw, allow_exec: bool, timeout: float) -> dict[str, Json]:
    """One codebuddy case: schema, output format and a model script that ends by itself."""
    source = drawing.schema_source(draw) if js.rarely(draw, 3) else {"schema": js.root_schema(draw)}
    schema = source.get("schema", {})
    budget = drawing.Budget()
    steps: list[Step] = []
    for _ in range(draw(st.integers(0, 3))):
        step = _codebuddy_answer(draw, schema, final=False)
        if "truncate_after" in step:
            if not budget.cuts:
                step = {k: v for k, v in step.items() if k != "truncate_after"}
            budget.cuts = 0
        steps.append(step)
    steps.append(_codebuddy_answer(draw, schema, final=True))
    request: dict[str, Json] = {"cli": "codebuddy", **source, "timeout": timeout}
    request["output_format"] = draw(st.sampled_from(("stream-json", "json", "text")))
    return {"request": request, "provider": {"model_script": steps}}


CASES: dict[str, Callable[[bool, float], st.SearchStrategy[dict[str, Json]]]] = {
    "claude": claude_cases,
    "codex": codex_cases,
    "codebuddy": codebuddy_cases,
}
#: The clause a generated case of each CLI cites.
CLAUSES = {"claude": "LOOP-01", "codex": "CDX-06", "codebuddy": "CBY-02"}


def needs_exec(case: dict[str, Json]) -> bool:
    """Whether a case would make the CLI run a command: the seam's own rule."""
    return request_of(case["request"], case["provider"]).runs_commands()


# -- judging and writing back ------------------------------------------------------------


@dataclass(frozen=True)
class ModelApiFuzzer:
    """The model-api seam's fuzzer for one CLI."""

    cli: str
    allow_exec: bool = False
    timeout: float = 12.0
    seam: str = "model-api"

    @property
    def label(self) -> str:
        return self.cli

    def cases(self) -> st.SearchStrategy[dict[str, Json]]:
        return CASES[self.cli](self.allow_exec, self.timeout)

    def classes(self, case: dict[str, Json]) -> tuple[str, ...]:
        """The classes of the users' world ``case`` draws (`harness.fuzz.classes`)."""
        return classes.drawn(self.cli, case)

    def class_names(self) -> tuple[str, ...]:
        return classes.names(self.cli)

    def judge(self, truth: CaseResult, other: CaseResult) -> Judgement:
        """The differential's projection of both outcomes, compared."""
        failed = errored(truth, other)
        if failed is not None:
            return failed
        pair = differential.compare(other, truth)
        if pair.not_comparable is not None:
            return Judgement("errored", reason=pair.not_comparable, truth=truth, other=other)
        found = tuple(Difference(d.field, d.at, d.real, d.reference) for d in pair.differences)
        found += _files(self.cli, _outcome(truth), _outcome(other))
        if not found:
            return Judgement(AGREE, truth=truth, other=other)
        return Judgement(DISAGREE, found, truth=truth, other=other, label=label(found))

    def clauses(self, case: dict[str, Json], judgement: Judgement) -> list[str]:
        return [CLAUSES[self.cli]]

    def expectation(self, judgement: Judgement) -> dict[str, Json]:
        """What the truth did, in the expectation fields a model-api scenario has."""
        truth = _outcome(judgement.truth)
        seen = None if judgement.other is None else judgement.other.outcome
        other = seen if isinstance(seen, ModelApiOutcome) else None
        fields = set(judgement.fields)
        final = truth.final or {}
        out: dict[str, Json] = {"exit_code": truth.exit_code}
        if truth.timed_out or "timed_out" in fields:
            out["timed_out"] = truth.timed_out
        line = next((x for x in truth.stderr.splitlines() if x.strip()), None)
        if line is not None and "stderr" in fields:
            out["stderr_contains"] = line
        if self.cli in _RESULT_RECORD:
            for name in ("subtype", "is_error", "terminal_reason"):
                if final.get(name) is not None:
                    out[name] = final[name]
        if final.get("structured_output") is not None:
            out["structured_output"] = final["structured_output"]
        else:
            out["no_structured_output"] = True
        if isinstance(final.get("result"), str):
            out["result"] = final["result"]
        errors = [e for e in final.get("errors") or [] if isinstance(e, str)]
        if errors:
            out["errors_contain"] = errors
        out["line_types"] = list(truth.line_types)
        if self.cli in FILES_COMPARED and (truth.files or "files" in fields):
            absent = {} if other is None else dict.fromkeys(dict(other.files))
            out["files"] = {**absent, **dict(truth.files)}  # None: the truth left no such file
        out.update(_requests(self.cli, truth, other, fields))
        return out


#: The CLIs whose runs' files are compared too.  A generated codex case runs no
#: command (codex answers the calls it draws as unsupported), so its working
#: directory holds only what codex itself wrote there: the ``-o`` file.
FILES_COMPARED = frozenset({"codex"})


def _files(cli: str, truth: ModelApiOutcome, other: ModelApiOutcome) -> tuple[Difference, ...]:
    """The run's files as a difference when ``cli``'s files are compared and they differ."""
    mine, theirs = dict(truth.files), dict(other.files)
    if cli not in FILES_COMPARED or mine == theirs:
        return ()
    return (Difference("files", "files", mine, theirs),)


#: The CLIs that print a result record, whose verdict fields an expectation names.
_RESULT_RECORD = frozenset({"claude", "codebuddy"})
#: Fields with few values: a class names both sides' values of these.
VERDICT_FIELDS = (
    "exit_code",
    "timed_out",
    "final.type",
    "final.subtype",
    "final.is_error",
    "final.terminal_reason",
)


def label(found: tuple[Difference, ...]) -> str:
    """
    The class of a disagreement: both values of the verdict fields that differ
    (``exit_code 1 vs 0``), or else the fields that differ.  A different verdict
    drags most other fields along, so naming them all would split one cause
    into as many classes as there are ways the rest happens to differ.
    """
    differing = {d.field for d in found}
    # The subtype implies is_error and the line's type; naming them again adds nothing.
    implied = {"final.type", "final.is_error"} if "final.subtype" in differing else set()
    verdicts = [
        f"{d.field} {show_value(d.truth)} vs {show_value(d.other)}"
        for d in found
        if d.field in VERDICT_FIELDS and d.field not in implied
    ]
    if verdicts:
        return "; ".join(verdicts)
    return ", ".join(dict.fromkeys(d.field for d in found if d.field != "status"))


def _outcome(result: CaseResult | None) -> ModelApiOutcome:
    assert result is not None
    assert isinstance(result.outcome, ModelApiOutcome), result
    return result.outcome


def _requests(
    cli: str, truth: ModelApiOutcome, other: ModelApiOutcome | None, fields: set[str]
) -> dict[str, Json]:
    """The request-side expectations: counts always, the rest where the two differ."""
    # Side requests (a release's connectivity check) are neither counted nor unexpected.
    answered = [r for r in truth.requests if r.conversation]
    out: dict[str, Json] = {"requests": len(answered)}
    if all(r.unexpected is None for r in truth.requests):
        out["no_unexpected_requests"] = True
    side = [r.side for r in truth.requests if r.side is not None]
    if other is not None and side != [r.side for r in other.requests if r.side is not None]:
        out["side_requests"] = side
    if not answered:
        return out
    if "requests.model" in fields:
        out["models"] = [r.model for r in answered]
    schemas = {show_value(r.input_schema) for r in answered}
    if cli == "claude" and "requests.input_schema" in fields and len(schemas) == 1:
        out["input_schema"] = answered[0].input_schema
    if cli == "claude" and "requests.strict" in fields:
        out["strict_each"] = [bool(r.strict) for r in answered]
    formats = {show_value(r.text_format) for r in answered}
    known = answered[0].text_format is not None  # a request without one: the key cannot say it
    if cli == "codex" and "requests.text_format" in fields and len(formats) == 1 and known:
        out["text_format"] = answered[0].text_format
    if "requests.messages_after_prompt" in fields and other is not None:
        theirs = set(_leaves([r.messages_after_prompt for r in other.requests]))
        mine = _leaves([r.messages_after_prompt for r in answered])
        missing = [t for t in dict.fromkeys(mine) if t not in theirs and t.strip()]
        if missing:
            out["messages_after_prompt_contain"] = missing[:3]
        added = _leaves([r.messages_after_prompt for r in other.requests])
        extra = [t for t in dict.fromkeys(added) if t not in set(mine) and t.strip()]
        if extra:  # what the judged target added: the truth must stay without it
            out["messages_after_prompt_lack"] = extra[:3]
        here, there = ([list(calls_per_message(r.messages_after_prompt)) for r in o.requests
                           if r.conversation] for o in (truth, other))  # fmt: skip
        if here != there:  # how several calls of one message went back
            out["calls_per_message"] = here
    return out


def _leaves(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [leaf for item in value.values() for leaf in _leaves(item)]
    if isinstance(value, list):
        return [leaf for item in value for leaf in _leaves(item)]
    return []
