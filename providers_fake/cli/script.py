"""
Reading and checking the script a fake replays.

The harness writes the script; a mistake in it is a harness bug, not CLI
behaviour, so every problem is reported as one ``fake-<cli>: ...`` line and
exit status 2 before anything is rendered.  Checking the whole script up
front also means a bad step late in the script cannot leave half an output.
"""

from __future__ import annotations

import json
import math

from providers_fake.bounded import read_file
from providers_fake.cli.types import ScriptError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

SIGNALS = ("SIGKILL", "SIGTERM", "SIGINT", "SIGSEGV", "SIGABRT", "SIGHUP", "SIGQUIT", "SIGPIPE")


#: The longest pause a script may ask for; longer is what ``hang`` says.
MAX_SLEEP = 3600.0


def _is_seconds(value: object) -> bool:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    return math.isfinite(value) and 0 <= value <= MAX_SLEEP


# The step kinds besides ``event`` (checked against the CLI's event names), each with
# the test its value must pass and what to say when it does not.  `_replay.STEPS`
# says what each kind does.
_VALUE_CHECKS: dict[str, tuple[Callable[[object], bool], str]] = {
    "line": (lambda value: isinstance(value, dict), "must be a JSON object"),
    "raw": (lambda value: isinstance(value, str), "must be a string"),
    # Text written as Latin-1: the one way a script prints bytes that are not UTF-8.
    "raw_latin1": (
        lambda value: isinstance(value, str) and all(ord(c) < 256 for c in value),
        "must be a string of Latin-1 characters",
    ),
    "stderr": (lambda value: isinstance(value, str), "must be a string"),
    "sleep": (_is_seconds, f"must be a number of seconds from 0 to {MAX_SLEEP:g}"),
    "hang": (lambda value: value is True, "must be true"),
}
STEP_KINDS = ("event", *_VALUE_CHECKS)


class Script:
    """A checked script: steps are ``(kind, value)`` pairs, events ``("event", (name, arg))``."""

    def __init__(
        self,
        seed: str,
        steps: list[tuple[str, object]],
        exit_code: int | None,
        signal: str | None,
        json_shape: str | None,
    ) -> None:
        self.seed = seed
        self.steps = steps
        self.exit_code = exit_code
        self.signal = signal
        self.json_shape = json_shape


def load(cli: str, env: Mapping[str, str], script_env: str, events: frozenset[str]) -> Script:
    path = env.get(script_env)
    if not path:
        raise ScriptError(f"{script_env} is not set; it must name the JSON script to replay")
    try:
        data = read_file(path)
    except OSError as error:
        raise ScriptError(f"cannot read script {path}: {error.strerror or error}") from None
    try:
        document = json.loads(data)
    except (ValueError, RecursionError) as error:
        raise ScriptError(f"script {path} is not valid JSON: {error}") from None
    return check(cli, document, events)


def check(cli: str, document: object, events: frozenset[str]) -> Script:
    if not isinstance(document, dict):
        raise ScriptError("the script must be a JSON object")
    declared = document.get("cli", cli)
    if declared != cli:
        raise ScriptError(f"the script is for {declared!r}, not {cli!r}")
    seed = document.get("seed", "")
    if not isinstance(seed, str):
        raise ScriptError("script 'seed' must be a string")
    raw_steps = document.get("steps", [])
    if not isinstance(raw_steps, list):
        raise ScriptError("script 'steps' must be a list")
    steps = [_step(cli, index, step, events) for index, step in enumerate(raw_steps)]
    exit_code = document.get("exit")
    if exit_code is not None and (not isinstance(exit_code, int) or isinstance(exit_code, bool)):
        raise ScriptError("script 'exit' must be an integer or null")
    signal = document.get("signal")
    if signal is not None and signal not in SIGNALS:
        raise ScriptError(f"script 'signal' must be one of {', '.join(SIGNALS)} or null")
    shape = document.get("json_shape")
    if shape not in (None, "array", "object"):
        raise ScriptError('script \'json_shape\' must be "array", "object" or null')
    return Script(seed, steps, exit_code, signal, shape)


def _step(cli: str, index: int, step: object, events: frozenset[str]) -> tuple[str, object]:
    where = f"step {index}"
    if isinstance(step, str):
        step = {"event": step}  # the YAML shorthand: a bare event name
    if not isinstance(step, dict):
        raise ScriptError(f"{where} must be an object")
    if len(step) == 1:
        [(key, arg)] = step.items()
        if key in events and key not in STEP_KINDS:
            step = {"event": key, "arg": arg}  # the YAML shorthand: {event_name: arg}
    kinds = [key for key in step if key in STEP_KINDS]
    if len(kinds) != 1:
        raise ScriptError(f"{where} must have exactly one of {', '.join(STEP_KINDS)}")
    kind = kinds[0]
    extra = [key for key in step if key != kind and not (kind == "event" and key == "arg")]
    if extra:
        raise ScriptError(f"{where} has unexpected keys: {', '.join(map(str, extra))}")
    value = step[kind]
    if kind == "event":  # the one kind with an argument, and a name only the CLI knows
        if value not in events:
            names = ", ".join(sorted(events))
            raise ScriptError(f"{where}: unknown {cli} event {value!r} (known: {names})")
        return kind, (value, step.get("arg"))
    valid, problem = _VALUE_CHECKS[kind]
    if not valid(value):
        raise ScriptError(f"{where}: {kind!r} {problem}")
    return kind, value
