"""
The ``harness`` command: one subcommand per verb, each a record in
`harness.commands.COMMANDS` (its options declared beside its code); this
module derives the parser from that table and runs the command chosen.

``run`` hands the catalogue to pytest (the engine) with the reports plugin
switched on.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

from harness import exitcodes
from harness.commands import COMMANDS
from harness.commands.command import default_reports
from harness.exceptions import HarnessError, InvalidScenarios
from harness.signals import terminate_gracefully

# The commands import the harness when they run: until then SIGTERM is
# already an orderly stop, and `harness --help` answers at once.

__all__ = ["default_reports", "main", "parser"]

DESCRIPTION = """\
A conformance harness for structured output from coding agents (Claude Code,
Codex, Cursor, CodeBuddy). A catalogue of YAML scenarios says what must happen
when an agent CLI is asked for schema-valid JSON; scripted fakes play the CLIs
and the model APIs; the harness runs every scenario against a target (the
reference implementation, your adaptor, a service, the real CLIs) and reports
what passed, what failed and why."""

EPILOG = """\
Start with: harness list, then harness run --target 'mine=cmd:COMMAND' (see
harness run --help). harness doctor checks the prerequisites; harness docs
lists the reference pages and harness docs TOPIC prints one (e.g. harness docs
adaptors)."""


class _Parser(argparse.ArgumentParser):
    """argparse, with a bad argument a usage error (exit 4) as everywhere else."""

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(exitcodes.USAGE, f"{self.prog}: error: {message}\n")


class _Version(argparse.Action):
    """``--version``, looked up only when asked for (help and the commands stay fast)."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, help="print the version and exit")

    def __call__(self, *args: Any, **kwargs: Any) -> None:
        from importlib.metadata import version  # noqa: PLC0415

        print(f"harness {version('structured-output-harness')}")
        raise SystemExit(0)


def parser() -> argparse.ArgumentParser:
    """The command's parser, derived from `COMMANDS`."""
    top = _Parser(
        prog="harness",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    top.add_argument("--version", action=_Version)
    sub = top.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for command in COMMANDS:
        p = sub.add_parser(
            command.name,
            help=command.help,
            description=command.description,
            epilog=command.epilog,
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        command.options(p)
        p.set_defaults(handler=command.run)
    return top


def main(argv: Sequence[str] | None = None) -> int:
    """The command; its exit status is one of `harness.exitcodes`."""
    try:
        terminate_gracefully()  # inside: a signal just after it is an interrupt too
        with exitcodes.internal_errors():
            return _main(argv)
    except KeyboardInterrupt:
        print("harness: interrupted", file=sys.stderr)
        return exitcodes.INTERRUPTED
    except BrokenPipeError:
        # `harness show ID | head -3`: the reader has what it wanted.  Quiet, as git
        # and pytest are; what is still buffered goes nowhere rather than fail again.
        with contextlib.suppress(OSError, ValueError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return exitcodes.PIPE
    except SystemExit as done:  # argparse's usage errors, and internal errors
        if done.code in (None, 0):
            raise  # --help and --version end the process, as argparse has them do
        return done.code if isinstance(done.code, int) else exitcodes.USAGE


def _main(argv: Sequence[str] | None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    # Everything after a bare "--" goes untouched to pytest (run) or to the CLI (record).
    extra = argv[argv.index("--") + 1 :] if "--" in argv else []
    argv = argv[: argv.index("--")] if "--" in argv else argv
    args = parser().parse_args(argv)
    args.after_dashes = extra
    try:
        return int(args.handler(args))
    except InvalidScenarios as error:
        for problem in error.problems:  # file:line:col first, as lint prints them
            print(problem, file=sys.stderr)
        return exitcodes.USAGE
    except HarnessError as error:
        print(f"harness: {error}", file=sys.stderr)
        return exitcodes.USAGE


if __name__ == "__main__":
    sys.exit(main())
