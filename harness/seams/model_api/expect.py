"""
What a model-api case expects, and how an outcome is held against it.

Only the expectations a scenario gives are checked (None, False and () mean
"not checked"), so a case pins what it documents and nothing else; `describe`
says the same in words for the catalogue.  Full-stack cases add what the
reference adaptor pipeline concludes from the CLI's run (`AdaptorExpectation`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from typing import Any

from harness.catalogue.scenario import Json
from harness.seams.compare import Mismatch, json_equal
from harness.seams.model_api.values import ModelApiOutcome, SeenRequest, show_value


@dataclass(frozen=True)
class ModelApiExpectation:
    """What a conforming CLI shows; None, False and () are "not checked"."""

    exit_code: int | None = None
    #: Killed at the case's timeout (the harness kills a hung CLI, exit -9).
    timed_out: bool | None = None
    stderr_contains: str | None = None
    subtype: str | None = None
    is_error: bool | None = None
    terminal_reason: str | None = None
    structured_output: Json | None = None
    no_structured_output: bool = False
    result: str | None = None
    errors_contain: tuple[str, ...] = ()
    line_types: tuple[str, ...] | None = None
    requests: int | None = None
    models: tuple[str, ...] | None = None
    #: The requests beside the conversation, in order (``HEAD /api/hello``).
    side_requests: tuple[str, ...] | None = None
    input_schema: Json | None = None
    strict: bool | None = None
    strict_each: tuple[bool, ...] | None = None
    text_format: Json | None = None
    messages_after_prompt_contain: tuple[str, ...] = ()
    #: Texts no request's conversation after the prompt may carry (a note the CLI
    #: must not add, `No response requested.` before a joined prompt, say).
    messages_after_prompt_lack: tuple[str, ...] = ()
    #: Request by request, how many calls each assistant message after the prompt
    #: carries (messages without calls left out): how a CLI sends back several calls.
    calls_per_message: tuple[tuple[int, ...], ...] | None = None
    no_unexpected_requests: bool = False
    #: Files the run must leave in its working directory, with their content
    #: (None: the run must leave no such file).
    files: tuple[tuple[str, str | None], ...] = ()
    #: Full stack: what the reference adaptor concludes from the CLI's run.
    adaptor: AdaptorExpectation | None = None
    #: What a text-printing run (``output_format: text``) printed, exactly.
    stdout: str | None = None
    #: Codex: items of its ``item.completed`` lines, in order (others may come
    #: between); each names some fields, and a field given as null must be absent.
    items: Json | None = None


_ABSENT = object()


@dataclass(frozen=True)
class AdaptorExpectation:
    """The reference adaptor's conclusion, as far as a full-stack case pins it."""

    status: str | None = None
    error: str | None = None
    cause: str | None = None
    value: Json | None = None
    no_value: bool = False
    mechanism: str | None = None

    def mismatches(self, got: Mapping[str, Any] | None) -> list[tuple[str, object, object]]:
        """(field, expected, got) for every pinned field the adaptor's view misses."""
        if got is None:
            return [("adaptor", "an adaptor outcome", None)]
        out: list[tuple[str, object, object]] = []
        for name in ("status", "error", "cause", "mechanism"):
            wanted = getattr(self, name)
            if wanted is not None and not json_equal(wanted, got.get(name)):
                out.append((f"adaptor.{name}", wanted, got.get(name)))
        if self.value is not None and (
            got.get("has_value") is not True or not json_equal(self.value.value, got.get("value"))
        ):
            out.append(("adaptor.value", self.value.value, got.get("value")))
        if self.no_value and got.get("has_value"):
            out.append(("adaptor.no_value", None, got.get("value")))
        return out


def compare(expect: ModelApiExpectation, actual: ModelApiOutcome) -> tuple[Mismatch, ...]:
    """Every expectation that is given and not met, each held JSON-exactly (`json_equal`)."""
    out: list[Mismatch] = []

    def differ(name: str, expected: object, got: object) -> None:
        out.append(Mismatch(name, show_value(expected), show_value(got)))

    def check(name: str, expected: object, got: object) -> None:
        if expected is not None and not json_equal(expected, got):
            differ(name, expected, got)

    check("exit_code", expect.exit_code, actual.exit_code)
    check("timed_out", expect.timed_out, actual.timed_out)
    if expect.stderr_contains is not None and expect.stderr_contains not in actual.stderr:
        differ("stderr_contains", expect.stderr_contains, actual.stderr)
    final = actual.final or {}
    for name in ("subtype", "is_error", "terminal_reason", "result"):
        check(name, getattr(expect, name), final.get(name))
    got_value = final.get("structured_output")
    if expect.structured_output is not None:
        check("structured_output", expect.structured_output.value, got_value)
    if expect.no_structured_output and got_value is not None:
        differ("no_structured_output", None, got_value)
    errors = final.get("errors") or []
    for wanted_text in expect.errors_contain:
        if not any(isinstance(e, str) and wanted_text in e for e in errors):
            differ("errors_contain", wanted_text, errors)
    if expect.line_types is not None:
        check("line_types", list(expect.line_types), list(actual.line_types))
    _compare_requests(expect, actual, differ)
    if expect.adaptor is not None:
        for name, wanted, got in expect.adaptor.mismatches(actual.adaptor):
            differ(name, wanted, got)
    if expect.stdout is not None and actual.stdout != expect.stdout:
        differ("stdout", expect.stdout, actual.stdout)
    if expect.items is not None:
        missing = _missing_item(expect.items.value, completed_items(actual.lines))
        if missing is not None:
            differ("items", missing, completed_items(actual.lines))
    left = dict(actual.files)
    for name, content in expect.files:
        if not json_equal(content, left.get(name)):
            differ(f"files.{name}", content, left.get(name, "<no such file>"))
    return tuple(out)


#: Shown when an expectation on what the model API received has nothing to look at.
NOTHING_RECEIVED = "<no request reached the model API>"


def _flag(request: SeenRequest) -> object:
    """The StructuredOutput tool's ``strict`` flag as sent; an absent flag is ``false``."""
    return False if request.strict is None else request.strict


def _compare_requests(expect: ModelApiExpectation, actual: ModelApiOutcome, differ: Any) -> None:
    """
    What reached the fake model API.  An expectation on what a request carried
    (``input_schema``, ``strict``, ``text_format``) is a claim about at least one
    request: with no request answered it fails instead of holding vacuously.
    Side requests (a connectivity check) are compared apart, in ``side_requests``.
    """
    answered = [r for r in actual.requests if r.conversation]
    if expect.side_requests is not None:
        side = [r.side for r in actual.requests if r.side is not None]
        if side != list(expect.side_requests):
            differ("side_requests", list(expect.side_requests), side)
    if expect.no_unexpected_requests:
        odd = [r.unexpected for r in actual.requests if r.unexpected is not None]
        if odd:
            differ("no_unexpected_requests", [], odd)
    if expect.requests is not None and not json_equal(expect.requests, len(answered)):
        differ("requests", expect.requests, len(answered))
    if expect.models is not None:
        models = [r.model for r in answered]
        if not json_equal(list(expect.models), models):
            differ("models", list(expect.models), models)
    carried = (
        ("input_schema", None if expect.input_schema is None else expect.input_schema.value),
        ("strict", expect.strict),
        ("text_format", None if expect.text_format is None else expect.text_format.value),
    )
    for name, wanted in carried:
        if wanted is None:
            continue
        if not answered:
            differ(name, wanted, NOTHING_RECEIVED)
            continue
        if name == "strict":
            missing = [r for r in answered if r.input_schema is None]
            if missing:  # no StructuredOutput tool at all: nothing to be strict or not
                differ(name, wanted, "<a request without the StructuredOutput tool>")
                continue
        got = [_flag(r) if name == "strict" else getattr(r, name) for r in answered]
        wrong = [each for each in got if not json_equal(wanted, each)]
        if wrong:
            differ(name, wanted, got if name == "strict" else wrong[0])
    if expect.strict_each is not None:
        each = [_flag(r) for r in answered]
        if not json_equal(list(expect.strict_each), each):
            differ("strict_each", list(expect.strict_each), each)
    for text in expect.messages_after_prompt_contain:
        if not any(text in leaf for r in answered for leaf in _strings(r.messages_after_prompt)):
            differ("messages_after_prompt_contain", text, "in no request after the prompt")
    for text in expect.messages_after_prompt_lack:
        if any(text in leaf for r in answered for leaf in _strings(r.messages_after_prompt)):
            differ("messages_after_prompt_lack", text, "in a request after the prompt")
    if expect.calls_per_message is not None:
        counts = [list(calls_per_message(r.messages_after_prompt)) for r in answered]
        if counts != [list(each) for each in expect.calls_per_message]:
            differ("calls_per_message", [list(e) for e in expect.calls_per_message], counts)


def calls_per_message(messages: object) -> tuple[int, ...]:
    """
    How many calls each assistant message carries, messages without calls left
    out: Chat Completions' ``tool_calls``, Anthropic's ``tool_use`` blocks.
    """
    counts: list[int] = []
    for message in messages if isinstance(messages, list) else ():
        if not isinstance(message, dict) or message.get("role") != "assistant":
            continue
        calls = message.get("tool_calls")
        blocks = message.get("content")
        count = len(calls) if isinstance(calls, list) else 0
        if isinstance(blocks, list):
            count += sum(isinstance(b, dict) and b.get("type") == "tool_use" for b in blocks)
        if count:
            counts.append(count)
    return tuple(counts)


def completed_items(lines: tuple[object, ...]) -> list[object]:
    """The items of codex's ``item.completed`` lines, in order."""
    return [
        line["item"]
        for line in lines
        if isinstance(line, dict) and line.get("type") == "item.completed" and "item" in line
    ]


def _fits(wanted: Mapping[str, Any], item: object) -> bool:
    if not isinstance(item, dict):
        return False
    for key, value in wanted.items():
        if value is None:
            if item.get(key) is not None:
                return False
        elif key not in item or not json_equal(value, item[key]):
            return False
    return True


def _missing_item(wanted: list[Mapping[str, Any]], items: list[object]) -> object | None:
    """The first wanted item with no fitting item after the one before it fitted, if any."""
    place = 0
    for each in wanted:
        found = next((i for i in range(place, len(items)) if _fits(each, items[i])), None)
        if found is None:
            return each
        place = found + 1
    return None


def _strings(value: object) -> list[str]:
    """Every string in a JSON value: a text is looked for as the model read it, unescaped."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [leaf for item in value.values() for leaf in _strings(item)]
    if isinstance(value, list):
        return [leaf for item in value for leaf in _strings(item)]
    return []


def expectation_of(raw: dict[str, Any]) -> ModelApiExpectation:
    def json_of(key: str) -> Json | None:
        return Json.of(raw[key]) if key in raw else None

    return ModelApiExpectation(
        exit_code=raw.get("exit_code"),
        timed_out=raw.get("timed_out"),
        stderr_contains=raw.get("stderr_contains"),
        subtype=raw.get("subtype"),
        is_error=raw.get("is_error"),
        terminal_reason=raw.get("terminal_reason"),
        structured_output=json_of("structured_output"),
        no_structured_output=raw.get("no_structured_output", False),
        result=raw.get("result"),
        errors_contain=tuple(raw.get("errors_contain", ())),
        line_types=tuple(raw["line_types"]) if "line_types" in raw else None,
        requests=raw.get("requests"),
        models=tuple(raw["models"]) if "models" in raw else None,
        side_requests=tuple(raw["side_requests"]) if "side_requests" in raw else None,
        input_schema=json_of("input_schema"),
        strict=raw.get("strict"),
        strict_each=tuple(raw["strict_each"]) if "strict_each" in raw else None,
        text_format=json_of("text_format"),
        messages_after_prompt_contain=tuple(raw.get("messages_after_prompt_contain", ())),
        messages_after_prompt_lack=tuple(raw.get("messages_after_prompt_lack", ())),
        calls_per_message=(
            tuple(tuple(each) for each in raw["calls_per_message"])
            if "calls_per_message" in raw
            else None
        ),
        no_unexpected_requests=raw.get("no_unexpected_requests", False),
        files=tuple(sorted(raw.get("files", {}).items())),
        adaptor=_adaptor_expectation(raw.get("adaptor")),
        stdout=raw.get("stdout"),
        items=json_of("items"),
    )


def _adaptor_expectation(raw: dict[str, Any] | None) -> AdaptorExpectation | None:
    if raw is None:
        return None
    return AdaptorExpectation(
        status=raw.get("status"),
        error=raw.get("error"),
        cause=raw.get("cause"),
        value=Json.of(raw["value"]) if "value" in raw else None,
        no_value=raw.get("no_value", False),
        mechanism=raw.get("mechanism"),
    )


#: The expectation's fields, as scenarios name them.
FIELDS = tuple(f.name for f in fields(ModelApiExpectation))
_ADAPTOR_FIELDS = tuple(f.name for f in fields(AdaptorExpectation))


@dataclass(frozen=True)
class ExpectationPatch:
    """
    A ``by_version`` rule's change to an expectation: the fields it gives
    (``adaptor`` field by field, as ``by_target`` merges it) and the fields it
    leaves unchecked on its versions.
    """

    values: ModelApiExpectation
    given: tuple[str, ...] = ()
    #: Fields of the adaptor's expectation it gives.
    adaptor_given: tuple[str, ...] = ()
    unchecked: tuple[str, ...] = ()

    def apply(self, expectation: object) -> ModelApiExpectation:
        assert isinstance(expectation, ModelApiExpectation)
        unset = ModelApiExpectation()
        changes: dict[str, Any] = {name: getattr(unset, name) for name in self.unchecked}
        changes.update({name: getattr(self.values, name) for name in self.given})
        if self.adaptor_given and self.values.adaptor is not None:
            base = expectation.adaptor or AdaptorExpectation()
            picked = {name: getattr(self.values.adaptor, name) for name in self.adaptor_given}
            changes["adaptor"] = replace(base, **picked)
        return replace(expectation, **changes)

    def words(self) -> list[str]:
        """What the patch changes, for the catalogue."""
        shown = ModelApiExpectation(**{name: getattr(self.values, name) for name in self.given})
        if self.adaptor_given:
            shown = replace(shown, adaptor=self.values.adaptor)
        out = describe(shown)
        out += [f"`{name}` is not checked" for name in self.unchecked]
        return out


def patch_of(raw: dict[str, Any]) -> ExpectationPatch:
    """A ``by_version`` rule's ``expect`` and ``unchecked``, as a patch."""
    expect = raw.get("expect", {})
    adaptor = expect.get("adaptor", {})
    return ExpectationPatch(
        values=expectation_of(expect),
        given=tuple(name for name in FIELDS if name in expect and name != "adaptor"),
        adaptor_given=tuple(name for name in _ADAPTOR_FIELDS if name in adaptor),
        unchecked=tuple(raw.get("unchecked", ())),
    )


def describe(expect: ModelApiExpectation) -> list[str]:
    out: list[str] = []
    if expect.exit_code is not None:
        out.append(f"the CLI exits {expect.exit_code}")
    if expect.timed_out is not None:
        killed = "the run is killed at its timeout"
        out.append(killed if expect.timed_out else "the run ends in time")
    if expect.stderr_contains is not None:
        out.append(f"stderr contains `{expect.stderr_contains.strip()}`")
    for name in ("subtype", "is_error", "terminal_reason", "result"):
        value = getattr(expect, name)
        if value is not None:
            out.append(f"the final result's `{name}` is `{show_value(value)}`")
    if expect.structured_output is not None:
        out.append(f"structured_output is `{expect.structured_output.text}`")
    if expect.no_structured_output:
        out.append("there is no structured_output")
    out += [f"an error names `{text}`" for text in expect.errors_contain]
    if expect.line_types is not None:
        out.append(f"stdout lines: {', '.join(expect.line_types)}")
    if expect.requests is not None:
        out.append(f"{expect.requests} request(s) reach the model API")
    if expect.models is not None:
        out.append(f"they ask for the models {', '.join(expect.models)}")
    if expect.side_requests is not None:
        beside = ", ".join(f"`{r}`" for r in expect.side_requests) or "none"
        out.append(f"requests beside the conversation: {beside}")
    if expect.input_schema is not None:
        out.append(f"the StructuredOutput tool's input_schema is `{expect.input_schema.text}`")
    if expect.strict is not None:
        out.append(f"the StructuredOutput tool is {'' if expect.strict else 'not '}strict")
    if expect.strict_each is not None:
        flags = ", ".join("strict" if f else "not strict" for f in expect.strict_each)
        out.append(f"request by request the tool is: {flags}")
    if expect.text_format is not None:
        out.append(f"text.format is `{expect.text_format.text}`")
    out += [f"the conversation carries `{t}`" for t in expect.messages_after_prompt_contain]
    out += [f"the conversation does not carry `{t}`" for t in expect.messages_after_prompt_lack]
    if expect.calls_per_message is not None:
        shown = "; ".join(", ".join(map(str, each)) or "none" for each in expect.calls_per_message)
        out.append(f"request by request, the calls of each assistant message: {shown}")
    if expect.no_unexpected_requests:
        out.append("no request the script did not expect")
    out += [
        f"the run leaves no `{name}`"
        if content is None
        else f"the run leaves `{name}` holding `{content!r}`"
        for name, content in expect.files
    ]
    if expect.stdout is not None:
        out.append(f"it prints `{expect.stdout!r}`")
    if expect.items is not None:
        out.append(f"its completed items include, in order, `{expect.items.text}`")
    if expect.adaptor is not None:
        out.append(f"full stack: the reference adaptor concludes {_adaptor_words(expect.adaptor)}")
    return out


def _adaptor_words(expect: AdaptorExpectation) -> str:
    words = [expect.status or "anything"]
    words += [
        f"{name} `{getattr(expect, name)}`"
        for name in ("error", "cause", "mechanism")
        if getattr(expect, name)
    ]
    if expect.value is not None:
        words.append(f"with value `{expect.value.text}`")
    if expect.no_value:
        words.append("with no value")
    return ", ".join(words)
