"""
The real CLIs' captures, the project's own test data (tests/data/captures/README.md).

One place names the folder and lists its cases, so every test that checks a
fake, a reference model or the adaptor against the real binaries reads the
same facts, from inside the repository.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

CAPTURES = Path(__file__).resolve().parent / "data" / "captures"


def names(prefix: str = "") -> list[str]:
    """
    Every case whose name starts with ``prefix`` (``claude-``, ``codex-``), sorted.

    None at all is an error, not an empty parametrisation that pytest would
    report as one quiet skip.
    """
    found = sorted(p.name.removesuffix(".meta.json") for p in CAPTURES.glob(f"{prefix}*.meta.json"))
    if not found:
        raise FileNotFoundError(f"{CAPTURES}: no {prefix or ''}*.meta.json capture")
    return found


def meta(name: str) -> dict[str, Any]:
    """The case's ``NAME.meta.json``: the model script, exit code, stderr and requests."""
    loaded: dict[str, Any] = json.loads((CAPTURES / f"{name}.meta.json").read_text())
    return loaded


def stdout(name: str) -> bytes:
    """What the CLI printed on stdout, byte for byte (machine paths masked)."""
    return (CAPTURES / f"{name}.stdout").read_bytes()
