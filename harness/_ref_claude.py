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
semantic events of the fake ``claude`` (`providers_fake._claude`), whose
renderer already prints capture-faithful lines and result objects.  Only the
decisions are this module's.

Rules no capture pins, chosen here and tested as the model's own: a 529
without ``--fallback-model`` (and a 429 / 5xx) gives up to 10 ``api_retry``
lines, then the API error result; a 400 other than the Foundry wording is not
retried.  Not modelled yet: the strict-schema derivation and its ``strict``
flag (never sent, as in the captures), retraction of StructuredOutput calls
after a model fallback, a mid-stream error before any tool call, and tools
other than StructuredOutput (ignored).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, cast

import httpx
import jsonschema

from providers_fake import _claude_data as data
from providers_fake._base import Context
from providers_fake._claude import CLI, ClaudeRenderer
from providers_fake._ids import Ids
from providers_fake._types import Output

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping, Sequence

ANTHROPIC_BASE_URL = "https://api.anthropic.com"
MESSAGES_PATH = "/v1/messages?beta=true"
TOOL_NAME = "StructuredOutput"
TOOL_DESCRIPTION = (
    "Use this tool to return your final response in the requested structured format. "
    "You MUST call this tool exactly once at the end of your response to provide the "
    "structured output."
)
DEFAULT_ATTEMPTS = 5
#: Retries of an overloaded / failing request before giving up (the api_retry lines' max).
MAX_API_RETRIES = 10
#: Consecutive 529s after which a given ``--fallback-model`` takes over.
OVERLOADS_BEFORE_FALLBACK = 3
#: Requests made in all when the API answers the Foundry "structured_outputs" 400.
FOUNDRY_REQUESTS = 6
FOUNDRY_WORDING = "structured_outputs not supported"
_EPHEMERAL = {"type": "ephemeral"}


@dataclass(frozen=True)
class ClaudeRun:
    """What the modelled CLI did: its exit status, stdout bytes and stderr text."""

    exit_code: int
    stdout: bytes
    stderr: str

    @property
    def lines(self) -> list[object]:
        out: list[object] = []
        for raw in self.stdout.decode().splitlines():
            try:
                out.append(json.loads(raw))
            except ValueError:
                out.append(raw)
        return out


# -- validation, in Ajv's words --------------------------------------------------------


def _ajv_message(error: jsonschema.ValidationError) -> str:
    keyword, value = error.validator, error.validator_value
    if keyword == "required":
        missing = error.message.split("'")[1] if "'" in error.message else "?"
        return f"must have required property '{missing}'"
    if keyword == "type":
        kinds = value if isinstance(value, list) else [value]
        return f"must be {','.join(str(k) for k in kinds)}"
    simple = {
        "additionalProperties": "must NOT have additional properties",
        "enum": "must be equal to one of the allowed values",
        "const": "must be equal to constant",
        "anyOf": "must match a schema in anyOf",
        "oneOf": "must match exactly one schema in oneOf",
        "not": "must NOT be valid",
        "uniqueItems": "must NOT have duplicate items",
    }
    if keyword in simple:
        return simple[str(keyword)]
    bounds = {
        "minLength": "must NOT have fewer than {} characters",
        "maxLength": "must NOT have more than {} characters",
        "minItems": "must NOT have fewer than {} items",
        "maxItems": "must NOT have more than {} items",
        "minProperties": "must NOT have fewer than {} properties",
        "maxProperties": "must NOT have more than {} properties",
        "minimum": "must be >= {}",
        "maximum": "must be <= {}",
        "exclusiveMinimum": "must be > {}",
        "exclusiveMaximum": "must be < {}",
        "multipleOf": "must be multiple of {}",
        "pattern": 'must match pattern "{}"',
    }
    if keyword in bounds:
        return bounds[str(keyword)].format(value)
    return f"must pass {keyword!s} keyword validation"


# Ajv checks a schema's type first, then the object keywords, then each property.
_RANK = {"type": 0, "required": 1, "additionalProperties": 2, "properties": 3}


def _instance_path(error: jsonschema.ValidationError) -> str:
    parts = [str(p).replace("~", "~0").replace("/", "~1") for p in error.absolute_path]
    return "/" + "/".join(parts) if parts else "root"


def validation_errors(schema: Mapping[str, Any], value: Any) -> list[str]:
    """Every error, as ``PATH: MESSAGE``, in Ajv's order; ``format`` is not enforced."""
    validator_class = jsonschema.validators.validator_for(schema, jsonschema.Draft7Validator)
    errors = list(validator_class(schema).iter_errors(value))
    errors.sort(
        key=lambda e: _RANK.get(str(e.relative_schema_path[0]), 4) if e.relative_schema_path else 4
    )
    return [f"{_instance_path(e)}: {_ajv_message(e)}" for e in errors]


def check_output(schema: Mapping[str, Any], value: object) -> str | None:
    """The tool_result error for a StructuredOutput input, None when it is accepted."""
    # A tool input reaches the validator as an object: anything else is seen as empty.
    problems = validation_errors(schema, value if isinstance(value, dict) else {})
    if not problems:
        return None
    return "Output does not match required schema: " + ", ".join(problems)


# -- the wire ------------------------------------------------------------------------------


def tool_definition(schema: Mapping[str, Any]) -> dict[str, object]:
    return {"name": TOOL_NAME, "description": TOOL_DESCRIPTION, "input_schema": dict(schema)}


def _request_body(
    model: str, effort: str, prompt: str, history: Sequence[dict[str, Any]], tool: dict[str, object]
) -> dict[str, object]:
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": [{"type": "text", "text": prompt}]},
        *(json.loads(json.dumps(m)) for m in history),
    ]
    last = messages[-1]["content"][-1]
    last["cache_control"] = dict(_EPHEMERAL)
    return {
        "model": model,
        "messages": messages,
        "system": [{"type": "text", "text": "You are Claude Code, Anthropic's official CLI."}],
        "tools": [tool],
        "metadata": {"user_id": "reference-model"},
        "max_tokens": 32000,
        "thinking": {"type": "adaptive"},
        "context_management": {"edits": []},
        "output_config": {"effort": effort},
        "stream": True,
    }


@dataclass
class _Answer:
    """One 200 answer, as far as the stream got."""

    blocks: list[dict[str, Any]] = field(default_factory=list)
    stop_reason: str | None = None
    midstream_error: bool = False


def _sse_events(lines: Iterator[str]) -> Iterator[tuple[str, dict[str, Any]]]:
    name, data_lines = "", cast("list[str]", [])
    for line in lines:
        if not line:
            if data_lines:
                yield name, json.loads("\n".join(data_lines))
            name, data_lines = "", cast("list[str]", [])
        elif line.startswith("event:"):
            name = line[6:].strip()
        elif line.startswith("data:"):
            data_lines.append(line[5:].strip())
    if data_lines:
        yield name, json.loads("\n".join(data_lines))


def _read_answer(response: httpx.Response) -> _Answer:
    answer = _Answer()
    partial: dict[int, str] = {}
    open_blocks: dict[int, dict[str, Any]] = {}
    try:
        for kind, event in _sse_events(response.iter_lines()):
            if kind == "error" or event.get("type") == "error":
                answer.midstream_error = True
                break
            if kind == "content_block_start":
                open_blocks[event["index"]] = dict(event["content_block"])
                partial[event["index"]] = ""
            elif kind == "content_block_delta":
                delta, block = event["delta"], open_blocks[event["index"]]
                if delta["type"] == "text_delta":
                    block["text"] = block.get("text", "") + delta["text"]
                elif delta["type"] == "input_json_delta":
                    partial[event["index"]] += delta["partial_json"]
            elif kind == "content_block_stop":
                block = open_blocks.pop(event["index"])
                if block["type"] == "tool_use":
                    text = partial[event["index"]]
                    block["input"] = json.loads(text) if text else {}
                answer.blocks.append(block)
            elif kind == "message_delta":
                answer.stop_reason = event["delta"].get("stop_reason")
    except httpx.TransportError:
        answer.midstream_error = True
    return answer


def _error_of(response: httpx.Response) -> tuple[str, str]:
    """The API error's type and message from a plain HTTP error body."""
    try:
        error = response.json().get("error", {})
        return str(error.get("type", "api_error")), str(error.get("message", ""))
    except (ValueError, AttributeError):
        return "api_error", response.text


# -- the loop ------------------------------------------------------------------------------


class _Loop:
    def __init__(
        self, client: httpx.Client, base_url: str, renderer: ClaudeRenderer, env: Mapping[str, str]
    ) -> None:
        self.client = client
        self.url = base_url.rstrip("/") + MESSAGES_PATH
        self.renderer = renderer
        self.env = env
        self.history: list[dict[str, Any]] = []

    def event(self, name: str, arg: object = None) -> None:
        self.renderer.event(name, arg)

    def attempts_allowed(self) -> int:
        raw = self.env.get("MAX_STRUCTURED_OUTPUT_RETRIES", "")
        try:
            value = int(raw)
        except ValueError:
            return DEFAULT_ATTEMPTS
        return value if value > 0 else DEFAULT_ATTEMPTS

    def run(self, prompt: str, schema: dict[str, Any], model: str, fallback: str | None) -> None:
        tool = tool_definition(schema)
        effort, failures, overloads, foundry = "medium", 0, 0, 0
        attempts, reminded = 0, False
        allowed = self.attempts_allowed()
        self.event("init")
        while True:
            body = _request_body(model, effort, prompt, self.history, tool)
            with self.client.stream("POST", self.url, json=body, headers=_HEADERS) as response:
                if response.status_code >= 400:
                    response.read()
                    status = response.status_code
                    kind, message = _error_of(response)
                    if status == 529 and fallback is not None:
                        overloads += 1
                        if overloads >= OVERLOADS_BEFORE_FALLBACK:
                            self.event("model_fallback", {"from": model, "to": fallback})
                            model, effort, overloads, failures = fallback, "high", 0, 0
                            continue
                    if FOUNDRY_WORDING in message and foundry < FOUNDRY_REQUESTS - 1:
                        foundry += 1  # the capability is remembered and the request retried
                        continue
                    if _retryable(status) and failures < MAX_API_RETRIES:
                        failures += 1
                        self.event("api_retry", {"attempt": failures, "status": status})
                        continue
                    self.event(
                        "api_error_message",
                        {"text": f"API Error: {status} {message}", "error": "unknown"},
                    )
                    self.event(
                        "result",
                        {"is_error": True, "api_error_status": status, "api_error_type": kind},
                    )
                    return
                answer = _read_answer(response)
            failures = overloads = 0
            outcome = self.answered(answer, schema)
            if outcome == "accepted":
                if answer.midstream_error:
                    self.event("api_error_message")
                self.event("result", {})
                return
            if outcome == "rejected":
                attempts += 1
                if attempts >= allowed:
                    self.event("result", {"subtype": "error_max_structured_output_retries"})
                    return
                continue
            if reminded:
                self.event("result", {})
                return
            reminded = True
            self.event("enforce_reminder")
            self.history.append(
                {"role": "user", "content": [{"type": "text", "text": data.ENFORCE_REMINDER}]}
            )

    def answered(self, answer: _Answer, schema: dict[str, Any]) -> str:
        """Print the answer's blocks and run its tool calls: accepted, rejected or prose."""
        results: list[dict[str, Any]] = []
        outcome = "prose"
        content: list[dict[str, Any]] = []
        for block in answer.blocks:
            if block["type"] == "text":
                self.event("text", block["text"])
                content.append({"type": "text", "text": block["text"]})
            elif block["type"] == "tool_use" and block["name"] == TOOL_NAME:
                content.append(
                    {
                        "type": "tool_use",
                        "id": block["id"],
                        "name": TOOL_NAME,
                        "input": block["input"],
                    }
                )
                error = check_output(schema, block["input"])
                if error is None:
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


_HEADERS = {"anthropic-version": "2023-06-01", "x-api-key": "reference-model"}


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
) -> ClaudeRun:
    """
    One ``claude -p`` run against the model API behind ``client``.

    ``verbose`` defaults to what ``output_format`` needs (stream-json requires it).
    """
    env = dict(env or {})
    argv = ["-p", prompt, "--json-schema", schema, "--output-format", output_format]
    if verbose or (verbose is None and output_format == "stream-json"):
        argv.append("--verbose")
    if fallback_model is not None:
        argv += ["--fallback-model", fallback_model]
    parsed = CLI.parse(argv)
    out = Output()
    refusal = CLI.refusal(parsed, None, prompt)
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
    loop = _Loop(client, base_url, renderer, env)
    loop.run(prompt, json.loads(schema), renderer.model, fallback_model)
    return ClaudeRun(renderer.finish(), _stream(out, "stdout"), _stream(out, "stderr").decode())


def _stream(out: Output, name: str) -> bytes:
    parts = [chunk[-1] for chunk in out.chunks if chunk[0] == name]
    return b"".join(part for part in parts if isinstance(part, bytes))
