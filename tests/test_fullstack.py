"""
The full stack: real CLI output → reference adaptor pipeline → adaptor outcome.

Each real capture (tests/data/captures/) is fed through
`harness.adaptor.fullstack.adapt` and the outcome is checked against what the
contract clauses (docs/clauses.md) say an adaptor must conclude from that run
(the clause is named beside each case).  The expectations were written from
the clauses, not from what the pipeline returns.  Then the pinned real
``claude`` runs against the loopback fake model API and its run is read the
same way, and the catalogue's full-stack chain is run twice to show that its
reports come out byte for byte the same.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from harness.adaptor.fullstack import Asked, adapt
from harness.catalogue.outcome import Outcome
from harness.seams.model_api.values import stable_stdout
from providers_fake import api
from providers_fake.api import realcli
from tests import captures
from tests.capture_compare import CAPTURE_SCHEMAS
from tests.realbin import real_binary

ROOT = Path(__file__).resolve().parent.parent
FULL_STACK = ROOT / "scenarios" / "model-api" / "full-stack"
CHAINS = "claude-ok or claude-stream-retry or codex-ok"
DIAGNOSIS = (ROOT / "scenarios" / "agent-cli" / "schemas" / "diagnosis.json").read_text()
VALUE = {"cause": "missing dependency", "fixes": ["pip install x"]}

# The schema each capture was taken with when it was not the diagnosis schema
# (as in tests/test_fake_apis.py), and the captures taken with stream-json.
SCHEMAS = CAPTURE_SCHEMAS
STREAM_JSON = frozenset(
    {
        "claude-exhausted",
        "claude-happy-stream",
        "claude-midstream-error-after-tool",
        "claude-overload-fallback",
        "claude-prose-then-tool",
        "claude-retry-then-ok",
    }
)


@dataclass(frozen=True)
class Concluded:
    """What the contracts say an adaptor concludes: ok with `value`, or an error."""

    clauses: str
    value: Any = None
    error: str | None = None
    cause: str | None = None
    #: Whether the adaptor reads the run at all (0: refused before launch).
    launches: int = 1


def ok(clauses: str, value: Any) -> Concluded:
    return Concluded(clauses, value=value)


def failed(clauses: str, error: str, cause: str | None = None, launches: int = 1) -> Concluded:
    return Concluded(clauses, error=error, cause=cause, launches=launches)


EXPECTED: dict[str, Concluded] = {
    "claude-happy-json": ok("CLA-01", VALUE),
    "claude-happy-stream": ok("CLA-01, CLA-06", VALUE),
    "claude-retry-then-ok": ok("LOOP-02, LOOP-03, CLA-01", VALUE),
    "claude-prose-then-tool": ok("LOOP-06, CLA-01", VALUE),
    "claude-text-and-tool": ok(
        "CLA-01: structured_output, not the text", {"cause": "c", "fixes": []}
    ),
    "claude-overload-fallback": ok("LOOP-14, CLA-01", VALUE),
    # The call whose stream broke is still executed; its input is the answer.
    "claude-midstream-error-after-tool": ok("LOOP-15, CLA-01", {"cause": "A", "fixes": []}),
    # The adaptor revalidates locally (CLA-01); like the CLI (LOOP-07) and Draft
    # 2020-12 by default, it treats `format` as an annotation.
    "claude-schema-format-email": ok("LOOP-07, CLA-01", {"email": "not-an-email"}),
    "claude-exhausted": failed(
        "CLA-03, POL-03", "execution_error", "max_structured_output_retries"
    ),
    "claude-exhausted-env2": failed(
        "CLA-03, LOOP-05", "execution_error", "max_structured_output_retries"
    ),
    "claude-schema-top-array": failed(
        "LOOP-08, CLA-03", "execution_error", "max_structured_output_retries"
    ),
    # subtype success but is_error true: a failure, never a candidate.
    "claude-400-structured-outputs": failed("CLA-04, LOOP-10", "execution_error", "api_error"),
    # A clean success without structured_output is no candidate; the completed
    # run then fails under the default policy (never the `result` prose).
    "claude-prose-twice": failed("CLA-02, DEC-01, POL-01", "policy_violation"),
    # The adaptor's own intake refuses these schemas: the CLI is never started.
    "claude-schema-not-json": failed("SCH-01", "invalid_output_schema", launches=0),
    "claude-schema-array": failed("SCH-05", "invalid_output_schema", launches=0),
    "claude-schema-invalid": failed("SCH-05", "invalid_output_schema", launches=0),
    "codex-happy": ok("CDX-01, CDX-08", {"cause": "dep", "fixes": ["a"]}),
    "codex-two-messages": ok("CDX-01: the last agent_message", {"cause": "dep", "fixes": []}),
    # Codex exits 0 with prose; the consumer validates and the default policy fails it.
    "codex-prose-with-schema": failed("CDX-07, PV-02, POL-01", "policy_violation"),
    # An error line, turn.failed and exit 1: turn_failed is the most specific cause.
    "codex-400-invalid-schema": failed("CDX-06, CDX-04", "execution_error", "turn_failed"),
    "codex-response-failed": failed("CDX-04", "execution_error", "turn_failed"),
}


@dataclass(frozen=True)
class Capture:
    name: str
    cli: str
    exit_code: int
    stdout: bytes
    stderr: str

    @classmethod
    def load(cls, name: str) -> Capture:
        meta = captures.meta(name)
        stdout = captures.stdout(name)
        return cls(name, name.split("-", 1)[0], meta["exit_code"], stdout, meta["stderr"])

    def asked(self, **options: str) -> Asked:
        fmt = "stream-json" if self.name in STREAM_JSON else "json"
        return Asked(SCHEMAS.get(self.name, DIAGNOSIS), output_format=fmt, **options)

    def adapt(self, **options: str) -> Outcome:
        return adapt(self.cli, self.asked(**options), self.exit_code, self.stdout, self.stderr)


def test_every_capture_has_an_expected_conclusion() -> None:
    assert sorted(EXPECTED) == captures.names()
    # The stream-json set matches what the captures themselves show.
    for name in captures.names():
        streamed = Capture.load(name).stdout.startswith(b'{"type":"system"')
        assert streamed == (name in STREAM_JSON), name


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_capture_through_the_reference_adaptor(name: str) -> None:
    want = EXPECTED[name]
    outcome = Capture.load(name).adapt()
    got = (outcome.status, outcome.error, outcome.cause, outcome.launches)
    status = "ok" if want.error is None else "error"
    assert got == (status, want.error, want.cause, want.launches), (want.clauses, outcome)
    if want.error is None:
        assert outcome.value is not None, want.clauses
        assert outcome.value.value == want.value, want.clauses
        assert outcome.mechanism == "native"
    else:
        assert outcome.value is None, want.clauses


def test_prose_success_never_falls_back_to_the_result_string() -> None:
    outcome = Capture.load("claude-prose-twice").adapt()
    assert outcome.value is None
    assert outcome.text == "prose two"  # kept as text, not promoted to a value (CLA-02)
    assert [d.path for d in outcome.diagnostics] == [""]


def test_return_invalid_policy_turns_missing_and_invalid_values_into_decode_errors() -> None:
    # POL-02: the run succeeds; Decode reports the problem.
    for name in ("claude-prose-twice", "codex-prose-with-schema"):
        outcome = Capture.load(name).adapt(on_invalid="return")
        assert (outcome.status, outcome.error, outcome.value) == ("error", "decode_error", None)
        assert outcome.diagnostics, name
    # POL-03: an execution failure still outranks the policy.
    exhausted = Capture.load("claude-exhausted").adapt(on_invalid="return")
    assert (exhausted.error, exhausted.cause) == (
        "execution_error",
        "max_structured_output_retries",
    )


def test_prompt_validation_reads_only_the_final_text() -> None:
    # CLA-05: the result string is the object as JSON, so prompt validation accepts it.
    happy = Capture.load("claude-happy-json").adapt(validation="prompt")
    assert (happy.status, happy.mechanism) == ("ok", "prompt")
    assert happy.value is not None
    assert happy.value.value == VALUE
    # PV-02: prose is not one JSON value.
    prose = Capture.load("claude-prose-twice").adapt(validation="prompt")
    assert (prose.error, prose.mechanism, prose.value) == ("policy_violation", "prompt", None)


def test_the_run_is_read_only_when_the_schema_passes_intake() -> None:
    # The same empty, exit-1 run under a schema the adaptor accepts is an execution failure.
    refused = Capture.load("claude-schema-invalid")
    outcome = adapt("claude", Asked(DIAGNOSIS), refused.exit_code, refused.stdout, refused.stderr)
    assert (outcome.error, outcome.cause, outcome.launches) == (
        "execution_error",
        "nonzero_exit",
        1,
    )


def test_signals_and_timeouts_of_the_recorded_run() -> None:
    happy = Capture.load("codex-happy")
    killed = adapt("codex", Asked(DIAGNOSIS), -9, happy.stdout, b"")
    assert (killed.error, killed.cause, killed.value) == ("execution_error", "signal", None)
    late = adapt("codex", Asked(DIAGNOSIS), -9, happy.stdout, "", timed_out=True)
    assert (late.error, late.cause) == ("execution_error", "timeout")


@pytest.mark.parametrize(
    ("cli", "asked", "fragment"),
    [
        ("cursor", Asked(DIAGNOSIS), "unknown cli"),
        ("codex", Asked(DIAGNOSIS, output_format="stream-json"), "no output format"),
        ("claude", Asked(DIAGNOSIS, validation="local"), "validation must be"),
        ("claude", Asked(DIAGNOSIS, on_invalid="ignore"), "on_invalid must be"),
    ],
)
def test_asks_the_pipeline_cannot_express_are_refused(
    cli: str, asked: Asked, fragment: str
) -> None:
    with pytest.raises(ValueError, match=fragment):
        adapt(cli, asked, 0, b"", "")


@pytest.mark.subprocess
@pytest.mark.parametrize("output_format", ["json", "stream-json"])
def test_real_claude_end_to_end(output_format: str) -> None:
    binary = real_binary("claude")
    prompt = "Diagnose the build failure."
    with api.LoopbackServer(api.ScriptedModelAPI([api.tool_call(VALUE)])) as server:
        run = realcli.run_claude(
            binary, server.url, prompt=prompt, schema=DIAGNOSIS, output_format=output_format
        )
    assert not run.timed_out, f"killed after {run.seconds:.1f}s"
    asked = Asked(DIAGNOSIS, prompt=prompt, output_format=output_format)
    outcome = adapt("claude", asked, run.exit_code, run.stdout, run.stderr)
    assert (outcome.status, outcome.error, outcome.mechanism) == ("ok", None, "native"), outcome
    assert outcome.value is not None
    assert outcome.value.value == VALUE


@pytest.mark.subprocess
def test_real_codebuddy_end_to_end() -> None:
    """
    The real CodeBuddy Code against the loopback fake Chat Completions API, its
    stream-json read by the reference adaptor's codebuddy driver: the call is
    accepted, the turn goes on to a last text (rule C-01), the value arrives.
    """
    binary = real_binary("codebuddy")
    prompt = "Diagnose the build failure."
    script = [api.tool_call(VALUE), api.text("Done.")]
    with api.LoopbackServer(api.ScriptedModelAPI(script)) as server:
        run = realcli.run_codebuddy(
            binary, server.url + "/v1", prompt=prompt, schema=DIAGNOSIS, timeout=90
        )
        requests = len(server.fake.model_requests)
    assert not run.timed_out, f"killed after {run.seconds:.1f}s"
    assert (run.exit_code, requests) == (0, 2)
    asked = Asked(DIAGNOSIS, prompt=prompt, output_format="stream-json")
    outcome = adapt("codebuddy", asked, run.exit_code, run.stdout, run.stderr)
    assert (outcome.status, outcome.error, outcome.mechanism) == ("ok", None, "native"), outcome
    assert outcome.value is not None
    assert outcome.value.value == VALUE


@pytest.mark.subprocess
@pytest.mark.parametrize("target", ["reference", "real"])
def test_the_full_stack_chain_reports_the_same_bytes_twice(target: str, tmp_path: Path) -> None:
    """
    The chain's report keeps the CLI's raw stdout (the adaptor's view), which
    holds clocks, ids and usage the CLI makes up afresh: two runs, each in a
    fresh process as `make run` does it, must still write the same bytes.
    """
    # The claude json and stream-json chains and the codex one: each line type that
    # carries a clock, an id or usage (the whole file costs four times as much).
    if target == "real":
        real_binary("claude")
        real_binary("codex")
    env = {**os.environ, "SOURCE_DATE_EPOCH": "0"}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, (str(ROOT), env.get("PYTHONPATH"))))
    folders = (tmp_path / "one", tmp_path / "two")
    for folder in folders:
        argv = [sys.executable, "-m", "harness", "run", str(FULL_STACK), "--target", target,
                "-k", CHAINS, "--reports", str(folder)]  # fmt: skip
        done = subprocess.run(
            argv, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300, check=False
        )
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    one, two = folders
    names = sorted(p.name for p in one.iterdir())
    assert names == sorted(p.name for p in two.iterdir())
    assert "report.json" in names
    for name in names:
        assert (one / name).read_bytes() == (two / name).read_bytes(), name
    # Not vacuous: the chain's raw stdout is in the report, its volatile values masked.
    cases = json.loads((one / "report.json").read_text())["cases"]
    views = [(c["outcome"] or {}).get("adaptor") for c in cases]
    stdouts = [view["stdout"] for view in views if view]
    assert any('"duration_ms":"<volatile>"' in s for s in stdouts), stdouts[:1]
    assert any('"thread_id":"<volatile>"' in s for s in stdouts), stdouts[:1]


def test_the_kept_stdout_is_masked_line_by_line() -> None:
    """What `stable` masks in the parsed lines, and nothing else, is masked in the raw text."""
    volatile = '{"type":"result","duration_ms":161,"uuid":"e7ace6e4-75dc-4d03-8e85-cca95104e346"}'
    unicode = '{"a":"x\u2028y","session_id":"s"}'
    text = f'{volatile}\r\nAPI Error: 529\n{{"type": "x", "n": 1}}\n{unicode}\n'
    assert stable_stdout(text) == (
        '{"type":"result","duration_ms":"<volatile>","uuid":"<volatile>"}\r\n'
        "API Error: 529\n"
        '{"type": "x", "n": 1}\n'  # nothing volatile: as printed, spaces and all
        '{"a":"x\u2028y","session_id":"<volatile>"}\n'  # U+2028 inside a string ends no line
    )
    assert stable_stdout("") == ""
