"""
The ``harness`` command: one subcommand per verb (lint, list, show, run,
drift, baseline, record, import, fuzz, serve, init, mutants, bench), each
listed by ``harness --help``.

Each subcommand is a thin shell over the core; ``run`` hands the catalogue to
pytest (the engine) with the reports plugin switched on.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import os
import sys
import tempfile
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NoReturn

from harness import exitcodes, signals
from harness.exceptions import HarnessError, InvalidScenarios
from harness.signals import terminate_gracefully

# The subcommands import the harness when they run: until then SIGTERM is
# already an orderly stop, and `harness --help` answers at once.

DESCRIPTION = """\
A conformance harness for structured output from coding agents (Claude Code,
Codex, Cursor, CodeBuddy). A catalogue of YAML scenarios says what must happen
when an agent CLI is asked for schema-valid JSON; scripted fakes play the CLIs
and the model APIs; the harness runs every scenario against a target (the
reference implementation, your adaptor, a service, the real CLIs) and reports
what passed, what failed and why."""

EPILOG = """\
Start with: harness list, then harness run --target 'mine=cmd:COMMAND' (see
harness run --help). The reference pages are in the docs/ folder of the
project."""

ALLOW_EXEC_HELP = (
    "let scenarios make the systems under test run commands on this machine, confined to "
    "the case's folder (bubblewrap where available); without it such cases are skipped"
)
PATHS_HELP = "scenario files or folders (default: scenarios)"

#: What ``harness run --help`` says of targets.  tests/test_cli.py holds it to
#: `harness.targets.KINDS` (kept here so that help answers without importing it).
TARGETS_HELP = """\
Targets (--target SPEC, repeatable; default: reference):
  reference[:CLI=VERSION[,CLI=VERSION]]
                              the reference adaptor, services and models (fakes as
                              subprocesses); with versions, the models with those
                              releases' profiles (model-api only): reference:claude=2.1.235
  reference-inproc[:CLI=VERSION[,CLI=VERSION]]
                              the same, replaying the fakes in process (faster)
  cmd:COMMAND                 your adaptor: a process speaking the JSON-lines protocol
  cmd-check:COMMAND           the same, every message checked against the protocol schemas
  python:MODULE:FUNCTION      your Python adaptor, called in process (MODULE from the
                              current folder, as python -m finds it)
  http:BASE_URL               a service (Throng, T3) over the conformance binding
  real[:CLI=VERSION[,CLI=VERSION]]
                              the real claude and codex binaries (model-api only): the
                              pinned pair, or the releases named (installed on demand),
                              e.g. real:claude=2.1.235,codex=0.171.0

Prefix a spec with NAME= to name the target in reports and baselines:
  --target 'mine=cmd:node my-adaptor.mjs' reads its baseline from BASELINES/mine.yaml.

Arguments after a bare -- are passed to pytest (e.g. -- --junitxml=out.xml)."""


def _paths(given: Sequence[str]) -> list[Path]:
    """The paths given, or the catalogue the package ships (`loader.bundled`)."""
    from harness.catalogue import loader  # noqa: PLC0415  (see the note at the top)

    if given:
        return [Path(p) for p in given]
    bundled = loader.bundled()
    here = Path.cwd().resolve()
    # In a checkout it is ./scenarios, and files are named as the user sees them.
    return [bundled.relative_to(here) if bundled.is_relative_to(here) else bundled]


def default_reports() -> Path:
    """
    Where ``harness run`` writes reports when not told: a folder per working
    folder in the user's cache, outside any checkout, so that a run never
    overwrites reports the project keeps (a checkout's ``reports/``).
    """
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    here = Path.cwd().resolve()
    digest = hashlib.sha256(str(here).encode()).hexdigest()[:8]
    return Path(cache) / "structured-output-harness" / "reports" / f"{here.name}-{digest}"


def _tags(loaded: Any, wanted: Sequence[str]) -> str | None:
    """Why the tags asked for cannot select anything, or None when each is known."""
    from harness.catalogue.suggest import did_you_mean  # noqa: PLC0415  (see the note at the top)

    known = sorted({tag for s in loaded.scenarios for tag in s.tags})
    for tag in wanted:
        if tag not in known:
            return f"unknown tag {tag!r}{did_you_mean(tag, known)} (known: {', '.join(known)})"
    return None


def lint(args: argparse.Namespace) -> int:
    from harness.catalogue import loader  # noqa: PLC0415  (see the note at the top)

    loaded = loader.load(_paths(args.paths))
    for problem in sorted(loaded.problems, key=lambda p: (p.file, p.line, p.column)):
        print(problem)
    if loaded.problems:
        print(f"{len(loaded.problems)} problem(s)", file=sys.stderr)
        return exitcodes.USAGE
    print(f"{len(loaded.scenarios)} scenarios OK")
    return 0


def list_(args: argparse.Namespace) -> int:
    from harness.catalogue import loader  # noqa: PLC0415  (see the note at the top)

    loaded = loader.load(_paths(args.paths))
    for problem in loaded.problems:
        print(problem, file=sys.stderr)
    unknown = _tags(loaded, args.tag)
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


def show(args: argparse.Namespace) -> int:
    from harness.catalogue import loader  # noqa: PLC0415  (see the note at the top)
    from harness.catalogue.clauses import registry  # noqa: PLC0415
    from harness.catalogue.suggest import did_you_mean  # noqa: PLC0415

    loaded = loader.load(_paths(args.paths))
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


def run(args: argparse.Namespace) -> int:
    from harness import shards, targets  # noqa: PLC0415  (see the note at the top)

    for target in args.target:
        targets.create(target)  # a bad spec is one clear line, before pytest starts
    if args.tag:
        from harness.catalogue import loader  # noqa: PLC0415

        unknown = _tags(loader.load(_paths(args.paths)), args.tag)
        if unknown is not None:
            print(f"harness: {unknown}", file=sys.stderr)
            return exitcodes.USAGE
    if args.baselines and not Path(args.baselines).is_dir():
        print(f"harness: --baselines {args.baselines}: no such folder", file=sys.stderr)
        return exitcodes.USAGE
    if args.shard:
        try:
            shards.parse(args.shard)
        except ValueError as error:
            print(f"harness: {error}", file=sys.stderr)
            return exitcodes.USAGE
        if args.reports == "":
            print("harness: a --shard run writes reports: not --reports ''", file=sys.stderr)
            return exitcodes.USAGE
    for target in args.target:
        # A version npm does not publish is one clear line too, before pytest starts.
        targets.prepare(targets.create(target))
    return _pytest(args, args.target, _paths(args.paths))


def _pytest(args: argparse.Namespace, given: Sequence[str], paths: Sequence[Path]) -> int:
    """The catalogue under ``paths`` on the ``given`` targets, through pytest."""
    import pytest  # noqa: PLC0415  (see the note at the top)

    extra = getattr(args, "after_dashes", [])
    argv = ["--pyargs", "harness.testing", "-p", "no:cacheprovider", "-q", "-rfE"]
    if not extra:  # only the plugins the run needs (see _own_plugins)
        argv += ["-p", "harness.pytest_plugin"]
        argv += ["-p", "xdist.plugin"] if args.workers else []
    # The run is this command's, not the project's test suite: no ini file's
    # addopts (a checkout's own pytest settings opt its tests into --allow-exec).
    argv += ["-o", "addopts="]
    # Plugins of the test suite's, not the run's: hypothesis's would import itself at exit.
    argv += ["-p", "no:hypothesispytest", "--assert=plain"]
    # The CLI has imported the harness already; pytest need not say it cannot rewrite it.
    argv += ["-W", "ignore::pytest.PytestAssertRewriteWarning"]
    argv += ["--rootdir", str(Path.cwd())]
    for path in paths:
        argv += ["--harness-scenarios", str(path)]
    for target in given:
        argv += ["--harness-target", target]
    for cli in getattr(args, "cli_only", ()):
        argv += ["--harness-cli", cli]
    reports = default_reports() if args.reports is None else args.reports
    if reports:
        argv += ["--harness-reports", str(reports)]
    if args.baselines:
        argv += ["--harness-baselines", args.baselines]
    if args.allow_exec:
        argv.append("--harness-allow-exec")
    if getattr(args, "show_known", False):
        argv.append("--harness-show-known")
    if getattr(args, "shard", None):
        argv += ["--harness-shard", args.shard]
    if getattr(args, "k", None):
        argv += ["-k", args.k]
    if getattr(args, "tag", None):
        argv += ["-m", " or ".join(args.tag)]
    if args.workers:
        argv += ["-n", str(args.workers)]
    argv += extra
    ending = _Ending()
    # pytest's own temporary folders (pytest-xdist makes some) go with the run.
    with tempfile.TemporaryDirectory(prefix="harness-run-") as scratch, _own_plugins(not extra):
        code = int(pytest.main([*argv, "--basetemp", scratch], plugins=[ending]))
    if signals.interrupted():
        code = exitcodes.INTERRUPTED
    print(exitcodes.last_line(code, ending.cause(code)))
    return code


@contextmanager
def _own_plugins(only: bool) -> Iterator[None]:
    """
    With ``only``, pytest loads the harness's plugin (and pytest-xdist's when
    workers are asked for), not every plugin installed beside it: importing
    coverage, syrupy, hypothesis and the rest would cost a short run most of
    its time.  Arguments after ``--`` may need any of them, so then all load.
    """
    if not only:
        yield
        return
    before = os.environ.get(_NO_AUTOLOAD)
    os.environ[_NO_AUTOLOAD] = "1"
    try:
        yield
    finally:
        if before is None:
            del os.environ[_NO_AUTOLOAD]
        else:
            os.environ[_NO_AUTOLOAD] = before


_NO_AUTOLOAD = "PYTEST_DISABLE_PLUGIN_AUTOLOAD"


class _Ending:
    """A pytest plugin that keeps the harness session, to say why the run ends as it does."""

    def __init__(self) -> None:
        self.session: Any = None

    def pytest_sessionfinish(self, session: Any) -> None:
        from harness.pytest_plugin import session_of  # noqa: PLC0415  (see the note at the top)

        self.session = session_of(session.config)

    def cause(self, code: int) -> str:
        if self.session is None:
            return "see the error message" if code else ""
        return str(self.session.cause(code))


def drift(args: argparse.Namespace) -> int:
    """The model-api scenarios of one CLI on the real binary at each version, and the drift."""
    from harness import targets  # noqa: PLC0415  (see the note at the top)

    order = [args.start, *args.to]
    if len(set(order)) < len(order):
        print("harness: drift: give each version once", file=sys.stderr)
        return exitcodes.USAGE
    given = [f"real:{args.cli}={version}" for version in order]
    for target in given:
        targets.prepare(targets.create(target))
    args.cli_only = [args.cli]
    return _pytest(args, given, [Path(p) for p in args.paths] or [Path("scenarios/model-api")])


def bench(args: argparse.Namespace) -> int:
    from harness.reports import bench  # noqa: PLC0415  (only the benchmark needs it)

    return bench.main(args.scenarios, args.repeat)


def baseline(args: argparse.Namespace) -> int:
    from harness import engine, targets  # noqa: PLC0415  (see the note at the top)
    from harness.catalogue import loader  # noqa: PLC0415
    from harness.reports import baseline, rebaseline  # noqa: PLC0415
    from harness.seams import RunOptions, case  # noqa: PLC0415
    from harness.targets.announce import about  # noqa: PLC0415

    target = targets.create(args.target)
    targets.prepare(target)
    if engine.baseline_path(Path("baselines"), target.name) is None:
        print(f"harness: give the target a short name: NAME={args.target}", file=sys.stderr)
        return exitcodes.USAGE
    loaded = loader.load(_paths(args.paths))
    out = Path(args.out or f"baselines/{target.name}.yaml")
    old, problems = None, list(loaded.problems)
    if not problems and out.exists():
        # Merged into, so it must load: a typo must not cost the reasons in it.
        old, problems = baseline.load(out, baseline.known(loaded.scenarios))
    for problem in problems:
        print(problem, file=sys.stderr)
    if problems:
        return exitcodes.USAGE
    try:
        options = RunOptions(allow_exec=args.allow_exec)
        results = [case.execute(s, target, options) for s in loaded.scenarios]
    finally:
        targets.close_all()
        close = getattr(target, "close", None)
        if close is not None:
            close()
    why = about(target, target.name, target.kind).not_started
    if why is not None:  # a baseline of a target that never ran would list nothing true
        print(f"harness: {target.name} did not start: {why}", file=sys.stderr)
        return exitcodes.USAGE
    merged = rebaseline.merge(target.name, results, old, prune=args.prune)
    text = rebaseline.render(merged.baseline, rebaseline.header_of(out, target.name))
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text, encoding="utf-8")
    failing, skipped = rebaseline.counts(merged.baseline)
    changes = f"{merged.added} entries added, {merged.stale} stale"
    if args.prune:
        changes += f", {merged.pruned} pruned"
    elif merged.stale:
        changes += " (--prune removes them)"
    print(
        f"wrote {out}: {failing} known failure(s) and {skipped} skip(s) of {len(results)} "
        f"scenarios; {changes}"
    )
    return 0


def merge(args: argparse.Namespace) -> int:
    from harness import engine, shards, targets  # noqa: PLC0415  (see the note at the top)

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
    results = [r for _, manifest in found for r in manifest.results]
    abouts = [a for _, manifest in found for a in manifest.abouts]
    reports = Path(args.reports) if args.reports else default_reports()
    try:
        run = found[0][1].run
        session = engine.merged(run, results, abouts, Path.cwd(), reports)
        for line in session.summary_lines():
            print(line)
        code = session.status()
        print(f"harness: reports written to {reports}")
        print(exitcodes.last_line(code, session.cause(code)))
    finally:
        targets.close_all()
    return code


def record(args: argparse.Namespace) -> int:
    from harness.record import command  # noqa: PLC0415  (only these commands need it)

    return command.record(args)


def import_(args: argparse.Namespace) -> int:
    from harness.record import command  # noqa: PLC0415

    return command.import_(args)


def fuzz(args: argparse.Namespace) -> int:
    from harness.fuzz import main  # noqa: PLC0415  (hypothesis loads only for this command)

    return main.main(args)


def serve(args: argparse.Namespace) -> int:
    from harness.targets import serve  # noqa: PLC0415  (only the protocol server needs it)

    return serve.main()


#: ``harness init adaptor --lang``; tests/test_init.py holds it to
#: `harness.targets.skeleton.SKELETONS` (kept here so that help answers without importing it).
LANGUAGES = ("python", "node", "go")


def init_adaptor(args: argparse.Namespace) -> int:
    from harness.targets import skeleton  # noqa: PLC0415  (only this command needs it)

    written = skeleton.write(args.lang, args.dir, args.name)
    files = ", ".join(str(f) for f in written.files)
    print(f"wrote {files}: a {args.lang} adaptor named {written.name} (docs/adaptors.md)")
    if written.build:
        print(f"build it, then run the catalogue against it:\n  {written.build}\n  {written.run}")
    else:
        print(f"run the catalogue against it:\n  {written.run}")
    return exitcodes.OK


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
    top = _Parser(
        prog="harness",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    top.add_argument("--version", action=_Version)
    sub = top.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser("lint", help="check scenario files; one line per problem, exit 4 if any")
    p.add_argument("paths", nargs="*", metavar="PATHS", help=PATHS_HELP)
    p.set_defaults(func=lint)

    p = sub.add_parser("list", help="list scenarios (id, seam, clauses, title), or their tags")
    p.add_argument("paths", nargs="*", metavar="PATHS", help=PATHS_HELP)
    p.add_argument("--tag", action="append", default=[], help="only scenarios with this tag")
    p.add_argument("--tags", action="store_true", help="list the tags in use, with counts")
    p.set_defaults(func=list_)

    p = sub.add_parser("show", help="show one scenario: its clauses and its YAML as written")
    p.add_argument("id", metavar="ID", help="the scenario's id (harness list shows them)")
    p.add_argument("paths", nargs="*", metavar="PATHS", help=PATHS_HELP)
    p.set_defaults(func=show)

    p = sub.add_parser(
        "run",
        help="run the catalogue against targets (through pytest) and write the reports",
        epilog=TARGETS_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("paths", nargs="*", metavar="PATHS", help=PATHS_HELP)
    p.add_argument(
        "--target", action="append", default=[], metavar="SPEC", help="a target (see below)"
    )
    p.add_argument("-k", default=None, metavar="EXPR", help="pytest -k expression over case ids")
    p.add_argument("--tag", action="append", default=[], help="only scenarios with this tag")
    p.add_argument(
        "--reports",
        default=None,
        metavar="DIR",
        help="folder for the reports ('' for none; default: a folder per working folder "
        "under ~/.cache/structured-output-harness/reports, never the project's own reports/)",
    )
    p.add_argument("-n", "--workers", default=None, metavar="N", help="pytest-xdist workers")
    p.add_argument(
        "--baselines",
        default=None,
        metavar="DIR",
        help="folder holding each named target's baseline as NAME.yaml "
        "(default: ./baselines when it exists)",
    )
    p.add_argument(
        "--show-known",
        action="store_true",
        help="print the current diff of each failure a baseline lists (quiet by default)",
    )
    p.add_argument("--allow-exec", action="store_true", help=ALLOW_EXEC_HELP)
    p.add_argument(
        "--shard", default=None, metavar="K/N", help="run the K-th of N shards (see harness merge)"
    )
    p.set_defaults(func=run)

    p = sub.add_parser(
        "drift",
        help="run one CLI's model-api scenarios on the real binary at several versions and "
        "write the drift report (reports/drift.md)",
    )
    p.add_argument(
        "paths", nargs="*", help="scenario files or folders (default scenarios/model-api)"
    )
    p.add_argument("--cli", required=True, choices=("claude", "codex"))
    p.add_argument("--from", dest="start", required=True, metavar="VERSION", help="oldest version")
    p.add_argument(
        "--to", action="append", required=True, metavar="VERSION",
        help="a later version (repeatable: each in turn, e.g. --to 2.1.328 --to 2.1.332)",
    )  # fmt: skip
    p.add_argument(
        "--reports",
        default=None,
        metavar="DIR",
        help="folder for the reports ('' for none; default: as harness run)",
    )
    p.add_argument("-n", "--workers", default=None, metavar="N", help="pytest-xdist workers")
    p.add_argument(
        "--baselines", default=None, metavar="DIR", help="folder of per-target baselines"
    )
    p.add_argument("--allow-exec", action="store_true", help=ALLOW_EXEC_HELP)
    p.set_defaults(func=drift)

    p = sub.add_parser("merge", help="combine the reports of a run's shards into one set")
    p.add_argument("folders", nargs="+", metavar="DIR", help="the report folders of the shards")
    p.add_argument("--reports", default=None, metavar="DIR", help="folder for the merged reports")
    p.set_defaults(func=merge)

    p = sub.add_parser("baseline", help="write a baseline of a target's current failures")
    p.add_argument("paths", nargs="*", metavar="PATHS", help=PATHS_HELP)
    p.add_argument("--target", required=True, help="NAME=SPEC: the target and its short name")
    p.add_argument(
        "-o", "--out", default=None, help="file to merge into (default baselines/NAME.yaml)"
    )
    p.add_argument("--prune", action="store_true", help="remove entries that no longer apply")
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
        "fuzz", help="generate cases, compare two targets on each, write the disagreements"
    )
    p.add_argument("--seam", required=True, choices=("model-api", "agent-cli"))
    p.add_argument("--cli", choices=("claude", "codex"), help="model-api: the CLI to fuzz")
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
        choices=("codex", "claude", "cursor", "codebuddy"),
        help="agent-cli: only these drivers (repeatable)",
    )
    p.add_argument(
        "--allow-exec",
        action="store_true",
        help="also generate cases that make the CLI run commands (Bash), confined as for "
        "harness run --allow-exec; without it no generated case runs a command",
    )
    p.set_defaults(func=fuzz)

    p = sub.add_parser(
        "serve", help="serve the reference adaptor over the JSON-lines target protocol"
    )
    p.set_defaults(func=serve)

    p = sub.add_parser("init", help="write a starting point: an adaptor skeleton in a language")
    things = p.add_subparsers(dest="thing", required=True, metavar="WHAT")
    p = things.add_parser(
        "adaptor",
        help="an adaptor speaking the JSON-lines protocol, passing the cases without a schema",
        description="Write an adaptor skeleton into DIR (new or empty): it speaks the "
        "JSON-lines protocol, runs the CLI a request names, passes the agent-cli cases without "
        "a schema and answers the others skipped. Prints the command that runs the catalogue "
        "against it.",
    )
    p.add_argument("--lang", required=True, choices=LANGUAGES, help="the skeleton's language")
    p.add_argument("--name", default=None, help="the adaptor's target name (default: from DIR)")
    p.add_argument("dir", metavar="DIR", help="the folder to write (new, or empty)")
    p.set_defaults(func=init_adaptor)

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
    p.add_argument("scenarios", nargs="?", default="scenarios", help="the scenarios folder")
    p.add_argument("--repeat", type=int, default=3, help="runs per measurement (default 3)")
    p.set_defaults(func=bench)
    return top


def mutants_(args: argparse.Namespace) -> int:
    from harness.reports import mutants  # noqa: PLC0415  (only this command needs it)

    paths = [Path(p) for p in args.scenarios] or [Path("scenarios/agent-cli")]
    modules = args.module or list(mutants.MODULES)
    return mutants.main(paths, modules, args.equivalents, args.jobs, args.deadline)


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
        return int(args.func(args))
    except InvalidScenarios as error:
        for problem in error.problems:  # file:line:col first, as lint prints them
            print(problem, file=sys.stderr)
        return exitcodes.USAGE
    except HarnessError as error:
        print(f"harness: {error}", file=sys.stderr)
        return exitcodes.USAGE


if __name__ == "__main__":
    sys.exit(main())
