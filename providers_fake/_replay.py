"""
One launch of a fake CLI, from argv to the chunks it performs.

The order mirrors a real launch: the harness-side record is written first (a
launch happened, whatever comes next), then the script is loaded, then the
command line is checked the way the real CLI checks it, and only then is the
script rendered.  Rendering is pure: it fills an `Output` and never touches
the process, so the in-process harness path and the executables behave the
same.  The two side effects are the launch record and Codex's ``-o`` file.
"""

from __future__ import annotations

import json
import os

from providers_fake import _argv, _schemaflag
from providers_fake._base import Context, Renderer
from providers_fake._ids import Ids
from providers_fake._jsonout import dumps_py, line_bytes
from providers_fake._script import Script, load
from providers_fake._types import Output, Replay, ScriptError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

    from providers_fake._argv import Parsed


def replay(
    cli: str,
    argv: list[str],
    env: Mapping[str, str],
    stdin: bytes | None,
    *,
    script_env: str,
    record_env: str,
    events: frozenset[str],
) -> Replay:
    try:
        return _launch(cli, argv, env, stdin, script_env, record_env, events)
    except ScriptError as error:
        return _fake_error(cli, str(error))
    except Exception as error:  # noqa: BLE001 - a fake must never answer with a traceback
        return _fake_error(cli, f"internal error: {type(error).__name__}: {error}")


def _launch(  # noqa: PLR0917 - the private twin of `replay`, called once
    cli: str,
    argv: list[str],
    env: Mapping[str, str],
    stdin: bytes | None,
    script_env: str,
    record_env: str,
    events: frozenset[str],
) -> Replay:
    parsed = _argv.parse(cli, argv)
    stdin_text = None if stdin is None else stdin.decode("utf-8", "replace")
    prompt = _prompt(parsed, stdin_text)
    _record(env.get(record_env), cli, argv, parsed, prompt)
    script = load(cli, env, script_env, events)
    out = Output()
    failure = _preflight(cli, parsed, stdin_text, prompt)
    if failure is not None:
        message, status = failure
        out.stderr(message.encode("utf-8", "backslashreplace"))
        return Replay(tuple(out.chunks), status)
    ctx = Context(
        cli,
        parsed=parsed,
        env=env,
        cwd=_cwd(env),
        prompt=prompt,
        ids=Ids(script.seed, cli),
        out=out,
        json_shape=script.json_shape,
    )
    status = _render(_renderer(ctx), script, out)
    if script.exit_code is not None:
        status = script.exit_code
    return Replay(tuple(out.chunks), status, _signal_number(script.signal))


def _render(renderer: Renderer, script: Script, out: Output) -> int:
    for kind, value in script.steps:
        if kind == "event":
            assert isinstance(value, tuple)
            renderer.event(value[0], value[1])
        elif kind == "line":
            out.stdout(line_bytes(dumps_py(value)))
        elif kind == "raw":
            out.stdout(_text_bytes(str(value)))
        elif kind == "stderr":
            out.stderr(_text_bytes(str(value)))
        elif kind == "sleep":
            assert isinstance(value, (int, float))
            out.sleep(float(value))
        elif kind == "hang":
            out.hang()
        if out.hung:
            break  # nothing after a hang ever happens
    return renderer.finish()


def _renderer(ctx: Context) -> Renderer:
    # Imported here so a launch loads only its own CLI's renderer.
    if ctx.cli == "codex":
        from providers_fake._codex import CodexRenderer  # noqa: PLC0415

        return CodexRenderer(ctx)
    if ctx.cli == "cursor":
        from providers_fake._cursor import CursorRenderer  # noqa: PLC0415

        return CursorRenderer(ctx)
    if ctx.cli == "codebuddy":
        from providers_fake._codebuddy import CodeBuddyRenderer  # noqa: PLC0415

        return CodeBuddyRenderer(ctx)
    from providers_fake._claude import ClaudeRenderer  # noqa: PLC0415

    return ClaudeRenderer(ctx)


def _preflight(
    cli: str, parsed: Parsed, stdin: str | None, prompt: str | None
) -> tuple[str, int] | None:
    """The real CLI's own refusal to start, as (stderr text, exit status)."""
    if parsed.error is not None:
        return parsed.error, parsed.error_exit
    if cli == "codex":
        return _codex_preflight(parsed, stdin)
    if cli == "cursor":
        if not parsed.flag("print"):
            return "fake-cursor: interactive mode is not supported; pass -p/--print\n", 2
        if prompt is None:
            return "Error: No prompt provided for print mode\n", 1
        return None
    stream_input = parsed.text("input_format") == "stream-json"
    if not parsed.flag("print") and not stream_input:
        return f"fake-{cli}: interactive mode is not supported; pass -p/--print\n", 2
    if parsed.output_format == "stream-json" and not parsed.flag("verbose"):
        return "Error: When using --print, --output-format=stream-json requires --verbose\n", 1
    schema_text = parsed.text("json_schema")
    if schema_text is not None:
        problem = _schemaflag.check(schema_text)[1]
        if problem is not None:
            return problem, 1
    if prompt is None and not stream_input:
        return (
            "Error: Input must be provided either through stdin or as a prompt argument "
            "when using --print\n",
            1,
        )
    return None


def _codex_preflight(parsed: Parsed, stdin: str | None) -> tuple[str, int] | None:
    path = parsed.text("output_schema")
    if path is not None:
        try:
            with open(path, "rb") as handle:
                data = handle.read()
        except OSError as error:
            reason = f"{error.strerror} (os error {error.errno})"
            return f"Failed to read output schema file {path}: {reason}\n", 1
        try:
            json.loads(data)
        except ValueError as error:
            return f"Output schema file {path} is not valid JSON: {_serde_message(error)}\n", 1
    if parsed.prompt is None:
        if stdin is None:
            return (
                "No prompt provided. Either specify one as an argument or pipe the prompt "
                "into stdin.\n",
                1,
            )
        if not stdin.strip():
            return "No prompt provided via stdin.\n", 1
    return None


def _serde_message(error: ValueError) -> str:
    """serde_json's wording, roughly: ``expected value at line 1 column 1``."""
    if not isinstance(error, json.JSONDecodeError):
        return str(error)
    message = error.msg
    if message == "Expecting value":
        message = "expected value"
    elif message == "Extra data":
        message = "trailing characters"
    else:
        message = message[:1].lower() + message[1:]
    return f"{message} at line {error.lineno} column {error.colno}"


def _prompt(parsed: Parsed, stdin: str | None) -> str | None:
    if parsed.prompt is not None:
        return parsed.prompt
    if stdin is None:
        return None
    if parsed.cli in ("claude", "codebuddy") and parsed.text("input_format") == "stream-json":
        return _first_user_message(stdin)
    if parsed.cli != "codex" and not stdin.strip():
        return None  # the JavaScript CLIs treat blank stdin as no input at all
    return stdin


def _first_user_message(stdin: str) -> str | None:
    """The prompt an SDK sent as a stream-json user message (control requests are skipped)."""
    for line in stdin.splitlines():
        try:
            message = json.loads(line)
        except ValueError:
            continue
        if not isinstance(message, dict) or message.get("type") != "user":
            continue
        body = message.get("message")
        content = body.get("content") if isinstance(body, dict) else None
        if isinstance(content, str):
            return content
        if isinstance(content, list):
            texts = [b.get("text") for b in content if isinstance(b, dict)]
            return "".join(t for t in texts if isinstance(t, str))
    return None


def _record(
    path: str | None, cli: str, argv: list[str], parsed: Parsed, prompt: str | None
) -> None:
    if not path:
        return
    record = {
        "cli": cli,
        "argv": argv,
        "output_format": parsed.output_format,
        "schema": _received_schema(parsed),
        "prompt": prompt,
        "model": parsed.text("model"),
    }
    data = (dumps_py(record) + "\n").encode("utf-8", "backslashreplace")
    try:
        # One write on an O_APPEND descriptor: parallel launches never interleave.
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, data)
        finally:
            os.close(fd)
    except OSError as error:
        raise ScriptError(f"cannot append the launch record to {path}: {error.strerror}") from None


def _received_schema(parsed: Parsed) -> object:
    if parsed.cli in ("claude", "codebuddy"):
        text = parsed.text("json_schema")
        return None if text is None else _schemaflag.parse_quietly(text)
    path = parsed.text("output_schema") if parsed.cli == "codex" else None
    if path is None:
        return None
    try:
        with open(path, "rb") as handle:
            return json.loads(handle.read())
    except (OSError, ValueError):
        return None


def _fake_error(cli: str, reason: str) -> Replay:
    line = f"fake-{cli}: {reason}\n".encode("utf-8", "backslashreplace")
    return Replay((("stderr", line),), 2)


def _text_bytes(text: str) -> bytes:
    """Script text as bytes; ``\\udcXX`` escapes stand for raw (possibly invalid) bytes."""
    try:
        return text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace")


def _cwd(env: Mapping[str, str]) -> str:
    try:
        return os.getcwd()
    except OSError:
        return env.get("PWD", "/")


def _signal_number(name: str | None) -> int | None:
    if name is None:
        return None
    import signal  # noqa: PLC0415 - most scripts never need it

    return int(getattr(signal, name))
