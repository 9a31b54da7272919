"""
A conformance harness and simulator for structured output from coding agents.

The public surface is small: load a catalogue, run a scenario on a target,
read the canonical outcome.  Everything else is private and may change.
"""

from harness._execute import CaseResult, execute
from harness._loader import Loaded, load
from harness._outcome import CAUSES, ERROR_KINDS, Diagnostic, Outcome
from harness._scenario import Scenario
from harness._targets import KINDS as TARGET_KINDS
from harness._targets import Target, create as create_target

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
