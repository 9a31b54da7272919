"""
``harness fuzz``: generate cases, judge them on two targets, write each class of disagreement.

The command is a shell over `run`: it builds the seam's fuzzer from the
arguments (a registry of seams, each with its default targets), judges
``--examples`` cases, shrinks every class of disagreement, writes each
minimal case as a scenario into ``--out``, loads it back and runs it again
to confirm it reproduces, and prints a summary whose last line is
``fuzz: N cases, A agree, D disagree, E errored``.  It exits 0 only when
nothing disagreed or errored.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from harness import targets
from harness.catalogue import agents
from harness.catalogue.scenario import Seam
from harness.exceptions import HarnessError
from harness.fuzz import write
from harness.fuzz.agent_cli import DRIVERS, AgentCliFuzzer
from harness.fuzz.model_api import ModelApiFuzzer
from harness.fuzz.run import (
    Finding,
    Judge,
    SeamFuzzer,
    Summary,
    Tally,
    generate,
    scratch_dir,
    shrink,
)
from harness.fuzz.verdict import DISAGREE
from harness.seams import RunOptions
from harness.targets import AgentBinary, Target

Json = Any


@dataclass(frozen=True)
class SeamChoice:
    """How a seam's fuzzer is built, and which targets it compares by default."""

    build: Callable[[argparse.Namespace], SeamFuzzer]
    target: str | None
    against: str


def _model_api(args: argparse.Namespace) -> SeamFuzzer:
    if args.cli is None:
        choices = " or ".join(f"--cli {name}" for name in agents.REAL)
        raise HarnessError(f"fuzz: --seam model-api needs {choices}")
    return ModelApiFuzzer(args.cli, args.allow_exec, args.timeout)


def _agent_cli(args: argparse.Namespace) -> SeamFuzzer:
    return AgentCliFuzzer(tuple(args.driver) or DRIVERS)


SEAMS: dict[str, SeamChoice] = {
    "model-api": SeamChoice(_model_api, "reference", "real"),
    "agent-cli": SeamChoice(_agent_cli, None, "reference"),
}


class Progress:
    """One line, rewritten in place, when stdout is a terminal; nothing otherwise."""

    def __init__(self) -> None:
        self.live = sys.stdout.isatty()
        self.width = 0

    def show(self, text: str) -> None:
        if self.live:
            padded = text.ljust(self.width)
            self.width = len(text)
            sys.stdout.write("\r" + padded)
            sys.stdout.flush()

    def clear(self) -> None:
        if self.live and self.width:
            sys.stdout.write("\r" + " " * self.width + "\r")
            sys.stdout.flush()
            self.width = 0


def _target(spec: str, seam: Seam, fuzzer: SeamFuzzer) -> Target:
    target = targets.create(spec)
    if seam not in target.seams:
        raise HarnessError(f"fuzz: target {spec!r} does not serve the {seam.value} seam")
    if isinstance(target, AgentBinary) and isinstance(fuzzer, ModelApiFuzzer):
        try:
            target.binary(fuzzer.cli)
        except FileNotFoundError as error:
            raise HarnessError(f"fuzz: {error}") from None
    return target


def command_line(args: argparse.Namespace, target: str, against: str) -> str:
    words = ["harness fuzz", f"--seam {args.seam}"]
    if args.cli:
        words.append(f"--cli {args.cli}")
    words += [f"--target '{target}'", f"--against '{against}'"]
    words += [f"--examples {args.examples}", f"--seed {args.seed}"]
    if args.allow_exec:
        words.append("--allow-exec")
    return " ".join(words)


def main(args: argparse.Namespace) -> int:
    choice = SEAMS[args.seam]
    spec = args.target or choice.target
    if spec is None:
        raise HarnessError(f"fuzz: --seam {args.seam} needs --target NAME=SPEC")
    against = args.against or choice.against
    fuzzer = choice.build(args)
    seam = Seam(args.seam)
    out = Path(args.out)
    database = Path(args.database) if args.database else out / ".hypothesis"
    other, truth = _target(spec, seam, fuzzer), _target(against, seam, fuzzer)
    progress = Progress()
    try:
        with scratch_dir() as scratch:
            options = RunOptions(allow_exec=args.allow_exec)
            judge = Judge(fuzzer, truth, other, Path(scratch), options)
            command = command_line(args, spec, against)
            summary = _fuzz(
                args, fuzzer, judge, out=out, database=database, progress=progress, command=command
            )
    finally:
        progress.clear()
        for target in (other, truth):
            close = getattr(target, "close", None)
            if close is not None:
                close()
        targets.close_all()
    for line in _report(summary, truth.name, other.name, args):
        print(line)
    return 0 if summary.disagree == 0 and summary.errored == 0 else 1


def _fuzz(
    args: argparse.Namespace,
    fuzzer: SeamFuzzer,
    judge: Judge,
    *,
    out: Path,
    database: Path,
    progress: Progress,
    command: str,
) -> Summary:
    tally = Tally()
    strategy = fuzzer.cases()

    def each(case: dict[str, Json], replay: bytes) -> None:
        tally.add(case, replay, judge(case), fuzzer.classes(case))
        progress.show(f"fuzz: {tally.line()} (of {args.examples})")

    generate(strategy, args.examples, args.seed, each)
    findings = []
    ordered = sorted(tally.classes.items(), key=lambda kv: (-len(kv[1]), kv[0]))
    for number, (signature, members) in enumerate(ordered, 1):
        progress.show(f"fuzz: shrinking class {number} of {len(ordered)}: {signature}"[:150])
        *_, start = min(members, key=lambda m: (m[0], write.key(m[1])))
        folder = (
            database
            / hashlib.sha256(f"{fuzzer.seam}/{fuzzer.label}/{signature}".encode()).hexdigest()[:16]
        )
        case, judged, runs = shrink(
            strategy, start, signature, judge, database=folder, budget=args.shrink_budget
        )
        finding = Finding(signature, len(members), case, judged, runs)
        findings.append(_written(finding, fuzzer, judge, out, command))
    counts = tally.counts
    drawn = tally.per_class(fuzzer.class_names())
    return Summary(
        tally.cases,
        counts["agree"],
        counts[DISAGREE],
        counts["errored"],
        tuple(findings),
        drawn,
        tally.raced,
    )


def _written(
    finding: Finding, fuzzer: SeamFuzzer, judge: Judge, out: Path, command: str
) -> Finding:
    """Write the finding's scenario, then load it back and run it: does it reproduce?"""
    judged = finding.judgement
    title, description, details = write.describe(judged, finding.count, command)
    has_truth = judged.truth is not None and judged.truth.outcome is not None
    doc = write.document(
        fuzzer,
        finding.case,
        title=title,
        description=description,
        clauses=tuple(fuzzer.clauses(finding.case, judged)),
        expect=fuzzer.expectation(judged) if has_truth else {},
    )
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{doc['id']}.yaml"
    comment = f"Written by {command}.\nClass: {finding.signature}\n{details}"
    try:
        scenario = write.load(write.dump(doc, comment), path)
    except HarnessError as error:  # the truth's outcome no scenario can expect: say so, go on
        path.unlink(missing_ok=True)
        return replace(finding, path=None, reproduced=False, unwritten=str(error))
    again = judge.judge(scenario)
    holds = not has_truth or (again.truth is not None and again.truth.status == "passed")
    return replace(finding, path=path, reproduced=again.signature == judged.signature and holds)


def _report(summary: Summary, truth: str, other: str, args: argparse.Namespace) -> list[str]:
    what = f"{args.seam} {args.cli}" if args.cli else args.seam
    lines = [f"fuzz: {what}: {other} against {truth}, seed {args.seed}"]
    if summary.findings:
        count = len(summary.findings)
        lines.append(f"fuzz: {count} class(es) of disagreement or error, shrunk and written:")
    for f in summary.findings:
        note = "" if f.reproduced else " (did not reproduce when run again: flaky)"
        lines.append(f"  {f.count:4d} x {f.signature}")
        if f.unwritten is not None:
            lines.append(f"         -> not written: {f.unwritten}")
            continue
        lines.append(f"         -> {f.path} (shrunk in {f.runs} new runs){note}")
    if args.stats:
        lines += stats_lines(summary)
    lines.append(summary.last_line)
    return lines


def stats_lines(summary: Summary) -> list[str]:
    """Per class of the users' world: the cases that drew it and how many of them agreed."""
    if not summary.drawn:
        return ["fuzz: --stats: this seam has no registry of classes"]
    width = max(len(name) for name, _, _ in summary.drawn)
    lines = [
        f"fuzz: classes drawn ({sum(1 for _, n, _ in summary.drawn if n)} of {len(summary.drawn)}):"
    ]
    for name, cases, agree in summary.drawn:
        share = f"{100 * agree / cases:5.1f}%" if cases else "    -"
        lines.append(f"  {name.ljust(width)} {cases:5d} cases {agree:5d} agree {share}")
    return lines
