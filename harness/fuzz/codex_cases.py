"""
The codex cases of the model-api fuzzer: schemas, model scripts, sessions and output files.

A case is one ``codex exec`` run against a scripted Responses API, with its
provider's retries off (as in the captures).  Beside the answers and errors
of one turn, the generator draws what users run codex with (issue 24):

- **resumed sessions**: one or two earlier turns (``earlier_prompts``), each
  run first and resumed by the next (``codex exec resume --last
  --output-schema``); the earlier turns take the script's first steps, so
  what they answered, failed or were cut in is what the case's own turn
  sends back;
- **the -o file** (``output_last_message``), the last agent message codex
  writes when the run ends; the fuzzer compares the run's files too;
- **text output** (no ``--json``): the last message on stdout, the rest on
  stderr;
- **message phases** (``commentary``, ``final_answer``), which the exec
  events drop and a later request sends back.

Scripts end on their own: a step that calls a tool makes codex ask again,
so a script whose last step calls is not repeated.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from harness.fuzz import drawing, world
from harness.fuzz import jsonschemas as js
from harness.seams.model_api.values import show_value

Json = Any
Draw = st.DrawFn
Step = dict[str, Json]

#: Hand-picked errors beside the documented kinds of `world.OPENAI_ERRORS`.
CODEX_ERRORS: tuple[Step, ...] = (
    {"status": 500},
    {"status": 400, "message": "Invalid schema for response_format 'codex_output_schema'"},
    {"status": 429},
    {"status": 401},
    {"status": 503, "headers": {"retry-after": "0"}},
    {
        "status": 400,
        "body": {
            "error": {
                "message": "Invalid schema: 'additionalProperties' is required to be false",
                "type": "invalid_request_error",
                "param": "text.format.schema",
                "code": "invalid_json_schema",
            }
        },
    },
)
#: The file ``-o`` names, in the run's working directory.
LAST_MESSAGE_FILE = "last.txt"
#: The Responses API's phases of a message item.
PHASES = ("commentary", "final_answer")


#: The error kinds that make codex compact a session with history (not modelled):
#: probed, a context window outgrown in a resumed session makes codex summarise the
#: session in requests of its own and drop its oldest items.
COMPACTING = frozenset({"context_length_exceeded", "failed:context_length_exceeded"})


def _error(draw: Draw, resumed: bool) -> Step:
    """An HTTP error or a failed response: the hand-picked ones or a documented kind."""
    if js.rarely(draw, 3):
        return draw(st.sampled_from(CODEX_ERRORS))
    kinds = sorted(k for k in world.OPENAI_ERRORS if not (resumed and k in COMPACTING))
    kind = draw(st.sampled_from(kinds))
    step = dict(draw(st.sampled_from(world.OPENAI_ERRORS[kind])))
    if "midstream_error" in step and draw(st.booleans()):
        step["text"] = drawing.prose(draw)  # a message before the failure
    return step


def _call(draw: Draw) -> Step:
    """A function call codex does not offer: its old ``shell`` tool or a made-up one."""
    if draw(st.booleans()):
        command = draw(st.sampled_from((["echo", "hi"], ["bash", "-lc", "ls"], ["cat", "x"])))
        step: Step = {"tool_name": "shell", "tool": {"command": command}}
    else:
        step = {"tool_name": draw(st.sampled_from(drawing.UNKNOWN_TOOLS)), "tool": {"q": 1}}
    if draw(st.booleans()):
        step["text"] = drawing.prose(draw)  # a progress message before the call
    return step


def _phased(draw: Draw, step: Step) -> Step:
    """Now and then the answer's messages marked with a phase: one for all, or one each."""
    messages = len(step.get("texts", ())) + ("text" in step)
    if not messages or "status" in step or not js.rarely(draw, 6):
        return step
    if messages > 1 and draw(st.booleans()):
        return {**step, "phase": [draw(st.sampled_from(PHASES)) for _ in range(messages)]}
    return {**step, "phase": draw(st.sampled_from(PHASES))}


def _answer(draw: Draw, schema: Json, allow_exec: bool, resumed: bool) -> Step:
    kinds = [0, 1, 2, 3, 4, 6, 6, 7, 8, 9, 10]
    kind = draw(st.sampled_from([*kinds, 5, 5] if allow_exec else kinds))

    def value() -> Json:
        return js.tool_input(draw, schema)

    if kind <= 1:
        return {"text": show_value(value())}
    if kind == 2:
        return {"text": drawing.prose(draw)}
    if kind == 3:
        return {"texts": [drawing.prose(draw), show_value(value())]}
    if kind == 4:
        return {
            "thinking": draw(st.sampled_from(("Reading the log.", *drawing.PROSE[:1]))),
            "text": show_value(value()),
        }
    if kind == 5:
        return _call(draw)
    if kind == 6:
        return _error(draw, resumed)
    if kind == 7:
        return {"text": show_value(value()), "midstream_error": True}
    if kind == 9:  # several messages, the JSON among them or last
        texts = [drawing.prose(draw) for _ in range(draw(st.integers(1, 2)))]
        return (
            {"texts": [*texts, show_value(value())], "text_after": drawing.prose(draw)}
            if draw(st.booleans())
            else {"texts": [*texts, show_value(value())]}
        )
    if kind == 10:
        return (
            {"text": drawing.prose(draw)} if draw(st.booleans()) else {"text": show_value(value())}
        )
    step: Step = {"text": show_value(value())}
    if draw(st.booleans()):
        step = {"thinking": "Reading the log.", "texts": [drawing.prose(draw), show_value(value())]}
    return world.cut_here(draw, "codex", step)


@st.composite
def codex_cases(draw: Draw, allow_exec: bool, timeout: float) -> dict[str, Json]:
    """One codex case: schema, session, output settings and model script."""
    source = drawing.schema_source(draw)
    schema = source.get("schema", {})
    request: dict[str, Json] = {"cli": "codex", **source}
    earlier: list[str] = []
    if js.rarely(draw, 4):  # a resumed session: earlier turns take the script's first steps
        earlier = list(drawing.EARLIER[: draw(st.integers(1, 2))])
        request["earlier_prompts"] = earlier
    budget = drawing.Budget()
    steps = [
        drawing.delayed(
            draw, _phased(draw, _answer(draw, schema, allow_exec, bool(earlier))), budget
        )
        for _ in range(draw(st.integers(1, 3)) + len(earlier))
    ]
    if js.rarely(draw, 4):
        request["output_last_message"] = LAST_MESSAGE_FILE
    if js.rarely(draw, 6):
        request["output_format"] = "text"
    # A repeated tool call would make codex ask forever: such a script does not repeat.
    repeat = "tool" not in steps[-1] and not draw(st.booleans())
    script: Json = steps if repeat else {"steps": steps, "repeat_last": False}
    request["timeout"] = timeout
    return {"request": request, "provider": {"model_script": script}}
