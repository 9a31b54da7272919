"""
What the harness needs on this machine, as data: one `Check` per
prerequisite, in `CHECKS`, each with what needs it, the probe that looks and
the command that fixes it.  ``harness doctor`` prints one line per check.

A check is *needed* when ``make run``, the project's default run, cannot do
without it (the reference's Claude Code model validates with Ajv under Node;
the pinned real CLIs run unless ``HARNESS_REAL_CLIS=off``); the others serve
one command or test and are reported, not required.  Probes run the tools
with a deadline and never the network.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Collection
from dataclasses import dataclass
from pathlib import Path

#: Seconds a tool may take to print its version.
PROBE_TIMEOUT = 20.0
#: The oldest Node the Ajv worker, the example adaptors and the real CLIs run on.
NODE_MAJOR = 20
PYTHON = (3, 11)


@dataclass(frozen=True)
class Finding:
    """What a probe found: whether it will do, and what it saw (a version, a folder, why not)."""

    ok: bool
    seen: str
    #: The command that fixes it, when it is not the check's usual one.
    fix: str | None = None


@dataclass(frozen=True)
class Check:
    name: str
    #: Who needs it, as the line says it.
    needed_by: str
    probe: Callable[[], Finding]
    fix: str
    #: Whether the default run (``make run``) needs it; see `needed`.
    required: Callable[[], bool] = lambda: True


def tool_version(program: str, *arguments: str) -> str | None:
    """The first line ``program arguments`` prints, or None when it is not there or fails."""
    found = shutil.which(program)
    if found is None:
        return None
    try:
        done = subprocess.run(
            [found, *arguments],
            capture_output=True,
            text=True,
            timeout=PROBE_TIMEOUT,
            check=False,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    lines = (done.stdout or done.stderr).strip().splitlines()
    return lines[0].strip() if done.returncode == 0 and lines else None


def python(version: tuple[int, ...] = tuple(sys.version_info[:3])) -> Finding:
    seen = ".".join(map(str, version))
    if version[:2] < PYTHON:
        return Finding(False, f"{seen}, older than {'.'.join(map(str, PYTHON))}")
    return Finding(True, f"{seen} ({sys.executable})")


def node() -> Finding:
    seen = tool_version("node", "--version")
    if seen is None:
        return Finding(False, "not on PATH")
    major = re.match(r"v?(\d+)", seen)
    if major is None or int(major[1]) < NODE_MAJOR:
        return Finding(False, f"{seen}, older than {NODE_MAJOR}")
    return Finding(True, seen)


def _present(program: str, *arguments: str) -> Callable[[], Finding]:
    def probe() -> Finding:
        seen = tool_version(program, *arguments)
        return Finding(False, "not on PATH") if seen is None else Finding(True, seen)

    return probe


def bubblewrap() -> Finding:
    from harness.systems import sandbox  # noqa: PLC0415  (only this check needs it)

    seen = tool_version("bwrap", "--version")
    if seen is None:
        return Finding(False, "not on PATH: commands run in a process group, unconfined")
    if sandbox.isolation() != sandbox.BUBBLEWRAP:
        return Finding(False, f"{seen}, but it cannot make a sandbox here (user namespaces?)")
    return Finding(True, seen)


def ajv() -> Finding:
    from harness.systems.claude import validator  # noqa: PLC0415  (only this check needs it)

    manifest = validator.PACKAGE / "node_modules" / "ajv" / "package.json"
    try:
        seen = json.loads(manifest.read_text(encoding="utf-8")).get("version")
    except (OSError, ValueError, AttributeError):
        seen = None
    fix = f"npm ci --prefix {validator.PACKAGE}"
    if seen != validator.AJV_VERSION:
        what = "not installed" if seen is None else f"ajv {seen}"
        return Finding(False, f"{what} in {validator.PACKAGE}", fix)
    return Finding(True, f"ajv {seen} in {validator.PACKAGE}")


def real_clis() -> Finding:
    from providers_fake.api import realcli  # noqa: PLC0415  (only this check needs it)

    root = realcli.install_dir()
    missing = []
    for cli, version in sorted(realcli.PINNED.items()):
        try:
            realcli.locate(cli)
        except FileNotFoundError:
            missing.append(f"{cli} {version}")
    others = sorted(p.name.replace("-", " ", 1) for p in _version_folders(root, realcli.PACKAGES))
    installed = [f"{c} {v} (pinned)" for c, v in sorted(realcli.PINNED.items())
                 if f"{c} {v}" not in missing] + others  # fmt: skip
    listing = ", ".join(installed) or "none installed"
    if missing:
        return Finding(False, f"{root}: {listing}; missing {', '.join(missing)}", _install(root))
    return Finding(True, f"{root}: {listing}")


def _version_folders(root: Path, clis: Collection[str]) -> list[Path]:
    """The folders ``install-real-clis.sh DIR CLI=VERSION`` made: one per release."""
    names = "|".join(map(re.escape, clis))
    try:
        return [p for p in root.iterdir() if re.fullmatch(rf"({names})-\d[\w.]*", p.name)]
    except OSError:
        return []


def _install(root: Path) -> str:
    from providers_fake.api import realcli  # noqa: PLC0415

    installer = Path(__file__).resolve().parents[2] / realcli.INSTALL_HINT
    if installer.is_file():
        return f"sh {installer} {root}"
    packages = " ".join(f"{realcli.PACKAGES[c]}@{v}" for c, v in sorted(realcli.PINNED.items()))
    return f"npm install --prefix {root} --include=optional {packages}"


def _real_clis_on() -> bool:
    return os.environ.get("HARNESS_REAL_CLIS", "").strip().lower() != "off"


def xdist() -> Finding:
    try:
        return Finding(True, importlib.metadata.version("pytest-xdist"))
    except importlib.metadata.PackageNotFoundError:
        return Finding(False, "not installed")


CHECKS: tuple[Check, ...] = (
    Check("python", "the harness", python, "install Python 3.11 or later"),
    Check(
        "node",
        "the Claude Code model's validator, the example adaptors, the real CLIs",
        node,
        "install Node.js 20 or later (https://nodejs.org, or apt-get install nodejs)",
    ),
    Check(
        "npm",
        "installing the Ajv worker, the example adaptors and the real CLIs",
        _present("npm", "--version"),
        "install npm (it comes with Node.js; apt-get install npm)",
    ),
    Check(
        "ajv worker",
        "the Claude Code model's validator (reference target, model-api)",
        ajv,
        "make ajv",
    ),
    Check(
        "real CLIs",
        "--target real and make run (HARNESS_REAL_CLIS=off leaves them out)",
        real_clis,
        "sh scripts/install-real-clis.sh",
        required=_real_clis_on,
    ),
    Check(
        "bubblewrap",
        "confining the commands of --allow-exec cases",
        bubblewrap,
        "apt-get install bubblewrap",
        required=lambda: False,
    ),
    Check(
        "pytest-xdist",
        "harness run -n N and make test",
        xdist,
        "pip install 'structured-output-harness[xdist]'",
        required=lambda: False,
    ),
    Check(
        "chromium",
        "the HTML report's browser tests (tests/test_html.py)",
        _present("chromium", "--version"),
        "apt-get install chromium",
        required=lambda: False,
    ),
    Check(
        "go",
        "harness init adaptor --lang go",
        _present("go", "version"),
        "apt-get install golang-go",
        required=lambda: False,
    ),
)
