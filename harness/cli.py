"""
The ``harness`` command: lint, list, show, run, baseline, record, import, serve, mutants
and bench.

Each subcommand is a thin shell over the core; ``run`` hands the catalogue to
pytest (the engine) with the reports plugin switched on.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from harness.exceptions import HarnessError
from harness.signals import terminate_gracefully

# The subcommands import the harness when they run: until then SIGTERM is
# already an orderly stop, and `harness --help` answers at once.

ALLOW_EXEC_HELP = (
    "let scenarios make the systems under test run commands on this machine, confined to "
    "the case's folder (bubblewrap where available); without it such cases are skipped"
)


def _paths(given: Sequence[str]) -> list[Path]:
    return [Path(p) for p in given] or [Path("scenarios")]


def lint(args: argparse.Namespace) -> int:
    from harness.catalogue import loader  # noqa: PLC0415  (see the note at the top)

    loaded = loader.load(_paths(args.paths))
    for problem in loaded.problems:
        print(problem)
    if loaded.problems:
        print(f"{len(loaded.problems)} problem(s)", file=sys.stderr)
        return 2
    print(f"{len(loaded.scenarios)} scenarios OK")
    return 0


def list_(args: argparse.Namespace) -> int:
    from harness.catalogue import loader  # noqa: PLC0415  (see the note at the top)

    loaded = loader.load(_paths(args.paths))
    for problem in loaded.problems:
        print(problem, file=sys.stderr)
    for s in loaded.scenarios:
        if args.tag and not set(args.tag) & set(s.tags):
            continue
        print(f"{s.id:48} {s.seam.value:11} {','.join(s.clauses):24} {s.title}")
    return 2 if loaded.problems else 0


def show(args: argparse.Namespace) -> int:
    from harness import seams  # noqa: PLC0415  (see the note at the top)
    from harness.catalogue import loader  # noqa: PLC0415
    from harness.catalogue.clauses import registry  # noqa: PLC0415

    loaded = loader.load(_paths(args.paths))
    found = [s for s in loaded.scenarios if s.id == args.id]
    if not found:
        print(f"no scenario with id {args.id!r}", file=sys.stderr)
        return 2
    s = found[0]
    clauses = registry()
    print(f"{s.id}: {s.title}")
    print(f"file: {s.path}:{s.line}")
    print(f"seam: {s.seam.value}   tags: {', '.join(s.tags) or '-'}")
    if s.capture:
        print(f"replays capture: {s.capture}")
    print()
    print(s.description)
    print()
    print("clauses:")
    for clause in s.clauses:
        print(f"  {clause}: {clauses[clause].summary}")
    print()
    for line in seams.require(s.seam.value).show(s):
        print(line)
    return 0


def run(args: argparse.Namespace) -> int:
    import pytest  # noqa: PLC0415  (see the note at the top)

    from harness import targets  # noqa: PLC0415

    for target in args.target:
        targets.create(target)  # a bad spec is one clear line, before pytest starts
    argv = ["--pyargs", "harness.testing", "-p", "no:cacheprovider", "-q", "-rfE"]
    # The run is this command's, not the project's test suite: no ini file's
    # addopts (a checkout's own pytest settings opt its tests into --allow-exec).
    argv += ["-o", "addopts="]
    # Plugins of the test suite's, not the run's: hypothesis's would import itself at exit.
    argv += ["-p", "no:hypothesispytest", "--assert=plain"]
    # The CLI has imported the harness already; pytest need not say it cannot rewrite it.
    argv += ["-W", "ignore::pytest.PytestAssertRewriteWarning"]
    argv += ["--rootdir", str(Path.cwd())]
    for path in _paths(args.paths):
        argv += ["--harness-scenarios", str(path)]
    for target in args.target:
        argv += ["--harness-target", target]
    if args.reports:
        argv += ["--harness-reports", args.reports]
    if args.baselines:
        argv += ["--harness-baselines", args.baselines]
    if args.allow_exec:
        argv.append("--harness-allow-exec")
    if args.k:
        argv += ["-k", args.k]
    if args.tag:
        argv += ["-m", " or ".join(args.tag)]
    if args.workers:
        argv += ["-n", str(args.workers)]
    argv += getattr(args, "after_dashes", [])
    # pytest's own temporary folders (pytest-xdist makes some) go with the run.
    with tempfile.TemporaryDirectory(prefix="harness-run-") as scratch:
        return int(pytest.main([*argv, "--basetemp", scratch]))


def bench(args: argparse.Namespace) -> int:
    from harness.reports import bench  # noqa: PLC0415  (only the benchmark needs it)

    return bench.main(args.scenarios, args.repeat)


def baseline(args: argparse.Namespace) -> int:
    from harness import engine, targets  # noqa: PLC0415  (see the note at the top)
    from harness.catalogue import loader  # noqa: PLC0415
    from harness.reports import baseline  # noqa: PLC0415
    from harness.seams import RunOptions, case  # noqa: PLC0415

    target = targets.create(args.target)
    if engine.baseline_path(Path("baselines"), target.name) is None:
        print(f"harness: give the target a short name: NAME={args.target}", file=sys.stderr)
        return 2
    loaded = loader.load(_paths(args.paths))
    for problem in loaded.problems:
        print(problem, file=sys.stderr)
    if loaded.problems:
        return 2
    try:
        options = RunOptions(allow_exec=args.allow_exec)
        results = [case.execute(s, target, options) for s in loaded.scenarios]
    finally:
        targets.close_all()
        close = getattr(target, "close", None)
        if close is not None:
            close()
    text = baseline.render(target.name, results)
    out = Path(args.out or f"baselines/{target.name}.yaml")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text, encoding="utf-8")
    failing, skipped = baseline.counts(results)
    print(
        f"wrote {out}: {failing} known failure(s) and {skipped} skip(s) of {len(results)} scenarios"
    )
    return 0


def record(args: argparse.Namespace) -> int:
    from harness.record import command  # noqa: PLC0415  (only these commands need it)

    return command.record(args)


def import_(args: argparse.Namespace) -> int:
    from harness.record import command  # noqa: PLC0415

    return command.import_(args)


def serve(args: argparse.Namespace) -> int:
    from harness.targets import serve  # noqa: PLC0415  (only the protocol server needs it)

    return serve.main()


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog="harness", description=__doc__.splitlines()[1])
    sub = top.add_subparsers(dest="command", required=True)

    p = sub.add_parser("lint", help="check scenario files; one line per problem, exit 2 if any")
    p.add_argument("paths", nargs="*")
    p.set_defaults(func=lint)

    p = sub.add_parser("list", help="list scenarios")
    p.add_argument("paths", nargs="*")
    p.add_argument("--tag", action="append", default=[])
    p.set_defaults(func=list_)

    p = sub.add_parser("show", help="show one scenario, its clauses and what it documents")
    p.add_argument("id")
    p.add_argument("paths", nargs="*")
    p.set_defaults(func=show)

    p = sub.add_parser("run", help="run the catalogue through pytest and write the reports")
    p.add_argument("paths", nargs="*")
    p.add_argument("--target", action="append", default=[], help="target spec (repeatable)")
    p.add_argument("-k", default=None, help="pytest -k expression over case ids")
    p.add_argument("--tag", action="append", default=[], help="only scenarios with this tag")
    p.add_argument("--reports", default="reports", help="folder for the reports ('' for none)")
    p.add_argument("-n", "--workers", default=None, help="pytest-xdist workers")
    p.add_argument(
        "--baselines", default=None, help="folder of per-target baselines (default: ./baselines)"
    )
    p.add_argument("--allow-exec", action="store_true", help=ALLOW_EXEC_HELP)
    p.epilog = "Arguments after a bare -- are passed to pytest (e.g. -- --junitxml=out.xml)."
    p.set_defaults(func=run)

    p = sub.add_parser("baseline", help="write a baseline of a target's current failures")
    p.add_argument("paths", nargs="*")
    p.add_argument("--target", required=True, help="NAME=SPEC: the target and its short name")
    p.add_argument("-o", "--out", default=None, help="file to write (default baselines/NAME.yaml)")
    p.add_argument("--allow-exec", action="store_true", help=ALLOW_EXEC_HELP)
    p.set_defaults(func=baseline)

    p = sub.add_parser(
        "record",
        help="run a real CLI through a recording proxy and write a model-api scenario",
        epilog="The CLI's own arguments follow a bare --, as you would type them.",
    )
    p.add_argument("--cli", required=True, choices=("claude", "codex"))
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
    p.set_defaults(func=record)

    p = sub.add_parser(
        "import", help="turn a CLI's saved stdout into an agent-cli scenario that replays it"
    )
    p.add_argument("file", help="the saved stdout (JSON lines or one JSON document)")
    p.add_argument("--driver", required=True, choices=("codex", "claude", "cursor", "codebuddy"))
    p.add_argument("--schema", default=None, help="the schema file the run was given")
    p.add_argument("--exit", type=int, default=None, help="the run's exit status")
    p.add_argument("--out", default=None, help="scenario file to write (default: stdout)")
    p.add_argument("--prompt", default=None, help="the prompt the run was given")
    p.add_argument("--id", default=None, help="scenario id (default: from --out or FILE)")
    p.add_argument("--clause", action="append", default=[], help="clause id (repeatable)")
    p.set_defaults(func=import_)

    p = sub.add_parser(
        "serve", help="serve the reference adaptor over the JSON-lines target protocol"
    )
    p.set_defaults(func=serve)

    p = sub.add_parser(
        "mutants",
        help="mutate the reference pipeline; run the agent-cli catalogue against each mutant",
    )
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
    p.set_defaults(func=mutants_)
    p = sub.add_parser("bench", help="measure per-scenario cost and fake start-up time")
    p.add_argument("scenarios", nargs="?", default="scenarios")
    p.add_argument("--repeat", type=int, default=3)
    p.set_defaults(func=bench)
    return top


def mutants_(args: argparse.Namespace) -> int:
    from harness.reports import mutants  # noqa: PLC0415  (only this command needs it)

    paths = [Path(p) for p in args.scenarios] or [Path("scenarios/agent-cli")]
    modules = args.module or list(mutants.MODULES)
    return mutants.main(paths, modules, args.equivalents, args.jobs, args.deadline)


def main(argv: Sequence[str] | None = None) -> int:
    terminate_gracefully()
    try:
        return _main(argv)
    except KeyboardInterrupt:
        print("harness: interrupted", file=sys.stderr)
        return 2


def _main(argv: Sequence[str] | None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    # Everything after a bare "--" goes untouched to pytest (run) or to the CLI (record).
    extra = argv[argv.index("--") + 1 :] if "--" in argv else []
    argv = argv[: argv.index("--")] if "--" in argv else argv
    args = parser().parse_args(argv)
    args.after_dashes = extra
    try:
        return int(args.func(args))
    except HarnessError as error:
        print(f"harness: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
