"""
Captures of the real CodeBuddy Code 2.117.0, kept in tests/data/captures/codebuddy.

Each capture is one run of the pinned binary (``realcli.run_codebuddy``)
against the fake Chat Completions API serving a ``model_script``: NAME.stdout
holds what it printed (the run's throwaway folder written ``<work>``), and
NAME.meta.json the argv, the script, the exit code, whether the timeout
ended the run, stderr and the requests it made (`RecordedRequest.capture_view`).
The CLI waits minutes after an HTTP error and never stops re-asking a model
that misses the schema, so those runs are ended by the timeout (``timed_out``
true, exit code -9) or by ``--max-turns``, as an adaptor would end them.

``python -m tests.codebuddy_captures [NAME...]`` takes them again (all by
default); ``tests/test_codebuddy_captures.py`` replays each deterministic one
to the binary and to ``fake-codebuddy`` and compares field by field.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from pathlib import Path

from providers_fake import api
from providers_fake.api import realcli

FOLDER = Path(__file__).resolve().parent / "data" / "captures" / "codebuddy"
PROMPT = "Diagnose the build failure."
SCHEMA = json.dumps(
    {
        "type": "object",
        "properties": {"cause": {"type": "string"}, "fixes": {"type": "array"}},
        "required": ["cause", "fixes"],
        "additionalProperties": False,
    },
    separators=(",", ":"),
)
#: The requests a capture keeps (each repeats the conversation so far: the endless
#: re-asking makes a hundred in a minute); ``requests_made`` counts them all.
KEPT_REQUESTS = 8
GOOD = {"cause": "missing dependency", "fixes": ["pip install x"]}
PROSE = "It failed: a missing dependency."
BAD = {"cause": 1}


@dataclass(frozen=True)
class Case:
    """One capture: the script served, the output format, extra arguments, the schema."""

    script: list[object]
    output_format: str = "stream-json"
    args: tuple[str, ...] = ()
    schema: str = SCHEMA
    timeout: float = 60.0
    #: Whether a second run prints the same lines (a run ended by a timeout does not).
    deterministic: bool = True
    note: str = ""
    env: dict[str, str] = field(default_factory=dict)


_SUCCESS: list[object] = [{"tool": GOOD}, {"text": "Done."}]
_ERROR_NOTE = "the CLI waits minutes after it; the timeout ends the run"
CASES: dict[str, Case] = {
    "success-stream": Case(_SUCCESS),
    "success-json": Case(_SUCCESS, "json"),
    "success-text": Case(_SUCCESS, "text"),
    "invalid-then-valid": Case([{"tool": BAD}, {"tool": GOOD}, {"text": "Done."}]),
    "two-calls-one-message": Case(
        [{"tools": [{"input": BAD}, {"input": GOOD}]}, {"text": "Done."}],
        note="two StructuredOutput calls in one message: the last is kept",
    ),
    "prose-only": Case([{"text": PROSE}]),
    "prose-only-json": Case([{"text": PROSE}], "json"),
    "unknown-tool": Case([{"tool": GOOD, "tool_name": "Deploy"}, {"text": "Done."}]),
    "schema-not-json": Case(_SUCCESS, schema="not json", note="refused before any request"),
    "schema-invalid": Case(
        _SUCCESS, schema='{"type":"object","required":"cause"}', note="an invalid JSON Schema"
    ),
    "never-valid-max-turns": Case(
        [{"tool": BAD}],
        args=("--max-turns", "3"),
        timeout=120.0,
        deterministic=False,
        note=(
            "a model that never satisfies the schema: --max-turns 3 prints 'Max turns (3) "
            "exceeded' and the CLI then waits without a result; the timeout ends the run"
        ),
    ),
    "never-valid-timeout": Case(
        [{"tool": BAD}],
        timeout=60.0,
        deterministic=False,
        note="a model that never satisfies the schema: asked again until the timeout",
    ),
    "http-500": Case([{"status": 500}, *_SUCCESS], timeout=60.0, note=_ERROR_NOTE),
    "http-429": Case(
        [{"status": 429, "headers": {"retry-after": "1"}}, *_SUCCESS],
        timeout=60.0,
        note=_ERROR_NOTE,
    ),
    "http-400": Case(
        [{"status": 400, "message": "Invalid schema for function 'StructuredOutput'"}, *_SUCCESS],
        timeout=60.0,
        note=_ERROR_NOTE,
    ),
}


def run(case: Case) -> tuple[realcli.RealRun, api.ScriptedModelAPI]:
    """One run of the pinned binary against `case`'s script."""
    binary = realcli.locate("codebuddy")
    with api.LoopbackServer(case.script) as server:
        done = realcli.run_codebuddy(
            binary,
            server.url + "/v1",
            prompt=PROMPT,
            schema=case.schema,
            output_format=case.output_format,
            args=case.args,
            env=case.env,
            timeout=case.timeout,
        )
    return done, server.fake


def masked(text: str, workdir: str) -> str:
    """
    `text` with the run's throwaway folder written ``<work>`` (its cwd is
    ``<work>/probe``), also where CodeBuddy names its project folder after it
    (``tmp-real-codebuddy-q0msr8j4-probe``).
    """
    if not workdir:
        return text
    return text.replace(workdir, "<work>").replace(Path(workdir).name, "<work>")


def requests_of(fake: api.ScriptedModelAPI, workdir: str) -> list[object]:
    views = [request.capture_view() for request in fake.requests]
    return json.loads(masked(json.dumps(views, ensure_ascii=False), workdir))  # type: ignore[no-any-return]


def argv_of(done: realcli.RealRun) -> list[str]:
    return ["codebuddy", *done.argv[1:]]


def take(name: str) -> None:
    case = CASES[name]
    done, fake = run(case)
    meta = {
        "name": name,
        "cli": f"codebuddy {realcli.CODEBUDDY_VERSION}",
        "package": f"{realcli.CODEBUDDY_PACKAGE}@0.3.201",
        "argv": argv_of(done),
        "env": ["CODEBUDDY_BASE_URL", "CODEBUDDY_API_KEY", *sorted(case.env)],
        "timeout": case.timeout,
        "deterministic": case.deterministic,
        "note": case.note,
        "model_script": case.script,
        "exit_code": done.exit_code,
        "timed_out": done.timed_out,
        "stderr": masked(done.stderr.decode(errors="replace"), done.workdir),
        "requests_made": len(fake.requests),
        "requests_to_model_api": requests_of(fake, done.workdir)[:KEPT_REQUESTS],
    }
    FOLDER.mkdir(parents=True, exist_ok=True)
    (FOLDER / f"{name}.stdout").write_text(masked(done.stdout.decode(), done.workdir))
    text = json.dumps(meta, indent=1, ensure_ascii=False) + "\n"
    (FOLDER / f"{name}.meta.json").write_text(text)
    print(f"{name}: exit {done.exit_code}, {len(fake.requests)} requests, {done.seconds:.1f}s")


def main(names: list[str]) -> int:
    for name in names or list(CASES):
        take(name)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
