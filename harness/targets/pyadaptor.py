"""
The ``python:MODULE:FUNCTION`` target: an adaptor written in Python, called in process.

The function gets one JSON-shaped dict (``scenario``, ``request`` and
``provider``, as in the protocol's ``run`` message) and returns the
canonical outcome dict, or ``{"skipped": true, "reason": ...}`` for a case
it does not handle, the same answer a protocol adaptor gives.  The module
may announce itself in ``IMPLEMENTATION`` (the protocol's ``implementation``
object); cases it says it cannot serve are skipped before it is called.

The module is imported the way ``python -m`` would find it: the current
folder first.  What goes wrong while importing is one line naming the module
(a usage error, before any case runs); what goes wrong in a case is that
case's error, with the adaptor's traceback in the report.
"""

from __future__ import annotations

import importlib
import sys
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from harness.adaptor.pipeline import Provider
from harness.catalogue.jsonvalue import non_finite
from harness.catalogue.outcome import Outcome
from harness.catalogue.scenario import Request, Seam
from harness.catalogue.suggest import did_you_mean
from harness.exceptions import BadTargetSpec, InvalidAnswer
from harness.targets.announce import Implementation
from harness.targets.protocol import AdaptorFailed, Skipped, problems

USAGE = "python:MODULE:FUNCTION, e.g. python:my_adaptor:run"
#: The most of an adaptor's traceback a report keeps (its innermost frames).
_TRACEBACK_LINES = 40


@dataclass(frozen=True)
class PythonCallable:
    """See the module docstring."""

    name: str
    function: Callable[[dict[str, Any]], Any]
    implementation: Implementation | None = None
    kind: str = "python"
    seams: frozenset[Seam] = frozenset({Seam.AGENT_CLI})

    @classmethod
    def from_spec(cls, spec: str, location: str) -> PythonCallable:
        module_name, _, attribute = location.partition(":")
        if not module_name or not attribute:
            raise BadTargetSpec(spec, f"give it as {USAGE}")
        module = _import(spec, module_name)
        function = getattr(module, attribute, None)
        if not callable(function):
            names = [n for n in vars(module) if callable(getattr(module, n))]
            hint = did_you_mean(attribute, names)
            raise BadTargetSpec(spec, f"module {module_name!r} has no function {attribute!r}{hint}")
        raw = getattr(module, "IMPLEMENTATION", None)
        try:
            implementation = None if raw is None else Implementation.from_json(raw)
        except ValueError as error:
            raise BadTargetSpec(spec, f"{module_name}.IMPLEMENTATION: {error}") from None
        return cls(spec, function, implementation)

    def announced(self) -> Implementation | None:
        return self.implementation

    def run(self, request: Request, provider: Provider, scenario_id: str) -> Outcome:
        if self.implementation is not None:
            why = self.implementation.declines(request)
            if why is not None:
                raise Skipped(why)
        message = {
            "scenario": scenario_id,
            "request": request.to_json(),
            "provider": provider.to_json(),
        }
        try:
            answer = self.function(message)
        except Exception as error:  # noqa: BLE001  (the adaptor's bug, reported with its traceback)
            raise AdaptorFailed(_raised(error)) from None
        if isinstance(answer, dict) and answer.get("skipped") is True:
            reason = answer.get("reason")
            if not isinstance(reason, str) or not reason.strip():
                raise InvalidAnswer(self.name, ("a skipped answer needs a reason (a string)",))
            raise Skipped(reason)
        where = non_finite(answer)
        if where is not None:  # no report could print it as JSON
            raise InvalidAnswer(self.name, (f"{where}: NaN or infinity is not a JSON number",))
        found = problems("outcome", answer)
        if found:
            raise InvalidAnswer(self.name, tuple(found))
        return Outcome.from_json(answer)


def _import(spec: str, module_name: str) -> ModuleType:
    here = str(Path.cwd())
    if here not in sys.path:
        sys.path.insert(0, here)  # as `python -m` does
    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as error:
        missing = error.name or ""
        if module_name == missing or module_name.startswith(missing + "."):
            raise BadTargetSpec(
                spec,
                f"cannot import {module_name!r} (is it on the path? "
                f"the current folder {here} is searched first, then PYTHONPATH)",
            ) from None
        raise BadTargetSpec(spec, f"importing {module_name!r} failed: {_line(error)}") from None
    except (Exception, SystemExit) as error:  # noqa: BLE001  (anything the module does at import)
        raise BadTargetSpec(spec, f"importing {module_name!r} failed: {_line(error)}") from None


def _line(error: BaseException) -> str:
    """An exception as one line, with where it was raised."""
    if isinstance(error, SyntaxError):
        return f"{_relative(error.filename or '?')}:{error.lineno}: SyntaxError: {error.msg}"
    frames = traceback.extract_tb(error.__traceback__)
    where = f" ({_relative(frames[-1].filename)}:{frames[-1].lineno})" if frames else ""
    text = " ".join(str(error).split())
    return f"{type(error).__name__}: {text}{where}" if text else type(error).__name__ + where


def _raised(error: Exception) -> str:
    """
    What a case's report says of an exception in the adaptor: the exception,
    then its traceback from the adaptor's own frames on (this module's frame
    is left out), innermost frames kept, paths relative to the current folder
    so that two runs give the same report.
    """
    frames = traceback.extract_tb(error.__traceback__)[1:]
    for frame in frames:
        frame.filename = _relative(frame.filename)
    shown = "".join(traceback.format_exception_only(error)).rstrip("\n")
    lines = "".join(traceback.format_list(frames)).rstrip("\n").splitlines()
    if len(lines) > _TRACEBACK_LINES:
        lines = ["  ...", *lines[-_TRACEBACK_LINES:]]
    return "\n".join([shown, "Traceback (most recent call last):", *lines, shown])


def _relative(filename: str) -> str:
    try:
        return Path(filename).resolve().relative_to(Path.cwd().resolve()).as_posix()
    except (ValueError, OSError):
        return filename
