"""
The bug zoo (tests/zoo/zoo.py): every realistic adaptor bug must be caught
by at least two scenarios of the agent-cli catalogue that the bug-free
adaptor passes.  Each bug stops at its second guard here; `make mutants`
counts every guard (`python -m tests.zoo.zoo`).
"""

from __future__ import annotations

import shutil
from functools import cache

import pytest

from tests.zoo import zoo

#: A bug must be caught this many times.
GUARDS = 2
#: Scenarios each bug-free adaptor must pass, at the least (a sanity floor:
#: an adaptor that broke would make every bug look caught).
FLOORS = {"zoo-py": 175, "zoo-js": 91}


@cache
def _hunted(name: str) -> tuple[zoo.Clean, tuple[zoo.Guarded, ...]]:
    found = next(z for z in zoo.ZOOS if z.name == name)
    base, verdicts = zoo.hunt(found, zoo.agent_cli(), jobs=2, stop_after=GUARDS)
    return base, tuple(verdicts)


@pytest.mark.parametrize("name", [z.name for z in zoo.ZOOS])
def test_every_bug_is_guarded_twice(name: str) -> None:
    if name == "zoo-js" and shutil.which("node") is None:
        pytest.skip("node is not installed")
    base, verdicts = _hunted(name)
    assert len(base.passed) >= FLOORS[name], sorted(base.passed)
    weak = {v.bug: v.guards for v in verdicts if len(v.guards) < GUARDS}
    print(f"{name}: " + "; ".join(f"{v.bug} {len(v.guards)}" for v in verdicts))
    assert not weak, f"bugs guarded fewer than {GUARDS} times: {weak}"


def test_the_zoo_is_large_enough() -> None:
    bugs = {b for z in zoo.ZOOS for b in z.bugs()}
    assert len(bugs) >= 40
    assert len({z.spec.split("=", 1)[1].split(":", 1)[0] for z in zoo.ZOOS}) >= 2
