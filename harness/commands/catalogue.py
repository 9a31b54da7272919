"""``harness lint``, ``harness list`` and ``harness show``: the catalogue as written."""

from __future__ import annotations

import argparse
import sys
from collections import Counter

from harness import exitcodes
from harness.commands.command import Command, add_paths, paths, unknown_tag


def lint_options(parser: argparse.ArgumentParser) -> None:
    add_paths(parser)


def lint(args: argparse.Namespace) -> int:
    from harness.catalogue import loader  # noqa: PLC0415  (loaded when the command runs)

    loaded = loader.load(paths(args.paths))
    for problem in sorted(loaded.problems, key=lambda p: (p.file, p.line, p.column)):
        print(problem)
    if loaded.problems:
        print(f"{len(loaded.problems)} problem(s)", file=sys.stderr)
        return exitcodes.USAGE
    print(f"{len(loaded.scenarios)} scenarios OK")
    return 0


def list_options(parser: argparse.ArgumentParser) -> None:
    add_paths(parser)
    parser.add_argument("--tag", action="append", default=[], help="only scenarios with this tag")
    parser.add_argument("--tags", action="store_true", help="list the tags in use, with counts")


def list_(args: argparse.Namespace) -> int:
    from harness.catalogue import loader  # noqa: PLC0415  (loaded when the command runs)

    loaded = loader.load(paths(args.paths))
    for problem in loaded.problems:
        print(problem, file=sys.stderr)
    unknown = unknown_tag(loaded, args.tag)
    if unknown is not None:
        print(f"harness: {unknown}", file=sys.stderr)
        return exitcodes.USAGE
    if args.tags:
        counts = Counter(tag for s in loaded.scenarios for tag in s.tags)
        for tag, count in sorted(counts.items()):
            print(f"{tag:24} {count} scenario(s)")
        return exitcodes.USAGE if loaded.problems else exitcodes.OK
    for s in loaded.scenarios:
        if args.tag and not set(args.tag) & set(s.tags):
            continue
        print(f"{s.id:48} {s.seam.value:11} {','.join(s.clauses):24} {s.title}")
    return exitcodes.USAGE if loaded.problems else exitcodes.OK


def show_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("id", metavar="ID", help="the scenario's id (harness list shows them)")
    add_paths(parser)


def show(args: argparse.Namespace) -> int:
    from harness.catalogue import loader  # noqa: PLC0415  (loaded when the command runs)
    from harness.catalogue.clauses import registry  # noqa: PLC0415
    from harness.catalogue.suggest import did_you_mean  # noqa: PLC0415

    loaded = loader.load(paths(args.paths))
    found = [s for s in loaded.scenarios if s.id == args.id]
    if not found:
        hint = did_you_mean(args.id, [s.id for s in loaded.scenarios])
        print(f"no scenario with id {args.id!r}{hint}", file=sys.stderr)
        return exitcodes.USAGE
    s = found[0]
    clauses = registry()
    print(f"{s.id}: {s.title}")
    print(f"file: {s.path}:{s.line}")
    print(f"seam: {s.seam.value}   tags: {', '.join(s.tags) or '-'}")
    if s.capture:
        print(f"replays capture: {s.capture}")
    print("clauses:")
    for clause in s.clauses:
        print(f"  {clause}: {clauses[clause].summary}")
    spans = ", ".join(f"{first}-{last}" for first, last in s.source)
    print()
    print(f"# {s.path}, lines {spans}")
    print(loader.source(s), end="")
    return 0


COMMANDS = (
    Command(
        "lint", "check scenario files; one line per problem, exit 4 if any", lint_options, lint
    ),
    Command(
        "list", "list scenarios (id, seam, clauses, title), or their tags", list_options, list_
    ),
    Command("show", "show one scenario: its clauses and its YAML as written", show_options, show),
)
