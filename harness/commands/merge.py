"""
``harness merge``: the reports of a run's shards put back together, from any
folder, once the shards are shown to be exactly that run (`harness.shards`,
`harness.merging`).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from harness import exitcodes
from harness.commands.command import Command, default_reports


def merge_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("folders", nargs="+", metavar="DIR", help="the report folders of the shards")
    p.add_argument("--reports", default=None, metavar="DIR", help="folder for the merged reports")


def merge(args: argparse.Namespace) -> int:
    from harness import merging, shards, targets  # noqa: PLC0415  (loaded when it runs)
    from harness.exceptions import Problem  # noqa: PLC0415

    found = []
    for folder in map(Path, args.folders):
        manifest, problem = shards.read(folder)
        if problem is not None:
            print(exitcodes.last_line(exitcodes.USAGE, str(problem)))
            return exitcodes.USAGE
        assert manifest is not None
        found.append((folder, manifest))
    problem = shards.check(found)
    if problem is not None:
        print(exitcodes.last_line(exitcodes.USAGE, str(problem)))
        return exitcodes.USAGE
    reports = Path(args.reports) if args.reports else default_reports()
    try:
        session = merging.session(found, Path.cwd(), reports)
        if isinstance(session, Problem):
            print(exitcodes.last_line(exitcodes.USAGE, str(session)))
            return exitcodes.USAGE
        session.finish()
        for line in session.summary_lines():
            print(line)
        code = session.status()
        print(f"harness: reports written to {reports}")
        print(exitcodes.last_line(code, session.cause(code)))
    finally:
        targets.close_all()
    return code


COMMANDS = (
    Command("merge", "combine the reports of a run's shards into one set", merge_options, merge),
)
