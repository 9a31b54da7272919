"""
How the reference services run one agent turn: the reference adaptor pipeline.

Throng and T3 both sit in front of an agent CLI.  Behind the reference
models that CLI is one of the fakes, reached through the same pipeline the
agent-cli seam checks (intake, negotiation, launch, parse, validation), so
an end-to-end scenario runs request → service → fake CLI → published result
through code that is itself held to the agent-cli catalogue.  The models
get a `Runner` and never see launchers, processes or HTTP.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.adaptor import pipeline
from harness.adaptor.environment import adaptor_environment
from harness.adaptor.launch import Launcher
from harness.adaptor.pipeline import Provider
from harness.catalogue.outcome import Outcome
from harness.catalogue.scenario import Json, Request


@dataclass(frozen=True)
class TurnInput:
    """One turn as a service asks its agent for it."""

    driver: str
    prompt: str
    #: The JSON Schema the answer must satisfy, passed on as given; None: freeform.
    schema: Json | None
    timeout: float
    #: Where the fake CLI is, as the harness sent it (`Provider.to_json`).
    provider: Mapping[str, Any]


#: Runs one turn to its canonical outcome.
Runner = Callable[[TurnInput], Outcome]


def run_turn(launcher: Launcher, turn: TurnInput) -> Outcome:
    """Run ``turn`` through the reference pipeline, launching the fake with ``launcher``."""
    where = turn.provider
    fake_env = {str(k): str(v) for k, v in dict(where.get("env", {})).items()}
    provider = Provider(
        executables=dict(where.get("executables", {})),
        env={**adaptor_environment(), **fake_env},
        work=Path(str(where.get("work", "."))),
        fake_env=fake_env,
    )
    request = Request(
        driver=turn.driver,
        prompt=turn.prompt,
        schema=None if turn.schema is None else turn.schema.text.encode(),
        timeout=turn.timeout,
    )
    return pipeline.run(request, provider, launcher)
