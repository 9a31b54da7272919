"""
What a scripted model API answers: one step per request.

A scenario states the model's side of a conversation as data, so the same
script can stand behind the real ``claude`` and ``codex`` binaries, the
reference models and an in-process httpx client.  The JSON form is the
``model_script`` of the real-CLI captures (``{"tool": INPUT}``, ``{"text": T}``,
``{"texts": [...]}``, ``"midstream_error": true``, ``{"status": N, "body": B}``),
so a capture can be replayed without translation; a few keys extend it for
cases the captures do not show (thinking, truncation, delays, headers).

The script is checked when it is built: a typo in a scenario is a harness bug,
and must not surface later as a puzzling answer to a real CLI.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TypeVar

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

T = TypeVar("T")
STRUCTURED_OUTPUT = "StructuredOutput"
FOUNDRY_MESSAGE = "structured_outputs not supported in your workspace."


class ScriptError(ValueError):
    """A model script that cannot be served (unknown key, wrong type)."""


@dataclass(frozen=True)
class ToolUse:
    """A tool call the model makes; ``input`` is any JSON value, objects or not."""

    input: object
    name: str = STRUCTURED_OUTPUT


@dataclass(frozen=True)
class Answer:
    """
    A 200 answer: content blocks (Anthropic) or output items (OpenAI).

    Order on the wire is thinking, texts, tools, then ``texts_after`` (prose a
    model writes after its calls, in the same message).  ``midstream_error``
    breaks the stream with an SSE ``error`` (Anthropic) or ``response.failed``
    (OpenAI) after the complete blocks; ``error_payload`` replaces that API's default error object.
    ``truncate_after`` cuts the connection after that many SSE events.
    ``stop_reason`` and the token counts override the defaults (``tool_use``
    or ``end_turn``, and the figures behind the captures); ``headers`` are
    added to the 200 (a ``request-id`` for instance).
    """

    texts: tuple[str, ...] = ()
    tools: tuple[ToolUse, ...] = ()
    thinking: str | None = None
    texts_after: tuple[str, ...] = ()
    midstream_error: bool = False
    error_payload: Mapping[str, object] | None = None
    truncate_after: int | None = None
    delay: float = 0.0
    stop_reason: str | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    headers: tuple[tuple[str, str], ...] = ()
    #: The Responses API's ``phase`` of the message items (``commentary`` or
    #: ``final_answer``): one for all, or one per message in order (texts, then
    #: texts_after); the Anthropic API has none and ignores it.
    phase: str | tuple[str, ...] | None = None

    def phase_of(self, number: int) -> str | None:
        """The phase of the answer's ``number``-th message, if it has one."""
        if isinstance(self.phase, tuple):
            return self.phase[number] if number < len(self.phase) else None
        return self.phase


@dataclass(frozen=True)
class HttpError:
    """
    A plain HTTP error answer.

    ``body`` is sent verbatim when given (the captures' bodies are); otherwise
    a body in the real API's shape is made from ``message``.  ``headers`` are
    added to the defaults every error gets (``request-id``, ``retry-after`` on
    429, ...) and replace a default of the same name.
    """

    status: int
    body: object = None
    message: str | None = None
    headers: tuple[tuple[str, str], ...] = ()
    delay: float = 0.0


Step = Answer | HttpError


@dataclass(frozen=True)
class Script:
    """
    The answers in request order.

    ``repeat_last`` (the captures' convention) answers every further request
    with the last step; without it a request beyond the script is unexpected,
    answered with a 500 and recorded as such.
    """

    steps: tuple[Step, ...]
    repeat_last: bool = True

    def step_for(self, index: int) -> Step | None:
        """The step answering request `index` (0-based), or None when unexpected."""
        if index < len(self.steps):
            return self.steps[index]
        if self.repeat_last and self.steps:
            return self.steps[-1]
        return None

    @property
    def calm(self) -> bool:
        """
        No step gives a client a reason to retry: no HTTP error, broken or cut
        stream, or delay.  A CLI that retries a request of a calm script was
        disturbed by its machine (a timeout under load), not by the script.
        """
        return all(
            isinstance(s, Answer)
            and not s.midstream_error
            and s.truncate_after is None
            and s.delay == 0
            for s in self.steps
        )

    @classmethod
    def of(cls, *steps: Step, repeat_last: bool = True) -> Script:
        return cls(tuple(steps), repeat_last)

    @classmethod
    def from_json(cls, document: object) -> Script:
        """
        A capture's ``model_script`` list, or ``{"steps": [...], "repeat_last": bool}``.

        Steps may also be `Answer` / `HttpError` objects, mixed with JSON ones.
        """
        repeat = True
        if isinstance(document, dict):
            unknown = set(document) - {"steps", "repeat_last"}
            if unknown:
                raise _unknown("script", unknown, {"steps", "repeat_last"})
            repeat = _typed(document.get("repeat_last", True), bool, "script.repeat_last")
            document = document.get("steps")
        if not isinstance(document, (list, tuple)):
            raise ScriptError("script: steps must be a list")
        return cls(tuple(step_from_json(s, f"step {i}") for i, s in enumerate(document)), repeat)


# -- convenience constructors, named after what the model does ---------------------------


def tool_call(value: object, *, text: str | None = None, name: str = STRUCTURED_OUTPUT) -> Answer:
    """A StructuredOutput call with `value` as its input, optionally after a text block."""
    return Answer(texts=(text,) if text is not None else (), tools=(ToolUse(value, name),))


def text(*texts: str) -> Answer:
    """Prose only: one text block (or output message) per argument."""
    return Answer(texts=texts)


def http_error(
    status: int,
    message: str | None = None,
    *,
    body: object = None,
    headers: Mapping[str, str] | None = None,
) -> HttpError:
    return HttpError(status, body, message, tuple((headers or {}).items()))


def foundry_unsupported() -> HttpError:
    """The 400 a Microsoft Foundry (Azure-hosted) deployment gives for structured outputs."""
    return HttpError(400, message=FOUNDRY_MESSAGE)


def overloaded() -> HttpError:
    return HttpError(529)


def rate_limited(retry_after: int = 1) -> HttpError:
    return HttpError(429, headers=(("retry-after", str(retry_after)),))


def server_error() -> HttpError:
    return HttpError(500)


# -- the JSON form -------------------------------------------------------------------------

_ANSWER_KEYS = frozenset(
    {
        "tool",
        "tools",
        "tool_name",
        "text",
        "texts",
        "text_after",
        "texts_after",
        "thinking",
        "midstream_error",
        "truncate_after",
        "delay",
        "stop_reason",
        "usage",
        "headers",
        "phase",
    }
)
_ERROR_KEYS = frozenset({"status", "body", "message", "headers", "delay"})


def _unknown(where: str, unknown: set[str], known: Iterable[str]) -> ScriptError:
    """Unknown keys, each with the closest known one when it looks misspelt."""
    names = sorted(known)
    shown = []
    for key in sorted(unknown):
        close = difflib.get_close_matches(key, names, n=1)
        shown.append(f"{key!r}" + (f" (did you mean {close[0]!r}?)" if close else ""))
    return ScriptError(f"{where}: unknown keys {', '.join(shown)} (known: {', '.join(names)})")


def step_from_json(raw: object, where: str) -> Step:
    """One step of the JSON form; a step already built is taken as is."""
    if isinstance(raw, (Answer, HttpError)):
        return raw
    if not isinstance(raw, dict):
        raise ScriptError(f"{where}: must be an object")
    if "status" in raw:
        return _error_from_json(raw, where)
    unknown = set(raw) - _ANSWER_KEYS
    if unknown:
        raise _unknown(where, unknown, _ANSWER_KEYS)
    texts: list[str] = []
    if "text" in raw:
        texts.append(_typed(raw["text"], str, f"{where}.text"))
    for item in _typed(raw.get("texts", []), list, f"{where}.texts"):
        texts.append(_typed(item, str, f"{where}.texts[]"))
    after: list[str] = []
    if "text_after" in raw:
        after.append(_typed(raw["text_after"], str, f"{where}.text_after"))
    for item in _typed(raw.get("texts_after", []), list, f"{where}.texts_after"):
        after.append(_typed(item, str, f"{where}.texts_after[]"))
    name = _typed(raw.get("tool_name", STRUCTURED_OUTPUT), str, f"{where}.tool_name")
    tools = [ToolUse(raw["tool"], name)] if "tool" in raw else []
    for item in _typed(raw.get("tools", []), list, f"{where}.tools"):
        call = _typed(item, dict, f"{where}.tools[]")
        if "input" not in call:
            raise ScriptError(f"{where}.tools[]: needs an input")
        tools.append(ToolUse(call["input"], _typed(call.get("name", name), str, where)))
    midstream = raw.get("midstream_error", False)
    payload = None if isinstance(midstream, bool) else _typed(midstream, dict, where)
    usage = _typed(raw.get("usage", {}), dict, f"{where}.usage")
    headers = _headers(raw.get("headers", {}), where)
    truncate = _optional(raw.get("truncate_after"), int, f"{where}.truncate_after")
    if truncate is not None and truncate < 0:
        raise ScriptError(f"{where}.truncate_after: must be a non-negative number of events")
    return Answer(
        texts=tuple(texts),
        tools=tuple(tools),
        thinking=_optional(raw.get("thinking"), str, f"{where}.thinking"),
        texts_after=tuple(after),
        midstream_error=midstream is not False,
        error_payload=payload,
        truncate_after=truncate,
        delay=_seconds(raw.get("delay", 0), f"{where}.delay"),
        stop_reason=_optional(raw.get("stop_reason"), str, f"{where}.stop_reason"),
        input_tokens=_optional(usage.get("input_tokens"), int, f"{where}.usage.input_tokens"),
        output_tokens=_optional(usage.get("output_tokens"), int, f"{where}.usage.output_tokens"),
        headers=headers,
        phase=_phase(raw.get("phase"), f"{where}.phase"),
    )


def _phase(raw: object, where: str) -> str | tuple[str, ...] | None:
    if isinstance(raw, list):
        return tuple(_typed(item, str, f"{where}[]") for item in raw)
    return _optional(raw, str, where)


def _error_from_json(raw: Mapping[str, object], where: str) -> HttpError:
    unknown = set(raw) - _ERROR_KEYS
    if unknown:
        raise _unknown(where, unknown, _ERROR_KEYS)
    status = _typed(raw["status"], int, f"{where}.status")
    if not 400 <= status <= 599:
        raise ScriptError(f"{where}.status: {status} is not an HTTP error status")
    return HttpError(
        status=status,
        body=raw.get("body"),
        message=_optional(raw.get("message"), str, f"{where}.message"),
        headers=_headers(raw.get("headers", {}), where),
        delay=_seconds(raw.get("delay", 0), f"{where}.delay"),
    )


def _headers(raw: object, where: str) -> tuple[tuple[str, str], ...]:
    headers = _typed(raw, dict, f"{where}.headers")
    return tuple((str(k), _typed(v, str, f"{where}.headers.{k}")) for k, v in headers.items())


def _typed(value: object, kind: type[T], where: str) -> T:
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise ScriptError(f"{where}: must be {kind.__name__}, not {type(value).__name__}")
    return value


def _optional(value: object, kind: type[T], where: str) -> T | None:
    return None if value is None else _typed(value, kind, where)


def _seconds(value: object, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= 0:
        raise ScriptError(f"{where}: must be a non-negative number of seconds")
    return float(value)


def steps_summary(steps: Sequence[Step]) -> str:
    """A short description for error messages (``tool, text, 529``)."""
    parts = []
    for step in steps:
        if isinstance(step, HttpError):
            parts.append(str(step.status))
        else:
            kinds = ["thinking"] if step.thinking is not None else []
            kinds += ["text"] * len(step.texts) + [t.name for t in step.tools]
            kinds += ["text"] * len(step.texts_after)
            parts.append("+".join(kinds) or "empty")
    return ", ".join(parts)
