"""
The pytest plugin: options, markers and hooks, each delegating to `harness.engine`.

Installing the package registers it in every pytest run on the machine, so
it stays silent and costs nothing in a test suite that does not use it: it
only adds its options.  The harness comes to life when a harness option is
given, or when a test asks for the ``harness_case`` parameter (see
`harness.testing`), and not before.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from harness.engine import Session

# pytest imports plugins before coverage starts, and in every test suite of
# the machine: the harness itself is imported inside the hooks, only in
# sessions that use it.
_SESSION = pytest.StashKey["Session"]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("harness", "structured-output conformance harness")
    group.addoption(
        "--harness-scenarios",
        action="append",
        default=[],
        metavar="PATH",
        help="scenario files or folders (default: ./scenarios if there is one, "
        "else the catalogue bundled with the harness)",
    )
    group.addoption(
        "--harness-target",
        action="append",
        default=[],
        metavar="SPEC",
        help="target to run the catalogue against (repeatable; default: reference)",
    )
    group.addoption(
        "--harness-baselines",
        default=None,
        metavar="DIR",
        help="folder of per-target baselines NAME.yaml (default: ./baselines if present)",
    )
    group.addoption(
        "--harness-allow-exec",
        action="store_true",
        default=False,
        help="let scenarios make the systems under test run commands (confined); "
        "without it such cases are skipped",
    )
    group.addoption(
        "--harness-cli",
        action="append",
        default=[],
        metavar="CLI",
        help="only the model-api scenarios of this CLI (repeatable; `harness drift` uses it)",
    )
    group.addoption(
        "--harness-shard",
        default=None,
        metavar="K/N",
        help="run the K-th of N shards of the cases (by a hash of the scenario id)",
    )
    group.addoption(
        "--harness-reports",
        default=None,
        metavar="DIR",
        help="write the reports into DIR at the end of the session",
    )
    group.addoption(
        "--harness-progress",
        default=None,
        choices=("auto", "line", "log", "off"),
        help="per-target progress instead of dots: a status line on a terminal, a line per "
        "target every 10 s in a log (auto: by the output and $CI; default: off)",
    )
    group.addoption(
        "--harness-lf",
        action="store_true",
        default=False,
        help="run only the cases that failed in the last run from this folder (all if none did)",
    )
    group.addoption(
        "--harness-show-known",
        action="store_true",
        default=False,
        help="print the current diff of each failure a baseline lists",
    )
    group.addoption(
        "--harness-strict-baseline",
        action="store_true",
        default=False,
        help="a baseline entry naming a scenario or driver the run lacks is a usage error",
    )


_OPTIONS = (
    "harness_scenarios",
    "harness_target",
    "harness_cli",
    "harness_baselines",
    "harness_reports",
    "harness_allow_exec",
    "harness_show_known",
    "harness_strict_baseline",
    "harness_shard",
    "harness_progress",
    "harness_lf",
)


def _asked_for(config: pytest.Config) -> bool:
    """Whether this session runs the harness (some harness option was given)."""
    return any(config.getoption(name) for name in _OPTIONS)


@pytest.hookimpl(trylast=True)  # after pytest's terminal reporter, which the progress writes to
def pytest_configure(config: pytest.Config) -> None:
    config.pluginmanager.register(_Results(config), "harness-results")
    if not _asked_for(config):
        return  # a test suite that may not use the harness at all: nothing yet
    from harness.signals import terminate_gracefully  # noqa: PLC0415  (see the note at the top)

    terminate_gracefully()
    session = _session(config)
    _show_progress(config)
    if session.reports is not None and not hasattr(config, "workerinput"):
        from harness.reports.render import check_writable  # noqa: PLC0415

        # Found before anything runs, not after the whole run.
        why = check_writable(session.reports)
        if why is not None:
            raise pytest.UsageError(f"cannot write reports to {session.reports}: {why}")


def _show_progress(config: pytest.Config) -> None:
    """Per-target progress in place of the dots, when asked for (never in a worker)."""
    asked = config.getoption("harness_progress")
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    if asked in (None, "off") or reporter is None or hasattr(config, "workerinput"):
        return
    from harness import progress  # noqa: PLC0415  (see the note at the top)

    shown = progress.for_terminal(asked, reporter)
    if shown.mode != "off":
        config.pluginmanager.register(shown, "harness-progress")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """With ``--harness-lf``, only the cases that failed last time (every case if none is here)."""
    if not config.getoption("harness_lf"):
        return
    from harness import progress  # noqa: PLC0415  (see the note at the top)

    failed = progress.LastFailed.read(config.invocation_params.dir).cases
    keep = [i for i in items if (progress.case_of(i.nodeid) or ("",))[0] in failed]
    if keep:
        config.hook.pytest_deselected(items=[i for i in items if i not in keep])
        items[:] = keep


def _session(config: pytest.Config) -> Session:
    """The harness's state for this pytest session, made on first use."""
    if _SESSION not in config.stash:
        from harness import engine, targets  # noqa: PLC0415  (see the note at the top)
        from harness.seams import RunOptions  # noqa: PLC0415

        base = config.invocation_params.dir
        paths = config.getoption("harness_scenarios") or [_default_scenarios(base)]
        reports = config.getoption("harness_reports")
        given = tuple(config.getoption("harness_target") or targets.DEFAULT_TARGETS)
        config.stash[_SESSION] = engine.Session(
            paths=tuple(base / p for p in paths),
            # A reference compared with real CLIs at other versions models those versions too.
            targets=_targets(given),
            root=base,
            reports=None if reports is None else base / reports,
            baselines=_baselines(config),
            options=RunOptions(allow_exec=config.getoption("harness_allow_exec")),
            clis=tuple(config.getoption("harness_cli")),
            show_known=config.getoption("harness_show_known"),
            strict_baseline=config.getoption("harness_strict_baseline"),
            shard=_shard(config),
            keyword=config.getoption("keyword") or "",
            markers=config.getoption("markexpr") or "",
        )
        if not hasattr(config, "workerinput"):
            _prepare(given)
    return config.stash[_SESSION]


def _default_scenarios(base: Path) -> Path:
    """
    ``./scenarios`` when the project has one (a checkout of the harness, or a
    project keeping its own catalogue there), else the catalogue the package
    ships: an outside project gets the whole catalogue with no path to give.
    """
    from harness.catalogue import loader  # noqa: PLC0415  (see the note at the top)

    own = base / "scenarios"
    return own if own.is_dir() else loader.bundled()


def _targets(specs: tuple[str, ...]) -> tuple[str, ...]:
    """The run's targets with their companions; a bad spec is a usage error, not a traceback."""
    from harness import targets  # noqa: PLC0415  (see the note at the top)
    from harness.exceptions import HarnessError  # noqa: PLC0415

    try:
        return targets.with_companions(specs)
    except HarnessError as error:
        raise pytest.UsageError(str(error)) from None


def _prepare(specs: tuple[str, ...]) -> None:
    """What the targets need (CLI versions installed), once, before any worker starts."""
    from harness import targets  # noqa: PLC0415  (see the note at the top)
    from harness.exceptions import HarnessError  # noqa: PLC0415

    try:
        for spec in specs:
            targets.prepare(targets.shared(spec))
    except HarnessError as error:
        raise pytest.UsageError(str(error)) from None


def session_of(config: pytest.Config) -> Session | None:
    """The harness's state of a pytest session, if the plugin made one."""
    return config.stash.get(_SESSION, None)


def _shard(config: pytest.Config) -> tuple[int, int] | None:
    from harness import shards  # noqa: PLC0415  (see the note at the top)

    given = config.getoption("harness_shard")
    if given is None:
        return None
    try:
        return shards.parse(given)
    except ValueError as error:
        raise pytest.UsageError(str(error)) from None


def _baselines(config: pytest.Config) -> Path | None:
    given = config.getoption("harness_baselines")
    folder = config.invocation_params.dir / (given or "baselines")
    return folder if given or folder.is_dir() else None


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "harness_case" in metafunc.fixturenames:
        metafunc.parametrize("harness_case", _session(metafunc.config).params(metafunc.config))


#: The user property a case's result rides in (`harness.engine.RESULT_PROPERTY`),
#: spelled out here so that looking for it imports nothing.
_RESULT = "harness-result"


class _Results:
    """Collects case results as reports arrive and writes the reports at the end."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.written: list[Path] = []
        self.interrupted = False
        #: Case ids (``scenario@target``) this run ended, and those that failed (for ``--lf``).
        self.ran: set[str] = set()
        self.failed: set[str] = set()

    @property
    def session(self) -> Session | None:
        """The harness's session, if this pytest session has used the harness."""
        return self.config.stash.get(_SESSION, None)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self._remember(report)
        if report.when != "call":
            return
        # Under pytest-xdist the controller never collects: its first result
        # is what tells it that this session runs the harness.
        if any(name == _RESULT for name, _ in report.user_properties):
            _session(self.config).record(report)

    def _remember(self, report: pytest.TestReport) -> None:
        """Each case that ended, and whether it failed, for the next run's ``--lf``."""
        if (report.when != "call" and report.passed) or not _asked_for(self.config):
            return
        from harness.progress import case_of  # noqa: PLC0415  (see the note at the top)

        found = case_of(report.nodeid)
        if found is None:
            return
        self.ran.add(found[0])
        if report.failed:
            self.failed.add(found[0])

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        config = session.config
        reporter = config.pluginmanager.get_plugin("terminalreporter")
        if not config.getoption("harness_lf") or hasattr(config, "workerinput") or not reporter:
            return
        from harness import progress  # noqa: PLC0415  (see the note at the top)

        failed = len(progress.LastFailed.read(config.invocation_params.dir).cases)
        reporter.write_line(
            f"harness: --lf: the {failed} case(s) that failed last time, where this run has them"
            if failed
            else "harness: --lf: no failure recorded from the last run here: every case runs"
        )

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        session = self.session
        if session is None:
            return
        for line in session.summary_lines():
            terminalreporter.write_line(line)
        if self.written:
            terminalreporter.write_line(f"harness: reports written to {self.written[0].parent}")
        if self.interrupted:
            terminalreporter.write_line(
                f"harness: interrupted: the reports in {session.reports} are as they were"
            )

    def pytest_unconfigure(self, config: pytest.Config) -> None:
        if self.session is None:
            return
        from harness import targets  # noqa: PLC0415  (see the note at the top)

        targets.close_all()

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        state = self.session
        if state is None or hasattr(session.config, "workerinput"):
            return
        if session.exitstatus == pytest.ExitCode.INTERRUPTED:
            self.interrupted = state.reports is not None
            return  # the reports of the last complete run stay as they were
        from harness import progress  # noqa: PLC0415  (see the note at the top)

        last = progress.LastFailed.read(session.config.invocation_params.dir)
        last.after(self.ran, self.failed).write()
        self.written = state.finish()
        # A bad scenario, baseline or expectations file is a usage error
        # (exit 4) whatever the cases did: their verdicts cannot be trusted.
        # An unexplained disagreement between a reference model and the real
        # CLI, or a stale differential entry, fails the run though every case
        # it ran passed: judged over everything, so only here, at the end.
        if state.problems() and session.exitstatus in _OVERRIDABLE:
            session.exitstatus = pytest.ExitCode.USAGE_ERROR
        elif state.failing() and session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED


#: The statuses a bad input file replaces with a usage error.
_OVERRIDABLE = (
    pytest.ExitCode.OK,
    pytest.ExitCode.TESTS_FAILED,
    pytest.ExitCode.NO_TESTS_COLLECTED,
)
