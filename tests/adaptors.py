"""Tiny Python adaptors for the ``python:`` target tests: one broken, one faithful."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from harness import _pipeline
from harness._launch import Subprocess
from harness._scenario import Descriptor, Request, SchemaType


def explodes(message: dict[str, Any]) -> dict[str, Any]:
    raise RuntimeError("adaptor bug")


def garbage(message: dict[str, Any]) -> dict[str, Any]:
    return {"status": "maybe"}


def reference(message: dict[str, Any]) -> dict[str, Any]:
    """The reference pipeline driven only from the JSON message, as a foreign adaptor would be."""
    raw = message["request"]
    st = raw["schema_type"]
    request = Request(
        driver=raw["driver"],
        prompt=raw["prompt"],
        schema=None if raw["schema"] is None else raw["schema"].encode(),
        schema_type=None
        if st is None
        else SchemaType(
            st["root"],
            tuple((name, tuple(fields.items())) for name, fields in st["types"].items()),
            st["inline_references"],
        ),
        schema_format=raw["schema_format"],
        schema_name=raw["schema_name"],
        schema_description=raw["schema_description"],
        on_invalid=raw["on_invalid"],
        mode=raw["mode"],
        approval=raw["approval"],
        descriptor=None if raw["descriptor"] is None else Descriptor(**raw["descriptor"]),
        timeout=raw["timeout"],
        mutate_schema_after_build=raw["mutate_schema_after_build"],
    )
    where = message["provider"]
    provider = _pipeline.Provider(
        executables=where["executables"],
        env={**os.environ, **where["env"]},
        work=Path(where["work"]),
    )
    return _pipeline.run(request, provider, Subprocess()).to_json()
