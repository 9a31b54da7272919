"""
Targets: how a system under test is reached.

A target runs one scenario's request against its fake provider and returns
the canonical `Outcome`.  Targets are created from a spec string through a
registry of kinds (``reference``, ``reference-inproc``; other kinds register
the same way), never through a chain of conditions.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from harness import _pipeline
from harness._launch import InProcess, Launcher, Subprocess
from harness._outcome import Outcome
from harness._pipeline import Provider
from harness._scenario import Request, Seam
from harness.exceptions import NoSuchTarget


class Target(Protocol):
    """A system under test, reachable for some seams."""

    @property
    def name(self) -> str: ...

    @property
    def kind(self) -> str: ...

    @property
    def seams(self) -> frozenset[Seam]: ...

    def run(self, request: Request, provider: Provider) -> Outcome: ...


@dataclass(frozen=True)
class Reference:
    """The reference adaptor pipeline, launching fakes through ``launcher``."""

    name: str
    launcher: Launcher
    kind: str = "reference"
    seams: frozenset[Seam] = frozenset({Seam.AGENT_CLI})

    def run(self, request: Request, provider: Provider) -> Outcome:
        return _pipeline.run(request, provider, self.launcher)


#: Target kind → factory taking the full spec string.
KINDS: dict[str, Callable[[str], Target]] = {
    "reference": lambda spec: Reference(spec, Subprocess()),
    "reference-inproc": lambda spec: Reference(spec, InProcess()),
}

DEFAULT_TARGETS = ("reference",)


def create(spec: str) -> Target:
    """The target a ``--target`` spec names (``kind`` or ``kind:argument``)."""
    kind = spec.split(":", 1)[0]
    factory = KINDS.get(kind)
    if factory is None:
        raise NoSuchTarget(spec, tuple(sorted(KINDS)))
    return factory(spec)
