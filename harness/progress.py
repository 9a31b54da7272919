"""
What a run shows while it runs, and what it leaves for the next one.

A catalogue run is hundreds of cases over several targets, some of them
slow (a real CLI takes a second a case, the reference a few milliseconds):
pytest's dots say neither which target is slow nor how long is left.  On a
terminal, `Progress` keeps one status line: each target's cases done out of
its total, its failures, and an estimate of the time left.  In a log (not a
terminal, or ``CI`` set), it writes one line per target that moved, every
`EVERY` seconds, and one when a target is done: never a wall of dots.

`LastFailed` is the run's memory for ``--lf``: the cases that failed (a
regression, a stale entry, an error), kept in the harness's cache folder
per working folder, never in the project.  Like pytest's own: a case that
passes leaves the list, one that was not run keeps its place.

Stdlib and pytest only: the plugin loads this before any case runs.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import time
from collections.abc import Callable, Generator, Iterable
from dataclasses import dataclass, field
from pathlib import Path

import pytest

#: Seconds between two progress lines of a target in a log.
EVERY = 10.0
#: Seconds between two redraws of the status line on a terminal.
REDRAW = 0.2
#: The modes ``--harness-progress`` takes; ``auto`` picks a line or the log by the output.
MODES = ("auto", "line", "log", "off")
_CASE = re.compile(r"\[(?P<case>[^\[\]]*@(?P<target>[^\[\]@]+))\]$")


def case_of(nodeid: str) -> tuple[str, str] | None:
    """The case id (``scenario@target``) and the target of a catalogue test's node id."""
    found = _CASE.search(nodeid)
    return None if found is None else (found["case"], found["target"])


def mode(asked: str, isatty: bool, env: dict[str, str] | os._Environ[str] = os.environ) -> str:
    """The progress shown: a status ``line`` on a terminal, a ``log`` in CI, or ``off``."""
    if asked != "auto":
        return asked
    ci = env.get("CI", "").strip().lower() not in {"", "0", "false", "no"}
    return "line" if isatty and not ci else "log"


def clock(seconds: float) -> str:
    """``seconds`` as M:SS (H:MM:SS past an hour)."""
    whole = max(0, round(seconds))
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02}:{secs:02}" if hours else f"{minutes}:{secs:02}"


@dataclass
class Tally:
    """One target's cases: how many, how many done, failed, and the seconds they took."""

    total: int = 0
    done: int = 0
    failed: int = 0
    seconds: float = 0.0
    #: `done` when the target's last log line was written (log mode).
    shown: int = 0
    #: When that line was written.
    shown_at: float = 0.0

    def counts(self) -> str:
        failed = f", {self.failed} failed" if self.failed else ""
        return f"{self.done}/{self.total}{failed}"

    def pace(self) -> str:
        """How long a case of this target takes, on average so far."""
        return f"{self.seconds / max(self.done, 1):.2f} s a case"


@dataclass(eq=False)  # a plugin: registered by identity
class Progress:
    """A pytest plugin: per-target progress with counts and an estimate of the time left."""

    mode: str
    write: Callable[[str], None]
    #: Redraws the status line in place (a terminal); unused in log mode.
    rewrite: Callable[[str], None]
    now: Callable[[], float] = time.monotonic
    tallies: dict[str, Tally] = field(default_factory=dict)
    started: float | None = None
    drawn: float = 0.0
    #: Node ids already counted (a case reports at setup, call and teardown).
    counted: set[str] = field(default_factory=set)

    # -- what to expect ---------------------------------------------------------------

    def expect(self, nodeids: Iterable[str]) -> None:
        """The cases the run will take, by target (counted once, however often given)."""
        if self.tallies:
            return  # each pytest-xdist worker reports the same collection
        for nodeid in nodeids:
            found = case_of(nodeid)
            if found is not None:
                self.tallies.setdefault(found[1], Tally()).total += 1
        self.started = self.now()

    @pytest.hookimpl(trylast=True)
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self.expect(item.nodeid for item in session.items)

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node: object, ids: list[str]) -> None:
        self.expect(ids)

    # -- as cases end ---------------------------------------------------------------

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        found = case_of(report.nodeid)
        if found is None or report.nodeid in self.counted:
            return
        # A case ends at its call, or at its setup when that did not pass.
        if report.when != "call" and not (report.when == "setup" and not report.passed):
            return
        self.counted.add(report.nodeid)
        tally = self.tallies.setdefault(found[1], Tally())
        tally.done += 1
        tally.failed += report.failed
        tally.seconds += report.duration
        self.show(found[1])

    @pytest.hookimpl(wrapper=True)
    def pytest_report_teststatus(
        self, report: pytest.TestReport
    ) -> Generator[None, tuple[str, str, str], tuple[str, str, str]]:
        """The case's status as pytest counts it, without its dot: the progress says it."""
        status: tuple[str, str, str] = yield
        if case_of(report.nodeid) is None:
            return status
        category, _, word = status
        return category, "", word

    # -- what is shown ----------------------------------------------------------------

    def left(self) -> str:
        """An estimate of the time left, from the pace so far ("" until there is one)."""
        done = sum(t.done for t in self.tallies.values())
        total = sum(t.total for t in self.tallies.values())
        if self.started is None or not done or done >= total:
            return ""
        spent = self.now() - self.started
        return f"about {clock(spent * (total - done) / done)} left"

    def status(self) -> str:
        """The terminal's status line: every target's counts, then the time."""
        parts = [f"{name} {tally.counts()}" for name, tally in self.tallies.items()]
        spent = 0.0 if self.started is None else self.now() - self.started
        tail = ", ".join(x for x in (clock(spent), self.left()) if x)
        return f"harness: {' · '.join(parts)} · {tail}"

    def show(self, target: str) -> None:
        now = self.now()
        if self.mode == "line":
            if now - self.drawn >= REDRAW or self.finished():
                self.drawn = now
                self.rewrite(self.status())
            return
        if self.mode != "log":
            return
        tally = self.tallies[target]
        if tally.done >= tally.total:
            self.write(f"harness: {target}: {tally.counts()} done ({tally.pace()})")
            tally.shown, tally.shown_at = tally.done, now
            return
        begun = now if self.started is None else self.started
        for name, other in self.tallies.items():
            moved = other.shown < other.done < other.total
            if moved and now - max(other.shown_at, begun) >= EVERY:
                left = self.left()
                more = f"; {left}" if left else ""
                self.write(f"harness: {name}: {other.counts()} ({other.pace()}){more}")
                other.shown, other.shown_at = other.done, now

    def finished(self) -> bool:
        return all(t.done >= t.total for t in self.tallies.values())


def for_terminal(asked: str, reporter: pytest.TerminalReporter) -> Progress:
    """The progress ``asked`` for, written through pytest's terminal reporter."""
    width = reporter._tw.fullwidth

    def rewrite(line: str) -> None:
        reporter.rewrite(line[: max(width - 1, 20)], erase=True)

    return Progress(mode(asked, bool(reporter.isatty)), reporter.write_line, rewrite)


def state_dir(root: Path) -> Path | None:
    """
    Where the harness keeps what one run leaves for the next, for the working
    folder ``root``: in the user's cache, never the project (None when
    ``HARNESS_CACHE=off``).
    """
    if os.environ.get("HARNESS_CACHE", "").strip().lower() == "off":
        return None
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    here = root.resolve()
    digest = hashlib.sha256(str(here).encode()).hexdigest()[:8]
    return Path(cache) / "structured-output-harness" / "runs" / f"{here.name}-{digest}"


@dataclass
class LastFailed:
    """The cases that failed in the last runs from one folder (``--lf``)."""

    path: Path | None
    cases: frozenset[str] = frozenset()

    @classmethod
    def read(cls, root: Path) -> LastFailed:
        folder = state_dir(root)
        path = None if folder is None else folder / "lastfailed.json"
        if path is None:
            return cls(None)
        try:
            document = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return cls(path)  # none yet, or damaged: as if no case had failed
        cases = document.get("failed") if isinstance(document, dict) else None
        if not isinstance(cases, list) or not all(isinstance(c, str) for c in cases):
            return cls(path)
        return cls(path, frozenset(cases))

    def after(self, ran: Iterable[str], failed: Iterable[str]) -> LastFailed:
        """What to remember after a run: the failures, with those of cases not run kept."""
        gone = set(ran)
        return LastFailed(self.path, frozenset((self.cases - gone) | set(failed)))

    def write(self) -> None:
        if self.path is None:
            return
        text = json.dumps({"failed": sorted(self.cases)}, indent=1) + "\n"
        with contextlib.suppress(OSError):  # a read-only cache costs --lf, not the run
            self.path.parent.mkdir(parents=True, exist_ok=True)
            scratch = self.path.with_suffix(".tmp")
            scratch.write_text(text, encoding="utf-8")
            scratch.replace(self.path)
