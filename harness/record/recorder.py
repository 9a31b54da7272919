"""
``harness record``: run a real CLI through the recording proxy and write what happened.

The CLI is started exactly as the ``real`` target starts it (the pinned
binary, a throwaway HOME, an environment allow-list, the same flags), only
with its base URL pointed at the proxy and the user's key passed through,
so the written scenario replays the very run that was recorded.  The
upstream's answers become the ``model_script`` (one step per model request,
no repetition: a request the recording did not see is unexpected on
replay); the CLI's exit, final result and request count become the
expectation.  The document is scrubbed (`scrub`), written only if it lints,
and then replayed on the same binary to show it reproduces the recording.

The recorded run is the user's own command and is not put in the sandbox
(`harness.systems.sandbox` passes the environment on the jail's command
line, where the user's key would be visible to every process); a replay
that makes the CLI run commands is confined, as ``--allow-exec`` runs are.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.exceptions import CannotWrite
from harness.record import answers, scrub, write
from harness.record.asked import Asked, environment, read
from harness.record.proxy import Proxy
from harness.seams.model_api.expect import ModelApiExpectation, compare
from harness.seams.model_api.run import GATEWAY, WORK, model_script, run_case
from harness.seams.model_api.values import (
    CODEX_MODEL,
    ModelApiOutcome,
    ModelApiRequest,
    final_result,
    parse_lines,
)
from providers_fake.api import api_for, realcli
from providers_fake.api.inprocess import ANTHROPIC_BASE_URL, OPENAI_BASE_URL

#: The public API each CLI talks to when no --upstream is given (CodeBuddy Code talks to
#: whichever Chat Completions endpoint it is given: it has no default to record).
UPSTREAMS: Mapping[str, str] = {"claude": ANTHROPIC_BASE_URL, "codex": OPENAI_BASE_URL}
#: The CLIs that print a ``result`` record (CodeBuddy prints Claude Code's), whose verdict
#: fields and line types the expectation keeps.
_RESULT_RECORD = frozenset({"claude", "codebuddy"})
#: Longest final-result text kept as an exact expectation.
_LONGEST_RESULT = 2000
#: Shortest stable error prefix worth expecting.
_SHORTEST_ERROR = 12


@dataclass(frozen=True)
class Options:
    """What ``harness record`` was asked."""

    cli: str
    argv: tuple[str, ...]
    upstream: str | None = None
    out: Path | None = None
    redact: tuple[str, ...] = ()
    binary: Path | None = None
    timeout: float = realcli.DEFAULT_TIMEOUT
    scenario_id: str | None = None
    clauses: tuple[str, ...] = ()
    verify: bool = True


@dataclass(frozen=True)
class Recording:
    """The written scenario's text, and what to tell the user about it."""

    text: str
    summary: str
    notes: tuple[str, ...]
    mismatches: tuple[str, ...]


def record(options: Options) -> Recording:
    asked = read(options.cli, list(options.argv))
    if options.cli == "codex" and asked.model is None and options.upstream is None:
        raise CannotWrite("codex arguments", "-m", "name the model the OpenAI API should answer as")
    recorded_env, keys = environment(options.cli)
    binary = _binary(options)
    upstream = options.upstream or UPSTREAMS.get(options.cli)
    if upstream is None:
        raise CannotWrite(
            f"{options.cli} arguments", "--upstream", "name the Chat Completions endpoint to record"
        )
    with Proxy(upstream, timeout=options.timeout) as proxy:
        run = _RUNNERS[options.cli](binary, proxy.url, asked, {**recorded_env, **keys}, options)
        exchanges = proxy.exchanges
        secrets = proxy.secrets
        port = proxy.port
    if proxy.overflow is not None:
        raise CannotWrite("harness record", "", f"the run went past a bound: {proxy.overflow}")
    failed = [e for e in exchanges if e.failure is not None]
    if failed:
        raise CannotWrite(upstream, "--upstream", f"did not answer: {failed[0].failure}")
    steps: list[dict[str, Any]] = []
    notes: list[str] = []
    for exchange, api in answers.model_requests(exchanges, api_for):
        recorded = answers.step_of(exchange, api)
        steps.append(recorded.step)
        notes.extend(recorded.notes)
    others = [e for e in exchanges if api_for(e.method, e.path) is None]
    notes += [
        f"{e.method} {e.path.split('?')[0]} is not a model request: not replayed" for e in others
    ]
    observed = _observed(options.cli, run, port)
    # Ids the upstream made up live in error bodies; what the CLI printed from them is
    # masked the same way, so script and expectation agree (the model's own content is
    # kept as it is: only --redact changes that).
    volatile = scrub.Volatile()
    steps = [scrub.walk(s, volatile) if "status" in s else s for s in steps]
    script = {"steps": steps, "repeat_last": False}
    observed = _masked(observed, volatile)
    expect = expectations(options.cli, observed, len(steps), clean=not others, files=run.files)
    name = write.scenario_id(options.scenario_id, options.out, f"recorded-{options.cli}")
    document: dict[str, Any] = {
        "id": name,
        "title": f"Recorded {options.cli} run: {_verdict_words(options.cli, observed, len(steps))}",
        "description": (
            f"Recorded by harness record from a real {options.cli} run: the model's answers, "
            "replayed by the fake model API, and what the CLI did with them. Say here what "
            "the case documents."
        ),
        "clauses": list(options.clauses or _clauses(options.cli, observed)),
        "tags": [options.cli, "recorded"],
        "seam": "model-api",
        "request": asked.request(recorded_env, options.timeout),
        "provider": {"model_script": script},
        "expect": expect,
    }
    document = scrub.redact(document, options.redact)
    hidden = scrub.secret_values([*secrets, *keys.values()])
    document = scrub.hide_secrets(document, hidden)
    notes = [scrub.hide_text(note, hidden) for note in notes]
    comments = [
        f"Recorded by `harness record --cli {options.cli}`; review the title, description,",
        "clauses and expectation before committing it.",
        *[f"note: {note}" for note in notes],
    ]
    text = write.dump(document, comments)
    scrub.assert_clean(text, hidden, str(options.out or "<stdout>"))
    scenario = write.load_back(text, options.out)
    mismatches: tuple[str, ...] = ()
    if options.verify:
        request = scenario.request
        assert isinstance(request, ModelApiRequest)
        confine = request.runs_commands()  # as `harness run --target real --allow-exec` would
        replay = run_case(request, model_script(scenario), binary, confine=confine)
        assert isinstance(scenario.expect, ModelApiExpectation)
        mismatches = tuple(
            f"{m.field}: expected {m.expected}, replay gave {m.actual}"
            for m in compare(scenario.expect, replay)
        )
    summary = f"{options.cli}, {_verdict_words(options.cli, observed, len(steps))}"
    return Recording(text, summary, tuple(notes), mismatches)


def _binary(options: Options) -> Path:
    if options.binary is not None:
        if not options.binary.is_file():
            raise CannotWrite(str(options.binary), "--binary", "no such file")
        # Absolute: the CLI runs in a throwaway folder, where a relative path means nothing.
        return options.binary.absolute()
    try:
        return realcli.locate(options.cli)
    except FileNotFoundError as missing:
        raise CannotWrite(f"the pinned {options.cli}", "", str(missing)) from None


def _run_claude(
    binary: Path, url: str, asked: Asked, env: dict[str, str], options: Options
) -> realcli.RealRun:
    return realcli.run_claude(
        binary,
        url,
        prompt=asked.prompt,
        schema=asked.schema,
        output_format=asked.output_format,
        args=asked.args(),
        env=env,
        timeout=options.timeout,
    )


def _run_codex(
    binary: Path, url: str, asked: Asked, env: dict[str, str], options: Options
) -> realcli.RealRun:
    return realcli.run_codex(
        binary,
        url + "/v1",
        prompt=asked.prompt,
        schema=asked.schema,
        model=asked.model or CODEX_MODEL,
        env=env,
        timeout=options.timeout,
    )


def _run_codebuddy(
    binary: Path, url: str, asked: Asked, env: dict[str, str], options: Options
) -> realcli.RealRun:
    return realcli.run_codebuddy(
        binary,
        url + "/v1",
        prompt=asked.prompt,
        schema=asked.schema,
        output_format=asked.output_format,
        args=asked.args(),
        env=env,
        timeout=options.timeout,
    )


_RUNNERS: Mapping[str, Callable[[Path, str, Asked, dict[str, str], Options], realcli.RealRun]] = {
    "claude": _run_claude,
    "codex": _run_codex,
    "codebuddy": _run_codebuddy,
}


def _observed(cli: str, run: realcli.RealRun, port: int) -> dict[str, Any]:
    """What the CLI did, with the per-run folder and the proxy's port masked as on replay."""
    masks = [(run.workdir, WORK)] if run.workdir else []
    masks.append((f"127.0.0.1:{port}", GATEWAY))
    stdout, stderr = run.stdout, run.stderr.decode(errors="replace")
    for real, shown in masks:
        stdout = stdout.replace(real.encode(), shown.encode())
        stderr = stderr.replace(real, shown)
    lines = parse_lines(stdout)
    outcome = ModelApiOutcome(cli, run.exit_code, stderr, run.timed_out, lines, None)
    return {
        "exit_code": run.exit_code,
        "timed_out": run.timed_out,
        "stderr": stderr,
        "final": final_result(cli, lines),
        "line_types": list(outcome.line_types),
    }


def _masked(observed: dict[str, Any], volatile: scrub.Volatile) -> dict[str, Any]:
    final = dict(observed["final"] or {})
    for key in ("result", "errors"):
        if key in final:
            final[key] = scrub.walk(final[key], volatile)
    stderr = volatile(observed["stderr"])
    return {**observed, "stderr": stderr, "final": final or None}


def expectations(
    cli: str,
    observed: Mapping[str, Any],
    requests: int,
    *,
    clean: bool,
    files: tuple[tuple[str, str], ...] = (),
) -> dict[str, Any]:
    """The expectation a replay must meet: exit, final result, requests (see the module doc)."""
    expect: dict[str, Any] = {"exit_code": observed["exit_code"]}
    if observed["timed_out"]:
        expect["timed_out"] = True
    final = observed["final"] or {}
    if cli in _RESULT_RECORD:
        for key in ("subtype", "is_error", "terminal_reason"):
            if isinstance(final.get(key), (str, bool)):
                expect[key] = final[key]
    if final.get("structured_output") is not None:
        expect["structured_output"] = final["structured_output"]
    else:  # a run with no final result delivered nothing either (a lint rule wants it said)
        expect["no_structured_output"] = True
    result = final.get("result")
    if (
        isinstance(result, str)
        and len(result) <= _LONGEST_RESULT
        and not scrub.has_volatile(result)
    ):
        expect["result"] = result
    errors = [scrub.stable_prefix(e) for e in final.get("errors") or [] if isinstance(e, str)]
    if errors := [e for e in errors if len(e) >= _SHORTEST_ERROR]:
        expect["errors_contain"] = errors
    stderr = next((line for line in observed["stderr"].splitlines() if line.strip()), "")
    if observed["exit_code"] != 0 and len(scrub.stable_prefix(stderr)) >= _SHORTEST_ERROR:
        expect["stderr_contains"] = scrub.stable_prefix(stderr)
    if cli in _RESULT_RECORD:
        # Codex prints a warning item for a model it has no metadata for, and the replay
        # asks for another model than the recording did: its line types may differ.
        expect["line_types"] = observed["line_types"]
    expect["requests"] = requests
    if clean:
        expect["no_unexpected_requests"] = True
    if files:
        expect["files"] = dict(files)
    return expect


def _verdict(cli: str, observed: Mapping[str, Any]) -> str:
    final = observed["final"] or {}
    if cli in _RESULT_RECORD:
        if final.get("is_error") is True and final.get("subtype") == "success":
            return "api_error"
        if final.get("subtype") not in (None, "success"):
            return str(final["subtype"])
    if observed["exit_code"] != 0:
        return "failed"
    return (
        "structured_output"
        if final.get("structured_output") is not None
        else "no_structured_output"
    )


def _verdict_words(cli: str, observed: Mapping[str, Any], requests: int) -> str:
    return (
        f"exit {observed['exit_code']}, {_verdict(cli, observed)} after {requests} model request(s)"
    )


#: The clause a recording most likely documents, by CLI and verdict (edit it if not).
_CLAUSES: Mapping[tuple[str, str], str] = {
    ("claude", "structured_output"): "LOOP-03",
    ("claude", "no_structured_output"): "LOOP-06",
    ("claude", "error_max_structured_output_retries"): "LOOP-04",
    ("claude", "api_error"): "CLA-04",
    ("claude", "failed"): "SCH-09",
    ("codex", "structured_output"): "CDX-06",
    ("codex", "no_structured_output"): "CDX-07",
    ("codex", "failed"): "CDX-06",
    ("codebuddy", "structured_output"): "CBY-02",
    ("codebuddy", "no_structured_output"): "CBY-04",
    ("codebuddy", "error_during_execution"): "CBY-05",
    ("codebuddy", "failed"): "CBY-06",
}
_DEFAULT_CLAUSE = {"claude": "LOOP-01", "codex": "CDX-06", "codebuddy": "CBY-02"}


def _clauses(cli: str, observed: Mapping[str, Any]) -> tuple[str, ...]:
    return (_CLAUSES.get((cli, _verdict(cli, observed)), _DEFAULT_CLAUSE[cli]),)
