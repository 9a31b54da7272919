"""
The real ``claude`` and ``codex`` binaries as a target, at any published version.

``real`` runs the pinned pair (the versions the captures were taken with);
``real:claude=2.1.235``, ``real:codex=0.171.0`` or ``real:claude=X,codex=Y``
run those versions, a CLI not named staying at its pin.  The same argument
gives a reference target the version profiles of its models
(``reference:claude=2.1.235``), so it is read here, once, for both kinds
(`versions_argument`).

Versions other than the pin are installed on demand (`prepare`, called by
the front before any case runs, never by a worker) with
``scripts/install-real-clis.sh``, each into its own folder of the install
cache; a version npm does not publish is one line naming it, not a
traceback.  Installed versions stay in the cache for the next run.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from harness.catalogue.scenario import Seam
from harness.catalogue.versions import CLIS, check_version
from harness.exceptions import BadTargetSpec, InstallFailed
from providers_fake.api import realcli

#: The argument of the ``reference`` and ``real`` kinds, for usage lines.
VERSIONS = "CLI=VERSION[,CLI=VERSION]"
#: Each CLI at its pinned version, as a target's ``versions``.
PINS: tuple[tuple[str, str], ...] = tuple(sorted(realcli.PINNED.items()))
#: The installer, in the source tree beside the harness.
INSTALLER = Path(__file__).resolve().parents[2] / realcli.INSTALL_HINT
#: How long one install may take (a claude install is 200-400 MB).
INSTALL_TIMEOUT = 900.0
#: The installer's exit status for a version the registry does not publish.
_NOT_PUBLISHED = 3


def versions_argument(spec: str, argument: str) -> tuple[tuple[str, str], ...]:
    """
    The versions ``claude=X,codex=Y`` (either or both) names, every CLI it
    does not name at its pin; raises BadTargetSpec saying what is wrong.
    """
    named: dict[str, str] = {}
    for part in argument.split(","):
        cli, equals, version = part.strip().partition("=")
        if cli not in CLIS or not equals:
            raise BadTargetSpec(
                spec, f"{part.strip()!r}: give CLI=VERSION, CLI one of {', '.join(CLIS)}"
            )
        if cli in named:
            raise BadTargetSpec(spec, f"{cli} is given twice")
        why = check_version(version.strip())
        if why is not None:
            raise BadTargetSpec(spec, f"{cli}: {why}")
        named[cli] = version.strip()
    return tuple(sorted({**realcli.PINNED, **named}.items()))


def describe_versions(versions: tuple[tuple[str, str], ...]) -> str:
    """``claude 2.1.235, codex 0.169.0 (pinned)``: what reports say a target runs."""
    return ", ".join(
        f"{cli} {version}" + (" (pinned)" if realcli.PINNED.get(cli) == version else "")
        for cli, version in versions
    )


def unpinned(versions: tuple[tuple[str, str], ...]) -> str:
    """The spec argument naming the versions that differ from the pins (empty when none)."""
    return ",".join(f"{cli}={v}" for cli, v in versions if realcli.PINNED.get(cli) != v)


@dataclass(frozen=True)
class RealCli:
    """
    The real binaries, as ``real`` or ``real:claude=X,codex=Y`` (model-api only).

    A version that is missing when a case runs errors that case with the
    install command, never skips it.
    """

    name: str
    versions: tuple[tuple[str, str], ...] = PINS
    kind: str = "real"
    seams: frozenset[Seam] = frozenset({Seam.MODEL_API})

    @classmethod
    def from_spec(cls, spec: str, argument: str) -> RealCli:
        """``real`` (``argument`` empty: the pins) or ``real:claude=X,codex=Y``."""
        if not argument:
            return cls(spec)
        return cls(spec, versions_argument(spec, argument))

    def binary(self, cli: str) -> Path:
        return realcli.locate(cli, version=dict(self.versions)[cli])

    def prepare(self) -> None:
        """Install every version this target runs that the cache lacks (the pins excepted)."""
        for cli, version in self.versions:
            if realcli.PINNED[cli] == version:
                continue  # the pair `make test` installs; missing, its cases say how
            try:
                realcli.locate(cli, version=version)
            except FileNotFoundError:
                install(self.name, cli, version)


def install(spec: str, cli: str, version: str) -> None:
    """
    ``install-real-clis.sh DIR CLI=VERSION``: its progress goes to stderr; a
    version npm does not publish raises BadTargetSpec, any other failure
    InstallFailed, each with the installer's own last line.
    """
    root = realcli.install_dir()
    what = realcli.release(cli, version)
    if not INSTALLER.is_file():
        why = f"{realcli.INSTALL_HINT} is not beside this harness (it is in a source checkout)"
        raise InstallFailed(what, why)
    argv = ["sh", str(INSTALLER), str(root), f"{cli}={version}"]
    print(f"harness: installing {what} into {root} for {spec}", file=sys.stderr)
    # Its own process group, so that npm and its children go with it on a timeout or Ctrl-C.
    process = subprocess.Popen(
        argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True
    )
    try:
        _, stderr = process.communicate(timeout=INSTALL_TIMEOUT)
    except subprocess.TimeoutExpired:
        raise InstallFailed(what, f"npm took over {INSTALL_TIMEOUT:.0f} s") from None
    finally:
        if process.poll() is None:
            _stop(process)
    if process.returncode == 0:
        return
    lines = [line for line in stderr.splitlines() if line.strip()]
    last = lines[-1].removeprefix("install-real-clis: ") if lines else f"exit {process.returncode}"
    if process.returncode == _NOT_PUBLISHED:
        raise BadTargetSpec(spec, last)
    raise InstallFailed(what, last)


def _stop(process: subprocess.Popen[str]) -> None:
    """The installer's group: asked to stop (its trap removes the half-made folder), then killed."""
    for sent, grace in ((signal.SIGTERM, 10.0), (signal.SIGKILL, None)):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, sent)
        try:
            process.wait(grace)
            return
        except subprocess.TimeoutExpired:
            continue
