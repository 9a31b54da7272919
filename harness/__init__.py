"""
A conformance harness and simulator for structured output from coding agents.

The public surface is small: load a catalogue, run a scenario on a target,
read the canonical outcome.  Everything else is private and may change.
Names are resolved lazily so that the pytest plugin, which pytest imports
before anything else, does not drag the whole harness in with it.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from harness._execute import CaseResult, execute
    from harness._loader import Loaded, load
    from harness._outcome import CAUSES, ERROR_KINDS, Diagnostic, Outcome
    from harness._scenario import Scenario
    from harness._targets import KINDS as TARGET_KINDS
    from harness._targets import Target
    from harness._targets import create as create_target

_WHERE = {
    "CAUSES": ("harness._outcome", "CAUSES"),
    "ERROR_KINDS": ("harness._outcome", "ERROR_KINDS"),
    "TARGET_KINDS": ("harness._targets", "KINDS"),
    "CaseResult": ("harness._execute", "CaseResult"),
    "Diagnostic": ("harness._outcome", "Diagnostic"),
    "Loaded": ("harness._loader", "Loaded"),
    "Outcome": ("harness._outcome", "Outcome"),
    "Scenario": ("harness._scenario", "Scenario"),
    "Target": ("harness._targets", "Target"),
    "create_target": ("harness._targets", "create"),
    "execute": ("harness._execute", "execute"),
    "load": ("harness._loader", "load"),
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
