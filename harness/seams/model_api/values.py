"""
The model-api seam's values: what a CLI is asked, what it showed, what is expected.

A model-api case runs an agent CLI (``claude -p --json-schema`` or ``codex exec
--output-schema``) against a scripted fake model API and observes its exit
code, stderr, stdout lines, final result and every request that reached the
fake (`ModelApiOutcome`); only the expectations a scenario gives are checked
(`compare`).

The final result is the CLI's ``result`` object for claude (the one JSON
object of ``--output-format json``, the last ``result`` line of
``stream-json``).  Codex prints no result object, so for codex it is made of
the last line's type, the last agent message (``result``, and parsed as JSON,
``structured_output``) and the messages of its ``error`` lines (``errors``).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, ClassVar

from harness.catalogue import jsonvalue
from harness.catalogue.lines import JSON_SPACE, json_lines
from harness.systems.codebuddy import TOOLS as CODEBUDDY_TOOLS
from providers_fake.api import RecordedRequest, realcli
from providers_fake.api import Script as ModelScript
from providers_fake.api.script import STRUCTURED_OUTPUT, Answer

#: The model codex asks for (its provider is the fake, so any name will do).
CODEX_MODEL = "gpt-probe"
DEFAULT_PROMPT = "Diagnose the build failure."


@dataclass(frozen=True)
class ModelApiRequest:
    """What the CLI is asked: its prompt, schema argument, flags and environment."""

    cli: str
    schema: str
    #: The provider's ``model_script``, as JSON text (it is the fake's, not the CLI's).
    model_script: str = "[]"
    prompt: str = DEFAULT_PROMPT
    output_format: str = "json"
    env: tuple[tuple[str, str], ...] = ()
    fallback_model: str | None = None
    timeout: float = realcli.DEFAULT_TIMEOUT
    #: Claude Code feature gates the case assumes (name, value).  The CLI reads
    #: them from its remote flag service only, so the reference honours them
    #: and a real binary offline cannot be given them.
    gates: tuple[tuple[str, bool], ...] = ()
    #: A refusal-fallback model armed for the session (remote configuration too).
    refusal_fallback_model: str | None = None
    #: Earlier turns of the session, one run each, resumed by the next (claude
    #: ``--resume``, ``codex exec resume --last``); the case observes the last run
    #: only (LOOP-12).
    earlier_prompts: tuple[str, ...] = ()
    #: ``--max-turns N``: claude ends ``error_max_turns`` past N turns; codebuddy stops
    #: asking and waits (how an adaptor bounds a CLI that would re-ask forever).
    max_turns: int | None = None
    #: Claude's ``--tools``: the built-in tools offered (``()`` is ``--tools ""``,
    #: none); None leaves the flag out.
    tools: tuple[str, ...] | None = None
    #: Codex's ``-o FILE``: the file, in the working directory, that the last
    #: agent message is written to (so ``files`` observes it).
    output_last_message: str | None = None
    #: Tools the CLI may run without asking (``--allowedTools``), for side-effect cases.
    allowed_tools: tuple[str, ...] = ()
    #: Full stack: the reference adaptor reads the CLI's run, asked for (validation,
    #: invalid-result policy); None when the case checks the CLI alone.
    adapt: tuple[str, str] | None = None

    def args(self) -> tuple[str, ...]:
        out: tuple[str, ...] = ()
        if self.fallback_model is not None:
            out += ("--fallback-model", self.fallback_model)
        if self.allowed_tools:
            out += ("--allowedTools", ",".join(self.allowed_tools))
        if self.max_turns is not None:
            out += ("--max-turns", str(self.max_turns))
        if self.tools is not None:
            out += ("--tools", ",".join(self.tools))
        if self.output_last_message is not None:
            out += ("-o", self.output_last_message)
        return out

    @property
    def text_output(self) -> bool:
        """Whether the CLI prints plain text (claude's default format, codex without --json)."""
        return self.output_format == TEXT

    def runs_commands(self) -> bool:
        """
        Whether the CLI may run a command on the machine in this case: a tool it
        is allowed, or a tool call other than StructuredOutput in the model's
        script (the real binary runs read-only Bash commands unasked) to a tool
        ``--tools`` did not leave out.
        """
        if self.allowed_tools:
            return True
        script = ModelScript.from_json(json.loads(self.model_script))
        # CodeBuddy answers a tool it does not have with "not found" (C-04): nothing runs.
        offered = _OFFERED.get(self.cli)
        return any(
            tool.name != STRUCTURED_OUTPUT
            and (self.tools is None or tool.name in self.tools)
            and (offered is None or tool.name in offered)
            for step in script.steps
            if isinstance(step, Answer)
            for tool in step.tools
        )

    def beyond_offline(self) -> str | None:
        """Why a real binary offline cannot be put in this case's situation, if it cannot."""
        on = [name for name, value in self.gates if value]  # offline, every gate is off
        if on:
            names = ", ".join(on)
            return (
                f"needs Claude Code's remote feature gate(s) {names}: the published binary reads "
                "gates from its flag service only (CLAUDE_INTERNAL_FC_OVERRIDES and flags cached "
                "in ~/.claude.json are ignored offline)"
            )
        if self.refusal_fallback_model is not None:
            return (
                "needs a refusal-fallback model armed by Claude Code's remote configuration; "
                "offline the binary answers a refusal with system/model_refusal_no_fallback"
            )
        # The cap counts the string's terminating NUL: 131,071 bytes of text start, 131,072 do
        # not.  Only a CLI that takes the schema as an argument meets it (codex reads a file).
        if self.cli in SCHEMA_AS_ARGUMENT and len(self.schema.encode()) >= ARG_MAX_STRLEN:
            return (
                f"the schema argument is {len(self.schema.encode())} bytes and Linux caps one "
                f"argv string, its NUL included, at {ARG_MAX_STRLEN} (MAX_ARG_STRLEN), so no "
                "caller can start the real CLI with it"
            )
        return None


#: The ``output_format`` of a run that prints text, not JSON lines.
TEXT = "text"
#: The tools a CLI offers the model, where a call to any other runs nothing.
_OFFERED = {"codebuddy": CODEBUDDY_TOOLS}
#: Linux's limit on the length of a single command-line argument.
ARG_MAX_STRLEN = 131_072
#: The CLIs that take the schema as a command-line argument (claude's --json-schema);
#: codex reads it from the file --output-schema names.
SCHEMA_AS_ARGUMENT = frozenset({"claude"})


def generated_schema(spec: dict[str, Any]) -> str:
    """
    The schema text a ``schema_generated`` spec stands for: ``{nested: KEY, depth: N}``
    wraps ``{}`` N times in ``{KEY: ...}``; ``{enum_items: N}`` is an object whose one
    property is an enum of N numbers.  Size-guard cases need documents far too big
    to spell out in a scenario.
    """
    if "nested" in spec:
        key = json.dumps(spec["nested"])
        depth = int(spec["depth"])
        return ("{" + key + ":") * depth + "{}" + "}" * depth
    items = ",".join(map(str, range(int(spec["enum_items"]))))
    return '{"type":"object","properties":{"v":{"enum":[' + items + "]}}}"


_CHAT_KEPT = ("role", "content", "tool_calls", "tool_call_id")
#: Where a function tool keeps its schema, where it is not ``input_schema`` (Anthropic's).
_SCHEMA_KEY = {"chat": "parameters"}


@dataclass(frozen=True)
class SeenRequest:
    """One request that reached the fake model API, as far as scenarios check it."""

    model: object
    input_schema: object
    strict: object
    text_format: object
    messages_after_prompt: object
    unexpected: str | None = None
    #: ``METHOD /path`` of a request beside the conversation (a connectivity
    #: check), which the fake answers without the script and no count includes.
    side: str | None = None

    @classmethod
    def of(cls, record: RecordedRequest) -> SeenRequest:
        tool = record.structured_output_tool
        side = None
        if record.side is not None:
            side = f"{record.method} {record.path.split('?', 1)[0]}"
        messages: object = record.messages_after_prompt
        if record.api == "chat":
            # CodeBuddy adds ids and trace fields to every message: what the model reads
            # is the role, the content and the calls (as the captures keep them).
            kept = [{k: m[k] for k in _CHAT_KEPT if k in m} for m in record.messages_after_prompt]
            messages = kept
        schema_key = _SCHEMA_KEY.get(record.api, "input_schema")
        return cls(
            model=record.model,
            input_schema=None if tool is None else tool.get(schema_key),
            strict=record.strict,
            text_format=record.text_format,
            messages_after_prompt=messages,
            unexpected=record.unexpected,
            side=side,
        )

    @property
    def conversation(self) -> bool:
        """Whether the script answered it: a model request, what scenarios count."""
        return self.unexpected is None and self.side is None


#: Keys whose values a real CLI makes up afresh on every run (ids, clocks,
#: machine paths, random back-off); reports show ``<volatile>`` instead, so
#: that two runs of the same catalogue stay byte-identical.
VOLATILE = frozenset(
    {
        "uuid",
        "session_id",
        "thread_id",
        "request_id",
        "timestamp",
        "cwd",
        "original_cwd",
        "memory_paths",
        "messaging_socket_path",
        "duration_ms",
        "duration_api_ms",
        "ttft_ms",
        "ttft_stream_ms",
        "time_to_request_ms",
        "first_content_frame_ms",
        "retry_delay_ms",
        "thinking_duration_ms",
        # When attempts run out, the binary's exhaustion check races its own stream,
        # so the result's token counts, costs and stop_reason depend on timing.
        "usage",
        "modelUsage",
        "model_usage_since_last_result",
        "total_cost_usd",
    }
)
#: Kept only in a successful result, where the race above cannot touch it.
_RACY_IN_FAILURE = "stop_reason"


#: A UUID, alone or after a type prefix (codex's ``fco_`` ids of its function call outputs).
_UUID = re.compile(r"(?:[a-z]+_)?[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


#: Keys whose values are what the user or the model supplied (a schema, a tool call's
#: input, the structured output), never what the CLI generates: nothing inside them is
#: masked, so a schema's property named ``timestamp`` or a UUID-valued ``const`` is compared.
SUPPLIED = frozenset({"input_schema", "text_format", "structured_output", "input"})


def stable(value: Any) -> Any:
    """
    ``value`` with every `VOLATILE` key's value masked, recursively, and any
    UUID-shaped string too (synthetic messages and items get a fresh one per
    run); what the user or the model supplied (`SUPPLIED`) is left as it is.
    """
    if isinstance(value, dict):
        racy = value.get("type") == "result" and value.get("subtype") not in (None, "success")
        return {k: _stable_field(k, v, racy) for k, v in value.items()}
    if isinstance(value, list):
        return [stable(v) for v in value]
    if isinstance(value, str) and _UUID.fullmatch(value):
        return "<volatile>"
    return value


def _stable_field(key: str, value: Any, racy: bool) -> Any:
    if key in SUPPLIED:
        return value
    if key in VOLATILE or (racy and key == _RACY_IN_FAILURE):
        return "<volatile>"
    return stable(value)


def stable_stdout(text: str) -> str:
    """
    Printed JSON lines with the values `stable` masks masked, so that a raw
    stdout kept in a report (the full-stack chain's adaptor view) is as
    reproducible as the parsed lines beside it.  A line that is not JSON, or
    holds nothing volatile, stays byte for byte as printed; a masked one is
    written back compact, as both CLIs print their lines.
    """
    # Split on "\n" alone: a JSON string may hold U+2028 and the like, which
    # str.splitlines would cut a line at.
    return "\n".join(_stable_line(line) for line in text.split("\n"))


def _stable_line(line: str) -> str:
    body = line.rstrip("\r")
    try:
        value = json.loads(body)
    except ValueError:
        return line
    masked = stable(value)
    if masked == value:
        return line
    return json.dumps(masked, ensure_ascii=False, separators=(",", ":")) + line[len(body) :]


def _stable_view(view: dict[str, Any] | None) -> dict[str, Any] | None:
    """The adaptor's view of a run with its volatile values masked, raw stdout included."""
    if view is None:
        return None
    masked: dict[str, Any] = stable(view)
    if isinstance(view.get("stdout"), str):
        masked["stdout"] = stable_stdout(view["stdout"])
    return masked


@dataclass(frozen=True)
class ModelApiOutcome:
    """What one run of a CLI against the fake showed."""

    seam: ClassVar[str] = "model-api"
    cli: str
    exit_code: int
    stderr: str
    timed_out: bool
    #: Each stdout line, parsed when it is JSON, else the raw text.
    lines: tuple[object, ...]
    final: dict[str, Any] | None
    requests: tuple[SeenRequest, ...] = field(default=())
    #: The files the run left in its working directory (relative path, text).
    files: tuple[tuple[str, str], ...] = ()
    #: Full stack: the reference adaptor's outcome (`harness.catalogue.outcome.Outcome` as
    #: JSON) for this run, when the case asks for it.
    adaptor: dict[str, Any] | None = None
    #: Exit codes of the session's earlier runs (``earlier_prompts``).
    earlier: tuple[int, ...] = ()
    #: What the CLI printed when it prints text (``output_format: text``), else None.
    stdout: str | None = None

    def to_json(self) -> dict[str, Any]:
        """The outcome for reports, with what differs on every run masked."""
        return {
            "seam": self.seam,
            "cli": self.cli,
            "exit_code": self.exit_code,
            "stderr": self.stderr,
            "timed_out": self.timed_out,
            "lines": stable(list(self.lines)),
            "final": stable(self.final),
            "requests": stable([vars(r) for r in self.requests]),
            "files": dict(self.files),
            "adaptor": _stable_view(self.adaptor),
            "earlier": list(self.earlier),
            # Only a text run has it, so reports of JSON runs stay as they were.
            **({} if self.stdout is None else {"stdout": self.stdout}),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ModelApiOutcome:
        return cls(
            cli=data["cli"],
            exit_code=data["exit_code"],
            stderr=data["stderr"],
            timed_out=data["timed_out"],
            lines=tuple(data["lines"]),
            final=data["final"],
            requests=tuple(SeenRequest(**r) for r in data["requests"]),
            files=tuple(sorted(data.get("files", {}).items())),
            adaptor=data.get("adaptor"),
            earlier=tuple(data.get("earlier", ())),
            stdout=data.get("stdout"),
        )

    def summary(self) -> str:
        final = self.final or {}
        what = final.get("subtype") or final.get("type") or "no result"
        killed = ", killed at its timeout" if self.timed_out else ""
        count = sum(r.side is None for r in self.requests)
        return f"{self.cli} exited {self.exit_code}{killed}: {what}, {count} model request(s)"

    @property
    def line_types(self) -> tuple[str, ...]:
        return tuple(_line_type(line) for line in self.lines)


def _line_type(line: object) -> str:
    if not isinstance(line, dict):
        return "<not json>"
    kind = str(line.get("type"))
    item = line.get("item")
    sub = line.get("subtype") or (item.get("type") if isinstance(item, dict) else None)
    return f"{kind}/{sub}" if isinstance(sub, str) else kind


def parse_lines(stdout: bytes) -> tuple[object, ...]:
    """
    Each stdout line, parsed when it is JSON; a stdout that is one JSON array
    (CodeBuddy's ``--output-format json``: the session's items, then the
    result) is its items.
    """
    text = stdout.decode(errors="replace")
    if text.lstrip(JSON_SPACE).startswith("["):
        try:
            whole = jsonvalue.loads(text)
        except ValueError:
            whole = None
        if isinstance(whole, list):
            return tuple(whole)
    lines: list[object] = []
    for raw in json_lines(text):
        if not raw.strip(JSON_SPACE):
            continue
        try:
            lines.append(jsonvalue.loads(raw))
        except ValueError:
            lines.append(raw)
    return tuple(lines)


def text_result(stdout: str) -> dict[str, Any]:
    """
    The final result of a run that printed text: claude prints its result's
    text (the structured output as JSON when there is no prose) or its error
    line, codex its last agent message; ``result`` is that without its line
    end, ``structured_output`` it parsed as JSON, if it is JSON.
    """
    text = stdout[:-1] if stdout.endswith("\n") else stdout
    try:
        value = jsonvalue.loads(text)
    except ValueError:
        value = None
    return {"type": "text", "result": text, "structured_output": value}


#: The CLIs that print a ``result`` record (CodeBuddy prints Claude Code's).
_RESULT_RECORD = frozenset({"claude", "codebuddy"})


def final_result(cli: str, lines: tuple[object, ...]) -> dict[str, Any] | None:
    """The CLI's final result (see the module docstring for codex)."""
    objects = [line for line in lines if isinstance(line, dict)]
    if cli in _RESULT_RECORD:
        results = [line for line in objects if line.get("type") == "result"]
        return results[-1] if results else None
    if not objects:
        return None
    messages = [
        line["item"].get("text")
        for line in objects
        if line.get("type") == "item.completed"
        and isinstance(line.get("item"), dict)
        and line["item"].get("type") == "agent_message"
    ]
    text = messages[-1] if messages else None
    try:
        value = jsonvalue.loads(text) if isinstance(text, str) else None
    except ValueError:
        value = None
    errors = [line.get("message") for line in objects if line.get("type") == "error"]
    return {
        "type": objects[-1].get("type"),
        "result": text,
        "structured_output": value,
        "errors": errors,
    }


def show_value(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def request_of(
    raw: dict[str, Any], provider: dict[str, Any], full_stack: bool = False
) -> ModelApiRequest:
    """The typed request; ``full_stack`` when some expectation pins the adaptor's outcome."""
    asked = raw.get("adaptor", {})
    adapt: tuple[str, str] | None = None
    if full_stack or "adaptor" in raw:
        adapt = (asked.get("validation", "native"), asked.get("on_invalid", "fail"))
    if "schema_generated" in raw:
        schema = generated_schema(raw["schema_generated"])
    elif "schema_text" in raw:
        schema = raw["schema_text"]
    else:
        schema = json.dumps(raw["schema"])
    return ModelApiRequest(
        cli=raw["cli"],
        schema=schema,
        model_script=json.dumps(provider["model_script"]),
        prompt=raw.get("prompt", DEFAULT_PROMPT),
        output_format=raw.get("output_format", "json"),
        env=tuple(sorted(raw.get("env", {}).items())),
        fallback_model=raw.get("fallback_model"),
        timeout=float(raw.get("timeout", realcli.DEFAULT_TIMEOUT)),
        gates=tuple(sorted(raw.get("gates", {}).items())),
        refusal_fallback_model=raw.get("refusal_fallback_model"),
        earlier_prompts=tuple(raw.get("earlier_prompts", ())),
        allowed_tools=tuple(raw.get("allowed_tools", ())),
        max_turns=raw.get("max_turns"),
        tools=tuple(raw["tools"]) if "tools" in raw else None,
        output_last_message=raw.get("output_last_message"),
        adapt=adapt,
    )
