"""``harness baseline``: a target's current failures written down as its baseline."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from harness import exitcodes
from harness.commands.command import ALLOW_EXEC_HELP, Command, add_paths, paths


def baseline_options(p: argparse.ArgumentParser) -> None:
    add_paths(p)
    p.add_argument("--target", required=True, help="NAME=SPEC: the target and its short name")
    p.add_argument(
        "-o", "--out", default=None, help="file to merge into (default baselines/NAME.yaml)"
    )
    p.add_argument("--prune", action="store_true", help="remove entries that no longer apply")
    p.add_argument("--allow-exec", action="store_true", help=ALLOW_EXEC_HELP)


def baseline(args: argparse.Namespace) -> int:
    from harness import engine, targets  # noqa: PLC0415  (loaded when the command runs)
    from harness.baselines import rebaseline  # noqa: PLC0415
    from harness.baselines import verdicts as baseline  # noqa: PLC0415
    from harness.catalogue import loader  # noqa: PLC0415
    from harness.seams import RunOptions, case  # noqa: PLC0415
    from harness.targets.announce import about  # noqa: PLC0415

    target = targets.create(args.target)
    targets.prepare(target)
    if engine.baseline_path(Path("baselines"), target.name) is None:
        print(f"harness: give the target a short name: NAME={args.target}", file=sys.stderr)
        return exitcodes.USAGE
    loaded = loader.load(paths(args.paths))
    out = Path(args.out or f"baselines/{target.name}.yaml")
    old, problems = None, list(loaded.problems)
    catalogue = baseline.known(loaded.scenarios)
    if not problems and out.exists():
        # Merged into, so it must load, strictly: a typo must not cost the
        # reasons in it.  Entries for scenarios outside PATHS (but in their
        # catalogue) are kept as written, and not judged.
        old, problems = baseline.load(out, catalogue)
        if old is not None and old.unmet:
            session = engine.Session(tuple(paths(args.paths)), (), Path.cwd(), None)
            old, problems = baseline.load(out, baseline.known(session.whole_catalogue()))
        problems += [] if old is None else list(old.unmet)
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
    # The drivers it does not announce are declined wholesale: one skip each.
    announced = about(target, target.name, target.kind).implementation
    drivers = {d for d in catalogue.values() if d is not None}
    unannounced = frozenset() if announced is None else frozenset(drivers - announced.drivers)
    merged = rebaseline.merge(
        target.name, results, old, prune=args.prune, drivers=catalogue, unannounced=unannounced
    )
    text = rebaseline.render(merged.baseline, rebaseline.header_of(out, target.name))
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text, encoding="utf-8")
    failing, skipped = rebaseline.counts(merged.baseline)
    changes = f"{merged.added} entries added, {merged.stale} stale"
    if merged.folded:
        changes += f", {merged.folded} scenario skips folded into driver skips"
    if args.prune:
        changes += f", {merged.pruned} pruned"
    elif merged.stale:
        changes += " (--prune removes them)"
    print(
        f"wrote {out}: {failing} known failure(s) and {skipped} skip(s) of {len(results)} "
        f"scenarios; {changes}"
    )
    return 0


COMMANDS = (
    Command(
        "baseline",
        "write a baseline of a target's current failures",
        baseline_options,
        baseline,
    ),
)
