"""
Holding a candidate script to the transcript: render it with the fake, compare the bytes.

A step is only ever chosen because the fake, replaying the script so far
plus that step exactly as the scenario will run it (the same CLI, argv,
environment and seed), prints the transcript's next records again.  Records
are compared byte for byte after the values a run makes up afresh (ids,
clocks, durations, machine paths: `VOLATILE`) are taken from the transcript,
so "matches" means "reproduces the capture, volatile fields aside".
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import providers_fake
from harness.catalogue import jsonvalue
from harness.catalogue.agents import AGENT_CLIS
from harness.record.transcript import Record, Transcript, frame
from providers_fake.cli.jsonout import dumps_js

#: Keys whose values a CLI makes up on every run, per CLI (what a replay may change).
_COMMON = frozenset(
    {
        "uuid",
        "session_id",
        "thread_id",
        "timestamp",
        "duration_ms",
        "duration_api_ms",
        "ttft_ms",
        "ttft_stream_ms",
        "time_to_request_ms",
        "first_content_frame_ms",
        "cwd",
        "memory_paths",
        "original_cwd",
        "messaging_socket_path",
    }
)
VOLATILE: Mapping[str, frozenset[str]] = {cli.name: _COMMON | cli.volatile for cli in AGENT_CLIS}

Step = str | dict[str, Any]


def _codebuddy_prompt(value: Any) -> bool:
    """The prompt item of CodeBuddy's json array: vendor reminders and the user's own prompt."""
    return (
        isinstance(value, dict) and value.get("type") == "message" and value.get("role") == "user"
    )


#: Records whose text a replay cannot reproduce, per CLI: only their keys must agree.
SHAPED_ONLY: Mapping[str, Callable[[Any], bool]] = {"codebuddy": _codebuddy_prompt}
#: Top-level keys a CLI prints on some runs and not on others, per CLI: CodeBuddy's
#: ``_requestId`` after the first turn (docs/codebuddy.md).  Held where both have it.
RACY_PRESENCE: Mapping[str, frozenset[str]] = {"codebuddy": frozenset({"_requestId"})}


class Stage:
    """Renders scripts for one CLI launch and compares what they print with the transcript."""

    def __init__(
        self,
        driver: str,
        argv: Sequence[str],
        env: Mapping[str, str],
        *,
        seed: str,
        transcript: Transcript,
        work: Path,
    ) -> None:
        self.driver = driver
        self.argv = list(argv)
        self.seed = seed
        self.transcript = transcript
        self.keys = VOLATILE[driver]
        self.script = work / "import-script.json"
        self.env = {**env, providers_fake.SCRIPT_ENV: str(self.script)}
        self.env.pop(providers_fake.RECORD_ENV, None)
        self.json_shape: str | None = None
        self.renders = 0

    def replay(self, steps: Sequence[Step], exit_code: int | None = None) -> providers_fake.Replay:
        document = {
            "cli": self.driver,
            "seed": self.seed,
            "steps": list(steps),
            "exit": exit_code,
            "json_shape": self.json_shape,
        }
        self.script.write_text(json.dumps(document), encoding="utf-8")
        self.renders += 1
        return providers_fake.replay(self.driver, self.argv, self.env)

    def rendered(self, steps: Sequence[Step]) -> tuple[Record, ...] | None:
        """The records `steps` print, framed like the transcript (None: framed otherwise)."""
        replay = self.replay(steps)
        if replay.exit_code == 2 and replay.stderr.startswith(b"fake-"):
            return None  # the fake refused the script: not a candidate
        printed = frame(replay.stdout.decode("utf-8", "surrogateescape"))
        if self.transcript.framing == "array":
            if not printed.records:
                return ()
            return printed.records if printed.framing == "array" else None
        return printed.records if printed.framing == self.transcript.framing else None

    def fits(self, steps: Sequence[Step], count: int) -> bool:
        """Whether `steps` print exactly the transcript's first `count` records."""
        mine = self.rendered(steps)
        if mine is None:
            return False
        if self.transcript.framing == "array" and count < len(self.transcript.records):
            # The history is printed with the result: probe it with a result after the steps.
            probe = self.rendered([*steps, "result"])
            if probe is None or not probe:
                return False
            mine = probe[:-1]
        theirs = self.transcript.records[:count]
        return len(mine) == len(theirs) and all(
            self.same(a, b) for a, b in zip(mine, theirs, strict=True)
        )

    def same(self, mine: Record, theirs: Record) -> bool:
        if mine.newline != theirs.newline:
            return False
        if mine.text == theirs.text:
            return True
        if not (mine.is_json and theirs.is_json):
            return False
        shaped = SHAPED_ONLY.get(self.driver)
        if shaped is not None and shaped(mine.value) and shaped(theirs.value):
            return list(mine.value) == list(theirs.value)
        grafted = graft(mine.value, theirs.value, self.keys)
        racy = RACY_PRESENCE.get(self.driver, frozenset())
        if isinstance(grafted, dict) and isinstance(theirs.value, dict):
            odd = {k for k in racy if (k in grafted) != (k in theirs.value)}
            if odd:
                kept = {k: v for k, v in grafted.items() if k not in odd}
                return dumps_js(kept) == dumps_js(
                    {k: v for k, v in theirs.value.items() if k not in odd}
                )
        expected = theirs.text if self.transcript.framing == "lines" else dumps_js(theirs.value)
        return dumps_js(grafted) == expected

    def last(self, steps: Sequence[Step]) -> Any:
        """The value of the last record `steps` print (None if none)."""
        mine = self.rendered(steps)
        return mine[-1].value if mine else None


def graft(mine: Any, theirs: Any, keys: frozenset[str]) -> Any:
    """
    `mine` with every volatile value taken from `theirs`, where both have it with the
    same JSON type (and an object the same keys): what a replay may legitimately change.
    """
    if isinstance(mine, dict) and isinstance(theirs, dict):
        synthetic = theirs.get("model") == "<synthetic>"  # its message id is random too
        out: dict[str, Any] = {}
        for key, value in mine.items():
            if key not in theirs:
                out[key] = value
            elif (key in keys or (synthetic and key == "id")) and _same_shape(value, theirs[key]):
                out[key] = theirs[key]
            else:
                out[key] = graft(value, theirs[key], keys)
        return out
    if isinstance(mine, list) and isinstance(theirs, list) and len(mine) == len(theirs):
        return [graft(a, b, keys) for a, b in zip(mine, theirs, strict=True)]
    return mine


def _same_shape(a: Any, b: Any) -> bool:
    if isinstance(a, dict) and isinstance(b, dict):
        return list(a) == list(b)
    return jsonvalue.kind(a) == jsonvalue.kind(b)
