"""``harness mutants`` and ``harness bench``: how strong the catalogue is, and what it costs."""

from __future__ import annotations

import argparse
from pathlib import Path

from harness.commands.command import Command


def mutants_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("scenarios", nargs="*", help="scenario folders (default: scenarios/agent-cli)")
    p.add_argument(
        "--module",
        action="append",
        default=[],
        help="a module of harness/adaptor to mutate (repeatable; default: all of the pipeline)",
    )
    p.add_argument("--equivalents", default="baselines/mutants.yaml", type=Path)
    p.add_argument("--jobs", type=int, default=1, help="mutants run at once (default 1)")
    p.add_argument("--deadline", type=float, default=60.0, help="seconds per mutant")


def mutants(args: argparse.Namespace) -> int:
    from harness.mutation import runner as mutants  # noqa: PLC0415  (only this command needs it)

    paths = [Path(p) for p in args.scenarios] or [Path("scenarios/agent-cli")]
    modules = args.module or list(mutants.MODULES)
    return mutants.main(paths, modules, args.equivalents, args.jobs, args.deadline)


def bench_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("scenarios", nargs="?", default="scenarios", help="the scenarios folder")
    p.add_argument("--repeat", type=int, default=3, help="runs per measurement (default 3)")
    p.add_argument(
        "--busy",
        type=int,
        default=0,
        metavar="N",
        help="instead: run the real-CLI scenarios beside N busy processes; exit as that run",
    )
    p.add_argument("-n", "--workers", default=None, metavar="N", help="with --busy: xdist workers")


def bench(args: argparse.Namespace) -> int:
    from harness.reports import bench  # noqa: PLC0415  (only the benchmark needs it)

    if args.busy:
        return bench.under_load(args.scenarios, args.busy, args.workers)
    return bench.main(args.scenarios, args.repeat)


COMMANDS = (
    Command(
        "mutants",
        "mutate the reference pipeline; run the agent-cli catalogue against each mutant",
        mutants_options,
        mutants,
    ),
    Command("bench", "measure per-scenario cost and fake start-up time", bench_options, bench),
)
