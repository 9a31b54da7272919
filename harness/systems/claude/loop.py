"""
A reference model of Claude Code's structured-output loop, towards the model API.

`run_claude` behaves like ``claude -p PROMPT --json-schema SCHEMA
--output-format json|stream-json [--verbose] [--fallback-model M]`` (Claude
Code 2.1.328, as the real-CLI captures show it): it checks the schema
argument, offers the schema as the ``StructuredOutput`` tool, talks to
``POST /v1/messages?beta=true`` with ``stream: true`` through the httpx client
it is given (so it runs in process against the respx-installed fake), and
drives the loop: validation of each call with every error in the CLI's
wording, attempt counting, the enforce reminder, API retries, the model
fallback and the mid-stream error.

What it prints is not built here: every step of the loop becomes one of the
semantic events of the fake ``claude`` (`providers_fake.cli.claude.render`), whose
renderer already prints capture-faithful lines and result objects.  Only the
decisions are this module's.

Beyond the captures, from seed 004 and probes of the real binary: the schema
size guard and ``$async`` (SCH-10, in `providers_fake.cli.schemaflag`); a stream
cut before ``message_stop`` is retried whole and its partial calls never count;
prose broken by an SSE error is resumed three times; a ``refusal`` stop is
continued once, then ends the run in error without the object; allowed Bash
calls run for real; a ``--resume`` turn counts only its own calls (LOOP-12).
Modelled from the seed alone, because they need remote configuration the real
binary cannot be given offline (scenarios with them skip the real target and
say why): the strict wire schema behind the ``tengu_structured_output_strict``
gate (`harness.systems.claude.strict`, LOOP-09), the Foundry capability memory that strips
it (LOOP-10), and the refusal fallback that tombstones the refused model's
messages, counts their StructuredOutput calls and retracts their objects
(LOOP-11, 13).

Three 529s without ``--fallback-model`` end the run with the CLI's "Repeated 529
Overloaded errors" message (probed).  Rules nothing pins, chosen here and tested
as the model's own: a 429 or another 5xx gives up to 10 ``api_retry`` lines,
then the API error result; a 400 other than the Foundry wording is not retried;
a tool the run may not use is refused with an error tool_result.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import httpx

from harness.systems.claude import profile as versions
from harness.systems.claude import strict, wire
from harness.systems.claude.ajv import check_output
from harness.systems.claude.profile import ClaudeProfile
from providers_fake.cli.base import Context
from providers_fake.cli.claude import data
from providers_fake.cli.claude.render import CLI, ClaudeRenderer
from providers_fake.cli.ids import Ids
from providers_fake.cli.schemaflag import parse_quietly
from providers_fake.cli.types import Output

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

ANTHROPIC_BASE_URL = "https://api.anthropic.com"
MESSAGES_PATH = "/v1/messages?beta=true"
TOOL_NAME = wire.TOOL_NAME
DEFAULT_ATTEMPTS = 5
#: The exit code of a run killed at its caller's timeout (SIGKILL).
KILLED = -9
#: Retries of an overloaded / failing request before giving up (the api_retry lines' max).
MAX_API_RETRIES = 10
#: Consecutive 529s after which a given ``--fallback-model`` takes over.
OVERLOADS_BEFORE_FALLBACK = 3
#: Times a stream broken after prose only is resumed before the run gives up.
MIDSTREAM_RESUMES = 3
FOUNDRY_WORDING = "structured_outputs not supported"
STRICT_GATE = "tengu_structured_output_strict"


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

    @property
    def lines(self) -> list[object]:
        out: list[object] = []
        for raw in self.stdout.decode().splitlines():
            try:
                out.append(json.loads(raw))
            except ValueError:
                out.append(raw)
        return out


# -- the loop ------------------------------------------------------------------------------


@dataclass
class _Settings:
    """What the run was given beyond the prompt and schema."""

    env: Mapping[str, str]
    fallback: str | None = None
    refusal_fallback: str | None = None
    gates: Mapping[str, bool] = field(default_factory=dict)
    #: The session's earlier turns (a ``--resume``), sent before this turn's prompt.
    resumed: tuple[dict[str, Any], ...] = ()
    allowed_tools: tuple[str, ...] = ()
    #: Where tools run (the CLI's working directory).
    cwd: Path | None = None
    #: How the CLI names a custom ANTHROPIC_BASE_URL in its overload message.
    gateway: str = "<fake-api>"
    #: When the caller kills the run (``time.monotonic()``), if it ever does.
    deadline: float | None = None
    #: What differs in the release modelled (`harness.systems.claude.profile`).
    profile: ClaudeProfile = field(default_factory=ClaudeProfile.of)


@dataclass
class _Turn:
    """The loop's counters for one turn."""

    model: str
    #: StructuredOutput attempts this turn may make (MAX_STRUCTURED_OUTPUT_RETRIES).
    allowed: int
    effort: str = "medium"
    failures: int = 0  # failing requests retried
    overloads: int = 0  # consecutive 529s towards the fallback model
    foundry: int = 0  # Foundry 400s retried
    cuts: int = 0  # streams cut before message_stop, retried whole
    retracted: int = 0  # StructuredOutput calls tombstoned by a refusal fallback
    resumes: int = 0  # prose streams resumed after an SSE error
    cut_offs: int = 0  # answers resumed after the output token limit
    nudged: bool = False  # an empty answer was answered with a nudge
    reminded: bool = False  # the enforce reminder was sent
    continued: bool = False  # a refusal stop was continued


class _Loop:
    def __init__(
        self, client: httpx.Client, base_url: str, renderer: ClaudeRenderer, settings: _Settings
    ) -> None:
        self.client = client
        self.url = base_url.rstrip("/") + MESSAGES_PATH
        self.renderer = renderer
        self.settings = settings
        self.resumed = list(settings.resumed)
        self.history: list[dict[str, Any]] = []
        #: The deployment said it has no structured outputs: strict is stripped from now on.
        self.foundry_gap = False
        self.profile = settings.profile
        self.answers = 0  # complete answers this run (what the token notes count, B-14)
        self.tokens_left: int | None = None  # the token notes' figure, fixed by the first
        self.accepted: tuple[object] | None = None  # the last accepted input (B-10)

    def event(self, name: str, arg: object = None) -> None:
        self.renderer.event(name, arg)

    def attempts_allowed(self) -> int:
        # Any integer is taken as it is, zero and below too (the first failure then
        # ends the run); anything else leaves the default.
        raw = self.settings.env.get("MAX_STRUCTURED_OUTPUT_RETRIES", "").strip()
        try:
            return int(raw)
        except ValueError:
            return DEFAULT_ATTEMPTS

    def tool(self, schema: dict[str, Any]) -> dict[str, object]:
        if not self.settings.gates.get(STRICT_GATE, False) or self.foundry_gap:
            return wire.tool_definition(schema)
        derived = strict.derive(schema)  # a failure falls back silently (LOOP-09)
        return wire.tool_definition(schema, derived.schema)

    def run(self, prompt: str, schema: dict[str, Any], model: str) -> None:
        turn = _Turn(model, self.attempts_allowed())
        self.event("init")
        while True:
            tool = self.tool(schema)
            self.token_note()
            body = wire.request_body(
                turn.model, turn.effort, prompt, self.history, tool, self.resumed
            )
            left = (
                None
                if self.settings.deadline is None
                else self.settings.deadline - time.monotonic()
            )
            if left is not None and left <= 0:
                raise httpx.ReadTimeout("the caller's timeout passed")
            with self.client.stream(
                "POST", self.url, json=body, headers=wire.HEADERS, timeout=left
            ) as response:
                if response.status_code >= 400:
                    response.read()
                    if self.failed(turn, tool, response):
                        continue
                    return
                answer = wire.read_answer(response)
            if self.settled(turn, answer, schema):
                return

    def time_left(self) -> float | None:
        """Seconds until the caller kills the run; raises once they are up."""
        if self.settings.deadline is None:
            return None
        left = self.settings.deadline - time.monotonic()
        if left <= 0:
            raise httpx.ReadTimeout("the caller's timeout passed")
        return left

    def failed(self, turn: _Turn, tool: dict[str, object], response: httpx.Response) -> bool:
        """An HTTP error: True to send the request again, False when the run has ended."""
        status = response.status_code
        kind, message = wire.error_of(response)
        fallback = self.settings.fallback
        if status == 529:
            turn.overloads += 1
            if turn.overloads >= OVERLOADS_BEFORE_FALLBACK and fallback is not None:
                self.event("model_fallback", {"from": turn.model, "to": fallback})
                turn.model, turn.effort, turn.overloads, turn.failures = fallback, "high", 0, 0
                return True
            if turn.overloads >= OVERLOADS_BEFORE_FALLBACK:
                return self.overloaded(response)
        if FOUNDRY_WORDING in message:
            if tool.get("strict") is True:
                self.foundry_gap = True  # remembered; the retry goes without strict
                return True
            if turn.foundry < len(self.profile.bad_request_retries):
                turn.foundry += 1
                return True
        budget = MAX_API_RETRIES - turn.cuts
        if _retryable(status) and turn.failures < budget:
            turn.failures += 1
            self.event(
                "api_retry", {"attempt": turn.failures, "status": status, "max_retries": budget}
            )
            return True
        self.event(
            "api_error_message", {"text": f"API Error: {status} {message}", "error": "unknown"}
        )
        self.event("result", {"is_error": True, "api_error_status": status, "api_error_type": kind})
        return False

    def resume(self, notice: str) -> bool:
        """Ask the model to go on where its answer was cut; the run goes on."""
        if self.profile.shows_recovery_notes:  # B-06
            self.event("enforce_reminder", notice)
        self.history.append({"role": "user", "content": versions.wrapped(self.profile, notice)})
        return False

    def token_note(self) -> None:
        """
        Before a request, the system message releases before 2.1.314 add after
        tool results, and after a resumed turn's prompt (B-14), its figure fixed
        by the first one: the budget less the last answer's tokens.
        """
        last = self.history[-1] if self.history else None
        after_prompt = last is None and bool(self.resumed)
        results = last is not None and last["role"] == "user" and wire.has_tool_results(last)
        if not self.profile.token_notes or not (after_prompt or results):
            return
        if self.tokens_left is None:
            spent = data.INPUT_TOKENS + data.OUTPUT_TOKENS if self.answers else 0
            self.tokens_left = versions.TOKEN_BUDGET - spent
        self.history.append(versions.token_note(self.tokens_left))

    def overloaded(self, response: httpx.Response) -> bool:
        """Three 529s and no fallback model: the run ends with the CLI's own words."""
        extra = {
            "request_id": response.headers.get("request-id"),
            "is_api_error_message": True,
            "api_error_status": 529,
            "api_error_type": "overloaded_error",
        }
        text = data.REPEATED_OVERLOADS.format(gateway=self.settings.gateway)
        self.event("api_error_message", {"text": text, "error": "server_error", "extra": extra})
        self.event(
            "result",
            {"is_error": True, "api_error_status": 529, "api_error_type": "overloaded_error"},
        )
        return False

    def settled(self, turn: _Turn, answer: wire.Answer, schema: dict[str, Any]) -> bool:
        """A 200 answer: True when the run has ended, False to ask the model again."""
        if answer.truncated and not answer.midstream_error and turn.cuts < MAX_API_RETRIES:
            turn.cuts += 1  # the partial message never enters the conversation
            self.event("api_retry", {"attempt": turn.cuts, "status": None})
            return False
        turn.failures = turn.overloads = 0
        self.answers += 1
        mark = len(self.history)
        outcome = self.answered(answer, schema)
        if self.answers == 1 and self.profile.billing_notice:
            # B-12: the binary prints it while the first answer streams; its place among
            # the lines depends on timing, here it follows the first answer's lines.
            text = versions.BILLING_NOTICE.format(gateway=self.settings.gateway)
            self.event("notice", {"text": text, "level": "warning"})
        if answer.stop_reason == "refusal":
            return self.refused(turn, answer, outcome, mark)
        if answer.midstream_error and outcome == "prose":
            if turn.resumes < MIDSTREAM_RESUMES and self.profile.resumes_broken_prose:  # B-22
                turn.resumes += 1  # the model is asked to pick up where the stream broke
                return self.resume(data.CUT_OFF_NOTICE)
            self.event("api_error_message")
            self.event("result", {"is_error": True})
            return True
        if answer.stop_reason == "max_tokens" and outcome == "prose":
            if turn.cut_offs < MIDSTREAM_RESUMES:
                turn.cut_offs += 1  # likewise after the output token limit
                return self.resume(data.MAX_TOKENS_NOTICE)
            extra = {"api_error": "max_output_tokens", "api_error_params": {"cut": "output_limit"}}
            text = versions.max_tokens_error(self.profile, turn.model)
            message = {"text": text, "error": "max_output_tokens", "extra": extra}
            self.event("api_error_message", message)
            self.event("result", {"is_error": True})
            return True
        if not answer.blocks and not turn.nudged:
            turn.nudged = True  # an empty answer gets one nudge before the prose rules
            self.event("enforce_reminder", data.NO_OUTPUT_NOTICE)
            self.history.append({"role": "user", "content": data.NO_OUTPUT_NOTICE})
            return False
        if outcome == "accepted":
            after_call: dict[str, object] = {}
            if answer.midstream_error:
                self.event("api_error_message")
                after_call = _AFTER_CALL.get(self.profile.midstream_after_call, {})  # B-11
            self.event("result", after_call)
            return True
        if outcome == "rejected":
            return self.rejected(turn)
        if outcome == "working":
            return False
        if not turn.reminded:
            turn.reminded = True
            self.event("enforce_reminder")
            reminder = {"type": "text", "text": data.ENFORCE_REMINDER}
            self.history.append({"role": "user", "content": [reminder]})
            return False
        # A second prose stop ends the turn; if its only objects were retracted, in error (LOOP-13).
        exhausted = {"subtype": "error_max_structured_output_retries"}
        self.event("result", exhausted if turn.retracted else {})
        return True

    def rejected(self, turn: _Turn) -> bool:
        """A rejected call: the model is asked again, or the attempts are used up."""
        if self.attempts() + turn.retracted < turn.allowed:
            return False
        self.event("result", self.exhausted(turn))
        return True

    def exhausted(self, turn: _Turn) -> dict[str, object]:
        """The result when the attempts are used up; before 2.1.260 it quotes no error (B-03)."""
        fields: dict[str, object] = {"subtype": "error_max_structured_output_retries"}
        if not self.profile.exhaustion_names_last_error:
            attempts = f"after {turn.allowed} attempts"
            fields["errors"] = [f"Failed to provide valid structured output {attempts}"]
        return fields

    def refused(self, turn: _Turn, answer: wire.Answer, outcome: str, mark: int) -> bool:
        """A ``refusal`` stop: continued once, retried on an armed fallback, or the end."""
        target = self.settings.refusal_fallback
        once = self.profile.refusal_continues  # B-09
        if once and not turn.continued and outcome != "accepted" and target is None:
            turn.continued = True  # once per turn, with a note to the model
            notice = self.profile.refusal_notice
            self.event("refusal_continue", {"message_id": answer.message_id, "notice": notice})
            self.note(versions.wrapped(self.profile, data.REFUSAL_NOTICE))
            return False
        if target is None or target == turn.model:
            text = versions.refusal_text(self.profile, turn.model, answer.message_id)
            fields = {"message_id": answer.message_id, "model": turn.model, "text": text}
            self.event("refusal", fields)
            if not once and outcome == "rejected":
                # Releases that end at a refusal still answer the call's tool error, and
                # the loop goes on as after any rejection (probed on 2.1.235); the refusal
                # is then no longer the run's end, so the renderer must not end on it.
                state = self.renderer.state
                state.refused, state.synthetic = None, False
                return self.rejected(turn)
            ended: dict[str, object] = {"refused": True}
            if self.profile.refusal_keeps_object and self.accepted is not None:  # B-10
                ended["structured_output"] = self.accepted[0]
            self.event("result", ended)
            return True
        turn.retracted += self.retract(mark, turn.model, target)
        turn.model = target
        return False

    def note(self, text: str) -> None:
        """A meta text for the model, joined to the last user message when there is one."""
        block = {"type": "text", "text": text}
        if self.history and self.history[-1]["role"] == "user":
            content = self.history[-1]["content"]
            if isinstance(content, str):
                content = self.history[-1]["content"] = [{"type": "text", "text": content}]
            content.append(block)
        else:
            self.history.append({"role": "user", "content": [block]})

    def attempts(self) -> int:
        """StructuredOutput calls of this turn: the resumed history's do not count (LOOP-12)."""
        return wire.calls(self.history)

    def retract(self, mark: int, model: str, target: str) -> int:
        """
        Tombstone the refused answer: its messages leave the conversation, its
        StructuredOutput calls still count as attempts, its object is withdrawn.
        """
        gone = self.history[mark:]
        del self.history[mark:]
        self.event("refusal_fallback", {"from": model, "to": target})
        return wire.calls(gone)

    def other_tool(self, block: dict[str, Any]) -> dict[str, Any]:
        """Run an allowed Bash call in the working directory: its side effects are real."""
        name, tool_input = block["name"], block["input"]
        command = tool_input.get("command") if isinstance(tool_input, dict) else None
        cwd = self.settings.cwd
        if name != "Bash" or name not in self.settings.allowed_tools or not command or not cwd:
            output, failed = f"{name} is not available to this run", True
        else:
            output, failed = wire.bash(str(command), cwd, self.tool_env(cwd))
        self.event(
            "tool", {"name": name, "input": tool_input, "output": output, "is_error": failed}
        )
        content = output or f"({name} completed with no output)"
        return {
            "tool_use_id": block["id"],
            "type": "tool_result",
            "content": content,
            "is_error": failed,
        }

    def tool_env(self, cwd: Path) -> dict[str, str]:
        """
        What a command the CLI runs sees: the CLI's own environment (nothing of
        the harness's but ``PATH``, as for the real binaries), less the CLI's
        credentials and telemetry settings, plus the markers the CLI adds (probed).
        """
        env = {
            name: value
            for name, value in self.settings.env.items()
            if name != "CLAUDE_CODE_OAUTH_TOKEN" and not name.startswith("OTEL_")
        }
        path = os.environ.get("PATH", "/usr/bin:/bin")
        env.update({"PATH": path, "HOME": str(cwd), "PWD": str(cwd), "CLAUDECODE": "1"})
        env.update({"SHELL": "/bin/bash", "GIT_EDITOR": "true"})
        return env

    def answered(self, answer: wire.Answer, schema: dict[str, Any]) -> str:
        """
        Print the answer's blocks and run its tool calls: accepted, rejected, working
        (only other tools ran, so the loop goes on) or prose.
        """
        results: list[dict[str, Any]] = []
        outcome = "prose"
        content: list[dict[str, Any]] = []
        for block in answer.blocks:
            if block["type"] == "thinking":
                self.event("thinking", block)
                kept = {k: block.get(k, "") for k in ("type", "thinking", "signature")}
                content.append(kept)
            elif block["type"] == "text":
                self.event("text", block["text"])
                content.append({"type": "text", "text": block["text"]})
            elif block["type"] == "tool_use" and block["name"] != TOOL_NAME:
                content.append({k: block[k] for k in ("type", "id", "name", "input")})
                results.append(self.other_tool(block))
                outcome = "working" if outcome == "prose" else outcome
            elif block["type"] == "tool_use" and block["name"] == TOOL_NAME:
                content.append(
                    {
                        "type": "tool_use",
                        "id": block["id"],
                        "name": TOOL_NAME,
                        "input": block["input"],
                    }
                )
                error = versions.input_type_error(self.profile, block["input"]) or check_output(
                    schema,
                    block["input"],
                    params=self.profile.feedback_params,
                    multiple_of_precision=self.profile.multiple_of_precision,
                )
                if error is None:
                    self.accepted = (block["input"],)
                    self.event("structured_output", block["input"])
                    results.append(
                        {
                            "tool_use_id": block["id"],
                            "type": "tool_result",
                            "content": data.TOOL_ACCEPTED,
                        }
                    )
                    outcome = "accepted"
                else:
                    self.event(
                        "structured_output_rejected", {"input": block["input"], "error": error}
                    )
                    results.append(
                        {
                            "type": "tool_result",
                            "content": error,
                            "is_error": True,
                            "tool_use_id": block["id"],
                        }
                    )
                    outcome = "rejected" if outcome != "accepted" else outcome
        if content:
            self.history.append({"role": "assistant", "content": content})
        if results:
            self.history.append({"role": "user", "content": results})
        return outcome


#: How a run ends after an SSE error that followed a complete, accepted call (B-11).
_AFTER_CALL: dict[str, dict[str, object]] = {
    "error": {
        "is_error": True,
        "result": data.MIDSTREAM_ERROR,
        "stop_reason": "stop_sequence",
        "terminal_reason": "completed",
    },
    "success_early": {"stop_reason": "stop_sequence"},
}


def _retryable(status: int) -> bool:
    return status in (408, 409, 429) or status >= 500


def run_claude(
    client: httpx.Client,
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
    allowed_tools: Sequence[str] = (),
    cwd: Path | None = None,
    timeout: float | None = None,
    version: str | None = None,
) -> ClaudeRun:
    """
    One ``claude -p`` run against the model API behind ``client``.

    ``verbose`` defaults to what ``output_format`` needs (stream-json requires it).
    ``resumed`` is an earlier run's `ClaudeRun.conversation`: this run resumes
    that session, and only this turn's calls count against its budget.  With
    ``timeout`` the run is killed when it passes, as the harness kills a real
    CLI: what was printed stays, the exit code is -9.
    """
    env = dict(env or {})
    profile = ClaudeProfile.of(version)
    if versions.sends_connectivity_check(profile, env):  # before anything else (B-01)
        _connectivity_check(client, base_url)
    argv = ["-p", prompt, "--json-schema", schema, "--output-format", output_format]
    if verbose or (verbose is None and output_format == "stream-json"):
        argv.append("--verbose")
    if fallback_model is not None:
        argv += ["--fallback-model", fallback_model]
    parsed = CLI.parse(argv)
    out = Output()
    refusal = CLI.refusal(parsed, None, prompt)
    if refusal is not None and not profile.refuses_async and ASYNC_REFUSED in refusal[0]:
        refusal = None  # releases before 2.1.260 take an $async schema (B-05)
    if refusal is not None:
        message, status = refusal
        return ClaudeRun(status, b"", message)
    env.setdefault("HOME", "/home/reference")
    ctx = Context(
        CLI,
        parsed=parsed,
        env=env,
        cwd=env.get("PWD", "/work"),
        prompt=prompt,
        ids=Ids(seed, "claude"),
        out=out,
        json_shape=None,
    )
    renderer = ClaudeRenderer(ctx)
    if parsed.text("model") is None:
        renderer.model = profile.default_model  # B-07
    settings = _Settings(
        env,
        fallback_model,
        refusal_fallback_model,
        dict(gates or {}),
        tuple(resumed),
        tuple(allowed_tools),
        cwd,
        deadline=None if timeout is None else time.monotonic() + timeout,
        profile=profile,
    )
    loop = _Loop(client, base_url, renderer, settings)
    try:
        loop.run(prompt, cast("dict[str, Any]", parse_quietly(schema)), renderer.model)
    except httpx.TimeoutException:
        stdout = _stream(out, "stdout")
        return ClaudeRun(KILLED, stdout, _stream(out, "stderr").decode(), timed_out=True)
    prompted = wire.asked(prompt, resumed=bool(resumed))
    conversation = wire.closed([*resumed, prompted, *loop.history], profile.continue_note)
    stdout, stderr = _stream(out, "stdout"), _stream(out, "stderr").decode()
    return ClaudeRun(renderer.finish(), stdout, stderr, tuple(conversation))


def _stream(out: Output, name: str) -> bytes:
    parts = [chunk[-1] for chunk in out.chunks if chunk[0] == name]
    return b"".join(part for part in parts if isinstance(part, bytes))


#: The words of the CLI's refusal of an ``$async`` schema (B-05).
ASYNC_REFUSED = "$async schemas are not supported"


def _connectivity_check(client: httpx.Client, base_url: str) -> None:
    """``HEAD /api/hello``, whose answer the CLI never reads (B-01)."""
    with contextlib.suppress(httpx.HTTPError):
        client.head(base_url.rstrip("/") + "/api/hello", timeout=10.0)
