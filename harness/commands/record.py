"""``harness record`` and ``harness import``: from a real incident to a scenario."""

from __future__ import annotations

import argparse

from harness.catalogue import agents
from harness.commands.command import Command


def record_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--cli", required=True, choices=agents.REAL)
    p.add_argument("--upstream", default=None, help="model API base URL (default: the public one)")
    p.add_argument("--out", default=None, help="scenario file to write (default: stdout)")
    p.add_argument(
        "--redact",
        action="append",
        default=[],
        metavar="POINTER_OR_PATTERN",
        help="a JSON pointer into the scenario (/...) or a regular expression to hide",
    )
    p.add_argument("--binary", default=None, help="the CLI to run (default: the pinned install)")
    p.add_argument("--timeout", type=float, default=60.0, help="seconds the run may take")
    p.add_argument("--id", default=None, help="scenario id (default: from --out)")
    p.add_argument("--clause", action="append", default=[], help="clause id (repeatable)")
    p.add_argument("--no-verify", action="store_true", help="do not replay the file on the binary")


def record(args: argparse.Namespace) -> int:
    from harness.record import command  # noqa: PLC0415  (only these commands need it)

    return command.record(args)


def import_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", help="the saved stdout (JSON lines or one JSON document)")
    p.add_argument("--driver", required=True, choices=agents.DRIVERS)
    p.add_argument("--schema", default=None, help="the schema file the run was given")
    p.add_argument("--exit", type=int, default=None, help="the run's exit status")
    p.add_argument("--out", default=None, help="scenario file to write (default: stdout)")
    p.add_argument("--prompt", default=None, help="the prompt the run was given")
    p.add_argument("--id", default=None, help="scenario id (default: from --out or FILE)")
    p.add_argument("--clause", action="append", default=[], help="clause id (repeatable)")


def import_(args: argparse.Namespace) -> int:
    from harness.record import command  # noqa: PLC0415

    return command.import_(args)


COMMANDS = (
    Command(
        "record",
        "run a real CLI through a recording proxy and write a model-api scenario",
        record_options,
        record,
        epilog="The CLI's own arguments follow a bare --, as you would type them.",
    ),
    Command(
        "import",
        "turn a CLI's saved stdout into an agent-cli scenario that replays it",
        import_options,
        import_,
    ),
)
