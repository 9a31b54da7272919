"""
One launch of a fake CLI, from argv to the chunks it performs.

The order mirrors a real launch: the harness-side record is written first (a
launch happened, whatever comes next), then the script is loaded, then the
command line is checked the way the real CLI checks it, and only then is the
script rendered.  Rendering is pure: it fills an `Output` and never touches
the process, so the in-process harness path and the executables behave the
same.  The two side effects are the launch record and Codex's ``-o`` file.

Nothing here knows one CLI from another: `MODULES` names the module that
describes each CLI (its `Cli` spec and renderer), and only the launched
CLI's module is imported, so a fake's start-up pays for one CLI alone.
"""

from __future__ import annotations

import importlib
import os

from providers_fake import MODULES
from providers_fake.cli.base import Cli, Context, Renderer
from providers_fake.cli.ids import Ids
from providers_fake.cli.jsonout import dumps_py, line_bytes
from providers_fake.cli.script import Script, load
from providers_fake.cli.types import Output, Replay, ScriptError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from providers_fake.cli.argv import Parsed


def cli_spec(cli: str) -> Cli:
    """The spec of `cli`, importing that CLI's module (and no other) on first use."""
    spec = importlib.import_module(MODULES[cli]).CLI
    assert isinstance(spec, Cli)
    return spec


def stdin_use(cli: str, argv: list[str]) -> str | None:
    """
    How the real CLI would use standard input: ``"read"`` (a prompt, to its end),
    ``"converse"`` (an SDK's streaming input, line by line) or None (not at all).
    """
    spec = cli_spec(cli)
    parsed = spec.parse(argv)
    if spec.converses(parsed):
        return "converse"
    return "read" if spec.reads_stdin(parsed) else None


def replay(
    cli: str,
    argv: list[str],
    env: Mapping[str, str],
    stdin: bytes | None,
    *,
    script_env: str,
    record_env: str,
) -> Replay:
    try:
        return _launch(cli_spec(cli), argv, env, stdin, script_env, record_env)
    except ScriptError as error:
        return _fake_error(cli, str(error))
    except Exception as error:  # noqa: BLE001 - a fake must never answer with a traceback
        return _fake_error(cli, f"internal error: {type(error).__name__}: {error}")


def _launch(  # noqa: PLR0917 - the private twin of `replay`, called once
    cli: Cli,
    argv: list[str],
    env: Mapping[str, str],
    stdin: bytes | None,
    script_env: str,
    record_env: str,
) -> Replay:
    parsed = cli.parse(argv)
    answer = cli.answer(parsed)
    if answer is not None:
        _record(env.get(record_env), cli, argv, parsed, None)
        return Replay((("stdout", answer.encode("utf-8")),), 0)
    stdin_text = None if stdin is None else stdin.decode("utf-8", "replace")
    prompt = cli.prompt(parsed, stdin_text)
    _record(env.get(record_env), cli, argv, parsed, prompt)
    script = load(cli.name, env, script_env, cli.events)
    out = Output()
    failure = cli.refusal(parsed, stdin_text, prompt)
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
        ids=Ids(script.seed, cli.name),
        out=out,
        json_shape=script.json_shape,
    )
    status = _render(cli.renderer(ctx), script, out)
    if script.exit_code is not None:
        status = script.exit_code
    return Replay(tuple(out.chunks), status, _signal_number(script.signal))


def _render(renderer: Renderer, script: Script, out: Output) -> int:
    for kind, value in script.steps:
        STEPS[kind](renderer, out, value)
        if out.hung:
            break  # nothing after a hang ever happens
    return renderer.finish()


def _event(renderer: Renderer, out: Output, value: object) -> None:
    assert isinstance(value, tuple)
    renderer.event(value[0], value[1])


def _line(renderer: Renderer, out: Output, value: object) -> None:
    out.stdout(line_bytes(dumps_py(value)))


def _raw(renderer: Renderer, out: Output, value: object) -> None:
    out.stdout(_text_bytes(str(value)))


def _raw_latin1(renderer: Renderer, out: Output, value: object) -> None:
    out.stdout(str(value).encode("latin-1"))


def _stderr(renderer: Renderer, out: Output, value: object) -> None:
    out.stderr(_text_bytes(str(value)))


def _sleep(renderer: Renderer, out: Output, value: object) -> None:
    assert isinstance(value, (int, float))
    out.sleep(float(value))


def _hang(renderer: Renderer, out: Output, value: object) -> None:
    out.hang()


# What each step kind does; `script` checks the same kinds' values before any of this runs.
STEPS: dict[str, Callable[[Renderer, Output, object], None]] = {
    "event": _event,
    "line": _line,
    "raw": _raw,
    "raw_latin1": _raw_latin1,
    "stderr": _stderr,
    "sleep": _sleep,
    "hang": _hang,
}


def _record(
    path: str | None, cli: Cli, argv: list[str], parsed: Parsed, prompt: str | None
) -> None:
    if not path:
        return
    record = {
        "cli": cli.name,
        "argv": argv,
        "output_format": parsed.output_format,
        "schema": cli.received_schema(parsed),
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
