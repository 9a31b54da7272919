"""Tiny Python adaptors for the ``python:`` target tests: one broken, one faithful."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from harness.adaptor import pipeline
from harness.adaptor.launch import Subprocess
from harness.catalogue.scenario import Request


def explodes(message: dict[str, Any]) -> dict[str, Any]:
    raise RuntimeError("adaptor bug")


def garbage(message: dict[str, Any]) -> dict[str, Any]:
    return {"status": "maybe"}


def reference(message: dict[str, Any]) -> dict[str, Any]:
    """The reference pipeline driven only from the JSON message, as a foreign adaptor would be."""
    where = message["provider"]
    provider = pipeline.Provider(
        executables=where["executables"],
        env={**os.environ, **where["env"]},
        work=Path(where["work"]),
    )
    return pipeline.run(Request.from_json(message["request"]), provider, Subprocess()).to_json()


def naive(message: dict[str, Any]) -> dict[str, Any]:
    """
    A plausible but wrong adaptor: when no validated value exists it falls back
    to parsing the assistant text, the mistake CLA-02 and PV-04 forbid.
    """
    outcome = reference(message)
    if outcome["error"] == "policy_violation" and outcome["text"]:
        try:
            value = json.loads(outcome["text"])
        except ValueError:
            return outcome
        return {
            **outcome,
            "status": "ok",
            "error": None,
            "message": None,
            "diagnostics": [],
            "value": value,
            "has_value": True,
        }
    return outcome


def _coerce(value: Any, scalar: Any) -> Any:
    if isinstance(value, dict):
        return {k: _coerce(v, scalar) for k, v in value.items()}
    if isinstance(value, list):
        return [_coerce(v, scalar) for v in value]
    return scalar(value)


def _bool_as_number(value: Any) -> Any:
    return int(value) if isinstance(value, bool) else value


def _int_as_float(value: Any) -> Any:
    return float(value) if isinstance(value, int) and not isinstance(value, bool) else value


def _with_value(message: dict[str, Any], scalar: Any) -> dict[str, Any]:
    outcome = reference(message)
    if outcome["has_value"]:
        outcome["value"] = _coerce(outcome["value"], scalar)
    return outcome


def booleans_as_numbers(message: dict[str, Any]) -> dict[str, Any]:
    """A lossy adaptor: its value type has no booleans, so true is 1 and false is 0."""
    return _with_value(message, _bool_as_number)


def integers_as_floats(message: dict[str, Any]) -> dict[str, Any]:
    """A lossy adaptor: every number goes through a double, so 1 comes back as 1.0."""
    return _with_value(message, _int_as_float)
