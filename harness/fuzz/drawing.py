"""
What every CLI's model-api generator draws from: prose, made-up tools, schema sources, budgets.

The claude, codex and codebuddy generators (`harness.fuzz.model_api`,
`harness.fuzz.codex_cases`) draw their scripts from the same pools, so a
class of text or tool counts the same whichever CLI meets it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st

from harness.fuzz import jsonschemas as js
from harness.fuzz import world

Json = Any
Draw = st.DrawFn
Step = dict[str, Json]

#: Texts a model writes instead of (or before) calling the tool.
PROSE = ("Looking at the log.", '{"cause": "in text"}', "", "```json\n{}\n```", "Überprüft ✅")
#: Tools the CLIs do not have: calling them runs nothing.
UNKNOWN_TOOLS = ("NoSuchTool", "structured_output", "StructuredOutputs", "lookup_docs")
#: The prompts of a resumed session's earlier turns.
EARLIER = ("First diagnose the build failure.", "Now check the tests too.")
#: Small pauses before an answer: a slow model, never a hung one.
DELAYS = (0.05, 0.3, 1.0)
#: Raw schema texts JSON.parse and Python (or serde) read differently.
RAW_SCHEMAS = (
    "not json",
    '{"type":"object","type":"string"}',
    '{"type":"object","properties":{"n":{"type":"number","maximum":1e999}}}',
    '{"type":"object","properties":{"n":{"const":9007199254740993}}}',
    '\ufeff{"type":"object"}',
    '{"type":"object",}',
    '{"type":"object"} {"type":"string"}',
    '{"type":"object","properties":{"s":{"enum":["\\ud800"]}}}',
)


@dataclass
class Budget:
    """What a script may still spend: retried errors and cut streams each cost a back-off."""

    retries: int = 2
    cuts: int = 1
    delays: int = 1


def prose(draw: Draw) -> str:
    """What a model writes as prose: the usual texts, or a string of one of the world's classes."""
    if js.rarely(draw, 3):
        return draw(world.WORLD_STRINGS)
    return draw(st.sampled_from(PROSE))


def delayed(draw: Draw, step: Step, budget: Budget) -> Step:
    """The step, now and then answered after a short pause (once per script at most)."""
    if budget.delays and js.rarely(draw, 10):
        budget.delays -= 1
        return {**step, "delay": draw(st.sampled_from(DELAYS))}
    return step


def schema_source(draw: Draw) -> dict[str, Json]:
    """The schema as a JSON value, or as raw text JSON parsers read differently."""
    if not js.rarely(draw, 8):
        return {"schema": js.root_schema(draw)}
    return {"schema_text": draw(st.sampled_from(RAW_SCHEMAS))}
