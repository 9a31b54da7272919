"""
One ``claude -p`` run of the reference model of Claude Code: what the binary
does with its arguments before the loop (the schema flag's refusals and
Ajv's warnings, the connectivity check, the model it picks), the loop itself
(`harness.systems.claude.loop`), and the process it amounts to (exit code,
stdout, stderr, the conversation a ``--resume`` would send).
"""

from __future__ import annotations

import contextlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from harness import net
from harness.catalogue import jsonvalue
from harness.catalogue.lines import json_lines
from harness.systems.claude import validator, wire, words
from harness.systems.claude.loop import Loop
from harness.systems.claude.profile import ClaudeProfile
from harness.systems.claude.tools import Bench
from harness.systems.claude.turn import Settings
from providers_fake.cli.base import Context
from providers_fake.cli.claude import data
from providers_fake.cli.claude.render import CLI, ClaudeRenderer
from providers_fake.cli.ids import Ids
from providers_fake.cli.schemaflag import check as check_flag
from providers_fake.cli.types import Output

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

ANTHROPIC_BASE_URL = "https://api.anthropic.com"
#: The exit code of a run killed at its caller's timeout (SIGKILL).
KILLED = -9
_REFUSED = "Error: --json-schema is not a valid JSON Schema: "
_BEFORE_AJV = ("Error: --json-schema is not valid JSON", "Error: --json-schema must be")
#: The refusal of an ``$async`` schema, which releases before 2.1.260 do not make (B-05).
ASYNC_REFUSED = "$async schemas are not supported"


@dataclass(frozen=True)
class ClaudeRun:
    """What the modelled CLI did: its exit status, stdout bytes and stderr text."""

    exit_code: int
    stdout: bytes
    stderr: str
    #: The session's messages after this turn, as a ``--resume`` would send them.
    conversation: tuple[dict[str, Any], ...] = ()
    #: Killed at the caller's timeout (exit_code is then -9, as for SIGKILL).
    timed_out: bool = False
    #: The model of the run's last answer, if it had one: a resumed session goes
    #: on with it when the user named no model (B-45).
    answered_by: str | None = None
    #: The session's rows of the CLI's own error messages so far (B-47).
    error_rows: int = 0

    @property
    def lines(self) -> list[object]:
        out: list[object] = []
        for raw in json_lines(self.stdout.decode()):
            try:
                out.append(jsonvalue.loads(raw))
            except ValueError:
                out.append(raw)
        return out


def _connectivity_check(client: net.Client, base_url: str) -> None:
    """``HEAD /api/hello``, whose answer the CLI never reads (B-01)."""
    with contextlib.suppress(net.HTTPError):
        client.head(base_url.rstrip("/") + "/api/hello", timeout=10.0)


def _intake(schema: str, profile: ClaudeProfile) -> tuple[validator.Schema, str] | str:
    """
    The schema argument as the CLI takes it, and the text its calls are checked
    against; or the stderr line refusing it.
    """
    problem = check_flag(schema)[1]
    if problem is not None and problem.startswith(_BEFORE_AJV):
        return problem  # JSON.parse's and the object check's words, before Ajv sees it
    compiled = validator.compile_schema(schema)
    refused = isinstance(compiled, validator.Refusal) and ASYNC_REFUSED in compiled.reason
    if refused and not profile.refuses_async:
        # Releases before 2.1.260 take an $async schema (B-05); the keyword then
        # changes nothing a call is checked against, so it is left out of the checks.
        plain = {k: v for k, v in json.loads(schema).items() if k != "$async"}
        taken = _intake(json.dumps(plain), profile)
        if isinstance(taken, str):
            return taken
        return validator.Schema({**json.loads(schema), **taken[0].wire}, taken[0].warnings), taken[
            1
        ]
    if isinstance(compiled, validator.Refusal):
        return "".join(f"{line}\n" for line in compiled.warnings) + f"{_REFUSED}{compiled.reason}\n"
    return compiled, schema


def run_claude(
    client: net.Client,
    *,
    prompt: str,
    schema: str,
    output_format: str = "json",
    verbose: bool | None = None,
    fallback_model: str | None = None,
    env: Mapping[str, str] | None = None,
    base_url: str = ANTHROPIC_BASE_URL,
    seed: str = "reference",
    gates: Mapping[str, bool] | None = None,
    refusal_fallback_model: str | None = None,
    resumed: Sequence[dict[str, Any]] = (),
    resumed_model: str | None = None,
    resumed_rows: int = 0,
    allowed_tools: Sequence[str] = (),
    cwd: Path | None = None,
    workdir: Path | None = None,
    timeout: float | None = None,
    version: str | None = None,
    max_turns: int | None = None,
    tools: Sequence[str] | None = None,
) -> ClaudeRun:
    """
    One ``claude -p`` run against the model API behind ``client``.

    ``env`` is the CLI's whole environment (HOME, TMPDIR and the rest, as a
    caller would start the binary with); ``cwd`` its working directory and
    ``workdir`` the throwaway folder around it, the only place a command may
    write.  ``verbose`` defaults to what ``output_format`` needs (stream-json
    requires it).  ``resumed`` is an earlier run's `ClaudeRun.conversation`:
    this run resumes that session, and only this turn's calls count against
    its budget; ``resumed_model`` is the model of the session's last answer
    (`ClaudeRun.answered_by`) and ``resumed_rows`` its error rows so far.
    With ``timeout`` the run is killed when it passes, as the harness kills a
    real CLI: what was printed stays, the exit code is -9.
    ``max_turns`` and ``tools`` are ``--max-turns`` and ``--tools``; with
    ``output_format="text"`` the run prints its result as text (`text_line`).
    """
    env = dict(env or {})
    profile = ClaudeProfile.of(version)
    if words.sends_connectivity_check(profile, env):  # before anything else (B-01)
        _connectivity_check(client, base_url)
    text = output_format == "text"  # the result is printed as text once the run is over
    argv = ["-p", prompt, "--output-format", "json" if text else output_format]
    if max_turns is not None:
        argv += ["--max-turns", str(max_turns)]
    if verbose or (verbose is None and output_format == "stream-json"):
        argv.append("--verbose")
    if fallback_model is not None:
        argv += ["--fallback-model", fallback_model]
    refusal = CLI.refusal(CLI.parse(argv), None, prompt)
    if refusal is not None:
        message, status = refusal
        return ClaudeRun(status, b"", message)
    intake = _intake(schema, profile)
    if isinstance(intake, str):
        return ClaudeRun(1, b"", intake)
    taken, checked = intake
    parsed = CLI.parse([*argv, "--json-schema", schema])
    here = cwd or Path(env.get("PWD", "/work"))
    env.setdefault("HOME", str(here))
    out = Output()
    ctx = Context(
        CLI,
        parsed=parsed,
        env=env,
        cwd=str(here),
        prompt=prompt,
        ids=Ids(seed, "claude"),
        out=out,
        json_shape=None,
    )
    renderer = ClaudeRenderer(ctx)
    aliases, known = dict(profile.model_aliases), profile.known_models()  # B-29

    def chosen_as(setting: str | None) -> str | None:
        return data.chosen_model(setting, aliases, known)

    chosen = chosen_as(env.get("ANTHROPIC_MODEL"))
    if parsed.text("model") is None:  # the release's default unless ANTHROPIC_MODEL names one
        renderer.model = profile.default_model if chosen is None else chosen  # B-07
        if chosen is None and resumed_model is not None:
            # A resumed session goes on with the model of its last answer, the
            # fallback model after a fallback (B-45, probed on 2.1.328).
            renderer.model = resumed_model
    settings = Settings(
        env,
        taken,
        checked,
        # --fallback-model is read as ANTHROPIC_MODEL is: aliases, retired ids (probed).
        None if fallback_model is None else chosen_as(fallback_model) or profile.default_model,
        refusal_fallback_model,
        dict(gates or {}),
        tuple(resumed),
        urlsplit(base_url).netloc,
        timeout=timeout,
        profile=profile,
        model_chosen=chosen is not None or parsed.text("model") is not None,
        max_turns=max_turns,
    )
    bench = Bench(
        here, workdir or here, env, tuple(allowed_tools), renderer.session_id, renderer.ids, profile
    )
    bench.offered = None if tools is None else tuple(tools)
    loop = Loop(client, base_url, renderer, settings, bench)
    loop.talk.error_rows = resumed_rows
    # The notice's own test of a name is not the suffix's (B-29): the release's ids and
    # any id extending one (2.1.235 names claude-haiku-5-5, not claude-opus-5-5).
    unknown = data.unrecognized_model(env.get("ANTHROPIC_MODEL"), aliases, known)
    warnings = "".join(f"{line}\n" for line in (*taken.warnings, *([unknown] if unknown else [])))
    try:
        loop.run(prompt, renderer.model)
    except net.TimeoutException:
        stdout = b"" if text else _stream(out, "stdout")  # text is printed at the end
        stderr = warnings + _notices(loop) + _stream(out, "stderr").decode()
        return ClaudeRun(KILLED, stdout, stderr, timed_out=True)
    prompted = wire.asked(prompt, resumed=bool(resumed))
    history = loop.talk.rendered(loop.model)
    conversation = wire.closed(
        [*resumed, prompted],
        history,
        profile.continue_note,
        profile.joins_lone_answer and not loop.spent and loop.ends_on_record(),
        profile.joins_failed_turn and loop.unanswered,
    )
    stdout = _stream(out, "stdout")
    if text:
        shown = text_line(jsonvalue.loads(stdout), max_turns, profile.text_names_error)
        stdout = shown.encode()
    stderr = warnings + _notices(loop) + _stream(out, "stderr").decode()
    return ClaudeRun(
        renderer.finish(),
        stdout,
        stderr,
        tuple(conversation),
        answered_by=loop.answered_by,
        error_rows=loop.talk.error_rows,
    )


#: The text output's line for spent attempts without an error to name (B-43).
SPENT = "Failed to provide valid structured output after maximum retries"


def text_line(result: Any, max_turns: int | None, names_error: bool = True) -> str:
    """
    What the CLI prints for its result without ``--output-format`` (2.1.328's
    text printer, read in the binary and probed): a success's result text
    (the structured output as JSON when there is no prose) ending in a line
    end, an error's line without one; spent attempts name the result's first
    error from 2.1.260 (``names_error``, B-40), a fixed line before.
    """
    subtype = result.get("subtype")
    if subtype == "success":
        shown = str(result.get("result", ""))
        return shown if shown.endswith("\n") else shown + "\n"
    if subtype == "error_max_turns":
        return f"Error: Reached max turns ({max_turns})"
    if subtype == "error_max_structured_output_retries":
        errors = result.get("errors") or []
        first = errors[0] if errors and names_error else None
        return f"Error: {first or SPENT}"
    return "Execution error"


def _stream(out: Output, name: str) -> bytes:
    parts = [chunk[-1] for chunk in out.chunks if chunk[0] == name]
    return b"".join(part for part in parts if isinstance(part, bytes))


def _notices(loop: Loop) -> str:
    return "".join(f"{line}\n" for line in loop.notices)
