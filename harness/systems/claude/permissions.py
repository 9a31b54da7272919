"""
Claude Code's permission rules for Bash, as far as the reference model follows them.

Without ``--allowedTools Bash``, Claude Code 2.1.328 still runs a command it
judges read-only (``echo``, ``ls``, ``cat`` of a file in the project, ...)
and refuses the others, each kind in its own words (probed on the binary,
docs/model-api.md): a command that writes files names the first path and
whether it is inside the project, an output redirection names its file, a
read outside the project names what the command would have done there, an
unknown command "requires approval", and in a command of several parts the
first part that needs approval is quoted.  With ``--allowedTools Bash``
every command runs; whether it is read-only still decides whether it runs
beside other calls.

The binary's rules are far larger (it parses the shell language and knows
hundreds of commands and options); this module keeps the commands and
wordings the probes pinned, and treats anything else as a command that
requires approval.
"""

from __future__ import annotations

import os
import shlex
from dataclasses import dataclass
from pathlib import Path

#: Commands that only read, with what the refusal says they would do outside the
#: project (None: they take no paths).
READERS: dict[str, str | None] = {
    "cat": "concatenate files from",
    "head": "read the beginning of files from",
    "ls": "list files in",
    "cd": "change directories to",
    "wc": None,
    "grep": None,
    "echo": None,
    "printf": None,
    "pwd": None,
    "true": None,
    "false": None,
    "seq": None,
    "date": None,
    "whoami": None,
    "which": None,
    "sleep": None,
    "tr": None,
}
#: Commands that create, change or remove the files they name, with what the refusal
#: of releases before 2.1.281 says they would do (B-27).  ``chmod`` and ``ln`` are not
#: among them: every probed release answers them "This command requires approval".
WRITERS = {
    "touch": "create or modify files in",
    "mkdir": "create directories in",
    "rm": "remove files from",
    "rmdir": "remove directories from",
    "cp": "copy files to/from",
    "mv": "move files to/from",
}
_SEPARATORS = frozenset({";", "&&", "||", "|", "&", "|&"})
_REDIRECTS = frozenset({">", ">>", ">|", "&>", "&>>"})
_INSIDE_TAIL = (
    "The path is inside the working directories for this session ('{cwd}'), and Claude "
    "Code asks before a shell command creates, changes or removes files there."
)
_OUTSIDE_TAIL = (
    "The path is outside the working directories for this session ('{cwd}'). Allowing runs "
    "the command as written."
)
APPROVAL = "This command requires approval"
#: How releases before 2.1.281 refuse a write anywhere, inside the project or not (B-27).
_BLOCKED = (
    "{what} was blocked. For security, Claude Code may only {verb} the allowed working "
    "directories for this session: '{cwd}'."
)
_DEVICES = Path("/dev")
SEVERAL = "This Bash command contains multiple operations. The following part requires approval: "


@dataclass(frozen=True)
class Verdict:
    """Whether a command runs: the refusal's words when it does not."""

    refusal: str | None
    #: Whether it only reads (it then runs beside other calls).
    read_only: bool
    #: The permission decision's reason, as the CLI records it.
    reason_type: str | None = None


def inside(path: Path, cwd: Path) -> bool:
    """Whether ``path`` (absolute) lies in the project folder ``cwd``."""
    resolved = Path(os.path.normpath(path))
    return resolved == cwd or cwd in resolved.parents


def _absolute(word: str, cwd: Path) -> Path:
    path = Path(word)
    return Path(os.path.normpath(path if path.is_absolute() else cwd / path))


def _segments(command: str) -> list[list[str]] | None:
    """The command's simple commands, as words; None when it is beyond this model."""
    parts: list[list[str]] = []
    for line in command.split("\n"):
        lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        try:
            words = list(lexer)
        except ValueError:
            return None  # an unbalanced quote
        if any(w in ("(", ")", "$", "`") or "`" in w or "$(" in w for w in words):
            return None  # subshells and substitutions
        current: list[str] = []
        for word in words:
            if word in _SEPARATORS:
                parts.append(current)
                current = []
            else:
                current.append(word)
        parts.append(current)
    return [part for part in parts if part]


def _refusal(words: list[str], cwd: Path, asks: bool) -> tuple[str, str] | None:
    """
    Why one simple command needs approval (its words, the reason type), if it
    does; ``asks``: a write is said to need approval (B-27), else to be blocked.
    """
    name, arguments, targets = words[0], [], []
    rest = iter(words[1:])
    for word in rest:
        if word in _REDIRECTS:
            targets.append(next(rest, ""))
        elif word in (">&", "<&", "<"):
            next(rest, "")
        else:
            arguments.append(word)
    paths = [w for w in arguments if not w.startswith("-") and not w.isdigit()]
    if name in WRITERS:
        if not paths:
            return APPROVAL, "other"
        path = _absolute(paths[0], cwd)
        if not asks:
            return _BLOCKED.format(what=f"{name} in '{path}'", verb=WRITERS[name], cwd=cwd), "other"
        tail = _INSIDE_TAIL if inside(path, cwd) else _OUTSIDE_TAIL
        return f"{name} in '{path}' needs approval. {tail.format(cwd=cwd)}", "other"
    if name not in READERS:
        return APPROVAL, "other"
    verb = READERS[name]
    for word in paths if verb is not None else ():
        path = _absolute(word, cwd)
        if _DEVICES in path.parents:
            return APPROVAL, "other"  # a device is not a file it refuses outright
        if not inside(path, cwd):
            return (
                f"{name} in '{path}' was blocked. For security, Claude Code may only {verb} the "
                f"allowed working directories for this session: '{cwd}'.",
                "other",
            )
    for target in targets:
        if target == "/dev/null":
            continue
        path = _absolute(target, cwd)
        if not asks:
            what = f"Output redirection to '{path}'"
            return _BLOCKED.format(what=what, verb="write to files in", cwd=cwd), "other"
        tail = _INSIDE_TAIL if inside(path, cwd) else _OUTSIDE_TAIL
        return f"Output redirection to '{path}' needs approval. {tail.format(cwd=cwd)}", "other"
    return None


def bash(command: str, cwd: Path, *, allowed: bool, asks: bool = True) -> Verdict:
    """
    What Claude Code's rules make of ``command`` run in ``cwd``; ``asks`` as the
    profile's ``asks_approval`` (B-27).
    """
    segments = _segments(command)
    refusals = (
        [(APPROVAL, "other")]
        if segments is None
        else [r for r in (_refusal(words, cwd, asks) for words in segments) if r is not None]
    )
    read_only = not refusals
    if allowed:
        return Verdict(None, read_only, "rule")
    if read_only:
        return Verdict(None, True, "subcommandResults")
    message, reason = refusals[0]
    if message == APPROVAL and segments is not None and len(segments) > 1:
        words = next(w for w in segments if _refusal(w, cwd, asks) == (APPROVAL, "other"))
        return Verdict(SEVERAL + " ".join(words), False, "subcommandResults")
    return Verdict(message, False, reason)
