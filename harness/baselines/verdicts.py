"""
Expectation baselines: what one target is known to get wrong, and which cases
it declines to run, each with a reason.

A baseline turns a case into one of three verdicts: ``expected`` (listed, and
failing exactly where listed), ``regression`` (failing where nothing is
listed, or skipped by the target where no skip is listed) and ``stale``
(listed, but no longer so: a known failure that passes or is skipped now, a
listed skip that runs now), which fails the run until the entry is removed.
Known failures name a whole scenario or one check (an outcome field) in it;
skips name a scenario, or a driver for every agent-cli scenario of that CLI.

Only a skip the target decides needs an entry: a case the harness skips
because the target's kind does not serve its seam, or that the scenario
itself says a target of this kind cannot run (the real binaries offline), is
the catalogue's business and the same for every target of that kind.

Baselines are loaded like scenarios: safe YAML, the packaged schema, then
checks that no two entries contradict each other, each problem as
``file:line:col: field: message``.  An entry naming a scenario or driver the
catalogue lacks is *unmet*: kept aside with its position, so that a baseline
used with another folder of scenarios is one summary line, and an error only
where the caller asks for strictness (``harness run --strict-baseline``,
``harness baseline``).

Whether an entry still holds is one computation, `stale`, over the entries
and the results of the cases that ran: the run's summary and exit status
and ``harness baseline --prune`` all count with it, entry by entry (a
scenario listed per check that passes now is as many stale entries as
checks; a driver skip whose scenarios run now is one).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.catalogue import yamlfile
from harness.catalogue.scenario import Request, Scenario
from harness.catalogue.suggest import did_you_mean
from harness.exceptions import Problem
from harness.seams.case import CaseResult

#: A whole-scenario entry has no check.
WHOLE = None


@dataclass(frozen=True)
class Entry:
    """A known failure: a scenario, or one check in it, and why it fails."""

    scenario: str
    check: str | None
    reason: str
    #: Where the entry starts in its file (a stale entry is named by it).
    line: int = 0


@dataclass(frozen=True)
class Skip:
    """
    Cases the target declines: one scenario, or every agent-cli scenario of
    one driver (``covers`` is the scenario ids it stands for in the catalogue
    the baseline was loaded against).
    """

    scenario: str | None
    driver: str | None
    reason: str
    covers: frozenset[str] = frozenset()
    #: Where the entry starts in its file.
    line: int = 0

    @property
    def label(self) -> str:
        return f"scenario {self.scenario}" if self.driver is None else f"driver {self.driver}"


@dataclass(frozen=True)
class Stale:
    """An entry the cases that ran no longer bear out, and why."""

    entry: Entry | Skip
    why: str

    @property
    def label(self) -> str:
        if isinstance(self.entry, Skip):
            return f"skip of {self.entry.label}"
        check = f" ({self.entry.check})" if self.entry.check is not WHOLE else ""
        return f"known failure {self.entry.scenario}{check}"


@dataclass(frozen=True)
class Baseline:
    """The known failures and skips of the target named ``target``."""

    target: str
    entries: tuple[Entry, ...] = ()
    skips: tuple[Skip, ...] = ()
    #: The file it was read from.
    path: str = ""
    #: Entries naming a scenario or driver the catalogue it was loaded against
    #: lacks, each as the problem a strict reading reports; not judged.
    unmet: tuple[Problem, ...] = ()

    def for_scenario(self, scenario: str) -> tuple[Entry, ...]:
        return tuple(e for e in self.entries if e.scenario == scenario)

    def skip_for(self, scenario: str) -> Skip | None:
        return next((s for s in self.skips if scenario in s.covers), None)

    def where(self, scenario: str) -> str:
        """``file:line`` of the first entry for ``scenario``, to point a reader at it."""
        lines = [e.line for e in self.for_scenario(scenario)]
        skip = self.skip_for(scenario)
        lines += [skip.line] if skip is not None and skip.line else []
        return f"{self.path}:{min(lines)}" if lines else self.path

    def unmet_summary(self) -> str:
        """The unmet entries as one line: how many, and the first of them."""
        if not self.unmet:
            return ""
        first = self.unmet[0]
        n = len(self.unmet)
        return (
            f"{n} {'entry names' if n == 1 else 'entries name'} a scenario or driver "
            f"this run's catalogue does not have, not judged (first: {first.file}:"
            f"{first.line}: {first.message}); --strict-baseline makes this an error"
        )


def known(scenarios: Iterable[Scenario]) -> dict[str, str | None]:
    """Each scenario id with the agent CLI it drives (None off the agent-cli seam)."""
    return {s.id: s.request.driver if isinstance(s.request, Request) else None for s in scenarios}


def load(path: Path, catalogue: Mapping[str, str | None]) -> tuple[Baseline | None, list[Problem]]:
    """
    Read a baseline file against ``catalogue`` (scenario id → driver, as
    `known` gives it); problems point at file, line and field.
    """
    checked = yamlfile.read(path, "baseline.schema.json", "baseline")
    if checked.doc is None:
        return None, checked.problems
    doc: Any = checked.doc
    problem, problems = checked.problem, checked.problems
    unmet: list[Problem] = []

    def absent(at: tuple[str | int, ...], message: str) -> None:
        # Put by `problem`, then moved aside: the same position and wording.
        problem(at, message)
        unmet.append(problems.pop())

    seen: dict[tuple[str, str | None], int] = {}
    ignored: set[int] = set()
    for i, raw in enumerate(doc["known_failures"]):
        scenario, check = raw["scenario"], raw.get("check")
        if scenario not in catalogue:
            hint = did_you_mean(scenario, catalogue)
            absent(("known_failures", i, "scenario"), f"unknown scenario {scenario!r}{hint}")
            ignored.add(i)
        if (scenario, check) in seen:
            problem(("known_failures", i), f"duplicate of entry {seen[(scenario, check)]}")
        elif (check is WHOLE and any(s == scenario for s, _ in seen)) or (
            check is not WHOLE and (scenario, WHOLE) in seen
        ):
            problem(
                ("known_failures", i),
                f"contradicts another entry for {scenario!r}: list the whole scenario "
                "or individual checks, not both",
            )
        seen.setdefault((scenario, check), i)
    failing: dict[str, int] = {}
    for (scenario, _), i in seen.items():
        failing.setdefault(scenario, i)
    skips = _skips(
        doc.get("skips", []),
        catalogue,
        failing,
        problem=problem,
        absent=absent,
        line_of=checked.line,
    )
    if problems:
        return None, problems
    entries = tuple(
        Entry(
            raw["scenario"],
            raw.get("check"),
            raw["reason"].strip(),
            checked.line(("known_failures", i)),
        )
        for i, raw in enumerate(doc["known_failures"])
        if i not in ignored
    )
    return Baseline(doc["target"], entries, skips, str(path), tuple(unmet)), []


def _skips(
    raws: list[dict[str, str]],
    catalogue: Mapping[str, str | None],
    failing: Mapping[str, int],
    *,
    problem: Any,
    absent: Any,
    line_of: Any,
) -> tuple[Skip, ...]:
    """The ``skips`` entries, each resolved to the scenarios it covers."""
    drivers = {d for d in catalogue.values() if d is not None}
    covered: dict[str, int] = {}
    out = []
    for i, raw in enumerate(raws):
        scenario, driver = raw.get("scenario"), raw.get("driver")
        at: tuple[str | int, ...] = ("skips", i)
        if (scenario is None) == (driver is None):
            problem(at, "give either scenario or driver" + (", not both" if scenario else ""))
            continue
        if driver is not None:
            if driver not in drivers:
                known_drivers = ", ".join(sorted(drivers)) or "none"
                absent((*at, "driver"), f"no scenario drives {driver!r} (drivers: {known_drivers})")
                continue
            covers = frozenset(s for s, d in catalogue.items() if d == driver)
        else:
            assert scenario is not None
            if scenario not in catalogue:
                hint = did_you_mean(scenario, catalogue)
                absent((*at, "scenario"), f"unknown scenario {scenario!r}{hint}")
                continue
            covers = frozenset({scenario})
        for each in sorted(covers):
            if each in covered:
                problem(at, f"{each!r} is already covered by skips[{covered[each]}]")
                break
            if each in failing:
                problem(
                    at,
                    f"{each!r} is also a known failure (known_failures[{failing[each]}]): "
                    "a case either fails or is skipped",
                )
                break
        covered.update(dict.fromkeys(covers, i))
        out.append(Skip(scenario, driver, raw["reason"].strip(), covers, line_of(at)))
    return tuple(out)


def _failed_checks(result: CaseResult) -> set[str]:
    if result.status == "errored":
        return {"errored"}
    fields = set()
    for mismatch in result.mismatches:
        fields.add(mismatch.field)
        if mismatch.field.startswith("provider."):
            fields.add("provider")
    return fields


def judge(result: CaseResult, baseline: Baseline | None) -> tuple[str | None, str]:
    """
    The verdict for ``result`` and the reason to show: ``None`` (passed, or
    skipped as listed or by the catalogue), ``"expected"``, ``"regression"``
    or ``"stale"``.
    """
    entries = () if baseline is None else baseline.for_scenario(result.scenario)
    skip = None if baseline is None else baseline.skip_for(result.scenario)
    reasons = "; ".join(e.reason for e in entries)
    if result.status == "skipped":
        return _judge_skip(result, baseline, skip, reasons)
    if skip is not None:
        return "stale", f"listed as skipped ({skip.label}: {skip.reason}) but runs now; remove it"
    failing = result.status in {"failed", "errored"}
    if not entries:
        return ("regression", "not in the baseline") if failing else (None, "")
    if not failing:
        return "stale", f"listed in the baseline but passes now ({reasons}); remove the entry"
    if any(e.check is WHOLE for e in entries):
        return "expected", reasons
    listed = {e.check for e in entries if e.check is not None}
    failed = _failed_checks(result)
    unexpected = sorted(failed - listed - {"provider"})
    if unexpected:
        return "regression", f"fails on {', '.join(unexpected)}, which the baseline does not list"
    gone = sorted(c for c in listed if c not in failed)
    if gone:
        return "stale", f"baseline lists {', '.join(gone)}, which passes now; remove the entry"
    return "expected", reasons


def _judge_skip(
    result: CaseResult, baseline: Baseline | None, skip: Skip | None, reasons: str
) -> tuple[str | None, str]:
    if reasons:
        # A known failure that is not run any more is no longer checked.
        return "stale", f"listed as a known failure ({reasons}) but skipped now; remove the entry"
    if result.skipped_by != "target":
        if skip is not None and skip.driver is None:
            return "stale", (
                f"listed as skipped ({skip.label}), but the {result.skipped_by} skips it for "
                "every target of this kind; remove the entry"
            )
        return None, ""
    if baseline is None:
        return None, ""
    if skip is None:
        return "regression", "skipped by the target, and the baseline lists no such skip"
    return None, skip.reason


def stale(baseline: Baseline, results: Iterable[CaseResult]) -> tuple[Stale, ...]:
    """
    Every entry of ``baseline`` the results no longer bear out, in file
    order.  Only entries whose scenarios ran are judged (a run over part of
    the catalogue says nothing of the rest).  A known failure is stale when
    its case passes or is skipped now, or no longer fails on its check; a
    skip, when a case it covers runs now, or when none of its cases is
    skipped by the target (the harness or the scenario skips them for every
    target of this kind).  A case the harness skips inside a driver skip is
    neither here nor there.
    """
    ran = {r.scenario: r for r in results}
    found = []
    for entry in baseline.entries:
        result = ran.get(entry.scenario)
        if result is None:
            continue
        if result.status in {"passed", "skipped"}:
            found.append(Stale(entry, f"{result.status} now"))
        elif entry.check is not WHOLE and entry.check not in _failed_checks(result):
            found.append(Stale(entry, f"{entry.check} passes now"))
    for skip in baseline.skips:
        mine = [ran[s] for s in sorted(skip.covers) if s in ran]
        running = [r.scenario for r in mine if r.status != "skipped"]
        if running:
            more = f" (and {len(running) - 1} more)" if len(running) > 1 else ""
            found.append(Stale(skip, f"{running[0]} runs now{more}"))
        elif mine and all(r.skipped_by != "target" for r in mine):
            by = " and the ".join(sorted({str(r.skipped_by) for r in mine}))
            why = f"the {by} skips it for every target of this kind"
            found.append(Stale(skip, why))
    return tuple(sorted(found, key=lambda s: s.entry.line))
