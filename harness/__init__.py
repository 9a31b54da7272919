"""
A conformance harness and simulator for structured output from coding agents.

The public surface is small: load a catalogue, run a scenario on a target,
read the canonical outcome.  Everything else is private and may change.
Names are resolved lazily so that the pytest plugin, which pytest imports
before anything else, does not drag the whole harness in with it.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

# The C module: ``signal`` builds enums on import, long enough for a signal to land in.
_signal: Any = __import__("_signal")


def _starting(signum: int, frame: object) -> None:
    """
    SIGINT or SIGTERM while the ``harness`` command is still importing, before
    `harness.signals` takes over: nothing is started yet, so nothing needs
    undoing, and the user gets the one line and the status any interrupt gets.
    """
    print("harness: interrupted", file=sys.stderr)
    raise SystemExit(2)


if os.path.basename(getattr(sys, "argv", [""])[0] or "") == "harness":
    # Only the command: the pytest plugin and library users keep their own handlers.
    if _signal.getsignal(_signal.SIGINT) is _signal.default_int_handler:
        _signal.signal(_signal.SIGINT, _starting)
    if _signal.getsignal(_signal.SIGTERM) == _signal.SIG_DFL:
        _signal.signal(_signal.SIGTERM, _starting)

from importlib import import_module  # noqa: E402 - after the handlers: imports take time

if TYPE_CHECKING:
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
