"""
``harness baseline``: a target's current failures and skips, merged into its
baseline file.

A baseline is hand-edited: each reason says why the target fails, and the
order of entries is the author's.  So an existing file is read (and must
load: a file that does not is a usage error, never overwritten) and kept,
entry by entry with its reason and in its order; only what is new is
appended, with a generated reason to replace.  A failure is recorded per
check (the outcome fields that differ, or ``errored``), so a later
regression on another check of the same scenario still shows; a scenario
whose failing fields are not baseline checks (other seams' fields) gets a
whole-scenario entry.  Entries that no longer match (stale) are kept, and
counted, unless ``prune`` removes them.
"""

from __future__ import annotations

import json
import textwrap
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path

from harness.baselines.verdicts import WHOLE, Baseline, Entry, Skip, stale
from harness.baselines.verdicts import _failed_checks as failed_checks
from harness.seams.case import CaseResult

#: The longest generated reason (the first line of an error, or the fields).
_REASON = 160


@cache
def checks() -> frozenset[str]:
    """The checks a baseline entry may name (the packaged schema's enum)."""
    text = resources.files("harness").joinpath("schemas/baseline.schema.json").read_text()
    schema = json.loads(text)
    item = schema["properties"]["known_failures"]["items"]
    return frozenset(item["properties"]["check"]["enum"])


@dataclass(frozen=True)
class Merged:
    """The baseline to write, and what changed against the one that was there."""

    baseline: Baseline
    added: int
    stale: int
    pruned: int
    #: Scenario skips replaced by the driver skip that covers them.
    folded: int = 0


def _wanted(result: CaseResult) -> list[Entry]:
    """The entries a failing case needs: one per failing check, or the whole scenario."""
    found = failed_checks(result) - {"provider"}
    if result.status == "errored":
        first = (result.reason or "").strip().splitlines()[:1] or ["errored"]
        return [Entry(result.scenario, "errored", f"errored: {first[0][:_REASON]}")]
    if found and found <= checks():
        return [Entry(result.scenario, check, f"differs on {check}") for check in sorted(found)]
    return [Entry(result.scenario, WHOLE, "differs on " + ", ".join(sorted(found))[:_REASON])]


def merge(
    target: str,
    results: Iterable[CaseResult],
    old: Baseline | None,
    *,
    prune: bool = False,
    drivers: Mapping[str, str | None] | None = None,
    unannounced: frozenset[str] = frozenset(),
) -> Merged:
    """
    ``old`` (kept as written) with the failures and skips of ``results``
    added.  ``drivers`` is the catalogue (scenario id → the driver it drives,
    as `baseline.known` gives it) and ``unannounced`` the drivers the target
    does not announce: the cases of such a driver it declines are one
    ``driver`` skip, not one entry per scenario (and the old file's scenario
    skips of that driver fold into it, the first one's reason kept).  Stale
    entries are `baseline.stale`'s, the count a run shows.
    """
    ordered = sorted(results, key=lambda r: r.scenario)
    old = old or Baseline(target)
    drivers = drivers or {}
    failing = {r.scenario: r for r in ordered if r.status in {"failed", "errored"}}
    wanted = {s: _wanted(r) for s, r in failing.items()}
    declined = {
        r.scenario: r for r in ordered if r.status == "skipped" and r.skipped_by == "target"
    }
    found = stale(old, ordered)
    gone = {id(s.entry) for s in found} if prune else set()
    entries = [e for e in old.entries if id(e) not in gone]
    added = 0
    for scenario, needs in wanted.items():
        mine = [e for e in entries if e.scenario == scenario]
        if any(e.check is WHOLE for e in mine):
            continue
        new = [w for w in needs if all(e.check != w.check for e in mine)]
        if mine and any(w.check is WHOLE for w in new):
            new = []  # listed per check, now unlisted fields: the run says so, not a rewrite
        entries += new
        added += len(new)

    skips = [s for s in old.skips if id(s) not in gone]
    listed = {e.scenario for e in entries}  # a case is listed as failing or skipped, not both
    whole = {
        d: frozenset(s for s, of in drivers.items() if of == d)
        for d in sorted(unannounced)
        if any(drivers.get(s) == d for s in declined)
    }
    folds = 0
    for driver, covers in whole.items():
        if any(s.driver == driver for s in skips) or covers & listed:
            continue
        folded = [s for s in skips if s.driver is None and s.scenario in covers]
        first = next(r for s, r in declined.items() if s in covers)
        why = folded[0].reason if folded else _first_line(first.reason)
        skips = [s for s in skips if all(s is not f for f in folded)]
        skips.append(Skip(None, driver, why, covers))
        added += 1
        folds += len(folded)
    covered = {c for s in skips for c in (s.covers or {s.scenario})}
    for scenario, result in declined.items():
        if scenario in covered or scenario in failing or scenario in listed:
            continue
        skips.append(Skip(scenario, None, _first_line(result.reason), frozenset({scenario})))
        added += 1
    merged = Baseline(target, tuple(entries), tuple(skips))
    return Merged(merged, added, len(found), len(gone), folds)


def _first_line(reason: str | None) -> str:
    return (reason or "skipped").splitlines()[0][:_REASON]


def render(baseline: Baseline, header: Iterable[str] = ()) -> str:
    """The baseline as YAML, entries in their order, reasons as they are."""
    lines = [*header, f"target: {baseline.target}", "known_failures:"]
    for entry in baseline.entries:
        lines.append(f"  - scenario: {entry.scenario}")
        if entry.check is not WHOLE:
            lines.append(f"    check: {entry.check}")
        lines += _reason(entry.reason)
    if not baseline.entries:
        lines[-1] = "known_failures: []"
    if baseline.skips:
        lines.append("skips:")
    for skip in baseline.skips:
        key = "scenario" if skip.driver is None else "driver"
        lines.append(f"  - {key}: {skip.scenario if skip.driver is None else skip.driver}")
        lines += _reason(skip.reason)
    return "\n".join(lines) + "\n"


#: The widest line `render` writes when it can fold a reason.
_WIDTH = 88


def _reason(reason: str) -> list[str]:
    """
    A reason as YAML: on its line, quoted, when it fits; else folded (``>-``)
    into lines that read like the hand-written ones, when folding gives the
    same text back (single spaces, printable); else quoted, however long.
    """
    quoted = f"    reason: {json.dumps(reason, ensure_ascii=False)}"
    words = reason.split(" ")
    foldable = reason.isprintable() and all(words) and not reason.startswith(("#", "-"))
    if len(quoted) <= _WIDTH or not foldable:
        return [quoted]
    wrapped = textwrap.wrap(reason, _WIDTH - 6, break_long_words=False, break_on_hyphens=False)
    return ["    reason: >-", *(f"      {line}" for line in wrapped)]


#: What a new file starts with.
HEADER = (
    "# Known failures of the {target} target, written by `harness baseline`.",
    "# Replace each reason with why the target fails; remove entries as they are fixed.",
)


def header_of(path: Path, target: str) -> list[str]:
    """The comment lines at the top of an existing file (kept), or the new-file header."""
    if not path.exists():
        return [line.format(target=target) for line in HEADER]
    kept = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.startswith("#"):
            break
        kept.append(line)
    return kept


def counts(baseline: Baseline) -> tuple[int, int]:
    """How many scenarios the baseline lists as failing, and as skipped."""
    failing = len({e.scenario for e in baseline.entries})
    return failing, len({c for s in baseline.skips for c in (s.covers or {s.scenario or ""})})
