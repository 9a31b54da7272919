"""
Validation diagnostics in one stable shape (POL-04).

The validator's leaf messages, each at a JSON-pointer instance path with the
JSON Schema keyword that failed, sorted and de-duplicated so that the same
answer always yields the same report.  The keyword and the path are what the
catalogue checks (any validator names them alike); the message is this
validator's wording.

Validation is bounded in time: a scenario's schema may hold a ``pattern``
that backtracks catastrophically on the scenario's value (``^(a+)+$``
against forty ``a`` and a ``!``), and Python's regular expressions have no
budget of their own.  Past `BUDGET` the validation is interrupted and
`ValidationTimeout` raised, which ends that case as errored, with the reason,
instead of hanging the run.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any

import jsonschema
from jsonschema.exceptions import ValidationError

from harness.catalogue.outcome import Diagnostic


def pointer(path: Iterable[str | int]) -> str:
    """An RFC 6901 JSON pointer for ``path`` ("" is the root)."""
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in path)


def _leaves(errors: Iterable[ValidationError]) -> Iterator[ValidationError]:
    for error in errors:
        if error.context:
            yield from _leaves(error.context)
        else:
            yield error


def diagnostics(validator: jsonschema.Draft202012Validator, value: Any) -> tuple[Diagnostic, ...]:
    """Every leaf error of ``value``; empty when it is valid."""
    with bounded(BUDGET):
        found = {
            Diagnostic(pointer(error.absolute_path), error.message, str(error.validator))
            for error in _leaves(validator.iter_errors(value))
        }
    return tuple(sorted(found))


#: Seconds the validation of one value may take.
BUDGET = 2.0


class ValidationTimeout(RuntimeError):
    """Validating one value took longer than its budget (see the module docstring)."""


@contextmanager
def bounded(seconds: float) -> Iterator[None]:
    """
    Interrupt the block after ``seconds`` with `ValidationTimeout`.

    A timer signal reaches Python's regular-expression engine, which checks
    for signals as it backtracks; it can only be armed in the main thread,
    where the harness runs its cases, and elsewhere the block runs unbounded.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def expire(signum: int, frame: object) -> None:
        raise ValidationTimeout(
            f"validating one value took longer than {seconds:g} s "
            "(a pattern that backtracks catastrophically?)"
        )

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
