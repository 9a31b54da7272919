#!/usr/bin/env python3
"""
zoo-py: an adaptor written from docs/ alone (docs/adaptors.md, docs/outcome.md,
docs/seed-001.md and the protocol schemas), the way a user of the harness
writes one, with realistic single bugs that can be switched on by name.

It is the Python half of the bug zoo (tests/test_zoo.py, `make mutants`): the
catalogue is judged by whether it notices each bug.  `ZOO_BUG=NAME` (or
`--bug NAME` on the command line) switches one bug on; `bug(NAME)` marks the
place where the bug lives, and records that the place was reached
(`ZOO_TRACE=FILE`), so that the zoo runs a bug only on the scenarios that
reach it: a bug whose place a scenario never reaches cannot change it.

Run it as a protocol adaptor (`cmd:python3 tests/zoo/adaptor.py`) or in
process (`python:tests.zoo.adaptor:run`).  It uses the standard library and
the `jsonschema` package, nothing of the harness.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urljoin

import jsonschema
import referencing
import referencing.exceptions
import referencing.jsonschema

IMPLEMENTATION = {
    "name": "zoo-py",
    "version": "1.0.0",
    "language": "python",
    "drivers": ["codex", "claude", "cursor", "codebuddy"],
    "features": ["native", "prompt", "stream"],
}

#: Every bug this adaptor can have, by name: what a user got wrong.
BUGS = {
    # decode
    "fence-unwrap": "strips Markdown code fences around prompt-validation text",
    "trailing-text": "decodes the first JSON value of the text and ignores what follows",
    "strip-then-search": "searches the text for the first '{' and decodes from there",
    "empty-object-is-none": "treats a decoded {} as no value (`if not value`)",
    "empty-array-is-none": "treats a decoded [] as no value",
    "floats": "parses every JSON number as a float, as JavaScript does",
    "int-looking-floats": "turns integral floats (2.0) into integers",
    "string-output-unparsed": "keeps a structured_output JSON string as a string",
    # terminals
    "missing-terminal-ok": "accepts a run without its terminal event when text was seen",
    "codex-error-line-ignored": "ignores top-level Codex error lines before turn.completed",
    "codex-order-unchecked": "accepts items and terminals before thread.started",
    "events-after-terminal": "ignores lines after the terminal record",
    "claude-two-results": "keeps the last of several result records",
    "error-subtype-candidate": "takes structured_output from a result whose subtype is an error",
    "is-error-ignored": "ignores is_error on a success result",
    "success-fields-unchecked": "accepts a success without session_id or result",
    "error-record-ignored": "skips top-level error records",
    "session-unchecked": "accepts a session_id that changes mid-run",
    # exits, signals, timeouts
    "exit-ignored": "ignores a nonzero exit when the terminal says success",
    "signal-is-nonzero": "reports death by signal as a nonzero exit",
    "timeout-is-signal": "reports the deadline's kill as a signal",
    "malformed-outranked-by-exit": "names a nonzero exit before a malformed protocol",
    "not-utf8-replaced": "decodes stdout with replacement characters instead of failing",
    # policy
    "return-invalid-ok": "under on_invalid=return reports the invalid value as decoded",
    "policy-swallowed": "drops schema violations of a native candidate (trusts the CLI)",
    "invalid-value-kept": "reports the invalid value as the decoded value on a policy failure",
    "missing-candidate-ok": "reports a schema run without any candidate as a success with null",
    # negotiation
    "prompt-first": "prefers prompt validation when both mechanisms are declared",
    "ask-ignored": "does not hold Ask approvals to the HITL flags",
    "mode-picks-transport": "lets the consumer's mode choose stream-json or json",
    "descriptor-ignored": "uses the built-in descriptor even when the request overrides it",
    "unsupported-runs-bare": "launches without a schema when no mechanism is supported",
    "no-verbose": "omits --verbose on stream-json",
    # schema intake
    "name-untrimmed": "passes the schema name and description untrimmed",
    "name-dropped": "leaves the schema name and description out of the instruction",
    "blank-name-sent": "sends a name or description that trims to nothing",
    "format-ignored": "does not check schema_format",
    "schema-first-value": "reads the first JSON value of a schema document",
    "schema-not-compiled": "never checks the schema against the metaschema",
    "refs-unchecked": "does not resolve $ref before launch",
    # record shapes, text
    "codex-text-last": "keeps only the last Codex agent message as the text",
    "codex-join-newline": "joins Codex agent messages with one newline",
    "codex-join-untrimmed": "joins Codex agent messages without trimming each",
    "codex-blank-falls-back": "takes the last non-blank agent message as the candidate",
    "codex-started-items": "counts item.started agent messages as completed",
    "claude-text-assistant": "takes Claude's text from the assistant frames, not the result",
    "cursor-text-result": "takes Cursor's text from the result, not the assistant fragments",
    "cursor-all-blocks": "joins every content block of Cursor assistant records, not only text",
    "cursor-error-subtype-terminal": "ends a Cursor run on a result that is not result/success",
    "codebuddy-array-last": "reads only the last record of CodeBuddy's array",
    "json-result-fallback": "decodes Claude's result string when structured_output is missing",
    "stream-events-rejected": "treats unknown stream_event lines as a malformed protocol",
}

#: The arguments of each CLI after its executable, per transport.
RICH = {"claude": "stream-json", "cursor": "stream-json", "codebuddy": "stream-json"}
#: Seed 001's built-in declarations (Codex has only its batch transport).
BUILTIN = {
    "codex": {"native": True, "prompt": True, "run": True, "streaming": False},
    "claude": {"native": True, "prompt": True, "run": True, "streaming": True},
    "cursor": {"native": False, "prompt": True, "run": True, "streaming": True},
    "codebuddy": {"native": True, "prompt": True, "run": True, "streaming": False},
}
#: execution_error causes, most specific first (docs/outcome.md).
CAUSES = (
    "timeout",
    "signal",
    "malformed_protocol",
    "turn_failed",
    "api_error",
    "max_structured_output_retries",
    "nonzero_exit",
    "missing_terminal",
)


def bug(name: str) -> bool:
    """Whether bug `name` is switched on; records that its place was reached."""
    assert name in BUGS, name
    trace = os.environ.get("ZOO_TRACE")
    if trace:
        with open(trace, "a", encoding="utf-8") as out:
            out.write(f"{_CURRENT[0]}\t{name}\n")
    return os.environ.get("ZOO_BUG") == name


_CURRENT = [""]


class Failed(Exception):
    """The provider run failed with an execution_error `cause`."""

    def __init__(self, cause: str, message: str) -> None:
        super().__init__(message)
        self.cause = cause


class Refused(Exception):
    """Refused before launch: `error` is the outcome's error."""

    def __init__(self, error: str, message: str) -> None:
        super().__init__(message)
        self.error = error


# ---------------------------------------------------------------- JSON


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _number(text: str) -> Any:
    return float(text) if bug("floats") else int(text)


def _float(text: str) -> Any:
    value = float(text)
    if bug("int-looking-floats") and value.is_integer():
        return int(value)
    return value


def exact(text: str) -> Any:
    """Exactly one JSON value (surrounding whitespace allowed); ValueError otherwise."""
    return json.loads(text, parse_constant=_no_constant, parse_int=_number, parse_float=_float)


def first_value(text: str) -> Any:
    """The first JSON value of the text, whatever follows it."""
    decoder = json.JSONDecoder(parse_constant=_no_constant, parse_int=_number, parse_float=_float)
    return decoder.raw_decode(text.lstrip())[0]


FENCE = re.compile(r"\A\s*```[a-zA-Z]*\n(.*)\n```\s*\Z", re.DOTALL)


def decode_text(text: str) -> Any:
    """What prompt validation and schema-less Decode read: one exact JSON value."""
    if bug("fence-unwrap") and (m := FENCE.match(text)):
        text = m[1]
    if bug("strip-then-search") and "{" in text:
        text = text[text.index("{") :]
    if bug("trailing-text"):
        return first_value(text)
    return exact(text)


# ---------------------------------------------------------------- schema intake


@dataclass(frozen=True)
class Schema:
    text: str
    document: Any
    name: str | None
    description: str | None


#: Keywords whose value is a subschema, a list of them, or a map of them.
ONE = {
    "not",
    "if",
    "then",
    "else",
    "contains",
    "additionalProperties",
    "propertyNames",
    "unevaluatedItems",
    "unevaluatedProperties",
    "contentSchema",
    "items",
}
MANY = {"allOf", "anyOf", "oneOf", "prefixItems"}
MAP = {"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"}


def _subschemas(schema: Any) -> list[Any]:
    if not isinstance(schema, dict):
        return []
    out = [schema[k] for k in ONE if k in schema]
    out += [s for k in MANY if isinstance(schema.get(k), list) for s in schema[k]]
    out += [s for k in MAP if isinstance(schema.get(k), dict) for s in schema[k].values()]
    return out


def _check_refs(document: Any) -> None:
    resource = referencing.jsonschema.DRAFT202012.create_resource(document)
    registry = referencing.Registry().with_resource("", resource).crawl()

    def walk(schema: Any, base: str) -> None:
        if not isinstance(schema, dict):
            return
        if isinstance(schema.get("$id"), str):
            base = urljoin(base, schema["$id"])
        ref = schema.get("$ref")
        if isinstance(ref, str):
            try:
                registry.resolver(base).lookup(ref)
            except referencing.exceptions.Unresolvable as error:
                raise Refused("invalid_output_schema", f"$ref {ref!r} resolves nowhere") from error
        for sub in _subschemas(schema):
            walk(sub, base)

    walk(document, "")


def _trimmed(text: str | None) -> str | None:
    if text is None:
        return None
    if bug("name-untrimmed"):
        return text
    text = text.strip()
    if not text and not bug("blank-name-sent"):
        return None
    return text


def intake(request: dict[str, Any]) -> Schema:
    text = request["schema"]
    if request["schema_format"] != "json_schema" and not bug("format-ignored"):
        raise Refused("invalid_output_schema", f"unsupported format {request['schema_format']}")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise Refused("invalid_output_schema", "the schema is not UTF-8") from None
    try:
        document = first_value(text) if bug("schema-first-value") else exact(text)
    except ValueError as error:
        raise Refused(
            "invalid_output_schema", f"the schema is not one JSON value: {error}"
        ) from None
    if not isinstance(document, (dict, bool)):
        raise Refused("invalid_output_schema", "a schema is an object or a boolean")
    if not bug("schema-not-compiled"):
        try:
            jsonschema.Draft202012Validator.check_schema(document)
        except jsonschema.SchemaError as error:
            raise Refused(
                "invalid_output_schema", f"the schema does not compile: {error.message}"
            ) from None
    if not bug("refs-unchecked"):
        _check_refs(document)
    return Schema(
        text, document, _trimmed(request["schema_name"]), _trimmed(request["schema_description"])
    )


def diagnose(schema: Schema, value: Any) -> list[dict[str, Any]]:
    """Leaf violations: path (RFC 6901) and keyword."""
    validator = jsonschema.Draft202012Validator(schema.document)
    out: list[dict[str, Any]] = []

    def leaves(errors: Any) -> None:
        for error in errors:
            if error.context:
                leaves(error.context)
            else:
                path = "".join(
                    "/" + str(p).replace("~", "~0").replace("/", "~1") for p in error.absolute_path
                )
                entry = {"path": path, "keyword": error.validator, "message": error.message}
                if entry not in out:
                    out.append(entry)

    leaves(validator.iter_errors(value))
    return sorted(out, key=lambda d: (d["path"], d["message"]))


# ---------------------------------------------------------------- negotiation


@dataclass(frozen=True)
class Plan:
    mechanism: str | None
    transport: str  # "json" or "stream-json"


def negotiate(request: dict[str, Any], schema: Schema | None) -> Plan:
    driver = request["driver"]
    rich = RICH.get(driver)
    if schema is None:
        if bug("mode-picks-transport") and rich:
            return Plan(None, "stream-json" if request["mode"] == "stream" else "json")
        return Plan(None, rich or "json")
    d = dict(BUILTIN[driver])
    if request["descriptor"] is not None and not bug("descriptor-ignored"):
        d = dict(request["descriptor"])
    ask = request["approval"] == "ask" and not bug("ask-ignored")
    order = ["prompt", "native"] if bug("prompt-first") else ["native", "prompt"]
    # The rich transport carries a mechanism when it works with streaming, the
    # batch one when it works with Run; under Ask, only the first transport.
    transports = []
    if d.get("run"):  # Run and Stream share one pipeline: nothing works without Run
        if rich and d.get("streaming"):
            transports.append(rich)
        if not (ask and rich):  # a one-shot batch run cannot pause for a human
            transports.append("json")
    if bug("mode-picks-transport") and rich:
        wanted = "stream-json" if request["mode"] == "stream" else "json"
        transports = [t for t in transports if t == wanted] or transports
    for transport in transports:
        for mechanism in order:
            if not d.get(mechanism):
                continue
            if ask and not (d.get("hitl") or d.get(f"{mechanism}_hitl")):
                continue
            return Plan(mechanism, transport)
    if bug("unsupported-runs-bare"):
        return Plan(None, rich or "json")
    why = "the Ask approval needs HITL support" if ask else "no transport can carry a mechanism"
    raise Refused("structured_output_unsupported", why)


INSTRUCTION = (
    "Reply with exactly one JSON value and nothing else: no Markdown code fences, "
    "no prose before or after it. It must validate against this JSON Schema:"
)


def instruction(schema: Schema, prompt: str) -> str:
    lines = [INSTRUCTION, schema.text]
    if not bug("name-dropped"):
        if schema.name is not None:
            lines.append(f"Schema name: {schema.name}")
        if schema.description is not None:
            lines.append(f"Schema description: {schema.description}")
    return "\n".join([*lines, "", prompt])


def argv(
    request: dict[str, Any], provider: dict[str, Any], plan: Plan, schema: Schema | None
) -> list[str]:
    driver = request["driver"]
    exe = provider["executables"][driver]
    prompt = request["prompt"]
    if schema is not None and plan.mechanism == "prompt":
        prompt = instruction(schema, prompt)
    if driver == "codex":
        args = [exe, "exec", "--json", "--skip-git-repo-check"]
        if plan.mechanism == "native":
            path = os.path.join(provider["work"], "schema.json")
            with open(path, "w", encoding="utf-8") as out:
                out.write(schema.text if schema else "")
            args += ["--output-schema", path]
        return [*args, prompt]
    args = [exe, "-p", "--output-format", plan.transport]
    if plan.transport == "stream-json" and driver != "cursor" and not bug("no-verbose"):
        args.append("--verbose")
    if driver == "codebuddy":
        args.append("-y")
    if plan.mechanism == "native" and schema is not None:
        args += ["--json-schema", schema.text]
    return [*args, prompt]


# ---------------------------------------------------------------- reading the CLI


@dataclass
class Read:
    """What a driver read from stdout."""

    text: str | None = None
    raw: Any = None
    candidate: list[Any] = field(default_factory=list)  # [] none, [value] one
    terminal: bool = False
    failure: Failed | None = None

    def fail(self, cause: str, message: str) -> None:
        if self.failure is None or CAUSES.index(cause) < CAUSES.index(self.failure.cause):
            self.failure = Failed(cause, message)


def _record(line: str, number: int, read: Read) -> Any:
    try:
        return exact(line)
    except ValueError:
        read.fail("malformed_protocol", f"line {number} is not JSON")
        return None


def read_codex(stdout: str, read: Read) -> None:
    messages: list[str] = []
    thread = False
    for number, line in enumerate(stdout.splitlines(), 1):
        if not line.strip() or not line.lstrip().startswith("{"):
            continue
        event = _record(line, number, read)
        if not isinstance(event, dict):
            continue
        kind = event.get("type")
        if read.terminal and not bug("events-after-terminal"):
            read.fail("malformed_protocol", f"line {number}: {kind} after the terminal")
            continue
        if kind == "thread.started":
            if thread or not isinstance(event.get("thread_id"), str) or not event["thread_id"]:
                read.fail("malformed_protocol", f"line {number}: a second or anonymous thread")
            thread = True
            continue
        items = ("item.started", "item.updated", "item.completed")
        known = kind in ("turn.started", "turn.completed", "turn.failed", *items)
        if known and not thread and not bug("codex-order-unchecked"):
            read.fail("malformed_protocol", f"line {number}: {kind} before thread.started")
            continue
        if kind in items:
            item = event.get("item")
            if not isinstance(item, dict):
                read.fail("malformed_protocol", f"line {number}: item is not an object")
                continue
            done = kind == "item.completed" or (
                kind == "item.started" and bug("codex-started-items")
            )
            if done and item.get("type") == "agent_message":
                if not isinstance(item.get("text"), str):
                    read.fail("malformed_protocol", f"line {number}: agent_message text")
                    continue
                messages.append(item["text"])
        elif kind == "turn.completed":
            read.terminal, read.raw = True, event
        elif kind == "turn.failed":
            read.terminal, read.raw = True, event
            read.fail("turn_failed", json.dumps(event.get("error")))
        elif kind == "error" and not bug("codex-error-line-ignored"):
            read.fail("turn_failed", str(event.get("message")))
    kept = [m if bug("codex-join-untrimmed") else m.strip() for m in messages if m.strip()]
    if bug("codex-text-last"):
        kept = kept[-1:]
    read.text = ("\n" if bug("codex-join-newline") else "\n\n").join(kept) or None
    last = messages[-1] if messages else None
    if bug("codex-blank-falls-back") and kept:
        last = kept[-1].strip()
    if last is not None and last.strip():
        read.candidate = [("text", last)]


def _claude_records(stdout: str, transport: str, driver: str, read: Read) -> list[tuple[int, Any]]:
    if transport == "json":
        try:
            document = exact(stdout)
        except ValueError:
            document = None
            lines = [ln for ln in stdout.splitlines() if ln.strip()]
            if driver == "codebuddy" and len(lines) > 1:
                return [(n, _record(ln, n, read)) for n, ln in enumerate(lines, 1)]
            if stdout.strip():
                read.fail("malformed_protocol", "stdout is not one JSON document")
            return []
        if isinstance(document, list):
            if driver != "codebuddy" or not document:
                read.fail("malformed_protocol", "an array of records where one result was due")
                return []
            if bug("codebuddy-array-last"):
                document = document[-1:]
            return list(enumerate(document, 1))
        return [(1, document)]
    out = []
    for number, line in enumerate(stdout.splitlines(), 1):
        if not line.strip():
            continue
        if driver == "cursor" and not line.lstrip().startswith(("{", "[")):
            continue  # Cursor prints plain transcript lines between records
        out.append((number, _record(line, number, read)))
    return out


def read_claudelike(stdout: str, transport: str, driver: str, read: Read, schema: bool) -> None:
    session = None
    fragments: list[str] = []
    assistant: list[str] = []
    for number, record in _claude_records(stdout, transport, driver, read):
        if record is None and read.failure:
            continue
        if (
            not isinstance(record, dict)
            or not isinstance(record.get("type"), str)
            or not record["type"]
        ):
            read.fail("malformed_protocol", f"record {number} is not a typed object")
            continue
        kind = record["type"]
        if read.terminal:
            if kind == "result" and bug("claude-two-results"):
                read.terminal = False
            elif not bug("events-after-terminal"):
                read.fail("malformed_protocol", f"record {number}: {kind} after the terminal")
                continue
            else:
                continue
        sid = record.get("session_id")
        if isinstance(sid, str) and sid:
            if session is not None and sid != session and not bug("session-unchecked"):
                read.fail("malformed_protocol", f"record {number}: the session changed")
            session = session or sid
        if kind == "stream_event" and bug("stream-events-rejected"):
            read.fail("malformed_protocol", f"record {number}: unknown stream_event")
        if kind == "assistant":
            message = record.get("message")
            content = message.get("content") if isinstance(message, dict) else None
            if not isinstance(content, list):
                if driver == "cursor":
                    read.fail("malformed_protocol", f"record {number}: assistant without content")
                continue
            for block in content:
                if not isinstance(block, dict):
                    continue
                if block.get("type") == "text" and isinstance(block.get("text"), str):
                    fragments.append(block["text"])
                    assistant.append(block["text"])
                elif bug("cursor-all-blocks") and isinstance(block.get("text"), str):
                    fragments.append(block["text"])
        elif kind == "error":
            if bug("error-record-ignored"):
                continue
            read.terminal, read.raw = True, record
            read.fail(
                "api_error" if record.get("status") else "turn_failed",
                str(record.get("message") or "error"),
            )
        elif kind == "result":
            if (
                driver == "cursor"
                and record.get("subtype") != "success"
                and not bug("cursor-error-subtype-terminal")
            ):
                continue  # only result/success ends a Cursor run (docs/seed-001.md)
            read.terminal, read.raw = True, record
            _result(record, read, bool(session), schema)
    if driver == "cursor":
        if fragments and not bug("cursor-text-result"):
            read.text = "".join(fragments)
    elif bug("claude-text-assistant") and assistant:
        read.text = "".join(assistant)


def _result(record: dict[str, Any], read: Read, session: bool, schema: bool) -> None:
    result = record.get("result")
    read.text = result if isinstance(result, str) else None
    subtype = record.get("subtype")
    if subtype != "success":
        if bug("error-subtype-candidate") and record.get("structured_output") is not None:
            read.candidate = [("value", record["structured_output"])]
            return
        cause = (
            "max_structured_output_retries"
            if "structured_output" in str(subtype)
            else "turn_failed"
        )
        read.fail(cause, f"result subtype {subtype}")
        return
    if not bug("success-fields-unchecked"):
        if not isinstance(record.get("is_error"), bool):
            read.fail("malformed_protocol", "is_error is not a boolean")
        if not isinstance(result, str):
            read.fail("malformed_protocol", "a success without a result string")
        if not session or not record.get("session_id"):
            read.fail("malformed_protocol", "a success without a session_id")
    if record.get("is_error") is True and not bug("is-error-ignored"):
        read.fail("api_error", result or f"API error {record.get('api_error_status')}")
        return
    if not schema:
        return
    output = record.get("structured_output")
    if isinstance(output, str) and not bug("string-output-unparsed"):
        # A string that is not JSON text is that string (a choice: seed-001.md).
        with contextlib.suppress(ValueError):
            output = exact(output)
    if output is not None:
        read.candidate = [("value", output)]
    elif bug("json-result-fallback") and isinstance(result, str):
        read.candidate = [("text", result)]


# ---------------------------------------------------------------- the run


@dataclass(frozen=True)
class Finished:
    stdout: bytes
    returncode: int | None  # None: killed at the deadline


def launch(args: list[str], provider: dict[str, Any], timeout: float) -> Finished:
    with subprocess.Popen(
        args,
        env={**os.environ, **provider["env"]},
        cwd=provider["work"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    ) as process:
        try:
            stdout, _ = process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.communicate()
            return Finished(b"", None)
    return Finished(stdout, process.returncode)


def outcome(**fields: Any) -> dict[str, Any]:
    error = fields.get("error")
    out = {
        "status": "error" if error else "ok",
        "error": error,
        "cause": fields.get("cause"),
        "message": fields.get("message"),
        "value": fields.get("value"),
        "has_value": "value" in fields,
        "text": fields.get("text"),
        "mechanism": fields.get("mechanism"),
        "diagnostics": fields.get("diagnostics", []),
        "raw": fields.get("raw"),
        "stdout": fields.get("stdout"),
    }
    if "audit" in fields:
        out["audit_value"], out["has_audit_value"] = fields["audit"], True
    return out


def _is_none(value: Any) -> bool:
    if value == {} and isinstance(value, dict) and bug("empty-object-is-none"):
        return True
    return value == [] and isinstance(value, list) and bug("empty-array-is-none")


def run_request(request: dict[str, Any], provider: dict[str, Any]) -> dict[str, Any]:
    schema = None
    try:
        if request["schema"] is not None:
            schema = intake(request)
        plan = negotiate(request, schema)
    except Refused as refused:
        return outcome(error=refused.error, message=str(refused))
    finished = launch(argv(request, provider, plan, schema), provider, request["timeout"])
    stdout = finished.stdout.decode("utf-8", errors="replace")
    read = Read()
    common = {"mechanism": plan.mechanism, "stdout": stdout}
    if finished.returncode is None:
        if bug("timeout-is-signal"):  # it was our SIGKILL, after all
            return outcome(error="execution_error", cause="signal", message="killed", **common)
        return outcome(
            error="execution_error", cause="timeout", message="killed at the deadline", **common
        )
    if finished.returncode < 0:
        cause = "nonzero_exit" if bug("signal-is-nonzero") else "signal"
        return outcome(
            error="execution_error", cause=cause, message=f"signal {-finished.returncode}", **common
        )
    replaced = "\ufffd" not in finished.stdout.decode("utf-8", "surrogateescape")
    if "\ufffd" in stdout and replaced and not bug("not-utf8-replaced"):
        read.fail("malformed_protocol", "stdout is not UTF-8")
    if request["driver"] == "codex":
        read_codex(stdout, read)
    else:
        read_claudelike(stdout, plan.transport, request["driver"], read, schema is not None)
    clean_terminal = read.terminal and read.failure is None
    if finished.returncode != 0 and not (bug("exit-ignored") and clean_terminal):
        if bug("malformed-outranked-by-exit"):
            read.failure = None
        read.fail("nonzero_exit", f"exit status {finished.returncode}")
    if not read.terminal and not (bug("missing-terminal-ok") and read.text):
        read.fail("missing_terminal", "the CLI ended without its terminal event")
    common.update(text=read.text, raw=read.raw)
    if read.failure is not None:
        return outcome(
            error="execution_error", cause=read.failure.cause, message=str(read.failure), **common
        )
    if schema is None:
        try:
            text = read.text or ""
            value = decode_text(text.strip())
        except ValueError as error:
            return outcome(error="decode_error", message=f"the text is not JSON: {error}", **common)
        return outcome(value=value, **common)
    return _validate(schema, plan, read, request["on_invalid"], common)


def _validate(
    schema: Schema, plan: Plan, read: Read, on_invalid: str, common: dict[str, Any]
) -> dict[str, Any]:
    audit: dict[str, Any] = {}
    if plan.mechanism == "prompt":
        candidate = [("text", read.text)] if read.text is not None else []
    else:
        candidate = read.candidate
    if not candidate or _is_none(candidate[0][1] if candidate[0][0] == "value" else None):
        if bug("missing-candidate-ok"):
            return outcome(value=None, **common)
        diagnostics = [{"path": "", "keyword": None, "message": "no structured output candidate"}]
    else:
        kind, given = candidate[0]
        try:
            value = decode_text(given) if kind == "text" else given
        except ValueError as error:
            diagnostics = [
                {"path": "", "keyword": None, "message": f"not a single JSON value: {error}"}
            ]
        else:
            audit = {"audit": value}
            if _is_none(value):
                diagnostics = [
                    {"path": "", "keyword": None, "message": "no structured output candidate"}
                ]
                audit = {}
            elif plan.mechanism == "native" and bug("policy-swallowed"):
                diagnostics = []
            else:
                diagnostics = diagnose(schema, value)
            if not diagnostics:
                return outcome(value=value, **audit, **common)
            if on_invalid == "return" and bug("return-invalid-ok"):
                return outcome(value=value, diagnostics=diagnostics, **audit, **common)
            if bug("invalid-value-kept"):
                audit["value"] = value
    kind = "decode_error" if on_invalid == "return" else "policy_violation"
    summary = "; ".join(f"{d['path'] or '/'}: {d['message']}" for d in diagnostics)
    return outcome(
        error=kind,
        message=f"invalid structured output: {summary}",
        diagnostics=diagnostics,
        **audit,
        **common,
    )


def run(message: dict[str, Any]) -> dict[str, Any]:
    """The in-process entry (`python:tests.zoo.adaptor:run`)."""
    _CURRENT[0] = message.get("scenario", "")
    return run_request(message["request"], message["provider"])


def serve() -> None:
    for line in sys.stdin:
        if not line.strip():
            continue
        message = json.loads(line)
        seq, command = message.get("seq"), message.get("cmd")
        if command == "stop":
            return
        if command == "start":
            reply: dict[str, Any] = {"ready": True, "version": 1, "implementation": IMPLEMENTATION}
        elif command == "run":
            try:
                reply = {"outcome": run(message)}
            except Exception as error:  # noqa: BLE001  (one broken case must not end the rest)
                print(f"{message.get('scenario')}: {error!r}", file=sys.stderr)
                reply = {"errored": True, "message": f"{type(error).__name__}: {error}"}
        else:
            reply = {"errored": True, "message": f"unknown command {command!r}"}
        print(json.dumps({"seq": seq, **reply}), flush=True)


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--bug":
        os.environ["ZOO_BUG"] = sys.argv[2]
    elif len(sys.argv) == 2 and sys.argv[1] == "--list-bugs":
        print(json.dumps(BUGS))
        sys.exit(0)
    serve()
