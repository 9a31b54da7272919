"""
A conformance harness and simulator for structured output from coding agents.

The public surface is small: load a catalogue, run a scenario on a target,
read the canonical outcome.  Everything else is private and may change.
Names are resolved lazily so that the pytest plugin, which pytest imports
before anything else, does not drag the whole harness in with it, and so that
the ``harness`` command (`harness.__main__`) claims SIGINT and SIGTERM before
anything heavy loads.
"""

from __future__ import annotations

from importlib import import_module

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from harness.catalogue.loader import Loaded, load
    from harness.catalogue.outcome import CAUSES, ERROR_KINDS, Diagnostic, Outcome
    from harness.catalogue.scenario import Scenario
    from harness.seams.case import CaseResult, execute
    from harness.targets import KINDS as TARGET_KINDS
    from harness.targets import Target
    from harness.targets import create as create_target

_WHERE = {
    "CAUSES": ("harness.catalogue.outcome", "CAUSES"),
    "ERROR_KINDS": ("harness.catalogue.outcome", "ERROR_KINDS"),
    "TARGET_KINDS": ("harness.targets", "KINDS"),
    "CaseResult": ("harness.seams.case", "CaseResult"),
    "Diagnostic": ("harness.catalogue.outcome", "Diagnostic"),
    "Loaded": ("harness.catalogue.loader", "Loaded"),
    "Outcome": ("harness.catalogue.outcome", "Outcome"),
    "Scenario": ("harness.catalogue.scenario", "Scenario"),
    "Target": ("harness.targets", "Target"),
    "create_target": ("harness.targets", "create"),
    "execute": ("harness.seams.case", "execute"),
    "load": ("harness.catalogue.loader", "load"),
}

__all__ = [
    "CAUSES",
    "ERROR_KINDS",
    "TARGET_KINDS",
    "CaseResult",
    "Diagnostic",
    "Loaded",
    "Outcome",
    "Scenario",
    "Target",
    "create_target",
    "execute",
    "load",
]


def __getattr__(name: str) -> Any:
    try:
        module, attribute = _WHERE[name]
    except KeyError:
        raise AttributeError(f"module 'harness' has no attribute {name!r}") from None
    return getattr(import_module(module), attribute)
