"""
What every renderer gets, and the small checks on event arguments they share.

A renderer turns semantic events into one CLI's wire lines.  It only appends
to the `Output` it is given; deciding the exit status is left to `finish`, so
the replay loop stays the same for all four CLIs.
"""

from __future__ import annotations

from providers_fake._ids import Ids
from providers_fake._jsonout import dumps_js, line_bytes
from providers_fake._types import Output, ScriptError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

    from providers_fake._argv import Parsed


class Context:
    """One launch: its arguments, environment, prompt and output buffer."""

    def __init__(
        self,
        cli: str,
        *,
        parsed: Parsed,
        env: Mapping[str, str],
        cwd: str,
        prompt: str | None,
        ids: Ids,
        out: Output,
        json_shape: str | None,
    ) -> None:
        self.cli = cli
        self.parsed = parsed
        self.env = env
        self.cwd = cwd
        self.prompt = prompt
        self.ids = ids
        self.out = out
        self.json_shape = json_shape


class Renderer:
    """Base class: subclasses implement `event` and may override `finish`."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.ids = ctx.ids
        self.out = ctx.out

    def event(self, name: str, arg: object) -> None:
        raise NotImplementedError

    def finish(self) -> int:
        """The exit status when the script does not set one."""
        return 0

    def write_json(self, record: object) -> None:
        self.out.stdout(line_bytes(dumps_js(record)))

    def write_text(self, text: str) -> None:
        self.out.stdout(line_bytes(text))


def text_arg(event: str, arg: object, default: str) -> str:
    if arg is None:
        return default
    if not isinstance(arg, str):
        raise ScriptError(f"event {event!r}: arg must be a string or null")
    return arg


def dict_arg(event: str, arg: object) -> dict[str, object]:
    if arg is None:
        return {}
    if not isinstance(arg, dict):
        raise ScriptError(f"event {event!r}: arg must be an object or null")
    return arg


def field(event: str, arg: dict[str, object], key: str, kind: type, default: object) -> object:
    """``arg[key]`` checked against `kind` (None passes as 'use the default')."""
    value = arg.get(key)
    if value is None:
        return default
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise ScriptError(f"event {event!r}: {key!r} must be a {kind.__name__}")
    return value


def int_field(event: str, arg: dict[str, object], key: str, default: int) -> int:
    value = field(event, arg, key, int, default)
    assert isinstance(value, int)
    return value


def str_field(event: str, arg: dict[str, object], key: str, default: str) -> str:
    value = field(event, arg, key, str, default)
    assert isinstance(value, str)
    return value


def finalize(record: dict[str, object], fields: dict[str, object]) -> dict[str, object]:
    """Apply the script's ``extra`` (set, new keys last) and ``drop`` (remove)."""
    extra = dict_arg("result", fields.get("extra"))
    record.update(extra)
    drop = fields.get("drop", [])
    if not isinstance(drop, list):
        raise ScriptError("event 'result': 'drop' must be a list of keys")
    for key in drop:
        record.pop(str(key), None)
    return record
