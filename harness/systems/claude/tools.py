"""
Claude Code's other tools in the reference model: what a call of one gets back.

A model may call tools other than StructuredOutput; Claude Code 2.1.328 then
answers each call with a tool_result, and the run goes on (probed on the
binary, docs/model-api.md):

- a name it does not have: ``<tool_use_error>Error: No such tool available: X``;
- an input its schema refuses: ``<tool_use_error>InputValidationError: ...``;
- a call its permission rules refuse: the rule's own words, a
  ``system/permission_denied`` line and an entry in the result's
  ``permission_denials`` (`permissions`);
- a Bash command it runs: the output as the command wrote it (stdout and
  stderr interleaved), trimmed, ``Exit code N`` first when it failed, the
  working directory kept between calls when a ``cd`` stays inside the
  project (else reset, with a note), and an output over 30,000 characters
  saved to a file with a 2 KB preview instead.

Commands run only through `harness.systems.sandbox` (and only when the run
opted in), in the run's throwaway folder, with the environment the CLI gives
them (`Bench.tool_env`).  Not modelled, and answered as such: the other
built-in tools (Task, WebFetch, ...), reading a file that exists, and a
command's move to the background at its timeout (the reference stops it).
"""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path
from typing import Any

from harness.catalogue import jsonvalue
from harness.systems import sandbox
from harness.systems.claude import permissions, words
from harness.systems.claude.profile import ClaudeProfile
from providers_fake.cli.claude import data

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

    from providers_fake.cli.ids import Ids

#: Output longer than this many characters is saved to a file and previewed.
MAX_OUTPUT = 30_000
#: How much of a saved output the preview shows (then cut back to a whole line).
PREVIEW = 2_000
#: How long the reference lets a command run (the binary moves it to the background
#: after BASH_DEFAULT_TIMEOUT_MS, two minutes by default; that is not modelled).
BASH_TIMEOUT = 10.0
_LETTERS = "0123456789abcdefghijklmnopqrstuvwxyz"
UNREAD = "File has not been read yet. Read it first before writing to it."

#: Each built-in tool's input schema as far as the model checks it: the fields in the
#: schema's order, each with its JSON type and whether it is required.
_INPUTS: dict[str, tuple[tuple[str, str, bool], ...]] = {
    "Bash": (
        ("command", "string", True),
        ("timeout", "number", False),
        ("description", "string", False),
        ("run_in_background", "boolean", False),
    ),
    "Read": (
        ("file_path", "string", True),
        ("offset", "number", False),
        ("limit", "number", False),
    ),
    "Write": (("file_path", "string", True), ("content", "string", True)),
    "Edit": (
        ("file_path", "string", True),
        ("old_string", "string", True),
        ("new_string", "string", True),
        ("replace_all", "boolean", False),
    ),
}


@dataclass(frozen=True)
class Call:
    """One tool_use block of an answer."""

    id: str
    name: str
    input: object


@dataclass(frozen=True)
class Result:
    """What the CLI answers a call with, and how it shows it."""

    #: The tool_result block sent to the model (its key order is the CLI's).
    block: dict[str, Any]
    #: The stream-json user line's ``tool_use_result``.
    line: object
    #: The user line's ``tool_result_meta`` (None: the line has no such key).
    meta: list[dict[str, Any]] | None = None
    #: A refusal by the permission rules: its message (for the system line).
    denied: str | None = None
    #: The call as ``permission_denials`` lists it, when refused.
    denial: dict[str, Any] | None = None


@dataclass(frozen=True)
class Pending:
    """
    A call whose result comes only after the answer has streamed: a command to
    run, or a file tool whose checks wait on the file system (``known``).
    """

    call: Call
    command: str
    #: Read-only calls run beside other calls; any other waits for them and holds them up.
    concurrent: bool
    reason_type: str
    known: Result | None = None


#: What the CLI says of a tool disabled for the session (``--tools``, and some by default).
DISABLED = "is disabled for this session, in subagents as well as here."
#: What the CLI adds to "No such tool available: X" for some names (probed).
_HINTS = {
    "Glob": "Glob is not available in this session \u2014 find files with `find` via the Bash "
    "tool instead.",
    "Grep": "Grep is not available in this session \u2014 search file contents with `grep` via "
    "the Bash tool instead.",
    "TodoWrite": f"TodoWrite {DISABLED}",
    "ExitPlanMode": f"ExitPlanMode {DISABLED}",
}


def no_such_tool(name: str, *, case_hint: bool = True) -> str:
    """
    The CLI's words for a call of a tool it does not have; ``case_hint``: a
    name that is a tool's in another case says so (from 2.1.282, B-28).
    """
    text = f"Error: No such tool available: {name}"
    same = [tool for tool in data.TOOLS if tool.lower() == name.lower()]
    if name in _HINTS:
        return f"{text}. {_HINTS[name]}"
    if same and case_hint:
        return f"{text}. Tool names are case-sensitive: call {same[0]} instead."
    return text


def input_problems(name: str, value: object) -> list[dict[str, Any]]:
    """The schema's issues with a call's input, as the CLI's validator lists them."""
    given = value if isinstance(value, dict) else {}
    fields = _INPUTS.get(name, ())
    issues: list[dict[str, Any]] = []
    for key, kind, required in fields:
        if key not in given and not required:
            continue
        found = jsonvalue.kind(given[key]) if key in given else "undefined"
        if found != kind:
            message = f"Invalid input: expected {kind}, received {found}"
            issues.append(
                {"expected": kind, "code": "invalid_type", "path": [key], "message": message}
            )
    known = {key for key, _, _ in fields}
    unknown = [key for key in given if key not in known]
    if unknown:  # the tools' schemas take no other keys
        said = ", ".join(f'"{key}"' for key in unknown)
        plural = "key" if len(unknown) == 1 else "keys"
        issues.append(
            {
                "code": "unrecognized_keys",
                "keys": unknown,
                "path": [],
                "message": f"Unrecognized {plural}: {said}",
            }
        )
    return issues


def with_defaults(name: str, value: object) -> object:
    """A valid input as the CLI keeps it: its schema's defaults first (Edit's replace_all)."""
    if name == "Edit" and isinstance(value, dict) and not input_problems(name, value):
        return {"replace_all": False, **value}
    return value


def _input_error(
    name: str, issues: list[dict[str, Any]], missing_as_unknown: bool = False
) -> tuple[str, str]:
    """
    The tool_result and line of an input its schema refuses; ``missing_as_unknown``:
    a missing parameter is worded as one of type `unknown` (2.1.260-2.1.284, B-32).
    """
    said = []
    for issue in issues:
        if issue["code"] == "unrecognized_keys":
            said += [f"An unexpected parameter `{key}` was provided" for key in issue["keys"]]
            continue
        key, received = issue["path"][0], issue["message"].rsplit(" ", 1)[-1]
        if received == "undefined" and missing_as_unknown:
            received = "unknown"
        if received == "undefined":
            said.append(f"The required parameter `{key}` is missing")
        else:
            said.append(
                f"The parameter `{key}` type is expected as `{issue['expected']}` "
                f"but provided as `{received}`"
            )
    plural = "issue" if len(said) == 1 else "issues"
    content = f"InputValidationError: {name} failed due to the following {plural}:\n"
    content += "\n".join(said)
    line = "InputValidationError: " + json.dumps(issues, indent=2, ensure_ascii=False)
    return f"<tool_use_error>{content}</tool_use_error>", line


def _error(call: Call, content: str, line: object, meta: list[dict[str, Any]] | None) -> Result:
    block = {"type": "tool_result", "content": content, "is_error": True, "tool_use_id": call.id}
    return Result(block, line, meta)


def _accepted_meta(call: Call, reason: str) -> list[dict[str, Any]]:
    decision = {"decision": "accept", "source": "config", "reason_type": reason}
    return [{"id": call.id, "permission_decision": decision}]


@dataclass
class Bench:
    """The CLI's tools for one run: where they work, what they may do, what they remember."""

    #: The project folder (the CLI's working directory).
    cwd: Path
    #: The run's throwaway folder, the only place commands may write (cwd, HOME, TMPDIR).
    root: Path
    env: Mapping[str, str]
    allowed: tuple[str, ...]
    session_id: str
    ids: Ids
    #: The release modelled: its words and notes where they differ (B-26 to B-28).
    profile: ClaudeProfile = field(default_factory=ClaudeProfile.of)
    #: Where the shell is: a ``cd`` inside the project carries over to the next call.
    shell_cwd: Path | None = None
    #: Where the shell moved to and from since the loop last asked (`moved`).
    moves: list[tuple[Path, Path]] = field(default_factory=list)
    #: ``--tools``: the built-in tools offered (None: all of them).
    offered: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        self.shell_cwd = self.cwd

    # -- deciding --------------------------------------------------------------------

    def start(self, call: Call) -> Result | Pending:
        """A call's result when it is known at once, else the command it will run."""
        if call.name not in data.TOOLS:
            text = no_such_tool(call.name, case_hint=self.profile.case_hint)
            return _error(call, f"<tool_use_error>{text}</tool_use_error>", text, None)
        if self.offered is not None and call.name not in self.offered:
            # A built-in tool --tools left out (probed on Bash with --tools "").
            text = f"Error: No such tool available: {call.name}. {call.name} {DISABLED}"
            return _error(call, f"<tool_use_error>{text}</tool_use_error>", text, None)
        unread = words.unparsed_error(call.name, json.dumps(call.input))
        if unread is not None:  # an input the CLI could not read as JSON (B-46)
            line = unread.removeprefix("<tool_use_error>").removesuffix("</tool_use_error>")
            return _error(call, unread, f"Error: {line}", None)
        issues = input_problems(call.name, call.input)
        if issues:
            content, line = _input_error(call.name, issues, self.profile.missing_as_unknown)
            return _error(call, content, line, None)
        given = call.input if isinstance(call.input, dict) else {}
        if call.name == "Bash":
            return self._bash(call, str(given["command"]))
        if call.name in ("Read", "Write", "Edit") and call.name not in self.allowed:
            # The checks wait on the file system: the result comes after the answer streamed.
            return Pending(call, "", call.name == "Read", "rule", self._file(call, given))
        text = f"reference model: the {call.name} tool is not modelled"
        return _error(call, f"<tool_use_error>{text}</tool_use_error>", f"Error: {text}", None)

    def _bash(self, call: Call, command: str) -> Result | Pending:
        asks = self.profile.asks_approval
        verdict = permissions.bash(command, self.cwd, allowed="Bash" in self.allowed, asks=asks)
        if verdict.refusal is not None:
            return self._denied(call, call.input, verdict.refusal, verdict.reason_type)
        return Pending(call, command, verdict.read_only, verdict.reason_type or "rule")

    def _file(self, call: Call, given: dict[str, Any]) -> Result:
        path = Path(str(given["file_path"]))
        path = path if path.is_absolute() else self.cwd / path
        inside = permissions.inside(path, self.cwd)
        missing = f"File does not exist. Note: your current working directory is {self.cwd}."
        if call.name == "Read" and inside and not path.exists():
            return _error(call, missing, f"Error: {missing}", None)
        if call.name == "Edit":  # checked before any permission: the file, then a Read of it
            text = missing if not path.exists() else UNREAD
            return _error(call, f"<tool_use_error>{text}</tool_use_error>", text, None)
        if call.name == "Read" and inside:
            text = "reference model: reading a file that exists is not modelled"
            return _error(call, f"<tool_use_error>{text}</tool_use_error>", f"Error: {text}", None)
        verb = "read from" if call.name == "Read" else "write to"
        message = f"Claude requested permissions to {verb} {path}, but you haven't granted it yet."
        shown = {**given, "file_path": str(path)}
        return self._denied(call, shown, message, "workingDir")

    def _denied(self, call: Call, shown: object, message: str, reason: str | None) -> Result:
        meta = [
            {
                "id": call.id,
                "non_execution_kind": "user-rejected",
                "permission_decision": {"decision": "reject", "source": "config"},
            }
        ]
        block = {
            "type": "tool_result",
            "content": message,
            "is_error": True,
            "tool_use_id": call.id,
        }
        denial = {"tool_name": call.name, "tool_use_id": call.id, "tool_input": shown}
        del reason  # the system line's reason fields vary by rule; not modelled
        return Result(block, f"Error: {message}", meta, message, denial)

    def moved(self) -> list[str]:
        """
        The CLI's notes to the model for each move of the shell's folder, then
        forgets them; releases before 2.1.268 move it without a word (B-26).
        """
        notes = [
            f"# Environment update\n - Primary working directory: {new} (was {old})"
            for old, new in self.moves
        ]
        self.moves.clear()
        return notes if self.profile.cwd_notes else []

    # -- running -----------------------------------------------------------------------

    def tool_env(self) -> dict[str, str]:
        """
        What a command sees: the CLI's own environment less its OAuth token and
        telemetry settings, with what the CLI sets for its commands (probed).
        """
        env = {
            name: value
            for name, value in self.env.items()
            if name != "CLAUDE_CODE_OAUTH_TOKEN" and not name.startswith("OTEL_")
        }
        env.setdefault("CLAUDE_CODE_ENTRYPOINT", "sdk-cli")
        env.update(
            {
                "AI_AGENT": self.profile.agent(),
                "CLAUDECODE": "1",
                "CLAUDE_CODE_CHILD_SESSION": "1",
                "CLAUDE_CODE_SESSION_ATTENDED": "0",
                "CLAUDE_CODE_SESSION_ID": self.session_id,
                "CLAUDE_EFFORT": "medium",
                "COREPACK_ENABLE_AUTO_PIN": "0",
                "GIT_EDITOR": "true",
                "NoDefaultCurrentDirectoryInExePath": "1",
                "PWD": str(self.shell_cwd),
                "SHELL": "/bin/bash",
            }
        )
        return env

    def run(self, pending: Pending) -> Result:
        """Run the command (confined) and word its result as the CLI does."""
        if pending.known is not None:
            return pending.known
        call, here = pending.call, self.shell_cwd or self.cwd
        tmp = Path(self.env.get("TMPDIR") or self.root)
        marker = tmp / f"claude-{self.ids.hex(4)}-cwd"
        quoted = shlex.quote(pending.command)
        script = (
            f"cd -- {shlex.quote(str(here))} 2>/dev/null; "
            f"eval {quoted} < /dev/null && pwd -P >| {shlex.quote(str(marker))}"
        )
        # The CLI's shell names itself /bin/bash in its messages ("/bin/bash: line 1: ...").
        wrapped = f"exec -a /bin/bash /bin/bash -c {shlex.quote(script)}"
        done = sandbox.run(wrapped, self.root, self.tool_env(), BASH_TIMEOUT)
        if done.timed_out:
            text = f"reference model: the command ran past {BASH_TIMEOUT:g}s and was stopped"
            return _error(call, text, f"Error: {text}", _accepted_meta(call, pending.reason_type))
        note = self._moved(marker)
        output = done.output.decode(errors="replace")
        code = done.exit_code if done.exit_code is not None and done.exit_code >= 0 else 128
        if len(output) > self._limit():
            return self._saved(call, output, done.size, pending.reason_type)
        shown = _trimmed(output)
        meta = _accepted_meta(call, pending.reason_type)
        if code != 0:
            content = f"Exit code {code}" + (f"\n{shown}" if shown else "") + note
            return _error(call, content, f"Error: {content}", meta)
        content = (shown or "(Bash completed with no output)") + note
        block: dict[str, Any] = {"tool_use_id": call.id, "type": "tool_result"}
        block.update(content=content, is_error=False)
        line = {
            "stdout": shown,
            "stderr": note,
            "interrupted": False,
            "isImage": False,
            "noOutputExpected": False,
        }
        return Result(block, line, meta)

    def _moved(self, marker: Path) -> str:
        """Where the shell ended: kept inside the project, else reset with a note."""
        try:
            ended = Path(marker.read_text().strip())
            marker.unlink()
        except OSError:
            return ""  # the command failed: the CLI keeps the shell where it was
        if permissions.inside(ended, self.cwd):
            if ended != self.shell_cwd:
                self.moves.append((self.shell_cwd or self.cwd, ended))
            self.shell_cwd = ended
            return ""
        self.shell_cwd = self.cwd
        return f"\nShell cwd was reset to {self.cwd}"

    def _limit(self) -> int:
        raw = self.env.get("BASH_MAX_OUTPUT_LENGTH", "").strip()
        return min(int(raw), MAX_OUTPUT) if raw.isdigit() and int(raw) > 0 else MAX_OUTPUT

    def _saved(self, call: Call, output: str, size: int, reason: str) -> Result:
        """An output too long to send: saved under HOME, the model gets a preview."""
        home = Path(self.env.get("HOME") or self.root)
        slug = "".join(c if c.isalnum() else "-" for c in str(self.cwd))
        name = "b" + "".join(_LETTERS[self.ids.below(len(_LETTERS))] for _ in range(8))
        path = home / ".claude" / "projects" / slug / self.session_id / "tool-results"
        path = path / f"{name}.txt"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(output)
        head = output[:PREVIEW]
        head = head[: head.rfind("\n")] if "\n" in head else head
        content = (
            f"<persisted-output>\nOutput too large ({_kilobytes(size)}). Full output saved to: "
            f"{path}\n\nPreview (first 2KB):\n{head}\n...\n</persisted-output>"
        )
        block: dict[str, Any] = {"tool_use_id": call.id, "type": "tool_result"}
        block.update(content=content, is_error=False)
        line = {
            "stdout": output[: self._limit()],
            "stderr": "",
            "interrupted": False,
            "isImage": False,
            "noOutputExpected": False,
            "persistedOutputPath": str(path),
            "persistedOutputSize": size,
        }
        return Result(block, line, _accepted_meta(call, reason))


def _trimmed(output: str) -> str:
    """Leading blank lines and trailing whitespace go, as the CLI trims a command's output."""
    lines = output.split("\n")
    while lines and not lines[0].strip():
        lines.pop(0)
    return "\n".join(lines).rstrip()


def _kilobytes(size: int) -> str:
    # JavaScript's toFixed(1) rounds a tie up; the exact quotient decides, as there.
    shown = str((Decimal(size) / 1024).quantize(Decimal("0.1"), rounding=ROUND_HALF_UP))
    return shown.removesuffix(".0") + "KB"
