"""
Command-line parsing that fails the way each real CLI fails.

Claude Code, CodeBuddy and Cursor parse their arguments with commander.js;
Codex uses clap.  The two libraries disagree on details adaptors trip over:
commander's variadic options (``--allowedTools a b``) swallow the words that
follow them, commander takes the next word as a value even if it starts with
a dash, clap does not, and each library words its errors differently and
exits with a different status (1 versus 2).  Those differences live in the
two `Dialect` classes here; which options a CLI has, and which dialect it
speaks, is declared by the CLI's own module (its `Cli` spec), so this parser
never asks which CLI it is parsing for.  Anything a CLI does not declare is
reported as the real CLI reports an unknown option.
"""

from __future__ import annotations

# Option kinds: a switch, a required value, an optional value, a value that may
# repeat, and commander's variadic `<values...>`.
FLAG, VALUE, OPTIONAL, MULTI, VARIADIC = "flag", "value", "optional", "multi", "variadic"

TYPE_CHECKING = False
if TYPE_CHECKING:
    from providers_fake.cli.base import Cli

    # flags (all spellings), key, kind, placeholder, allowed choices
    Option = tuple[tuple[str, ...], str, str, str, tuple[str, ...]]

FORMATS = ("text", "json", "stream-json")
_CLAP_HELP = "For more information, try '--help'.\n"
# Commander stops these values at the next option; its other values take any word.
_STOP_AT_OPTION = frozenset({OPTIONAL, VARIADIC})


class Dialect:
    """How one argument-parsing library reads values and words its refusals."""

    error_exit: int  # the exit status of a command-line error

    def takes_value(self, word: str, kind: str) -> bool:
        """Whether `word` may be the value of an option of `kind` that precedes it."""
        raise NotImplementedError

    def unknown(self, word: str) -> str:
        raise NotImplementedError

    def missing(self, flags: tuple[str, ...], placeholder: str) -> str:
        raise NotImplementedError

    def bad_choice(
        self, flags: tuple[str, ...], placeholder: str, value: str, choices: tuple[str, ...]
    ) -> str:
        raise NotImplementedError

    def too_many(self, positionals: list[str], limit: int) -> str:
        raise NotImplementedError


class Commander(Dialect):
    """commander.js (Claude Code, CodeBuddy, Cursor): greedy values, exit status 1."""

    error_exit = 1

    def takes_value(self, word: str, kind: str) -> bool:
        if kind in _STOP_AT_OPTION:
            return _not_an_option(word)
        return True  # commander takes the next word whatever it looks like

    def unknown(self, word: str) -> str:
        return f"error: unknown option '{word.partition('=')[0]}'\n"

    def missing(self, flags: tuple[str, ...], placeholder: str) -> str:
        return f"error: option '{_commander_display(flags, placeholder)}' argument missing\n"

    def bad_choice(
        self, flags: tuple[str, ...], placeholder: str, value: str, choices: tuple[str, ...]
    ) -> str:
        shown = _commander_display(flags, placeholder)
        return (
            f"error: option '{shown}' argument '{value}' is invalid. "
            f"Allowed choices are {', '.join(choices)}.\n"
        )

    def too_many(self, positionals: list[str], limit: int) -> str:
        count = len(positionals)
        return f"error: too many arguments. Expected {limit} argument but got {count}.\n"


class Clap(Dialect):
    """clap (Codex): a value never starts with a dash, errors end with the usage, status 2."""

    error_exit = 2

    def __init__(self, usage: str) -> None:
        self.usage = usage

    def takes_value(self, word: str, kind: str) -> bool:
        return _not_an_option(word)

    def unknown(self, word: str) -> str:
        flag = word.partition("=")[0]
        return (
            f"error: unexpected argument '{flag}' found\n\n"
            f"  tip: to pass '{flag}' as a value, use '-- {flag}'\n\n{self.usage}"
        )

    def missing(self, flags: tuple[str, ...], placeholder: str) -> str:
        shown = f"{flags[-1]} <{placeholder}>"
        return f"error: a value is required for '{shown}' but none was supplied\n\n{_CLAP_HELP}"

    def bad_choice(
        self, flags: tuple[str, ...], placeholder: str, value: str, choices: tuple[str, ...]
    ) -> str:
        return (
            f"error: invalid value '{value}' for '{flags[-1]} <{placeholder}>'\n"
            f"  [possible values: {', '.join(choices)}]\n\n{_CLAP_HELP}"
        )

    def too_many(self, positionals: list[str], limit: int) -> str:
        return f"error: unexpected argument '{positionals[limit]}' found\n\n{self.usage}"


COMMANDER = Commander()


class Parsed:
    """What a command line asked for, or the error the real CLI would print."""

    def __init__(self, cli: Cli) -> None:
        self.cli = cli
        self.options: dict[str, object] = {}
        self.positionals: list[str] = []
        self.error: str | None = None
        self.error_exit = cli.dialect.error_exit

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
        return self.cli.output_format(self)

    @property
    def prompt(self) -> str | None:
        """The prompt given on the command line, as the CLI reads its positionals."""
        return self.cli.positional_prompt(self)


def parse(cli: Cli, argv: list[str]) -> Parsed:
    parsed = Parsed(cli)
    words = cli.arguments(list(argv), parsed)
    lookup = {flag: option for option in cli.options for flag in option[0]}
    _parse_words(words, lookup, parsed)
    limit = cli.max_positionals
    if limit is not None and len(parsed.positionals) > limit:
        parsed.fail(cli.dialect.too_many(parsed.positionals, limit))
    return parsed


def _parse_words(words: list[str], lookup: dict[str, Option], parsed: Parsed) -> None:
    dialect = parsed.cli.dialect
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
            parsed.fail(dialect.unknown(word))
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
        elif index < len(words) and dialect.takes_value(words[index], kind):
            value = words[index]
            index += 1
        else:
            value = None
        if value is None:
            if kind == OPTIONAL:
                parsed.options[key] = True
                continue
            parsed.fail(dialect.missing(flags, placeholder))
            return
        if choices and value not in choices:
            parsed.fail(dialect.bad_choice(flags, placeholder, value, choices))
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


def _not_an_option(word: str) -> bool:
    return not word.startswith("-") or word == "-"


def _commander_display(flags: tuple[str, ...], placeholder: str) -> str:
    bracket = f"[{placeholder}]" if placeholder in ("value", "chatId") else f"<{placeholder}>"
    return f"{', '.join(flags)} {bracket}"
