"""
What every CLI module builds on: the `Cli` spec, the `Renderer`, shared checks.

Each per-CLI module (``codex``, ``claude.render``, ``cursor``, ``codebuddy``)
subclasses both and exposes its spec as ``CLI``; `replay` finds that module
through its registry and asks the spec everything that differs between CLIs,
so no other module branches on a CLI's name.

A renderer turns semantic events into one CLI's wire lines.  It only appends
to the `Output` it is given; deciding the exit status is left to `finish`, so
the replay loop stays the same for all four CLIs.
"""

from __future__ import annotations

from providers_fake.cli.argv import COMMANDER
from providers_fake.cli.argv import parse as parse_argv
from providers_fake.cli.ids import Ids
from providers_fake.cli.jsonout import dumps_js, line_bytes
from providers_fake.cli.types import Output, ScriptError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

    from providers_fake.cli.argv import Dialect, Option, Parsed

    Refusal = tuple[str, int]


class Context:
    """One launch: its arguments, environment, prompt and output buffer."""

    def __init__(
        self,
        cli: Cli,
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
    """
    Base class: subclasses handle each event in ``_on_<event>`` and may override `finish`.

    The handlers are the renderer's registry of events: `event` looks the
    handler up by name (dots become underscores), so adding an event is adding
    a method and its name in the CLI's `Cli.events`, with no dispatch to edit.
    """

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.ids = ctx.ids
        self.out = ctx.out

    def event(self, name: str, arg: object) -> None:
        handler = getattr(self, handler_name(name), None)
        if handler is None:  # pragma: no cover - the script loader only lets known names through
            raise ScriptError(f"unknown {self.ctx.cli.name} event {name!r}")
        handler(arg)

    def finish(self) -> int:
        """The exit status when the script does not set one."""
        return 0

    def write_json(self, record: object) -> None:
        self.out.stdout(line_bytes(dumps_js(record)))

    def write_text(self, text: str) -> None:
        self.out.stdout(line_bytes(text))


def handler_name(event: str) -> str:
    """The `Renderer` method that handles `event`."""
    return "_on_" + event.replace(".", "_")


class Cli:
    """
    One agent CLI up to its first line of output, declared by the CLI's own module.

    It says how the command line is read (options, dialect, positionals), when
    the real program refuses to start, where the prompt comes from, which
    schema the launch record shows, which events scripts may use and which
    renderer prints them.  The defaults are what the commander.js CLIs share;
    subclasses override only where their real program differs.
    """

    name: str
    renderer: type[Renderer]
    events: frozenset[str]
    options: tuple[Option, ...]
    dialect: Dialect = COMMANDER
    max_positionals: int | None = None  # None: any number of words (Cursor joins them)

    def parse(self, argv: list[str]) -> Parsed:
        return parse_argv(self, argv)

    def arguments(self, words: list[str], parsed: Parsed) -> list[str]:
        """The words the options apply to; a CLI with a subcommand removes it here."""
        return words

    def output_format(self, parsed: Parsed) -> str:
        return parsed.text("output_format") or "text"

    def positional_prompt(self, parsed: Parsed) -> str | None:
        return parsed.positionals[0] if parsed.positionals else None

    def reads_stdin(self, parsed: Parsed) -> bool:
        """Whether the real CLI would read its prompt from standard input."""
        return parsed.error is None and parsed.prompt is None and self.answer(parsed) is None

    def converses(self, parsed: Parsed) -> bool:
        """Whether the real CLI holds a conversation on stdin (an SDK's streaming input)."""
        return False

    def answer(self, parsed: Parsed) -> str | None:
        """What the real CLI prints instead of running (``--version``), if anything."""
        return None

    def prompt(self, parsed: Parsed, stdin: str | None) -> str | None:
        if parsed.prompt is not None:
            return parsed.prompt
        if stdin is None or not stdin.strip():
            return None  # the JavaScript CLIs treat blank stdin as no input at all
        return stdin

    def refusal(self, parsed: Parsed, stdin: str | None, prompt: str | None) -> Refusal | None:
        """The real CLI's refusal to start, as (stderr text, exit status), if it refuses."""
        if parsed.error is not None:
            return parsed.error, parsed.error_exit
        return self.preflight(parsed, stdin, prompt)

    def preflight(self, parsed: Parsed, stdin: str | None, prompt: str | None) -> Refusal | None:
        """The checks a CLI makes once its command line parsed, before any output."""
        return None

    def received_schema(self, parsed: Parsed) -> object:
        """The schema the command line handed over, for the launch record (None if none)."""
        return None


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
