"""
``harness run`` and ``harness drift``: the catalogue on targets, through
pytest (the engine) with the reports plugin switched on.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from harness import exitcodes, signals
from harness.catalogue import agents
from harness.commands.command import (
    ALLOW_EXEC_HELP,
    Command,
    add_paths,
    default_reports,
    missing_extra,
    paths,
    unknown_tag,
)

#: What ``harness run --help`` says of targets.  tests/test_first_hour.py holds
#: it to `harness.targets.KINDS` (kept here so that help answers without importing it).
TARGETS_HELP = """\
Targets (--target SPEC, repeatable; default: reference):
  reference[:CLI=VERSION[,CLI=VERSION]|contract=NAME]
                              the reference adaptor, services and models (fakes as
                              subprocesses); with versions, the models with those
                              releases' profiles (model-api only): reference:claude=2.1.235;
                              with a contract, the adaptor reading runs as that SDK
                              release does (agent-cli only): reference:contract=b07349b7
  reference-inproc[:CLI=VERSION[,CLI=VERSION]|contract=NAME]
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


def run_options(p: argparse.ArgumentParser) -> None:
    add_paths(p)
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
    p.add_argument(
        "--strict-baseline",
        action="store_true",
        help="a baseline entry naming a scenario or driver the run's catalogue lacks is a "
        "usage error (by default: one summary line, the entries not judged)",
    )
    p.add_argument("--allow-exec", action="store_true", help=ALLOW_EXEC_HELP)
    p.add_argument(
        "--shard", default=None, metavar="K/N", help="run the K-th of N shards (see harness merge)"
    )
    p.add_argument(
        "--lf",
        "--last-failed",
        dest="last_failed",
        action="store_true",
        help="rerun only the cases that failed in the last run from this folder (all if none)",
    )
    p.add_argument(
        "-x", "--exitfirst", action="store_true", help="stop at the first regression or error"
    )
    p.add_argument(
        "--progress",
        default="auto",
        choices=("auto", "line", "log", "off"),
        help="per-target progress: a status line on a terminal, a line per target every 10 s "
        "in a log (auto, the default: line on a terminal unless $CI is set; off: pytest's dots)",
    )


def run(args: argparse.Namespace) -> int:
    from harness import shards, targets  # noqa: PLC0415  (loaded when the command runs)

    for target in args.target:
        targets.create(target)  # a bad spec is one clear line, before pytest starts
    if args.tag:
        from harness.catalogue import loader  # noqa: PLC0415

        unknown = unknown_tag(loader.load(paths(args.paths)), args.tag)
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
    return through_pytest(args, args.target, paths(args.paths))


def through_pytest(args: argparse.Namespace, given: Sequence[str], paths: Sequence[Path]) -> int:
    """The catalogue under ``paths`` on the ``given`` targets, through pytest."""
    import pytest  # noqa: PLC0415  (loaded when the command runs)

    if args.workers:
        missing = missing_extra("xdist", "xdist", f"-n {args.workers}")
        if missing is not None:
            print(exitcodes.last_line(exitcodes.USAGE, missing))
            return exitcodes.USAGE
    extra = getattr(args, "after_dashes", [])
    # No pytest short summary of failures (-rf): it names them by the harness's test
    # module, an installed package's path; the harness lists them by scenario file.
    argv = ["--pyargs", "harness.testing", "-p", "no:cacheprovider", "-q", "-rE"]
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
    if getattr(args, "strict_baseline", False):
        argv.append("--harness-strict-baseline")
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
    if getattr(args, "last_failed", False):
        argv.append("--harness-lf")
    if getattr(args, "exitfirst", False):
        argv.append("-x")
    shown = getattr(args, "progress", "auto")
    if shown != "off":  # the progress replaces the dots and pytest's percentages
        argv += ["--harness-progress", shown, "-o", "console_output_style=classic"]
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
        from harness.pytest_plugin import session_of  # noqa: PLC0415  (loaded when it runs)

        self.session = session_of(session.config)

    def cause(self, code: int) -> str:
        if self.session is None:
            return "see the error message" if code else ""
        return str(self.session.cause(code))


def drift_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "paths", nargs="*", help="scenario files or folders (default scenarios/model-api)"
    )
    p.add_argument("--cli", required=True, choices=agents.REAL)
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


def drift(args: argparse.Namespace) -> int:
    """The model-api scenarios of one CLI on the real binary at each version, and the drift."""
    from harness import targets  # noqa: PLC0415  (loaded when the command runs)

    order = [args.start, *args.to]
    if len(set(order)) < len(order):
        print("harness: drift: give each version once", file=sys.stderr)
        return exitcodes.USAGE
    given = [f"real:{args.cli}={version}" for version in order]
    for target in given:
        targets.prepare(targets.create(target))
    args.cli_only = [args.cli]
    return through_pytest(
        args, given, [Path(p) for p in args.paths] or [Path("scenarios/model-api")]
    )


COMMANDS = (
    Command(
        "run",
        "run the catalogue against targets (through pytest) and write the reports",
        run_options,
        run,
        epilog=TARGETS_HELP,
    ),
    Command(
        "drift",
        "run one CLI's model-api scenarios on the real binary at several versions and "
        "write the drift report (reports/drift.md)",
        drift_options,
        drift,
    ),
)
