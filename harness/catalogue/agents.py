"""
The agent CLIs the harness drives, one record each: every other list of them is read from here.

A CLI used to be typed by hand in some fifteen places (the launcher's
executables, the built-in descriptors, the scenario schema's enums, the
reference adaptor's announcement, the command line's choices, the fuzzer,
the importer, the matcher, the adaptor skeletons...).  Now each of those
derives its table from `AGENT_CLIS`, and a test holds the few lists that
cannot import this module to it: the fakes' own table
(``providers_fake.MODULES``: the fakes never import the harness), the
console scripts in ``pyproject.toml``.  docs/architecture.md says which
files a new CLI touches.

The record sits in the catalogue, the lowest layer, because the catalogue
itself needs it (the scenario schema's enums are filled in from it when the
schema is loaded) and every layer above may import it.  It holds data only:
the code that differs between CLIs (a fake's renderer, a driver, a wire's
transcript generator) is reached by the names here, each subsystem keeping
one entry per *wire* (the shape of a transcript), not per CLI.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal


@dataclass(frozen=True)
class Descriptor:
    """
    What a driver declares it can do for structured output.

    Mirrors the adaptor SDK's capability descriptor: the negotiation rule is
    a pure function of this, the consumer's mode and the approval policy.
    """

    native: bool
    prompt: bool
    run: bool = True
    streaming: bool = False
    hitl: bool = False
    native_hitl: bool | None = None
    prompt_hitl: bool | None = None

    def hitl_for(self, mechanism: str) -> bool:
        specific = self.native_hitl if mechanism == "native" else self.prompt_hitl
        return self.hitl if specific is None else specific


#: The shapes of transcript the CLIs print: Codex's ``exec --json`` events,
#: Claude Code's records ending with a ``result`` (CodeBuddy prints the same),
#: Cursor's (Claude's terminal, no ``structured_output``, prose between records).
Wire = Literal["codex", "claude", "cursor"]


@dataclass(frozen=True)
class AgentCli:
    """One agent CLI: what every part of the harness needs to know of it."""

    #: The driver's name: ``request.driver`` in scenarios, the fake's name, the key everywhere.
    name: str
    #: The real program on PATH in production; its fake is ``fake-COMMAND``.
    command: str
    #: What the built-in driver declares it can do for structured output (NEG-06).
    descriptor: Descriptor
    #: The clause a case about this CLI cites when nothing more precise applies: the
    #: fuzzer's, and ``harness import``'s unless `import_fallback` names another.
    clause: str
    #: How its transcript is shaped (the fuzzer's generator, the importer's proposer,
    #: the skeletons' reader are chosen by it).
    wire: Wire
    #: The batch run a skeleton makes, between the executable and the prompt.
    batch_args: tuple[str, ...]
    #: Flags its driver passes on every run (CodeBuddy's ``-y``: no permission prompts).
    flags: tuple[str, ...] = ()
    #: ``harness import``: the clause an outcome (its cause, else its error) most likely
    #: documents, and the one for any other outcome (default: `clause`).
    import_clauses: tuple[tuple[str, str], ...] = ()
    import_fallback: str | None = None
    #: Keys the CLI fills afresh on every run beyond the common ones (ids, clocks),
    #: which a replay may change (`harness.record.matcher`).
    volatile: frozenset[str] = frozenset()
    #: Its json transport may print one array of records (the history, then the
    #: result), so a lone result object is the ``object`` json_shape.
    json_array: bool = False
    #: How many records its ``init`` event prints (CodeBuddy: init, status, a snapshot).
    init_records: int = 1
    #: Its real binary runs under the model-api seam (a ``real:CLI=VERSION`` target).
    real: bool = False
    #: The name of its records' own shapes where they part from its wire's (CodeBuddy
    #: prints Claude's records its own way, and session items on json): the importer
    #: has a proposer for each (`harness.record.proposals`).
    records: str | None = None
    #: It prints stream-json although its built-in descriptor keeps structured output
    #: off that transport (CodeBuddy): an imported stream-json transcript declares it.
    stream_json: bool = False
    #: It has published releases the harness installs and runs offline
    #: (scripts/install-real-clis.sh, version profiles), whether or not the
    #: model-api seam runs them yet; every CLI the seam runs is one.
    versioned: bool = False

    @property
    def fake(self) -> str:
        """The executable of its fake (``fake-cursor-agent``)."""
        return f"fake-{self.command}"

    @property
    def family(self) -> str:
        """Its clause family (``CBY``), the prefix of its clause ids."""
        return self.clause.rsplit("-", 1)[0]

    def import_clause(self, outcome: str) -> str | None:
        """The clause an imported case ending in ``outcome`` documents, if this CLI has one."""
        return dict(self.import_clauses).get(outcome)

    @property
    def import_default(self) -> str:
        """The clause an imported case cites when nothing more precise applies."""
        return self.import_fallback or self.clause


#: Every agent CLI, in the order the harness lists them.
AGENT_CLIS: tuple[AgentCli, ...] = (
    AgentCli(
        name="codex",
        command="codex",
        descriptor=Descriptor(native=True, prompt=True, run=True, streaming=False),
        clause="CDX-01",
        wire="codex",
        batch_args=("exec", "--json", "--skip-git-repo-check"),
        import_clauses=(
            ("ok", "CDX-01"),
            ("turn_failed", "CDX-04"),
            ("policy_violation", "CDX-07"),
        ),
        import_fallback="CDX-04",
        real=True,
    ),
    AgentCli(
        name="claude",
        command="claude",
        descriptor=Descriptor(native=True, prompt=True, run=True, streaming=True),
        clause="CLA-01",
        wire="claude",
        batch_args=("-p", "--output-format", "json"),
        import_clauses=(
            ("max_structured_output_retries", "CLA-03"),
            ("api_error", "CLA-04"),
            ("policy_violation", "CLA-02"),
        ),
        real=True,
    ),
    AgentCli(
        name="cursor",
        command="cursor-agent",
        descriptor=Descriptor(native=False, prompt=True, run=True, streaming=True),
        clause="CUR-01",
        wire="cursor",
        batch_args=("-p", "--output-format", "json"),
        volatile=frozenset({"request_id"}),
    ),
    AgentCli(
        name="codebuddy",
        command="codebuddy",
        descriptor=Descriptor(native=True, prompt=True, run=True, streaming=False),
        clause="CBY-01",
        wire="claude",
        batch_args=("-p", "--output-format", "json", "-y"),
        flags=("-y",),
        # CodeBuddy names messages, snapshots, requests and calls by clock and random hex,
        # and links its session items by those names (docs/codebuddy.md).  Its init's
        # permissionMode follows the flags: the driver passes -y, a run recorded through the
        # model-api seam (harness record) does not, and an import replays it through the driver.
        volatile=frozenset(
            {
                "permissionMode",
                "__timestamp",
                "_requestId",
                "id",
                "messageId",
                "traceId",
                "conversationRequestId",
                "callId",
                "parentId",
                "sessionId",
                "tool_use_id",
                "parent_tool_use_id",
            }
        ),
        records="session-items",
        stream_json=True,
        json_array=True,
        init_records=3,
        real=True,
        versioned=True,
    ),
)

#: The drivers' names, in registry order (command-line choices, schema enums).
DRIVERS: tuple[str, ...] = tuple(cli.name for cli in AGENT_CLIS)
#: The CLIs whose real binaries the model-api seam runs.
REAL: tuple[str, ...] = tuple(sorted(cli.name for cli in AGENT_CLIS if cli.real))
#: The CLIs with releases: versions in targets and scenarios, profiles, installs.
VERSIONED: tuple[str, ...] = tuple(
    sorted(cli.name for cli in AGENT_CLIS if cli.real or cli.versioned)
)


def get(name: str) -> AgentCli:
    """The record of the CLI called ``name``; KeyError naming the known ones if none."""
    for cli in AGENT_CLIS:
        if cli.name == name:
            return cli
    raise KeyError(f"unknown agent CLI {name!r}; known: {', '.join(DRIVERS)}")


#: The keyword by which a packaged JSON Schema (the scenario schema, the target
#: protocol's) asks for an enum of CLI names: ``{"x-agent-clis": "drivers"}`` or
#: ``{"x-agent-clis": "real"}``.  A validator outside the harness ignores it (an
#: unknown keyword), so the file stays a valid schema, only looser.
ENUM_KEYWORD = "x-agent-clis"


def fill_enums(schema: Any) -> Any:
    """
    ``schema`` (a loaded JSON Schema) with every `ENUM_KEYWORD` replaced by the
    registry's enum, so a CLI added to `AGENT_CLIS` is a valid name at once and
    no schema file types the names.  Pure: ``schema`` itself is left as it was.
    """
    if isinstance(schema, list):
        return [fill_enums(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    filled = {key: fill_enums(value) for key, value in schema.items() if key != ENUM_KEYWORD}
    if ENUM_KEYWORD in schema:
        filled["enum"] = list({"drivers": DRIVERS, "real": REAL}[schema[ENUM_KEYWORD]])
    return filled
