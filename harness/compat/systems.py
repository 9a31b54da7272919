"""
The systems a schema is handed to, each asked the same three questions.

Accepted at start (or the exact words of the refusal)?  What goes on the
wire, and is it marked strict?  Each system is one record of `SYSTEMS`:
the adaptor contract of seed 001 answers in process through the reference
pipeline's intake; a CLI answers through the model-api seam, as a scenario
would, so the same question reaches the reference model of a release or
the real binary of that release with nothing else changed.  A CLI that
takes the schema makes at least one request; its first one carries the
wire schema (Claude Code's StructuredOutput tool, Codex's ``text.format``).
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness import targets
from harness.adaptor.intake import SchemaOption, SchemaRejected, intake
from harness.catalogue import files, loader
from harness.exceptions import HarnessError
from harness.seams import RunOptions
from harness.seams.case import execute
from harness.seams.model_api.values import ARG_MAX_STRLEN, ModelApiOutcome, SeenRequest
from harness.systems.claude import strict
from providers_fake.api import realcli

Json = Any
#: Seconds a CLI may take to answer the question (start-up and one request).
TIMEOUT = 60.0
#: What the adaptor row names as its release: the contract, not a program.
CONTRACT = "seed-001"


@dataclass(frozen=True)
class Answer:
    """What one system did with one schema."""

    accepted: bool
    #: The refusal as the system words it (a CLI's stderr, the adaptor's error kind).
    error: str | None
    #: The schema sent to the model (None when refused before any request).
    wire_schema: Json
    #: The strict flag sent with it (None where the system sends none).
    strict: bool | None
    #: How the wire schema came to be: as written, rewritten, or not sent.
    how: str
    #: What the system would send if its remote strict gate were on (Claude Code).
    gated: Json = None

    def to_json(self) -> dict[str, Json]:
        data = {
            "accepted": self.accepted,
            "error": self.error,
            "wire_schema": self.wire_schema,
            "strict": self.strict,
            "how": self.how,
        }
        if self.gated is not None:
            data["strict_gate_on"] = self.gated
        return data

    def same(self, other: Answer) -> tuple[str, ...]:
        """The fields the two answers differ in (what ``--against real`` compares)."""
        return tuple(
            name
            for name in COMPARED
            if canonical(getattr(self, name)) != canonical(getattr(other, name))
        )


#: What ``--against real`` compares of two answers.
COMPARED = ("accepted", "error", "wire_schema", "strict")


def canonical(value: Json) -> str:
    """A value as JSON text that compares equal exactly when the values do."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def _how(written: Json, sent: Json) -> str:
    if sent is None:
        return "not sent"
    return "as written" if canonical(written) == canonical(sent) else "rewritten"


def adaptor(text: str, release: str | None, kind: str) -> Answer:
    """Seed 001's intake: the error kind and reason, or the document it hands a CLI."""
    del release, kind  # one contract, judged in process
    option = SchemaOption(text.encode("utf-8"), None, None, "json_schema", "error")
    try:
        schema = intake(option)
    except SchemaRejected as refused:
        return Answer(False, f"invalid_output_schema: {refused}", None, None, "not sent")
    return Answer(True, None, schema.document, None, _how(_parsed(text), schema.document))


def _parsed(text: str) -> Json:
    try:
        return json.loads(text)
    except ValueError:
        return None


#: The prompt every CLI is asked with; the answer never matters, only the first request.
PROMPT = "Answer with the structured output."


def _case(cli: str, text: str, timeout: float) -> dict[str, Json]:
    """A model-api scenario that asks ``cli`` to take ``text`` and answer once."""
    request: dict[str, Json] = {"cli": cli, "prompt": PROMPT, "schema_text": text}
    request["timeout"] = timeout
    answer: Json = {"tool": {}} if cli == "claude" else {"text": "{}"}
    return {
        "id": f"schema-{cli}",
        "title": "Will the schema work: the first request",
        "description": "Written by harness schema; judged by what the CLI sends, not by expect.",
        "clauses": ["SCH-09"] if cli == "claude" else ["CDX-06"],
        "tags": ["schema"],
        "seam": "model-api",
        "request": request,
        "provider": {"model_script": {"steps": [answer], "repeat_last": False}},
        "expect": {"exit_code": 0, "requests": 0, "line_types": [], "no_structured_output": True},
    }


def _observe(cli: str, text: str, spec: str, options: RunOptions) -> ModelApiOutcome:
    with tempfile.TemporaryDirectory(prefix="harness-schema-") as scratch:
        path = Path(scratch) / f"schema-{cli}.yaml"
        # JSON is YAML, and the compactest way to carry a large schema through the loader.
        question = json.dumps(_case(cli, text, TIMEOUT), ensure_ascii=False)
        if len(question.encode()) > files.MAX_BYTES and _parsed(text) is not None:
            # Escaped as a string the text outgrows the scenario bound; as a JSON value it
            # does not (the CLI then gets it re-serialised: same values, its own spacing).
            case = _case(cli, text, TIMEOUT)
            case["request"].pop("schema_text")
            case["request"]["schema"] = _parsed(text)
            question = json.dumps(case, ensure_ascii=False)
        path.write_text(question)
        loaded = loader.load([path])
        if loaded.problems or len(loaded.scenarios) != 1:
            # Named by what is wrong, not by the throwaway file it was written to.
            problems = "; ".join(p.message for p in loaded.problems)
            raise HarnessError(f"schema: the question for {cli} does not load: {problems}")
        result = execute(loaded.scenarios[0], targets.shared(spec), options)
    if not isinstance(result.outcome, ModelApiOutcome):
        raise HarnessError(f"schema: {spec} could not answer for {cli}: {result.reason}")
    return result.outcome


def _first(outcome: ModelApiOutcome) -> SeenRequest | None:
    """The first request of the conversation (not a side request such as a connectivity check)."""
    return next((r for r in outcome.requests if r.side is None), None)


def _refusal(outcome: ModelApiOutcome) -> str:
    lines = [line for line in outcome.stderr.splitlines() if line.strip()]
    return lines[-1] if lines else f"exit {outcome.exit_code} before any request"


def claude(text: str, release: str | None, kind: str) -> Answer:
    """Claude Code: its start-up checks, then the StructuredOutput tool of its first request."""
    size = len(text.encode("utf-8"))
    if size >= ARG_MAX_STRLEN:  # execve refuses the argument (E2BIG): no caller can start it
        why = f"cannot start: --json-schema is {size} bytes, over Linux's {ARG_MAX_STRLEN}-byte cap"
        return Answer(False, why + " on one argument (MAX_ARG_STRLEN)", None, None, "not sent")
    outcome = _observe("claude", text, _spec(kind, "claude", release), RunOptions())
    first = _first(outcome)
    if first is None:
        return Answer(False, _refusal(outcome), None, None, "not sent")
    sent, flag = first.input_schema, first.strict
    derived = strict.derive(_parsed(text))
    gated: Json = derived.schema if derived.ok else {"falls_back": derived.reason}
    return Answer(
        True, None, sent, flag if isinstance(flag, bool) else None, _how(_parsed(text), sent), gated
    )


def codex(text: str, release: str | None, kind: str) -> Answer:
    """``codex exec --output-schema``: the ``text.format`` of its first request."""
    outcome = _observe("codex", text, _spec(kind, "codex", release), RunOptions())
    first = _first(outcome)
    if first is None:
        return Answer(False, _refusal(outcome), None, None, "not sent")
    shown = first.text_format
    form = shown if isinstance(shown, dict) else {}
    sent, flag = form.get("schema"), form.get("strict")
    return Answer(
        True, None, sent, flag if isinstance(flag, bool) else None, _how(_parsed(text), sent)
    )


def _spec(kind: str, cli: str, release: str | None) -> str:
    return kind if release is None else f"{kind}:{cli}={release}"


@dataclass(frozen=True)
class System:
    """One system a schema can be handed to."""

    name: str
    #: The release asked when none is named (None: the system has no releases).
    pinned: str | None
    ask: Callable[[str, str | None, str], Answer]
    #: Whether its validator judges values locally (what `values` compares).
    validates: bool


SYSTEMS: Mapping[str, System] = {
    "adaptor": System("adaptor", None, adaptor, validates=True),
    "claude": System("claude", realcli.PINNED["claude"], claude, validates=True),
    "codex": System("codex", realcli.PINNED["codex"], codex, validates=False),
}
#: The CLIs among them (what ``--cli`` chooses from).
CLIS = tuple(name for name in SYSTEMS if SYSTEMS[name].pinned is not None)
