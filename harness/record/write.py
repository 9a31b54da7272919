"""
Writing a scenario file the loader accepts, and proving it before anyone relies on it.

Both commands build a plain document and end here: it is dumped as YAML
(block style, keys in the order a person reads a scenario, Unicode kept),
loaded back through the catalogue's own loader, and only written when the
loader finds nothing wrong, so a written file always passes ``harness lint``.
"""

from __future__ import annotations

import re
import sys
import tempfile
from pathlib import Path
from typing import Any

import yaml

from harness.catalogue import loader
from harness.catalogue.scenario import Scenario
from harness.exceptions import CannotWrite

_NOT_ID = re.compile(r"[^a-z0-9]+")


def scenario_id(wanted: str | None, out: Path | None, fallback: str) -> str:
    """The id given, else one made from the output file's name, else `fallback`."""
    if wanted is not None:
        return wanted
    stem = out.stem if out is not None else fallback
    slug = _NOT_ID.sub("-", stem.lower()).strip("-")[:120].strip("-")
    return slug if len(slug) >= 2 else fallback


class _Dumper(yaml.SafeDumper):
    """Safe YAML without anchors: a repeated step is written out again, as a person would."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def dump(document: dict[str, Any], comments: list[str]) -> str:
    """The document as YAML, under its comment lines."""
    body = yaml.dump(
        document,
        Dumper=_Dumper,
        sort_keys=False,
        allow_unicode=True,
        width=100,
        default_flow_style=False,
    )
    head = "".join(f"# {line}\n" if line else "#\n" for line in comments)
    return head + body


def load_back(text: str, out: Path | None) -> Scenario:
    """The one scenario `text` holds, loaded as the catalogue loads it; raises unless it lints."""
    folder = out.resolve().parent if out is not None else None
    if folder is not None and not folder.is_dir():
        raise CannotWrite(str(out), "", "its folder does not exist")
    with tempfile.TemporaryDirectory(prefix="harness-write-", dir=folder) as scratch:
        path = Path(scratch) / "scenario.yaml"
        path.write_text(text, encoding="utf-8")
        loaded = loader.load([path])
    if loaded.problems or len(loaded.scenarios) != 1:
        problems = "; ".join(str(p).replace(str(path), "<written>") for p in loaded.problems)
        raise CannotWrite(str(out or "<stdout>"), "", f"the scenario would not lint: {problems}")
    return loaded.scenarios[0]


def emit(text: str, out: Path | None) -> None:
    """Write the file (or print it when no file is named)."""
    if out is None:
        sys.stdout.write(text)
        return
    try:
        out.write_text(text, encoding="utf-8")
    except OSError as error:
        raise CannotWrite(str(out), "", f"cannot write: {error.strerror or error}") from None
