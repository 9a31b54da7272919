"""
What a scenario promises, and whether its expectation checks it.

An expectation checks only the fields it gives, so a scenario can describe an
effect ("exit 1", "an api_retry line", "before launch") that nothing verifies;
a system under test then passes it whatever it does.  `harness lint` catches
the cases a machine can tell, in two kinds of rule:

- *Decisive fields* (`Decisive`): a field every expectation of a seam must
  give, because without it a broken implementation passes (a model-api case
  that does not pin the exit code and the request count passes a CLI that
  ends every run at once with exit 0).  Some apply only to some expectations
  (``cause`` when the error is ``execution_error``).
- *Phrases* (`Phrase`): a term of art in the title or description (a line
  type, a subtype, an error kind, an exit code, a count of requests) names an
  effect, and the expectation must check that field, and where the phrase
  carries a value (``exit 1``, ``two requests``), with that value.

What a machine cannot tell is left to review: prose ("the model can correct
itself"), negations ("not a policy violation" is written without the
underscore on purpose), and effects no expectation field can observe.  The
tables below are the whole of what is checked; docs/scenarios.md lists them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from harness.catalogue.seam import Report, merge
from harness.seams.compare import json_equal

_NUMBERS = {"no": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6}

#: (request, expectation) → whether a rule applies.
Applies = Callable[[Mapping[str, Any], Mapping[str, Any]], bool]


def _always(request: Mapping[str, Any], expect: Mapping[str, Any]) -> bool:
    return True


@dataclass(frozen=True)
class Decisive:
    """One of ``fields`` must be given wherever ``applies`` holds; ``why`` says what it pins."""

    fields: tuple[str, ...]
    why: str
    applies: Applies = _always
    #: When given, the field must hold this value (``launches: 0`` before a launch).
    value: object = None


@dataclass(frozen=True)
class Phrase:
    """
    A phrase of the title or description (``pattern``, case-insensitive) that
    names an effect: one of ``fields`` must be given.  With ``value``, the
    first field must also hold (or, for a list, contain) the value the match
    names; with ``among``, it must be one of the values every match names.
    """

    pattern: str
    fields: tuple[str, ...]
    value: Callable[[re.Match[str]], object] | None = None
    among: bool = False
    applies: Applies = _always

    @cached_property
    def compiled(self) -> re.Pattern[str]:
        # The phrases are English terms of art: ASCII word boundaries and case are
        # enough, and twice as fast over a catalogue's descriptions as Unicode's.
        return re.compile(self.pattern, re.IGNORECASE | re.ASCII)


def number(group: int = 1) -> Callable[[re.Match[str]], object]:
    """The count a match names, in digits or words."""

    def read(match: re.Match[str]) -> object:
        text = match[group].lower()
        return _NUMBERS[text] if text in _NUMBERS else int(text)

    return read


def word(group: int = 1, fmt: str = "{}") -> Callable[[re.Match[str]], object]:
    """The text a match names, lower-cased, put into ``fmt``."""
    return lambda match: fmt.format(match[group].lower())


def boolean(group: int = 1) -> Callable[[re.Match[str]], object]:
    return lambda match: match[group].lower() == "true"


def _holds(wanted: object, given: object) -> bool:
    if isinstance(given, list) and not isinstance(wanted, list):
        return any(json_equal(wanted, item) for item in given)
    return json_equal(wanted, given)


@dataclass(frozen=True)
class Variant:
    """
    An expectation made by patching the shared one (a ``by_version`` rule):
    held to the decisive fields too, except those it ``waives`` by name.
    """

    where: tuple[str, ...]
    expect: Mapping[str, Any]
    #: Fields the patch leaves unchecked on purpose, each rule saying why.
    waives: frozenset[str] = frozenset()


def check(
    doc: Mapping[str, Any],
    decisive: Sequence[Decisive],
    phrases: Sequence[Phrase],
    report: Report,
    variants: Sequence[Variant] = (),
) -> None:
    """
    Report every decisive field ``doc['expect']`` lacks and every promise it does not check.

    A case tagged ``choice`` pins, under ``by_target``, a reading the contract
    leaves open; its shared expectation may then leave the decisive fields to
    each override, which must give them (the tag and the override are explicit
    and reviewed, a forgotten field is not).  A promise of the description is
    kept when the shared expectation or an override checks it: "the reference
    reports one diagnostic" is checked on the reference.  ``variants`` (the
    expectation on other versions of a CLI) must give the decisive fields as
    well, or waive them by name; the description's promises are about the
    shared expectation, which a variant may contradict for a stated reason.
    """
    request, expect = doc.get("request", {}), doc["expect"]
    overrides = doc.get("by_target", {})
    views: list[tuple[tuple[str, ...], Mapping[str, Any]]] = [(("expect",), expect)]
    views += [(("by_target", k), merge(expect, o)) for k, o in sorted(overrides.items())]
    chosen = "choice" in doc.get("tags", ()) and overrides
    for where, view in views[1:] if chosen else views[:1]:
        _decisive(decisive, request, view, where, report)
    for variant in variants:
        _decisive(decisive, request, variant.expect, variant.where, report, waives=variant.waives)
    # Title and description are read as one text: a value named in either counts.
    text = " ".join(f"{doc.get('title', '')} {doc.get('description', '')}".split())
    for phrase in phrases:
        found = list(phrase.compiled.finditer(text))
        if not found or not phrase.applies(request, expect):
            continue
        problems: list[list[tuple[tuple[str | int, ...], str]]] = []
        for _, view in views:
            noted: list[tuple[tuple[str | int, ...], str]] = []
            _promise(phrase, found, view, _collect(noted))
            if not noted:
                break
            problems.append(noted)
        else:
            for where_message in problems[0]:
                report(*where_message)


def _collect(noted: list[tuple[tuple[str | int, ...], str]]) -> Report:
    def note(where: tuple[str | int, ...], message: str) -> None:
        noted.append((where, message))

    return note


def _decisive(
    decisive: Sequence[Decisive],
    request: Mapping[str, Any],
    expect: Mapping[str, Any],
    where: tuple[str, ...],
    report: Report,
    *,
    waives: frozenset[str] = frozenset(),
) -> None:
    for rule in decisive:
        if not rule.applies(request, expect) or waives & set(rule.fields):
            continue
        given = [name for name in rule.fields if name in expect]
        if not given:
            report(where, f"give {' or '.join(rule.fields)}: {rule.why}")
        elif rule.value is not None and not json_equal(rule.value, expect[given[0]]):
            report((*where, given[0]), f"must be {rule.value!r}: {rule.why}")


def _promise(
    phrase: Phrase,
    found: list[re.Match[str]],
    expect: Mapping[str, Any],
    report: Report,
) -> None:
    named, where = found[0][0], "description"
    given = [name for name in phrase.fields if name in expect]
    if not given:
        report((where,), f"names {named!r}, but the expectation does not check {phrase.fields[0]}")
        return
    if phrase.value is None or given[0] != phrase.fields[0]:
        return
    wanted = [phrase.value(match) for match in found]
    have = expect[phrase.fields[0]]
    if phrase.among:
        if not any(_holds(each, have) for each in wanted):
            report((where,), f"names {named!r}, but {phrase.fields[0]} is {have!r}")
        return
    for match, each in zip(found, wanted, strict=True):
        if not _holds(each, have):
            report((where,), f"names {match[0]!r}, but {phrase.fields[0]} is {have!r}")
