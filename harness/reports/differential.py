"""
The differential report of the model-api seam: a reference model against the real CLI.

A model-api scenario checks only the expectations it gives, so a reference
model can pass every scenario and still print something the real binary
never would.  Running both against the same scripted fake gives a second,
stricter check: for every model-api scenario, each reference-kind result is
paired with each real-kind result and a *projection* of the two outcomes is
compared, the part a faithful model must reproduce (exit code, stderr,
timeout, stdout line types, the final result's decisive fields, and what
reached the fake).  Usage figures, costs, ids and the init line's contents
are left out: the reference models do not pretend to know them.

Known disagreements are listed, each with a reason, in an expectations file
(``baselines/differential.yaml``) loaded like a baseline: safe YAML, the
packaged schema, one ``file:line:col: field: message`` line per bad entry.
A disagreement no entry covers is *unexplained*, and an entry a run no
longer needs is *stale*; both fail the run, as regressions and stale
entries of a baseline do.  Everything here is a pure function of results.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from harness.catalogue import yamlfile
from harness.catalogue.scenario import VersionRule
from harness.exceptions import Problem
from harness.seams.case import CaseResult
from harness.seams.model_api.expect import ExpectationPatch
from harness.seams.model_api.values import ModelApiOutcome, show_value, stable
from harness.systems.claude import compaction
from harness.targets import REAL_KINDS, REFERENCE_KINDS

_TOP = ("exit_code", "stderr", "timed_out", "line_types")
#: The final result's decisive fields per CLI (codex's final is synthesized
#: from its lines, see `harness.seams.model_api.values.final_result`).
_FINAL = {
    "claude": (
        "type",
        "subtype",
        "is_error",
        "terminal_reason",
        "structured_output",
        "result",
        "errors",
        "api_error_status",
        "stop_reason",
        "num_turns",
        "permission_denials",
    ),
    "codex": ("type", "result", "structured_output", "errors"),
}
_PER_REQUEST = (
    "model",
    "input_schema",
    "strict",
    "text_format",
    "messages_after_prompt",
    "unexpected",
)
#: Every field of the projection, as the expectations file names them
#: (``requests`` is the number of requests; ``requests.X`` is X of any one).
FIELDS = (
    "status",
    *_TOP,
    *(f"final.{name}" for name in _FINAL["claude"]),
    "side_requests",
    "requests",
    *(f"requests.{name}" for name in _PER_REQUEST),
    "stdout",
)
#: The projection fields each expectation field speaks for: a ``by_version``
#: rule that leaves an expectation field unchecked on some releases (because
#: the behaviour is not known there, or races) waives these fields of the
#: pairs on those releases, with the rule's reason.  Fields without a
#: counterpart in the projection waive nothing.
WAIVES: Mapping[str, tuple[str, ...]] = {
    "exit_code": ("exit_code",),
    "timed_out": ("timed_out",),
    "stderr_contains": ("stderr",),
    "subtype": ("final.subtype",),
    "is_error": ("final.is_error",),
    "terminal_reason": ("final.terminal_reason",),
    "structured_output": ("final.structured_output",),
    "no_structured_output": ("final.structured_output",),
    "result": ("final.result",),
    "errors_contain": ("final.errors",),
    "line_types": ("line_types",),
    "requests": ("requests",),
    "models": ("requests.model",),
    "side_requests": ("side_requests",),
    "input_schema": ("requests.input_schema",),
    "strict": ("requests.strict",),
    "strict_each": ("requests.strict",),
    "text_format": ("requests.text_format",),
    "messages_after_prompt_contain": ("requests.messages_after_prompt",),
    "messages_after_prompt_lack": ("requests.messages_after_prompt",),
    "calls_per_message": ("requests.messages_after_prompt",),
    "no_unexpected_requests": ("requests.unexpected",),
    "files": (),
    "adaptor": (),
    "stdout": ("stdout",),
    "items": (),
}
#: What a field one side's projection lacks is shown as.
ABSENT = "<absent>"
#: How wide a value is shown in the reports before it is cut.
SHOWN = 160
#: How many differing parts of one value the reports show.
MOST_PARTS = 5


@dataclass(frozen=True)
class Difference:
    """One projection field on which the two sides differ, with both values."""

    #: The field as the expectations file names it (``requests.model``).
    field: str
    #: Where exactly (``requests[1].model``); the same as ``field`` elsewhere.
    at: str
    reference: object
    real: object

    def shown(self, limit: int = SHOWN) -> tuple[str, str]:
        """Both values as JSON, cut to ``limit`` around where they start to differ."""
        left, right = _shown(self.reference), _shown(self.real)
        start = 0
        if max(len(left), len(right)) > limit:
            start = max(0, _common_prefix(left, right) - limit // 4)
        return _cut(left, start, limit), _cut(right, start, limit)

    def parts(self, most: int = MOST_PARTS) -> tuple[Difference, ...]:
        """
        Where inside the two values they differ: the deepest members that do
        (a key one side lacks, an item of two lists of one length), each a
        `Difference` whose ``at`` goes on into the value, so a long value is
        shown by its differing parts rather than by its first characters.  At
        most ``most``; values of different shapes are one part, themselves.
        """
        found = list(_differing(self.reference, self.real, self.at))
        return tuple(Difference(self.field, at, left, right) for at, left, right in found[:most])

    def parts_left_out(self, most: int = MOST_PARTS) -> int:
        """How many differing parts `parts` leaves out."""
        return max(0, len(list(_differing(self.reference, self.real, self.at))) - most)


def _differing(left: object, right: object, at: str) -> Iterator[tuple[str, object, object]]:
    """The deepest differing members of two JSON values, with their paths."""
    if show_value(left) == show_value(right):
        return  # JSON-equal (``True`` and ``1`` are not)
    if isinstance(left, dict) and isinstance(right, dict):
        for key in sorted(set(left) | set(right)):
            yield from _differing(left.get(key, ABSENT), right.get(key, ABSENT), f"{at}.{key}")
    elif isinstance(left, list) and isinstance(right, list) and len(left) == len(right):
        for index, (one, other) in enumerate(zip(left, right, strict=True)):
            yield from _differing(one, other, f"{at}[{index}]")
    else:
        yield at, left, right


def _shown(value: object) -> str:
    return ABSENT if value is ABSENT else show_value(value)


def _common_prefix(left: str, right: str) -> int:
    same = (i for i, (a, b) in enumerate(zip(left, right, strict=False)) if a != b)
    return next(same, min(len(left), len(right)))


def _cut(text: str, start: int, limit: int) -> str:
    body = text[start : start + limit]
    return ("…" if start else "") + body + ("…" if start + limit < len(text) else "")


@dataclass(frozen=True)
class Pair:
    """One model-api scenario on one reference-kind and one real-kind target."""

    scenario: str
    reference: str
    reference_status: str
    real: str
    real_status: str
    differences: tuple[Difference, ...] = ()
    #: Set when the two cannot be compared: which side did not run, and why.
    not_comparable: str | None = None
    #: The expectations file's reason, when an entry explains every difference
    #: (or the scenario's own version rule, when it waives them).
    explained: str | None = None
    #: Fields the scenario's version rules leave unchecked on the real side's
    #: release, and those rules' reasons.
    waived: tuple[str, ...] = ()
    waived_because: str | None = None

    @property
    def agreement(self) -> str:
        """``agree``, ``disagree`` or ``not comparable``."""
        if self.not_comparable is not None:
            return "not comparable"
        return "disagree" if self.differences else "agree"

    @property
    def unexplained(self) -> bool:
        return self.agreement == "disagree" and self.explained is None

    @property
    def fields(self) -> tuple[str, ...]:
        """The differing fields, as the expectations file names them, in projection order."""
        return tuple(dict.fromkeys(d.field for d in self.differences))


def project(outcome: ModelApiOutcome) -> dict[str, Any]:
    """
    The part of an outcome a faithful model must reproduce, with what real
    CLIs make up per run masked (so in-process and reported outcomes agree).
    """
    final = outcome.final or {}
    names = _FINAL.get(outcome.cli, _FINAL["claude"])
    out: dict[str, Any] = {
        "exit_code": outcome.exit_code,
        "stderr": outcome.stderr,
        "timed_out": outcome.timed_out,
        "line_types": list(outcome.line_types),
    }
    out.update({f"final.{name}": final.get(name) for name in names})
    if outcome.cli == "claude" and final.get("subtype") not in (None, "success"):
        # When the attempts run out, the real binary's stop_reason races its own
        # stream: null if the exhaustion check wins, "tool_use" if message_delta
        # does (seen under load with MAX_STRUCTURED_OUTPUT_RETRIES=1).  Not a
        # contract either side can keep, so not compared.
        out.pop("final.stop_reason")
    # Requests beside the conversation (a connectivity check) by what they are; a model
    # of a version that sends them must send them too.
    out["side_requests"] = [r.side for r in outcome.requests if r.side is not None]
    # A release's own long prose (the compaction instructions, B-48) by its digest.
    out["requests"] = compaction.masked(
        [
            {name: getattr(r, name) for name in _PER_REQUEST}
            for r in outcome.requests
            if r.side is None
        ]
    )
    if outcome.stdout is not None:  # a run that printed text: what it printed, exactly
        out["stdout"] = outcome.stdout
    masked: dict[str, Any] = stable(out)
    return masked


def _why(side: str, result: CaseResult) -> str:
    lines = (result.reason or "").strip().splitlines()
    reason = lines[0] if lines else "no outcome"
    return f"{side} {result.status}: {reason}"


def compare(reference: CaseResult, real: CaseResult) -> Pair:
    """Pair two results of one model-api scenario and compare their projections."""
    pair = Pair(reference.scenario, reference.target, reference.status, real.target, real.status)
    ref, got = reference.outcome, real.outcome
    if not isinstance(ref, ModelApiOutcome) or not isinstance(got, ModelApiOutcome):
        missing = [
            _why(side, result)
            for side, result, outcome in (("reference", reference, ref), ("real", real, got))
            if not isinstance(outcome, ModelApiOutcome)
        ]
        return replace(pair, not_comparable="; ".join(missing))
    found = differences(project(ref), project(got))
    if reference.status != real.status:
        found = (Difference("status", "status", reference.status, real.status), *found)
    return replace(pair, differences=found)


def differences(left: dict[str, Any], right: dict[str, Any]) -> tuple[Difference, ...]:
    """Every field on which two projections (`project`) differ, requests one by one."""
    found: list[Difference] = []
    # Over both sides' fields: a field one side has and the other lacks (a
    # racy field left out of a failed result only) is a difference too.
    for name in dict.fromkeys([*left, *right]):
        mine, theirs = left.get(name, ABSENT), right.get(name, ABSENT)
        if name != "requests" and mine != theirs:
            found.append(Difference(name, name, mine, theirs))
    asked, seen = left["requests"], right["requests"]
    if len(asked) != len(seen):
        found.append(Difference("requests", "requests", len(asked), len(seen)))
    for i, (one, other) in enumerate(zip(asked, seen, strict=False)):
        for name in _PER_REQUEST:
            if one[name] != other[name]:
                where = f"requests[{i}].{name}"
                found.append(Difference(f"requests.{name}", where, one[name], other[name]))
    return tuple(found)


def pairs(
    results: Iterable[CaseResult],
    kinds: Mapping[str, str],
    model_api: Mapping[str, str],
    versions: Mapping[str, Mapping[str, str]] | None = None,
    rules: Mapping[str, Sequence[VersionRule]] | None = None,
) -> tuple[Pair, ...]:
    """
    The (reference-kind, real-kind) pairs of results of the model-api
    scenarios ``model_api`` (id -> the CLI it runs); ``kinds`` maps each
    target name to its kind, ``versions`` to the CLI versions it runs, and
    ``rules`` each scenario to its ``by_version`` rules.

    A real result pairs with the references that model its version of the
    scenario's CLI, and of those with the ones at all of its versions when
    there are any: ``real:claude=2.1.235`` is compared with the 2.1.235
    profile, never with the pinned one.  The fields the scenario's rules
    leave unchecked on the real side's versions are waived in the pair.
    """
    versions, rules = versions or {}, rules or {}
    by_scenario: dict[str, list[CaseResult]] = {}
    for result in results:
        if result.scenario in model_api:
            by_scenario.setdefault(result.scenario, []).append(result)
    out = []
    for scenario in sorted(by_scenario):
        cli = model_api[scenario]
        mine = sorted(by_scenario[scenario], key=lambda r: r.target)
        references = [r for r in mine if kinds.get(r.target) in REFERENCE_KINDS]
        for real in (r for r in mine if kinds.get(r.target) in REAL_KINDS):
            own = versions.get(real.target, {})
            same_cli = [r for r in references if _same(versions.get(r.target, {}), own, cli)]
            same_all = [r for r in same_cli if versions.get(r.target, {}) == own]
            waived, because = waivers(rules.get(scenario, ()), own)
            out += [
                replace(compare(ref, real), waived=waived, waived_because=because)
                for ref in same_all or same_cli
            ]
    return tuple(sorted(out, key=lambda p: (p.scenario, p.reference, p.real)))


def waivers(
    rules: Iterable[VersionRule], versions: Mapping[str, str]
) -> tuple[tuple[str, ...], str | None]:
    """
    The projection fields the version rules holding for ``versions`` leave
    unchecked (`WAIVES`), and their reasons joined; none without versions.
    """
    fields: list[str] = []
    reasons: list[str] = []
    for rule in rules:
        patch = rule.patch
        if not versions or not rule.holds_for(dict(versions)):
            continue
        if not isinstance(patch, ExpectationPatch) or not patch.unchecked:
            continue
        fields += [f for name in patch.unchecked for f in WAIVES.get(name, ())]
        reasons.append(f"{rule.cli} {rule.range.text}: {rule.because}")
    return tuple(dict.fromkeys(fields)), "; ".join(reasons) or None


def _same(one: Mapping[str, str], other: Mapping[str, str], cli: str) -> bool:
    """Whether two targets run one version of ``cli`` (a target without versions runs any)."""
    return cli not in one or cli not in other or one[cli] == other[cli]


# -- the expectations file ----------------------------------------------------


@dataclass(frozen=True)
class Entry:
    """A known disagreement: the fields on which ``scenario`` may differ, and why."""

    scenario: str
    fields: tuple[str, ...]
    reason: str


@dataclass(frozen=True)
class Stale:
    """An entry this run did not need, and what changed."""

    entry: Entry
    why: str


@dataclass(frozen=True)
class Differential:
    """The judged pairs of one run, the entries in force, and the stale ones."""

    pairs: tuple[Pair, ...] = ()
    entries: tuple[Entry, ...] = ()
    stale: tuple[Stale, ...] = ()

    def count(self, agreement: str) -> int:
        return sum(p.agreement == agreement for p in self.pairs)

    @property
    def unexplained(self) -> tuple[Pair, ...]:
        return tuple(p for p in self.pairs if p.unexplained)

    @property
    def explained(self) -> tuple[Pair, ...]:
        return tuple(p for p in self.pairs if p.explained is not None)

    @property
    def failing(self) -> bool:
        """Whether the run must fail: an unexplained disagreement or a stale entry."""
        return bool(self.unexplained or self.stale)

    def summary(self) -> str:
        return (
            f"{len(self.pairs)} pairs, {self.count('agree')} agree, "
            f"{self.count('disagree')} disagree ({len(self.explained)} expected), "
            f"{self.count('not comparable')} not comparable; {len(self.stale)} stale "
            + ("entry" if len(self.stale) == 1 else "entries")
        )

    def to_json(self) -> dict[str, Any]:
        """The ``differential`` section of report.json (full values, not cut)."""
        return {
            "summary": {
                "pairs": len(self.pairs),
                "agree": self.count("agree"),
                "disagree": self.count("disagree"),
                "expected": len(self.explained),
                "unexplained": len(self.unexplained),
                "not_comparable": self.count("not comparable"),
                "stale": len(self.stale),
            },
            "pairs": [
                {
                    "scenario": p.scenario,
                    "reference": {"target": p.reference, "status": p.reference_status},
                    "real": {"target": p.real, "status": p.real_status},
                    "agreement": p.agreement,
                    "not_comparable": p.not_comparable,
                    "expected": p.explained,
                    "differences": [
                        {"field": d.at, "reference": d.reference, "real": d.real}
                        for d in p.differences
                    ],
                }
                for p in self.pairs
            ],
            "entries": [
                {"scenario": e.scenario, "fields": list(e.fields), "reason": e.reason}
                for e in self.entries
            ],
            "stale": [
                {"scenario": s.entry.scenario, "fields": list(s.entry.fields), "why": s.why}
                for s in self.stale
            ],
        }


def judge(found: Iterable[Pair], entries: Iterable[Entry] = ()) -> Differential:
    """
    Hold the pairs against the known disagreements.  A disagreement is
    explained when one entry for its scenario lists every differing field the
    scenario's version rules do not waive (`Pair.waived`); explained by the
    rules alone when they waive them all.  An entry is stale when its
    scenario was compared in this run and one of its fields differed in no
    pair (the whole entry, when nothing differs); an entry whose scenario was
    not compared is not judged.
    """
    listed = {e.scenario: e for e in entries}
    judged = []
    for pair in found:
        entry = listed.get(pair.scenario)
        left = set(pair.fields) - set(pair.waived)
        if not pair.fields:
            judged.append(pair)
        elif not left:
            judged.append(replace(pair, explained=pair.waived_because))
        elif entry is not None and left <= set(entry.fields):
            judged.append(replace(pair, explained=entry.reason))
        else:
            judged.append(pair)
    stale = []
    for entry in listed.values():
        compared = [p for p in judged if p.scenario == entry.scenario and p.not_comparable is None]
        if not compared:
            continue
        differed = {f for p in compared for f in p.fields if f not in p.waived}
        gone = [f for f in entry.fields if f not in differed]
        if not differed:
            stale.append(Stale(entry, "the scenario agrees now; remove the entry"))
        elif gone:
            stale.append(Stale(entry, f"{', '.join(gone)} agree now; remove them from the entry"))
    ordered = tuple(sorted(listed.values(), key=lambda e: e.scenario))
    stale.sort(key=lambda s: s.entry.scenario)
    return Differential(tuple(judged), ordered, tuple(stale))


def load(
    path: Path, known: Iterable[str] | None = None
) -> tuple[tuple[Entry, ...] | None, list[Problem]]:
    """
    Read the expectations file; problems point at file, line and field, one
    line each.  With ``known`` (the model-api scenarios of the whole
    catalogue), an entry naming any other scenario is a problem too.
    """
    checked = yamlfile.read(path, "differential.schema.json", "expectations")
    if checked.doc is None:
        return None, checked.problems
    doc: Any = checked.doc
    problem, problems = checked.problem, checked.problems
    scenarios = None if known is None else set(known)
    seen: dict[str, int] = {}
    for i, raw in enumerate(doc["entries"]):
        scenario = raw["scenario"]
        if scenarios is not None and scenario not in scenarios:
            problem(("entries", i, "scenario"), f"unknown model-api scenario {scenario!r}")
        if scenario in seen:
            problem(("entries", i), f"duplicate of entry {seen[scenario]}: one entry per scenario")
        seen.setdefault(scenario, i)
    if problems:
        return None, problems
    return tuple(
        Entry(raw["scenario"], tuple(raw["fields"]), raw["reason"].strip())
        for raw in doc["entries"]
    ), []
