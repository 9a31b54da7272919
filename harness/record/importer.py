"""
``harness import``: a CLI's saved stdout as an agent-cli scenario that prints it again.

The reference pipeline is asked what it would launch for the request (the
driver, the schema, the transport the transcript shows), so the fake is
rendered with exactly the argv the scenario will give it.  Each record is
then explained by the first semantic event whose rendering reproduces it
(`proposals`, checked by `matcher.Stage`), or kept verbatim: a ``line`` step
when Python writes the JSON back byte for byte, a ``raw`` step otherwise.
Finally the scenario is run on the reference pipeline in process and its
outcome becomes the expectation, so the user edits only what they disagree
with.
"""

from __future__ import annotations

import copy
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness import seams, targets
from harness.adaptor.environment import adaptor_environment
from harness.adaptor.launch import EXECUTABLES, Finished
from harness.adaptor.negotiate import BUILTIN
from harness.adaptor.pipeline import Provider, run
from harness.catalogue import agents
from harness.catalogue.bounded import read_regular
from harness.catalogue.outcome import Outcome
from harness.catalogue.scenario import Request
from harness.exceptions import CannotWrite, Unreadable
from harness.record import scrub, write
from harness.record.asked import schema_field
from harness.record.matcher import Stage, Step
from harness.record.proposals import PROPOSERS
from harness.record.transcript import MAX_BYTES, Record, Transcript, read
from providers_fake.cli.jsonout import dumps_py

_LONGEST_MESSAGE = 300
#: Records explained by events; each check replays the script so far, so the cost grows
#: with the square of the length, and later records are kept verbatim.
MAX_MATCHED = 1000


@dataclass(frozen=True)
class Options:
    """What ``harness import`` was asked."""

    driver: str
    transcript: Path
    schema: Path | None = None
    exit_code: int | None = None
    out: Path | None = None
    scenario_id: str | None = None
    prompt: str | None = None
    clauses: tuple[str, ...] = ()


@dataclass(frozen=True)
class Imported:
    text: str
    summary: str
    steps: tuple[Step, ...]
    outcome: Outcome


def import_transcript(options: Options) -> Imported:
    transcript = read(options.transcript)
    # Named after the file written, else after the transcript.
    named_after = options.out or Path(f"imported-{options.transcript.stem}")
    name = write.scenario_id(options.scenario_id, named_after, "imported")
    request = _request(options, transcript)
    document: dict[str, Any] = {
        "id": name,
        "title": f"Imported {options.driver} transcript {options.transcript.name}",
        "description": "(filled in below)",
        "clauses": ["CLA-01"],
        "tags": [options.driver, "imported"],
        "seam": "agent-cli",
        "request": request,
        "provider": {"steps": []},
        # A placeholder that lints (the real expectation is the reference's outcome, below).
        "expect": {"status": "ok", "no_value": True},
    }
    with tempfile.TemporaryDirectory(prefix="harness-import-") as scratch:
        work = Path(scratch)
        launched = _launch(write.load_back(write.dump(document, []), options.out).request, work)
        steps, exit_code = _steps(options, transcript, launched, name, work)
    provider: dict[str, Any] = {"steps": steps}
    if options.exit_code is not None and options.exit_code != exit_code:
        provider["exit"] = options.exit_code
    if agents.get(options.driver).json_array and transcript.single_result:
        provider["json_shape"] = "object"
    document["provider"] = provider
    scenario = write.load_back(write.dump(document, []), options.out)
    reference = targets.create("reference-inproc")
    outcome = seams.require("agent-cli").observe(scenario, reference, seams.RunOptions())
    assert isinstance(outcome, Outcome)
    document["expect"] = expectation(outcome)
    verdict = _verdict(outcome)
    document["title"] = f"Imported {options.driver} transcript: {verdict}"
    document["description"] = (
        f"Replays the saved stdout {options.transcript.name} ({len(transcript.records)} "
        f"record(s)) through fake-{options.driver}; the expectation is what the reference "
        "pipeline concluded at import time. Say here what the case documents, and edit the "
        "expectation where you disagree."
    )
    document["clauses"] = list(options.clauses or _clauses(options.driver, outcome))
    comments = [
        f"Imported by `harness import --driver {options.driver}`; review the title, description,",
        "clauses and expectation before committing it.",
    ]
    text = write.dump(document, comments)
    write.load_back(text, options.out)
    events = sum(1 for s in steps if not (isinstance(s, dict) and next(iter(s)) in ("line", "raw")))
    summary = (
        f"{len(steps)} step(s), {events} of them semantic events; the reference says {verdict}"
    )
    return Imported(text, summary, tuple(steps), outcome)


def _request(options: Options, transcript: Transcript) -> dict[str, Any]:
    request: dict[str, Any] = {"driver": options.driver}
    if options.prompt is not None:
        request["prompt"] = options.prompt
    if options.schema is not None:
        try:
            text = read_regular(options.schema, MAX_BYTES).decode("utf-8")
        except (OSError, UnicodeDecodeError, Unreadable) as error:
            raise CannotWrite(str(options.schema), "--schema", f"cannot read: {error}") from None
        request.update(schema_field(text))
    streamed = transcript.framing == "lines" and transcript.records and not transcript.single_result
    # The CLIs whose built-in driver takes structured output on its rich transport
    # (stream-json) as well as on its batch one (json).
    declared = BUILTIN[options.driver]
    if declared.streaming and streamed:
        request["mode"] = "stream"
    elif agents.get(options.driver).stream_json and streamed:
        # A stream-json transcript of a CLI whose built-in descriptor keeps structured
        # output off that transport is replayed by declaring it there.
        request["descriptor"] = {
            "native": declared.native,
            "prompt": declared.prompt,
            "run": declared.run,
            "streaming": True,
        }
    elif declared.streaming:
        # The consumer's mode does not choose the transport (seed 001): a json
        # transcript is replayed by declaring structured output unsupported on
        # the rich transport, so negotiation picks the batch one.
        request["descriptor"] = {
            "native": declared.native,
            "prompt": declared.prompt,
            "run": declared.run,
            "streaming": False,
        }
    return request


@dataclass(frozen=True)
class _Launched:
    """The fake launch the reference pipeline makes for the request (None: it launches none)."""

    argv: tuple[str, ...] | None
    env: Mapping[str, str]


class _Capture:
    """A launcher that only notes what the pipeline would start."""

    def __init__(self) -> None:
        self.argv: tuple[str, ...] | None = None

    def launch(
        self, argv: Sequence[str], env: Mapping[str, str], timeout: float, cwd: Path
    ) -> Finished:
        self.argv = tuple(argv)
        return Finished(b"", b"", 0)


def _launch(request: object, work: Path) -> _Launched:
    assert isinstance(request, Request)
    capture = _Capture()
    env = adaptor_environment()  # what the reference target gives the fake, too
    run(request, Provider(dict(EXECUTABLES), env, work), capture)
    return _Launched(capture.argv, env)


def _steps(
    options: Options, transcript: Transcript, launched: _Launched, seed: str, work: Path
) -> tuple[list[Step], int]:
    """The steps that print the transcript again, and the exit status they give."""
    verbatim = [_verbatim(r) for r in transcript.records]
    if transcript.framing == "text":
        return [{"raw": transcript.raw}], 0
    if launched.argv is None:
        return verbatim, 0  # the pipeline refuses before launch: nothing to render against
    stage = Stage(
        options.driver, launched.argv[1:], launched.env, seed=seed, transcript=transcript, work=work
    )
    if agents.get(options.driver).json_array and transcript.single_result:
        stage.json_shape = "object"
    steps = _match(stage, transcript, options.driver)
    if steps is None or not stage.fits(steps, len(transcript.records)):
        if transcript.framing == "array":
            return [{"raw": transcript.raw}], 0
        steps = verbatim
    return steps, stage.replay(steps).exit_code


def _match(stage: Stage, transcript: Transcript, driver: str) -> list[Step] | None:
    propose = PROPOSERS[driver]
    records = transcript.records
    chosen: list[Step] = []
    index = 0
    while index < len(records):
        found = None
        if isinstance(records[index].value, dict) and index < MAX_MATCHED:
            for steps, count in propose(records, index, chosen, stage):
                if stage.fits([*chosen, *steps], index + count):
                    found = (_pruned(stage, chosen, steps, index + count), count)
                    break
        if found is None:
            if transcript.framing == "array":
                return None  # an array element cannot be printed verbatim on its own
            chosen.append(_verbatim(records[index]))
            index += 1
            continue
        chosen.extend(found[0])
        index += found[1]
    return chosen


def _pruned(stage: Stage, chosen: list[Step], steps: list[Step], count: int) -> list[Step]:
    """The candidate with every argument field it does not need left out."""
    steps = copy.deepcopy(steps)
    last = steps[-1]
    if not isinstance(last, dict):
        return steps
    ((event, arg),) = last.items()
    if event == "result" or not isinstance(arg, dict):
        return steps
    for key in list(arg):
        trial = {k: v for k, v in arg.items() if k != key}
        if stage.fits([*chosen, *steps[:-1], {event: trial}], count):
            arg = trial
    steps[-1] = {event: arg} if arg else event
    if steps[-1] == event and not stage.fits([*chosen, *steps], count):
        steps[-1] = {event: {}}
    return steps


def _verbatim(record: Record) -> Step:
    """A record printed as it is: ``line`` when Python writes it back exactly, else ``raw``."""
    value = record.value
    if record.newline and isinstance(value, dict) and dumps_py(value) == record.text:
        return {"line": value}
    return {"raw": record.text + ("\n" if record.newline else "")}


# -- the expectation ---------------------------------------------------------------------------


def expectation(outcome: Outcome) -> dict[str, Any]:
    """The reference outcome, as the fields an agent-cli expectation checks."""
    expect: dict[str, Any] = {}
    if outcome.status == "ok":
        expect["status"] = "ok"
    else:
        expect["error"] = outcome.error
        if outcome.cause:
            expect["cause"] = outcome.cause
        message = _stable_message(outcome.message or "")
        if message:
            expect["message_contains"] = message
    if outcome.mechanism is not None:
        expect["mechanism"] = outcome.mechanism
    if outcome.value is not None:
        expect["value"] = outcome.value.value
    else:
        expect["no_value"] = True
    if outcome.text is not None:
        expect["text"] = outcome.text
    if outcome.diagnostics:
        # A diagnostic that is no schema rule has no keyword (null), which the
        # scenario format leaves out.
        expect["diagnostics"] = [
            {k: v for k, v in d.to_json().items() if v is not None} for d in outcome.diagnostics
        ]
    expect["launches"] = outcome.launches
    if outcome.calls and outcome.calls[0].output_format:
        expect["provider"] = {"output_format": outcome.calls[0].output_format}
    return expect


def _stable_message(message: str) -> str:
    """The message up to anything that names this machine's temporary folders."""
    cut = message.find(tempfile.gettempdir())
    text = message if cut < 0 else message[:cut]
    return scrub.stable_prefix(text[:_LONGEST_MESSAGE]) if cut >= 0 else text[:_LONGEST_MESSAGE]


def _verdict(outcome: Outcome) -> str:
    if outcome.status == "ok":
        return "ok"
    return f"{outcome.error} ({outcome.cause})" if outcome.cause else str(outcome.error)


#: The clause an imported case most likely documents when its driver's record names
#: none for the outcome (`AgentCli.import_clause`; edit the case if not).
_BY_OUTCOME = {"invalid_output_schema": "SCH-05", "policy_violation": "POL-01"}


def _clauses(driver: str, outcome: Outcome) -> tuple[str, ...]:
    cli = agents.get(driver)
    key = outcome.cause or outcome.error or "ok"
    found = cli.import_clause(key) or _BY_OUTCOME.get(str(outcome.error))
    return (found or cli.import_default,)
