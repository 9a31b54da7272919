"""
``harness merge``'s core: from the shards of a run (`harness.shards`), the
session of the one run they stand for, once they are shown to be it.

The catalogue is found by its digest wherever the merge runs; the shards'
results must be exactly the run's cases (every scenario the run selected,
on every target) and each record must agree with itself: a passed or
failed case's status and differences are computed again from its recorded
outcome and the scenario's expectation, and its baseline verdict from the
baseline.  An edited status, a dropped or duplicated case, a case from
elsewhere or an edited value is refused with one line.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

# pytest's own evaluator of -k and -m expressions, so that the merge selects the
# cases the shards' pytest selected.
from _pytest.mark.expression import Expression

from harness import engine, seams, shards, targets
from harness.baselines.verdicts import judge
from harness.catalogue import loader
from harness.exceptions import Problem
from harness.seams import RunOptions
from harness.seams.case import STATUSES
from harness.targets.announce import About

Manifests = list[tuple[Path, shards.Manifest]]


def session(found: Manifests, here: Path, reports: Path) -> engine.Session | Problem:
    """The one run's session, its results in and checked, not yet finished."""
    first, manifest = found[0]
    run = manifest.run
    paths = shards.locate(run, here, loader.bundled(), first / shards.MANIFEST)
    if isinstance(paths, Problem):
        return paths
    baselines = _baselines(run, here)
    if isinstance(baselines, str):
        return Problem(str(first / shards.MANIFEST), 1, 1, "run.baselines", baselines)
    merged = engine.Session(
        paths=paths,
        targets=run.targets,
        root=here,
        reports=reports,
        baselines=baselines,
        options=RunOptions(allow_exec=run.allow_exec),
        clis=run.clis,
        keyword=run.keyword,
        markers=run.markers,
    )
    try:
        expected = cases(merged)
    except SyntaxError as error:
        return Problem(str(first / shards.MANIFEST), 1, 1, "run", f"bad selection: {error}")
    problem = shards.verify(found, expected, consistency(merged))
    if problem is not None:
        return problem
    merged.results = [engine.result_from_json(r) for _, m in found for r in m.results]
    for _, m in found:
        for raw in m.abouts:
            seen = About.from_json(json.loads(raw))
            known = merged.abouts.get(seen.target)
            merged.abouts[seen.target] = seen if known is None else known.merged(seen)
    return merged


def _baselines(run: shards.Run, here: Path) -> Path | str | None:
    """The run's baselines folder, as given from here or where it lay; or why it is not here."""
    if run.baselines is None:
        return None
    for folder in (here / run.baselines, Path(run.baselines_at or run.baselines)):
        if folder.is_dir():
            return folder
    return f"the baselines folder {run.baselines} ({run.baselines_at}) is not here"


def cases(merged: engine.Session) -> set[str]:
    """Every case id (``scenario@target``) the run selected, over all its shards."""
    names = [targets.shared(spec).name for spec in merged.targets]
    keyword = Expression.compile(merged.keyword) if merged.keyword else None
    markers = Expression.compile(merged.markers) if merged.markers else None
    found = set()
    for scenario in filter(merged.selected, merged.catalogue().scenarios):
        tags = set(scenario.tags)
        for name in names:
            case = f"{scenario.id}@{name}"
            # What pytest's -k matches a case's test on: its names, and its markers.
            words = {f"test_scenario[{case}]", "testing.py", "harness", *tags}
            if keyword is not None and not keyword.evaluate(_substring(words)):
                continue
            if markers is not None and not markers.evaluate(_member(tags)):
                continue
            found.add(case)
    return found


def _substring(words: set[str]) -> Callable[..., bool]:
    lowered = [w.lower() for w in words]

    def matches(name: str, /, **kwargs: Any) -> bool:
        return any(name.lower() in word for word in lowered)

    return matches


def _member(tags: set[str]) -> Callable[..., bool]:
    def matches(name: str, /, **kwargs: Any) -> bool:
        return name in tags and not kwargs

    return matches


def consistency(merged: engine.Session) -> Callable[[dict[str, Any]], str | None]:
    """Why one recorded case disagrees with itself, or None."""
    scenarios = {s.id: s for s in merged.catalogue().scenarios}
    by_name = {t.name: t for t in map(targets.shared, merged.targets)}
    baselines, _ = merged.baselines_and_problems()

    def why(record: dict[str, Any]) -> str | None:
        try:
            result = engine.result_from_json(json.dumps(record))
        except (KeyError, TypeError, ValueError, AttributeError) as error:
            return f"not a case result ({type(error).__name__}: {error})"
        if result.status not in STATUSES:
            return f"status {result.status!r} is none of {', '.join(STATUSES)}"
        scenario, target = scenarios[result.scenario], by_name[result.target]
        if result.status in {"passed", "failed"}:
            if result.outcome is None:
                return f"recorded {result.status} with no outcome"
            seam = seams.require(scenario.seam.value)
            expectation = scenario.expectation_for(
                target.kind, targets.versions_of(target), targets.contract_of(target)
            )
            again = tuple(seam.compare(expectation, result.outcome))
            status = "failed" if again else "passed"
            if status != result.status:
                return f"recorded {result.status}, but its outcome gives {status}"
            if again != result.mismatches:
                return "its differences are not what its outcome gives"
        elif result.outcome is not None:
            return f"recorded {result.status} with an outcome"
        bare = replace(result, verdict=None, note=None)
        verdict, _ = judge(bare, baselines.get(result.target))
        if verdict != result.verdict:
            return f"verdict {result.verdict!r}, but its baseline gives {verdict!r}"
        return None

    return why
