"""
What ``codex exec`` makes of a turn beside its JSON events: the text it prints
without ``--json``, and the ``-o``/``--output-last-message`` file.

The reference model (`harness.systems.codex`) decides a turn and prints its
JSON events; codex prints the same turn as text from the same events, so the
text form is derived from them here.  Codex 0.169.0, probed against the fake
API:

- **Without --json** stdout holds the last agent message and a line end when
  the turn completed, nothing when it failed; stderr holds a banner (the
  version, the working directory, the model, the provider, the approval and
  sandbox modes, the reasoning settings, the session id), ``user`` and the
  prompt, then each event: a warning item as ``warning: TEXT``, a reasoning
  summary as its text, each agent message as ``codex`` and its text, an
  error and the failed turn each as ``ERROR: TEXT``, a completed turn as
  ``tokens used`` and the session's input and output tokens (a failed turn
  too, once an answer of the run completed; 0 after a context window
  outgrown), and codex's log lines where they happened.
- **-o FILE** is written when the run ends: the last agent message without a
  line end, or nothing (an empty file) when the turn failed; no file when
  codex stopped before its turn (a schema file it cannot read).

A reasoning item's summary is printed as it is, with no heading (probed);
a call to a tool codex does not offer prints nothing but its log line.  Not
modelled: the text of calls to codex's own tools.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from harness.catalogue import jsonvalue
from harness.catalogue.lines import json_lines

if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path

#: The provider the harness configures codex with (`providers_fake.api.realcli.run_codex`).
PROVIDER = "fake"
#: The settings codex's banner shows for that provider's unknown model (probed).
_SETTINGS = (
    ("approval", "never"),
    ("sandbox", "read-only"),
    ("reasoning effort", "none"),
    ("reasoning summaries", "none"),
)
_RULE = "--------"


def _events(stdout: bytes) -> list[dict[str, object]]:
    out: list[dict[str, object]] = []
    for raw in json_lines(stdout.decode(errors="replace")):
        try:
            value = jsonvalue.loads(raw)
        except ValueError:
            continue
        if isinstance(value, dict):
            out.append(value)
    return out


def _text(value: object, key: str) -> str:
    found = value.get(key) if isinstance(value, dict) else None
    return found if isinstance(found, str) else ""


def last_message(stdout: bytes) -> str | None:
    """The last agent message of a turn that completed, from its JSON events."""
    events = _events(stdout)
    if not events or events[-1].get("type") != "turn.completed":
        return None
    messages = [
        _text(event.get("item"), "text")
        for event in events
        if event.get("type") == "item.completed"
        and _text(event.get("item"), "type") == "agent_message"
    ]
    return messages[-1] if messages else None


def _started(events: list[dict[str, object]]) -> bool:
    return any(event.get("type") == "turn.started" for event in events)


def as_text(
    stdout: bytes,
    *,
    prompt: str,
    model: str,
    cwd: Path,
    version: str,
    logged: Sequence[tuple[int, str]] = (),
    spent: int | None = None,
) -> tuple[bytes, str]:
    """
    The stdout and stderr codex prints without ``--json`` for the turn ``stdout``
    shows; ``logged`` holds its log lines, each after the number of JSON lines
    printed before it, and each goes between the text of those events and the
    next (probed: a refused call's log line after the message before it).
    ``spent`` is the session's token count once an answer of the run completed:
    a failed turn ends with it too (probed: a refused call, then an HTTP error).
    """
    events = _events(stdout)
    if not _started(events):  # codex stopped before its turn: only what it said
        return b"", "".join(text for _, text in logged)
    session = next((_text(e, "thread_id") for e in events if e.get("type") == "thread.started"), "")
    head = [f"OpenAI Codex v{version}", _RULE, f"workdir: {cwd}", f"model: {model}"]
    head += [f"provider: {PROVIDER}", *(f"{name}: {value}" for name, value in _SETTINGS)]
    lines = [*head, f"session id: {session}", _RULE, "user", prompt]
    waiting = sorted(logged, key=lambda pair: pair[0])
    for number, event in enumerate(events):
        while waiting and waiting[0][0] <= number:
            lines.append(waiting.pop(0)[1].removesuffix("\n"))
        kind, item = event.get("type"), event.get("item")
        if kind == "item.completed" and _text(item, "type") == "error":
            lines.append(f"warning: {_text(item, 'message')}")
        elif kind == "item.completed" and _text(item, "type") == "agent_message":
            lines += ["codex", _text(item, "text")]
        elif (
            kind == "item.completed" and _text(item, "type") == "reasoning" and _text(item, "text")
        ):
            lines.append(_text(item, "text"))
        elif kind == "error":
            lines.append(f"ERROR: {_text(event, 'message')}")
        elif kind == "turn.failed":
            lines.append(f"ERROR: {_text(event.get('error'), 'message')}")
            lines += [] if spent is None else ["tokens used", str(spent)]
        elif kind == "turn.completed":
            usage = event.get("usage")
            counts = usage if isinstance(usage, dict) else {}
            spent = sum(v for k, v in counts.items() if k in ("input_tokens", "output_tokens"))
            lines += ["tokens used", str(spent)]
    lines += [text.removesuffix("\n") for _, text in waiting]
    last = last_message(stdout)
    return (b"" if last is None else (last + "\n").encode()), "".join(f"{x}\n" for x in lines)


def write_last_message(stdout: bytes, path: Path) -> None:
    """
    ``-o FILE``: the last agent message, or an empty file when the turn failed;
    no file when codex stopped before its turn started (a schema file it cannot
    read: probed).
    """
    if _started(_events(stdout)):
        path.write_text(last_message(stdout) or "")
