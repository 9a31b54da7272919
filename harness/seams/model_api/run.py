"""
Running one model-api case: the real CLI against a loopback fake, or the reference model in process.

Each case gets a fresh fake serving the scenario's ``model_script``, so that
no request of one case can reach another's (and pytest-xdist workers never
share a port: the loopback server binds 127.0.0.1 on an OS-chosen one).
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from harness.adaptor import custody
from harness.adaptor.fullstack import Asked, adapt
from harness.catalogue.scenario import Scenario
from harness.seams.model_api.values import (
    CODEX_MODEL,
    ModelApiOutcome,
    ModelApiRequest,
    SeenRequest,
    final_result,
    parse_lines,
    text_result,
)
from harness.systems import sandbox
from harness.systems.profiles import WRAPPED_PARAMETERS
from providers_fake.api import LOOPBACK, LoopbackServer, ScriptedModelAPI, realcli
from providers_fake.api import Script as ModelScript
from providers_fake.cli.jsonout import loads_js

if TYPE_CHECKING:
    from harness import net


#: What the real run's throwaway folder and the fake API's address are shown as.
WORK, WORK_SLUG, GATEWAY = "<work>", "<work-slug>", "<fake-api>"
#: What Claude Code's session id (random on the binary, seeded on the model) is shown
#: as; it names a folder, so it reaches the model's messages too.
SESSION = "<session>"
#: A tool output Claude Code saved to a file gets a random name: shown as ``<file>``.
_SAVED_FILE = re.compile(r"(/tool-results/)[A-Za-z0-9_-]+(\.txt)")
_SAVED_FILE_BYTES = re.compile(_SAVED_FILE.pattern.encode())
_SESSION_ID = re.compile(rb'"session_id":\s*"([0-9a-fA-F-]{36})"')
#: Codex names its session on stderr when it prints text.
_CODEX_SESSION = re.compile(rb"^session id: ([0-9a-fA-F-]{36})$", re.MULTILINE)
#: The port the reference models' in-process API answers on (nothing listens there:
#: the fake answers in process); masked like the loopback fake's port.
REFERENCE_PORT = 47_013
#: What a log line's timestamp on a real CLI's stderr is shown as.
LOG_TIME = "<time>"
_LOG_TIME = re.compile(r"\b\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?Z\b")


def model_script(scenario: Scenario) -> ModelScript:
    """The fake's script for ``scenario``."""
    return ModelScript.from_json(json.loads(cast(ModelApiRequest, scenario.request).model_script))


def run_case(
    request: ModelApiRequest, script: ModelScript, binary: Path, *, confine: bool = False
) -> ModelApiOutcome:
    """
    One run of the real CLI against a fresh loopback fake serving ``script``;
    ``confine`` when it may run commands (`harness.systems.sandbox`).

    The case's timeout counts the time the CLI waits on answers the script
    holds back (its ``delay`` steps), as the reference models count it; how
    long the binary takes to start and think on this machine does not count
    (`realcli.OWN_TIME` bounds that), so a hung-API case gives the same
    verdict on a loaded machine as on a quiet one.

    A run in which the CLI retried a request although the script gave it no
    reason to (`ModelScript.calm`) was disturbed by the machine, not by the
    case: on a loaded machine a request can outlast the CLI's own timeouts.
    Such a run is run once more, and the second run is the outcome whatever
    it shows, so a CLI that retries by itself still fails its case.
    """
    outcome = _run_once(request, script, binary, confine)
    if script.calm and _retried(outcome):
        outcome = _run_once(request, script, binary, confine)
    return outcome


#: The line type each CLI prints when it retries a request (codex runs with its
#: provider's retries off, so it has none).
_RETRY_LINE = {"claude": "system/api_retry"}


def _retried(outcome: ModelApiOutcome) -> bool:
    line = _RETRY_LINE.get(outcome.cli)
    return line is not None and line in outcome.line_types


def _run_once(
    request: ModelApiRequest, script: ModelScript, binary: Path, confine: bool
) -> ModelApiOutcome:
    jail = _confined if confine else _contained
    with LoopbackServer(script) as server:
        run, mark = _REAL[request.cli](binary, server, request, jail)
    # Per-run names the CLI prints: its throwaway folder (codex names its schema
    # file there) and the fake's port (claude names the "inference gateway").
    masks = _masks(run.workdir, server.port, run.stdout + b"\n" + run.stderr)
    stdout, stderr = _masked(masks, run.stdout), _masked(masks, run.stderr.decode(errors="replace"))
    # Codex stamps its log lines (an unsupported tool call, say) with the time of day.
    stderr = _LOG_TIME.sub(LOG_TIME, stderr)
    lines, final, text = _printed(request, stdout)
    return ModelApiOutcome(
        cli=request.cli,
        exit_code=run.exit_code,
        stderr=stderr,
        timed_out=run.timed_out,
        lines=lines,
        final=final,
        stdout=text,
        requests=tuple(_seen(masks, r, request) for r in server.fake.requests[mark:]),
        files=run.files,
        adaptor=adaptor_view(request, run.exit_code, stdout, stderr, run.timed_out),
        earlier=run.earlier,
    )


def _printed(
    request: ModelApiRequest, stdout: bytes
) -> tuple[tuple[object, ...], dict[str, Any] | None, str | None]:
    """The lines, final result and (when it printed text) stdout of a run."""
    if request.text_output:
        text = stdout.decode(errors="replace")
        return (), text_result(text), text
    lines = parse_lines(stdout)
    return lines, final_result(request.cli, lines), None


def _masks(workdir: str, port: int, printed: bytes) -> list[tuple[str, str]]:
    # Claude Code also names its project folder after the working directory, every
    # character but letters and digits a dash (tool-results/ paths under HOME).
    slug = "".join(c if c.isalnum() else "-" for c in workdir)
    masks = [(workdir, WORK), (slug, WORK_SLUG)] if workdir else []
    for pattern in (_SESSION_ID, _CODEX_SESSION):
        session = pattern.search(printed)
        if session is not None:
            masks.append((session.group(1).decode(), SESSION))
    return [*masks, (f"{LOOPBACK}:{port}", GATEWAY)]


def _masked(masks: list[tuple[str, str]], value: Any) -> Any:
    """``value`` with each per-run name replaced by its mask, in every string it holds."""
    if isinstance(value, bytes):
        for real, shown in masks:
            value = value.replace(real.encode(), shown.encode())
        return _SAVED_FILE_BYTES.sub(rb"\1<file>\2", value)
    if isinstance(value, str):
        for real, shown in masks:
            value = value.replace(real, shown)
        return _SAVED_FILE.sub(r"\1<file>\2", value)
    if isinstance(value, dict):
        return {_masked(masks, k): _masked(masks, v) for k, v in value.items()}
    if isinstance(value, list):
        return [_masked(masks, v) for v in value]
    return value


#: What CodeBuddy's StructuredOutput parameters are shown as: the binary races its
#: start-up and sends the schema or, on a slow start, the ``{data: object}`` wrapper
#: (docs/codebuddy.md), so neither is a contract a model can keep.
RACY_PARAMETERS = "<the schema or the {data} wrapper>"


def _seen(masks: list[tuple[str, str]], record: Any, request: ModelApiRequest) -> SeenRequest:
    # What a CLI sends names its folder too (a command's output, a refusal's path).
    seen = SeenRequest.of(record)  # every field kept: a side request stays one
    seen = replace(seen, messages_after_prompt=_masked(masks, seen.messages_after_prompt))
    if request.cli == "codebuddy" and seen.input_schema in _raced(request.schema):
        seen = replace(seen, input_schema=RACY_PARAMETERS)
    return seen


def _raced(schema: str) -> list[object]:
    """The parameters CodeBuddy sends: the wrapper, or the schema as JSON.parse read it."""
    try:
        given = loads_js(schema)
    except ValueError:
        return [WRAPPED_PARAMETERS]
    return [WRAPPED_PARAMETERS, given]


def _contained(argv: list[str], folder: Path, env: Mapping[str, str]) -> list[str]:
    # Not confined, but held: nothing the CLI starts outlives its run.
    return custody.contained(argv)


def _confined(argv: list[str], folder: Path, env: Mapping[str, str]) -> list[str]:
    # The CLI itself must reach the loopback fake, so it keeps the host's network.
    return sandbox.jail(argv, folder, env, network=True)


def _real_claude(
    binary: Path, server: LoopbackServer, request: ModelApiRequest, confine: realcli.Confine | None
) -> tuple[realcli.RealRun, int]:
    """The real claude, and how many requests its session's earlier turns made."""
    mark = 0

    def before_last() -> None:
        nonlocal mark
        mark = len(server.fake.requests)

    run = realcli.run_claude(
        binary,
        server.url,
        prompt=request.prompt,
        schema=request.schema,
        output_format=request.output_format,
        args=request.args(),
        env=dict(request.env),
        timeout=request.timeout,
        earlier=request.earlier_prompts,
        before_last=before_last,
        confine=confine,
        held=server.held,
    )
    return run, mark


def _real_codex(
    binary: Path, server: LoopbackServer, request: ModelApiRequest, confine: realcli.Confine | None
) -> tuple[realcli.RealRun, int]:
    """The real codex, and how many requests its session's earlier turns made."""
    mark = 0

    def before_last() -> None:
        nonlocal mark
        mark = len(server.fake.requests)

    run = realcli.run_codex(
        binary,
        server.url + "/v1",
        prompt=request.prompt,
        schema=request.schema,
        model=CODEX_MODEL,
        args=request.args(),
        env=dict(request.env),
        timeout=request.timeout,
        confine=confine,
        held=server.held,
        json_lines=not request.text_output,
        earlier=request.earlier_prompts,
        before_last=before_last,
    )
    return run, mark


def _real_codebuddy(
    binary: Path, server: LoopbackServer, request: ModelApiRequest, confine: realcli.Confine | None
) -> tuple[realcli.RealRun, int]:
    run = realcli.run_codebuddy(
        binary,
        server.url + "/v1",
        prompt=request.prompt,
        schema=request.schema,
        output_format=request.output_format,
        args=request.args(),
        env=dict(request.env),
        timeout=request.timeout,
        confine=confine,
    )
    return run, 0


#: How each CLI's real binary is run against the fake: the run, and the requests
#: made before it (a resumed session's earlier turns).
_RealRunner = Callable[
    [Path, LoopbackServer, ModelApiRequest, "realcli.Confine | None"], tuple[realcli.RealRun, int]
]
_REAL: dict[str, _RealRunner] = {
    "claude": _real_claude,
    "codex": _real_codex,
    "codebuddy": _real_codebuddy,
}


def adaptor_view(
    request: ModelApiRequest, exit_code: int, stdout: bytes, stderr: str, timed_out: bool
) -> dict[str, Any] | None:
    """Full stack: the reference adaptor's outcome for this run, when the case asks."""
    if request.adapt is None:
        return None
    validation, on_invalid = request.adapt
    output_format = request.output_format if request.cli != "codex" else "json"
    asked = Asked(request.schema, request.prompt, output_format, validation, on_invalid)
    outcome = adapt(request.cli, asked, exit_code, stdout, stderr, timed_out=timed_out)
    view = outcome.to_json()
    view.pop("calls", None)  # the recorded run's argv is the pipeline's, not the CLI's
    return view


def run_reference(
    request: ModelApiRequest,
    script: ModelScript,
    seed: str,
    versions: Mapping[str, str] | None = None,
) -> ModelApiOutcome:
    """
    One run of the reference model of the CLI, in process, against a fresh
    fake; ``versions`` picks each model's version profile (the pins by default).

    The model is set up as the real binary is (`realcli`): a throwaway folder
    holding its working directory, HOME and TMPDIR, the same environment, an
    API on the loopback address; what it prints is masked the same way.
    """
    with tempfile.TemporaryDirectory(prefix="reference-cli-") as scratch:
        return _run_reference(request, script, seed, Path(scratch), versions or {})


def _run_reference(
    request: ModelApiRequest,
    script: ModelScript,
    seed: str,
    workdir: Path,
    versions: Mapping[str, str],
) -> ModelApiOutcome:
    from harness import net  # noqa: PLC0415 - only the reference target needs them
    from harness.systems import inprocess  # noqa: PLC0415

    # Per CLI: how its reference model is run.
    models: dict[str, Callable[..., _Session]] = {
        "claude": _claude_session,
        "codex": _codex_session,
        "codebuddy": _codebuddy_session,
    }
    base = f"http://{LOOPBACK}:{REFERENCE_PORT}"
    cwd = workdir / "probe"
    for folder in (cwd, workdir / "home", workdir / "tmp"):
        folder.mkdir()
    fake = ScriptedModelAPI(script)
    # The reference model's only clock is its timeout, which kills the run:
    # a reply held back past it ends the run at once (virtual time).
    answers = inprocess.transport(fake, base, virtual_time=True)
    with net.Client(transport=answers) as client:
        session = models[request.cli](
            client, request, seed, workdir, fake, base_url=base, version=versions.get(request.cli)
        )
        files = realcli.workdir_files(cwd)
    run = session.run
    masks = _masks(str(workdir), REFERENCE_PORT, run.stdout + b"\n" + run.stderr.encode())
    stdout, stderr = _masked(masks, run.stdout), _masked(masks, run.stderr)
    stderr = _LOG_TIME.sub(LOG_TIME, stderr)  # as for the binary: the models keep a clock too
    lines, final, text = _printed(request, stdout)
    return ModelApiOutcome(
        cli=request.cli,
        exit_code=run.exit_code,
        stderr=stderr,
        timed_out=run.timed_out,
        adaptor=adaptor_view(request, run.exit_code, stdout, stderr, run.timed_out),
        lines=lines,
        final=final,
        stdout=text,
        requests=tuple(_seen(masks, r, request) for r in fake.requests[session.mark :]),
        files=files,
        earlier=session.earlier,
    )


def _cli_env(workdir: Path, base_url: str, request: ModelApiRequest) -> dict[str, str]:
    """The environment `realcli` starts the real binary with, for this throwaway folder."""
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(workdir / "home"),
        "TMPDIR": str(workdir / "tmp"),
        "NO_PROXY": "127.0.0.1,localhost",
        "no_proxy": "127.0.0.1,localhost",
    }
    if request.cli == "claude":
        env.update(
            {
                "ANTHROPIC_BASE_URL": base_url,
                "ANTHROPIC_API_KEY": "sk-ant-fake",
                "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
                "DISABLE_AUTOUPDATER": "1",
            }
        )
    return {**env, **dict(request.env)}


@dataclass(frozen=True)
class _Session:
    """The observed run of a reference model, after ``mark`` requests of earlier turns."""

    run: Any
    mark: int = 0
    earlier: tuple[int, ...] = ()


def _claude_session(
    client: net.Client,
    request: ModelApiRequest,
    seed: str,
    workdir: Path,
    fake: ScriptedModelAPI,
    *,
    base_url: str,
    version: str | None,
) -> _Session:
    from harness.systems.claude.run import run_claude  # noqa: PLC0415

    def turn(prompt: str, resumed: tuple[dict[str, Any], ...], model: str | None, rows: int) -> Any:
        return run_claude(
            client,
            prompt=prompt,
            schema=request.schema,
            output_format=request.output_format,
            fallback_model=request.fallback_model,
            env=_cli_env(workdir, base_url, request),
            base_url=base_url,
            seed=seed,
            gates=dict(request.gates),
            refusal_fallback_model=request.refusal_fallback_model,
            resumed=resumed,
            resumed_model=model,
            resumed_rows=rows,
            allowed_tools=request.allowed_tools,
            cwd=workdir / "probe",
            workdir=workdir,
            timeout=request.timeout,
            version=version,
            max_turns=request.max_turns,
            tools=request.tools,
        )

    conversation: tuple[dict[str, Any], ...] = ()
    model: str | None = None  # the model of the session's last answer (B-45)
    rows = 0  # the CLI's own error rows in the transcript (B-47)
    codes: list[int] = []
    for prompt in request.earlier_prompts:  # one session, each turn resuming the last
        earlier = turn(prompt, conversation, model, rows)
        codes.append(earlier.exit_code)
        conversation = earlier.conversation
        model, rows = earlier.answered_by or model, earlier.error_rows
    mark = len(fake.requests)
    return _Session(turn(request.prompt, conversation, model, rows), mark, tuple(codes))


def _codex_session(
    client: net.Client,
    request: ModelApiRequest,
    seed: str,
    workdir: Path,
    fake: ScriptedModelAPI,
    *,
    base_url: str,
    version: str | None,
) -> _Session:
    from harness.systems import codex_exec  # noqa: PLC0415
    from harness.systems.codex import run_codex  # noqa: PLC0415
    from harness.systems.profiles import CodexProfile  # noqa: PLC0415

    def turn(prompt: str, resumed: Any) -> Any:
        return run_codex(
            client,
            prompt=prompt,
            schema=request.schema,
            model=CODEX_MODEL,
            env=_cli_env(workdir, base_url, request),
            base_url=base_url + "/v1",
            seed=seed,
            timeout=request.timeout,
            workdir=workdir,
            version=version,
            resumed=resumed,
        )

    session, codes = None, []
    for prompt in request.earlier_prompts:  # one session, each turn resuming the last
        session = turn(prompt, session)
        codes.append(session.exit_code)
    mark = len(fake.requests)
    run = turn(request.prompt, session)
    cwd = workdir / "probe"
    if request.output_last_message is not None and not run.timed_out:
        codex_exec.write_last_message(run.stdout, cwd / request.output_last_message)
    if request.text_output:
        shown = CodexProfile.of(version).version
        stdout, stderr = codex_exec.as_text(
            run.stdout,
            prompt=request.prompt,
            model=CODEX_MODEL,
            cwd=cwd,
            version=shown,
            logged=run.logged,
            spent=run.spent,
        )
        run = replace(run, stdout=stdout, stderr=stderr)
    return _Session(run, mark, tuple(codes))


def _codebuddy_session(
    client: net.Client,
    request: ModelApiRequest,
    seed: str,
    workdir: Path,
    fake: ScriptedModelAPI,
    *,
    base_url: str,
    version: str | None,
) -> _Session:
    from harness.systems.codebuddy_run import run_codebuddy  # noqa: PLC0415

    run = run_codebuddy(
        client,
        prompt=request.prompt,
        schema=request.schema,
        output_format=request.output_format,
        max_turns=request.max_turns,
        env=_cli_env(workdir, base_url, request),
        base_url=base_url + "/v1",
        seed=seed,
        timeout=request.timeout,
        workdir=workdir,
        version=version,
    )
    return _Session(run)
