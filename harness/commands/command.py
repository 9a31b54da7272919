"""
One subcommand as a record (`Command`), and what several commands share:
the default paths, the default reports folder, the tag check.

Only the standard library and `harness.exitcodes` load here: the harness
itself loads when a command runs, so that ``harness --help`` answers at once
and SIGTERM is an orderly stop from the start.
"""

from __future__ import annotations

import argparse
import hashlib
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib import import_module
from pathlib import Path
from typing import Any

ALLOW_EXEC_HELP = (
    "let scenarios make the systems under test run commands on this machine, confined to "
    "the case's folder (bubblewrap where available); without it such cases are skipped"
)
PATHS_HELP = "scenario files or folders (default: the catalogue bundled with the harness)"


@dataclass(frozen=True)
class Command:
    """
    A subcommand: its name and one-line help (``harness --help``), the
    options it declares on its parser, and the code that runs it.  An
    epilog or description is shown by its own ``--help`` as written.
    """

    name: str
    help: str
    options: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]
    epilog: str | None = None
    description: str | None = None


#: The distribution, as ``pip install`` names it with an extra.
DISTRIBUTION = "structured-output-harness"


def missing_extra(module: str, extra: str, what: str) -> str | None:
    """
    None when ``module`` imports; else the line saying that ``what`` needs
    the package's ``extra`` and how to install it (the wheel leaves out what
    one command alone uses, so that its pytest plugins stay out of every
    test run of the environment).
    """
    try:
        import_module(module)
    except ImportError:
        return f"{what} needs {module}: pip install '{DISTRIBUTION}[{extra}]'"
    return None


def no_options(parser: argparse.ArgumentParser) -> None:
    """The options of a command that takes none."""


def add_paths(parser: argparse.ArgumentParser) -> None:
    """The scenario files or folders most commands take."""
    parser.add_argument("paths", nargs="*", metavar="PATHS", help=PATHS_HELP)


def paths(given: Sequence[str]) -> list[Path]:
    """The paths given, or the catalogue the package ships (`loader.bundled`)."""
    from harness.catalogue import loader  # noqa: PLC0415  (see the module's docstring)

    if given:
        return [Path(p) for p in given]
    bundled = loader.bundled()
    here = Path.cwd().resolve()
    # In a checkout it is ./scenarios, and files are named as the user sees them.
    return [bundled.relative_to(here) if bundled.is_relative_to(here) else bundled]


def default_reports() -> Path:
    """
    Where ``harness run`` writes reports when not told: a folder per working
    folder in the user's cache, outside any checkout, so that a run never
    overwrites reports the project keeps (a checkout's ``reports/``).
    """
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    here = Path.cwd().resolve()
    digest = hashlib.sha256(str(here).encode()).hexdigest()[:8]
    return Path(cache) / "structured-output-harness" / "reports" / f"{here.name}-{digest}"


def unknown_tag(loaded: Any, wanted: Sequence[str]) -> str | None:
    """Why the tags asked for cannot select anything, or None when each is known."""
    from harness.catalogue.suggest import did_you_mean  # noqa: PLC0415  (see the docstring)

    known = sorted({tag for s in loaded.scenarios for tag in s.tags})
    for tag in wanted:
        if tag not in known:
            return f"unknown tag {tag!r}{did_you_mean(tag, known)} (known: {', '.join(known)})"
    return None
