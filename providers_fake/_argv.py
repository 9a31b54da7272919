"""
Command-line parsing that fails the way each real CLI fails.

Claude Code, CodeBuddy and Cursor parse their arguments with commander.js;
Codex uses clap.  The two libraries disagree on details adaptors trip over:
commander's variadic options (``--allowedTools a b``) swallow the words that
follow them, commander takes the next word as a value even if it starts with
a dash, clap does not, and each library words its errors differently and
exits with a different status (1 versus 2).  The tables below declare only
what the fakes need; anything else is reported as the real CLI reports an
unknown option.
"""

from __future__ import annotations

# Option kinds: a switch, a required value, an optional value, a value that may
# repeat, and commander's variadic `<values...>`.
FLAG, VALUE, OPTIONAL, MULTI, VARIADIC = "flag", "value", "optional", "multi", "variadic"

TYPE_CHECKING = False
if TYPE_CHECKING:
    # flags (all spellings), key, kind, placeholder, allowed choices
    Option = tuple[tuple[str, ...], str, str, str, tuple[str, ...]]

_FORMATS = ("text", "json", "stream-json")

_CLAUDE: list[Option] = [
    (("-p", "--print"), "print", FLAG, "", ()),
    (("--output-format",), "output_format", VALUE, "format", _FORMATS),
    (("--input-format",), "input_format", VALUE, "format", ("text", "stream-json")),
    (("--verbose",), "verbose", FLAG, "", ()),
    (("--json-schema",), "json_schema", VALUE, "schema", ()),
    (("--model",), "model", VALUE, "model", ()),
    (("--fallback-model",), "fallback_model", VALUE, "model", ()),
    (("--max-turns",), "max_turns", VALUE, "turns", ()),
    (("--max-budget-usd",), "max_budget_usd", VALUE, "amount", ()),
    (("--permission-mode",), "permission_mode", VALUE, "mode", ()),
    (("--allowedTools", "--allowed-tools"), "allowed_tools", VARIADIC, "tools...", ()),
    (("--disallowedTools", "--disallowed-tools"), "disallowed_tools", VARIADIC, "tools...", ()),
    (("--append-system-prompt",), "append_system_prompt", VALUE, "prompt", ()),
    (("--system-prompt",), "system_prompt", VALUE, "prompt", ()),
    (("--session-id",), "session_id", VALUE, "uuid", ()),
    (("-r", "--resume"), "resume", OPTIONAL, "value", ()),
    (("-c", "--continue"), "continue", FLAG, "", ()),
    (("--dangerously-skip-permissions",), "skip_permissions", FLAG, "", ()),
    (("--include-partial-messages",), "partial", FLAG, "", ()),
    (("--settings",), "settings", VALUE, "file-or-json", ()),
    (("--setting-sources",), "setting_sources", VALUE, "sources", ()),
    (("--mcp-config",), "mcp_config", VARIADIC, "configs...", ()),
    (("--strict-mcp-config",), "strict_mcp_config", FLAG, "", ()),
    (("--add-dir",), "add_dir", VARIADIC, "directories...", ()),
    (("--permission-prompt-tool",), "permission_prompt_tool", VALUE, "tool", ()),
    (("--max-thinking-tokens",), "max_thinking_tokens", VALUE, "tokens", ()),
    (("--fork-session",), "fork_session", FLAG, "", ()),
    (("--agents",), "agents", VALUE, "json", ()),
    (("--effort",), "effort", VALUE, "level", ()),
]

_CODEBUDDY: list[Option] = [
    *_CLAUDE,
    (("-y",), "skip_permissions", FLAG, "", ()),
    (("--system-prompt-file",), "system_prompt_file", VALUE, "file", ()),
]

_CURSOR: list[Option] = [
    (("-p", "--print"), "print", FLAG, "", ()),
    (("--output-format",), "output_format", VALUE, "format", _FORMATS),
    (("-m", "--model"), "model", VALUE, "model", ()),
    (("-f", "--force"), "force", FLAG, "", ()),
    (("--yolo",), "force", FLAG, "", ()),
    (("--api-key",), "api_key", VALUE, "key", ()),
    (("--resume",), "resume", OPTIONAL, "chatId", ()),
    (("--trust",), "trust", FLAG, "", ()),
    (("--workspace",), "workspace", VALUE, "path", ()),
    (("--stream-partial-output",), "partial", FLAG, "", ()),
    (("--sandbox",), "sandbox", VALUE, "mode", ()),
    (("--approve-mcps",), "approve_mcps", FLAG, "", ()),
    (("--mode",), "mode", VALUE, "mode", ()),
]

_CODEX: list[Option] = [
    (("--json", "--experimental-json"), "json", FLAG, "", ()),
    (("--skip-git-repo-check",), "skip_git_repo_check", FLAG, "", ()),
    (("--output-schema",), "output_schema", VALUE, "FILE", ()),
    (("-m", "--model"), "model", VALUE, "MODEL", ()),
    (("-c", "--config"), "config", MULTI, "key=value", ()),
    (("-o", "--output-last-message"), "output_last_message", VALUE, "FILE", ()),
    (
        ("-s", "--sandbox"),
        "sandbox",
        VALUE,
        "SANDBOX_MODE",
        ("read-only", "workspace-write", "danger-full-access"),
    ),
    (("--full-auto",), "full_auto", FLAG, "", ()),
    (("--dangerously-bypass-approvals-and-sandbox",), "bypass", FLAG, "", ()),
    (("-C", "--cd"), "cd", VALUE, "DIR", ()),
    (("--color",), "color", VALUE, "COLOR", ("always", "never", "auto")),
    (("-p", "--profile"), "profile", VALUE, "CONFIG_PROFILE", ()),
    (("-i", "--image"), "image", MULTI, "FILE", ()),
    (("--oss",), "oss", FLAG, "", ()),
]

_TABLES = {"claude": _CLAUDE, "codebuddy": _CODEBUDDY, "cursor": _CURSOR, "codex": _CODEX}

_CODEX_USAGE = "Usage: codex exec [OPTIONS] [PROMPT]\n\nFor more information, try '--help'.\n"
_CLAP_HELP = "For more information, try '--help'.\n"


class Parsed:
    """What a command line asked for, or the error the real CLI would print."""

    def __init__(self, cli: str) -> None:
        self.cli = cli
        self.options: dict[str, object] = {}
        self.positionals: list[str] = []
        self.error: str | None = None
        self.error_exit = 2 if cli == "codex" else 1

    def text(self, key: str) -> str | None:
        value = self.options.get(key)
        return value if isinstance(value, str) else None

    def flag(self, key: str) -> bool:
        return self.options.get(key) is True

    def values(self, key: str) -> list[str]:
        value = self.options.get(key)
        return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []

    def fail(self, message: str) -> None:
        if self.error is None:
            self.error = message

    @property
    def output_format(self) -> str:
        if self.cli == "codex":
            return "jsonl" if self.flag("json") else "text"
        return self.text("output_format") or "text"

    @property
    def prompt(self) -> str | None:
        """The positional prompt (Cursor joins its words, as its CLI does)."""
        if self.cli == "cursor":
            return " ".join(self.positionals) if self.positionals else None
        if not self.positionals or (self.cli == "codex" and self.positionals[0] == "-"):
            return None
        return self.positionals[0]


def parse(cli: str, argv: list[str]) -> Parsed:
    parsed = Parsed(cli)
    table = _TABLES[cli]
    words = list(argv)
    if cli == "codex":
        words = _strip_codex_subcommand(words, parsed)
    lookup = {flag: option for option in table for flag in option[0]}
    _parse_words(words, lookup, parsed)
    _check_positionals(parsed)
    return parsed


def needs_stdin(cli: str, argv: list[str]) -> bool:
    """Whether the real CLI would read its prompt from standard input."""
    parsed = parse(cli, argv)
    if parsed.error is not None:
        return False
    if cli in ("claude", "codebuddy") and parsed.text("input_format") == "stream-json":
        return False  # the SDK keeps stdin open; reading to EOF would deadlock
    return parsed.prompt is None


def _strip_codex_subcommand(words: list[str], parsed: Parsed) -> list[str]:
    # Global options (`codex -c k=v exec ...`) may come first; skip them and their values.
    takes_value = {flag for option in _CODEX if option[2] != FLAG for flag in option[0]}
    index = 0
    while index < len(words):
        word = words[index]
        if word in ("exec", "e"):
            return words[:index] + words[index + 1 :]
        if word == "--" or not word.startswith("-"):
            break
        index += 2 if word in takes_value else 1
    parsed.fail("fake-codex: only the `codex exec` subcommand is supported\n")
    return words


def _parse_words(words: list[str], lookup: dict[str, Option], parsed: Parsed) -> None:
    clap = parsed.cli == "codex"
    index = 0
    while index < len(words):
        word = words[index]
        index += 1
        if word == "--":
            parsed.positionals.extend(words[index:])
            return
        if not word.startswith("-") or word == "-":
            parsed.positionals.append(word)
            continue
        name, inline = word, None
        if word.startswith("--") and "=" in word:
            name, _, inline = word.partition("=")
        elif not word.startswith("--") and len(word) > 2 and word[:2] in lookup:
            name, inline = word[:2], word[2:]
        option = lookup.get(name)
        if option is None or (inline is not None and option[2] == FLAG and name != word[:2]):
            _unknown(parsed, word, clap)
            return
        flags, key, kind, placeholder, choices = option
        if kind == FLAG:
            parsed.options[key] = True
            if inline is not None:
                # Both libraries read `-pc` as `-p -c`.
                words.insert(index, "-" + inline)
            continue
        if inline is not None:
            value: str | None = inline
        elif index < len(words) and _takes_value(words[index], kind, clap):
            value = words[index]
            index += 1
        else:
            value = None
        if value is None:
            if kind == OPTIONAL:
                parsed.options[key] = True
                continue
            _missing(parsed, flags, placeholder, clap)
            return
        if choices and value not in choices:
            _bad_choice(
                parsed,
                flags=flags,
                placeholder=placeholder,
                value=value,
                choices=choices,
                clap=clap,
            )
            return
        if kind == VARIADIC:
            values = [value]
            while index < len(words) and not words[index].startswith("-"):
                values.append(words[index])
                index += 1
            parsed.options[key] = parsed.values(key) + values
        elif kind == MULTI:
            parsed.options[key] = [*parsed.values(key), value]
        else:
            parsed.options[key] = value


def _takes_value(word: str, kind: str, clap: bool) -> bool:
    if kind in (OPTIONAL, VARIADIC) or clap:
        # Optional and variadic values, and every clap value, stop at an option.
        return not word.startswith("-") or word == "-"
    return True  # commander takes the next word whatever it looks like


def _check_positionals(parsed: Parsed) -> None:
    limit = {"codex": 1, "claude": 1, "codebuddy": 1}.get(parsed.cli)
    if limit is None or len(parsed.positionals) <= limit:
        return
    if parsed.cli == "codex":
        extra = parsed.positionals[limit]
        parsed.fail(f"error: unexpected argument '{extra}' found\n\n{_CODEX_USAGE}")
    else:
        count = len(parsed.positionals)
        parsed.fail(f"error: too many arguments. Expected {limit} argument but got {count}.\n")


def _display(flags: tuple[str, ...], placeholder: str, clap: bool) -> str:
    if clap:
        return f"{flags[-1]} <{placeholder}>"
    bracket = f"[{placeholder}]" if placeholder in ("value", "chatId") else f"<{placeholder}>"
    return f"{', '.join(flags)} {bracket}"


def _unknown(parsed: Parsed, word: str, clap: bool) -> None:
    if clap:
        flag = word.partition("=")[0]
        parsed.fail(
            f"error: unexpected argument '{flag}' found\n\n"
            f"  tip: to pass '{flag}' as a value, use '-- {flag}'\n\n{_CODEX_USAGE}"
        )
    else:
        parsed.fail(f"error: unknown option '{word.partition('=')[0]}'\n")


def _missing(parsed: Parsed, flags: tuple[str, ...], placeholder: str, clap: bool) -> None:
    shown = _display(flags, placeholder, clap)
    if clap:
        parsed.fail(
            f"error: a value is required for '{shown}' but none was supplied\n\n{_CLAP_HELP}"
        )
    else:
        parsed.fail(f"error: option '{shown}' argument missing\n")


def _bad_choice(
    parsed: Parsed,
    *,
    flags: tuple[str, ...],
    placeholder: str,
    value: str,
    choices: tuple[str, ...],
    clap: bool,
) -> None:
    shown = _display(flags, placeholder, clap)
    if clap:
        parsed.fail(
            f"error: invalid value '{value}' for '{shown}'\n"
            f"  [possible values: {', '.join(choices)}]\n\n{_CLAP_HELP}"
        )
    else:
        parsed.fail(
            f"error: option '{shown}' argument '{value}' is invalid. "
            f"Allowed choices are {', '.join(choices)}.\n"
        )
