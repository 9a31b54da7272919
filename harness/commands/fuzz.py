"""``harness fuzz``: generated cases on two targets, the disagreements written as scenarios."""

from __future__ import annotations

import argparse
import sys

from harness import exitcodes
from harness.catalogue import agents
from harness.commands.command import Command, missing_extra


def fuzz_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--seam", required=True, choices=("model-api", "agent-cli"))
    p.add_argument("--cli", choices=agents.REAL, help="model-api: the CLI to fuzz")
    p.add_argument("--target", default=None, help="the target judged (model-api: reference)")
    p.add_argument(
        "--against", default=None, help="the truth (model-api: real; agent-cli: reference)"
    )
    p.add_argument("--examples", type=int, default=100, help="how many cases to generate")
    p.add_argument("--seed", type=int, default=0, help="the same seed gives the same cases")
    p.add_argument("--out", default="fuzz-findings", help="folder for the scenarios found")
    p.add_argument(
        "--database", default=None, help="hypothesis's database (default OUT/.hypothesis)"
    )
    p.add_argument(
        "--shrink-budget", type=int, default=40, help="new runs of the targets per class shrunk"
    )
    p.add_argument("--timeout", type=float, default=12.0, help="model-api: seconds per run")
    p.add_argument(
        "--driver",
        action="append",
        default=[],
        choices=agents.DRIVERS,
        help="agent-cli: only these drivers (repeatable)",
    )
    p.add_argument(
        "--stats",
        action="store_true",
        help="model-api: print which classes of the users' world the cases drew, "
        "and the agreement per class",
    )
    p.add_argument(
        "--allow-exec",
        action="store_true",
        help="also generate cases that make the CLI run commands (Bash), confined as for "
        "harness run --allow-exec; without it no generated case runs a command",
    )


def fuzz(args: argparse.Namespace) -> int:
    missing = missing_extra("hypothesis", "fuzz", "harness fuzz")
    if missing is not None:
        print(f"harness: {missing}", file=sys.stderr)
        return exitcodes.USAGE
    from harness.fuzz import main  # noqa: PLC0415  (hypothesis loads only for this command)

    return main.main(args)


COMMANDS = (
    Command(
        "fuzz",
        "generate cases, compare two targets on each, write the disagreements",
        fuzz_options,
        fuzz,
    ),
)
