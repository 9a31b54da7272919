"""
Expectation baselines: the known failures of one target, each with a reason.

A baseline turns a failing case into one of three verdicts: ``expected``
(listed, and failing exactly where listed), ``regression`` (failing where
nothing is listed) and ``stale`` (listed, but passing now, which fails the
run until the entry is removed).  Entries name a whole scenario or one check
(an outcome field) in it.  Baselines are loaded like scenarios: safe YAML,
the packaged schema, then checks that every entry names a real scenario and
that no two entries contradict each other.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.catalogue import yamlfile
from harness.exceptions import Problem
from harness.seams.case import CaseResult

#: A whole-scenario entry has no check.
WHOLE = None


@dataclass(frozen=True)
class Entry:
    scenario: str
    check: str | None
    reason: str
    #: Where the entry starts in its file (a stale entry is named by it).
    line: int = 0


@dataclass(frozen=True)
class Baseline:
    """The known failures of the target named ``target``."""

    target: str
    entries: tuple[Entry, ...] = ()
    #: The file it was read from.
    path: str = ""

    def for_scenario(self, scenario: str) -> tuple[Entry, ...]:
        return tuple(e for e in self.entries if e.scenario == scenario)

    def where(self, scenario: str) -> str:
        """``file:line`` of the first entry for ``scenario``, to point a reader at it."""
        lines = [e.line for e in self.for_scenario(scenario)]
        return f"{self.path}:{min(lines)}" if lines else self.path


def load(path: Path, known: Iterable[str]) -> tuple[Baseline | None, list[Problem]]:
    """Read a baseline file; problems point at file, line and field."""
    checked = yamlfile.read(path, "baseline.schema.json", "baseline")
    if checked.doc is None:
        return None, checked.problems
    doc: Any = checked.doc
    problem, problems = checked.problem, checked.problems
    scenarios = set(known)
    seen: dict[tuple[str, str | None], int] = {}
    for i, raw in enumerate(doc["known_failures"]):
        scenario, check = raw["scenario"], raw.get("check")
        if scenario not in scenarios:
            problem(("known_failures", i, "scenario"), f"unknown scenario {scenario!r}")
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
    )
    return Baseline(doc["target"], entries, str(path)), []


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
    The verdict for ``result`` and the reason to show: ``None`` (passed or
    skipped, nothing listed), ``"expected"``, ``"regression"`` or ``"stale"``.
    """
    entries = () if baseline is None else baseline.for_scenario(result.scenario)
    failing = result.status in {"failed", "errored"}
    if not entries:
        return ("regression", "not in the baseline") if failing else (None, "")
    reasons = "; ".join(e.reason for e in entries)
    if not failing:
        if result.status == "skipped":
            return None, ""
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


def render(target: str, results: Iterable[CaseResult]) -> str:
    """A baseline listing every current failure, with reasons to edit."""
    lines = [
        f"# Known failures of the {target} target, written by `harness baseline`.",
        "# Replace each reason with why the target fails; remove entries as they are fixed.",
        f"target: {target}",
        "known_failures:",
    ]
    count = 0
    for result in sorted(results, key=lambda r: r.scenario):
        if result.status not in {"failed", "errored"}:
            continue
        count += 1
        if result.status == "errored":
            why = f"errored: {(result.reason or '').splitlines()[0][:160]}"
        else:
            why = "differs on " + ", ".join(sorted({m.field for m in result.mismatches}))
        lines.append(f"  - scenario: {result.scenario}")
        lines.append(f"    reason: {json.dumps(why)}")
    if not count:
        lines[-1] = "known_failures: []"
    return "\n".join(lines) + "\n"
