"""
Validation diagnostics in one stable shape (POL-04).

The validator's leaf messages, each at a JSON-pointer instance path, sorted
and de-duplicated so that the same answer always yields the same report.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
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
    found = {
        Diagnostic(pointer(error.absolute_path), error.message)
        for error in _leaves(validator.iter_errors(value))
    }
    return tuple(sorted(found))
