"""
The bug zoo (docs/zoo.md, tests/zoo/): realistic adaptor bugs the agent-cli
catalogue must catch, each at least twice.

The full zoo (every bug on every scenario that reaches it, each guard
counted) runs in `make mutants` (``python -m tests.zoo.zoo``), minutes of
CPU.  Here every bug is checked against the two guards that run pinned in
tests/zoo/guards.json: the bug-free adaptor passes each pinned scenario and
each bug fails both of its own.  A bug without two pins, or a pin that no
longer catches its bug (a scenario renamed, removed or weakened), fails here
with the bug's name; `python -m tests.zoo.zoo --write-guards` pins afresh.
"""

from __future__ import annotations

import json
import shutil
from functools import cache

import pytest

from tests.zoo import zoo


@cache
def _guards() -> dict[str, dict[str, list[str]]]:
    pins: dict[str, dict[str, list[str]]] = json.loads(zoo.GUARDS_FILE.read_text(encoding="utf-8"))
    return pins


def _zoo(name: str) -> zoo.Zoo:
    if name == "zoo-js" and shutil.which("node") is None:
        pytest.fail("node is not installed: the JavaScript half of the zoo cannot run")
    return next(z for z in zoo.ZOOS if z.name == name)


@pytest.mark.parametrize("name", [z.name for z in zoo.ZOOS])
def test_every_bug_has_two_pinned_guards(name: str) -> None:
    pins = _guards().get(name, {})
    bugs = _zoo(name).bugs()
    assert sorted(pins) == sorted(bugs), "bugs and pins differ: run --write-guards"
    few = {bug: ids for bug, ids in pins.items() if len(set(ids)) < zoo.NEEDED}
    assert not few, f"bugs pinned with fewer than {zoo.NEEDED} guards: {few}"


@pytest.mark.parametrize("name", [z.name for z in zoo.ZOOS])
def test_the_pinned_guards_catch_every_bug(name: str) -> None:
    pins = _guards()[name]
    failing, missed = zoo.pinned(_zoo(name), zoo.agent_cli(), pins)
    print(f"{name}: {len(pins)} bugs, each caught by its {zoo.NEEDED} pinned guards")
    assert not failing, f"the bug-free {name} fails pinned guards: {failing}"
    assert not missed, f"pinned guards that no longer catch their bug: {missed}"


def test_the_zoo_is_large_enough() -> None:
    bugs = [b for z in zoo.ZOOS for b in z.bugs()]
    assert len(bugs) >= 40
    assert len(set(bugs)) == len(bugs), "a bug name is used twice"
    languages = {z.lister[-1].rsplit(".", 1)[1] for z in zoo.ZOOS}
    assert languages == {"py", "mjs"}, languages
