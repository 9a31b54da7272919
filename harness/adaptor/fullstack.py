"""
The full stack: a real CLI's finished run, read by the reference adaptor.

On the model-api seam the real ``claude``, ``codex`` and ``codebuddy`` binaries (or their
reference models) run against a scripted model API and leave an exit code,
stdout bytes and stderr.  On the agent-cli seam the reference pipeline reads
what a *fake* CLI prints.  `adapt` joins the two: it hands an already finished
run to the reference pipeline (`harness.adaptor.pipeline.run`) through its launcher
seam, so intake, negotiation, the driver's decode, validation and the
invalid-result policy are the pipeline's own, unchanged.  Nothing here decodes
CLI output; if the chain disagrees with a contract, the pipeline does.

The pipeline builds its own argv (its flags for ``claude -p`` and ``codex exec``
differ from how the real run was started); the decode never reads argv, but it
does depend on the transport.  The consumer cannot choose a transport (seed
001), so the output format the real CLI was given is mapped onto the driver's
descriptor: ``json`` declares structured output unsupported on the rich
transport (WorksWithStreaming false), which makes negotiation pick the batch
one.  A run without a schema takes the rich transport either way, and reads
the single line of a ``json`` run as the one record it is.
"""

from __future__ import annotations

import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Final

from harness.adaptor.launch import Finished
from harness.adaptor.negotiate import BUILTIN
from harness.adaptor.pipeline import Provider, run
from harness.catalogue import agents
from harness.catalogue.outcome import Outcome
from harness.catalogue.scenario import Request

#: The CLIs whose real binaries the model-api seam runs, and the output formats
#: each can be asked for: Claude Code prints one result object (``json``) or JSON
#: lines (``stream-json``); ``codex exec --json`` always prints JSON lines;
#: CodeBuddy Code prints one array (``json``) or Claude's records (``stream-json``).
OUTPUT_FORMATS: Final[Mapping[str, tuple[str, ...]]] = {
    "claude": ("json", "stream-json"),
    "codex": ("json",),
    "codebuddy": ("json", "stream-json"),
}
_DEFAULT_PROMPT: Final = Request(driver="claude").prompt


@dataclass(frozen=True)
class Asked:
    """
    What the adaptor was asked for, in the terms a consumer of the SDK uses.

    ``schema`` is the document as text (None: a run without a schema, DEC-02);
    ``output_format`` is what the real CLI printed with; ``validation`` picks
    native enforcement or prompt validation (by declaring the driver without
    the native mechanism, NEG-01/NEG-02); ``on_invalid`` is the invalid-result
    policy (``fail``: POL-01, ``return``: POL-02).
    """

    schema: str | None
    prompt: str = _DEFAULT_PROMPT
    output_format: str = "json"
    validation: str = "native"
    on_invalid: str = "fail"
    schema_name: str | None = None
    schema_description: str | None = None

    def request(self, cli: str) -> Request:
        """The pipeline's own request for this ask, validated against `cli`."""
        formats = OUTPUT_FORMATS.get(cli)
        if formats is None:
            raise ValueError(f"unknown cli {cli!r}; expected one of {sorted(OUTPUT_FORMATS)}")
        if self.output_format not in formats:
            raise ValueError(f"{cli} has no output format {self.output_format!r}: {formats}")
        if self.validation not in ("native", "prompt"):
            raise ValueError(f"validation must be native or prompt, not {self.validation!r}")
        if self.on_invalid not in ("fail", "return"):
            raise ValueError(f"on_invalid must be fail or return, not {self.on_invalid!r}")
        builtin = BUILTIN[cli]
        descriptor = replace(
            builtin,
            native=builtin.native and self.validation == "native",
            # CodeBuddy's driver keeps structured output off stream-json, yet the CLI
            # prints it (`AgentCli.stream_json`): a stream-json run declares it.
            streaming=(builtin.streaming or agents.get(cli).stream_json)
            and self.output_format == "stream-json",
        )
        return Request(
            driver=cli,
            prompt=self.prompt,
            schema=None if self.schema is None else self.schema.encode(),
            schema_name=self.schema_name,
            schema_description=self.schema_description,
            on_invalid=self.on_invalid,
            descriptor=descriptor,
        )


class _Recorded:
    """
    A launcher that "runs" the provider by handing back a finished run.

    It stands where `harness.adaptor.launch.Subprocess` or ``InProcess`` would, and
    counts its launches so the outcome says whether the run was read at all
    (zero: the pipeline decided before launch, e.g. an invalid schema).
    """

    def __init__(self, finished: Finished) -> None:
        self.finished = finished
        self.launches = 0

    def launch(
        self, argv: Sequence[str], env: Mapping[str, str], timeout: float, cwd: Path
    ) -> Finished:
        self.launches += 1
        if self.launches > 1:
            raise RuntimeError("the reference pipeline launched a recorded run twice")
        return self.finished


def adapt(
    cli: str,
    request: Asked,
    exit_code: int,
    stdout: bytes,
    stderr: str | bytes,
    *,
    timed_out: bool = False,
) -> Outcome:
    """
    The reference adaptor's outcome for a finished run of the real `cli`.

    `exit_code` is the process's return code as `subprocess` reports it
    (negative: killed by that signal); `timed_out` says the caller killed it
    after its timeout.  The outcome is exactly what `harness.adaptor.pipeline.run`
    concludes had it launched the CLI itself and seen this run, with
    ``launches`` 1 when the run was read and 0 when the pipeline refused before
    launching (then the run is ignored, as a real adaptor would never start it).
    """
    pipeline_request = request.request(cli)
    err = stderr.encode() if isinstance(stderr, str) else stderr
    launcher = _Recorded(Finished(stdout, err, exit_code, timed_out=timed_out))
    # The Codex driver writes the schema file into the work folder when it
    # builds argv, so the pipeline gets a throwaway one.
    with tempfile.TemporaryDirectory(prefix="harness-fullstack-") as work:
        provider = Provider(executables={cli: cli}, env={}, work=Path(work))
        outcome = run(pipeline_request, provider, launcher)
    return replace(outcome, launches=launcher.launches)
