"""
The fake side of one case: a private folder holding the fake's scripts and record.

Every seam puts a scripted fake behind its system under test.  The folder
holds the script of each launch (``script.json``, then ``script-2.json``…
for follow-up turns) and the record file the fake appends to on every
launch; `Provider` values tell the system under test where the fakes are.
What the fake recorded is read back as `ProviderCall` values, with machine
paths made stable, so that how often and how the provider was launched is
measured by the fake itself and never trusted from the system under test.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import providers_fake
from harness import signals
from harness.adaptor.environment import adaptor_environment
from harness.adaptor.launch import EXECUTABLES, find_executable
from harness.adaptor.pipeline import Provider
from harness.catalogue import jsonvalue
from harness.catalogue.lines import json_lines
from harness.catalogue.outcome import ProviderCall
from harness.catalogue.scenario import Scenario
from harness.exceptions import HarnessError


@cache
def executables() -> dict[str, str]:
    """CLI name → the installed fake, for every fake that can be found."""
    found = {}
    for cli in EXECUTABLES:
        try:
            found[cli] = find_executable(cli)
        except HarnessError:
            continue
    return found


def _stable(arg: str, work: Path) -> str:
    """
    An argument with machine paths made stable: the case folder becomes
    ``<work>``, and a file an adaptor made elsewhere in the temporary folder
    (SDKs write schema files under random names) becomes ``<tmp>/NAME``.
    """
    arg = arg.replace(str(work), "<work>")
    temporary = tempfile.gettempdir().rstrip("/") + "/"
    if arg.startswith(temporary):
        return "<tmp>/" + arg.rsplit("/", 1)[-1]
    return arg


def stable_text(text: str | None, work: Path) -> str | None:
    """
    Output a fake printed, with the paths it printed made stable.

    A fake prints its working directory (Claude's and Cursor's init records
    carry ``cwd``, and Claude names its per-project folder after it with every
    other character than a letter or digit as ``-``): the case folder when it
    runs as a process, the harness's own directory when it is replayed in
    process.  Both become ``<work>`` in either spelling, so the two launchers
    give identical outcomes and reports do not depend on the machine.
    """
    if text is None:
        return None
    for path in (str(work), os.getcwd()):
        if len(path) > 1:
            dashed = "".join(c if c.isalnum() else "-" for c in path)
            text = text.replace(path, "<work>").replace(dashed, "<work>")
    return text


def _records(path: Path, work: Path) -> tuple[ProviderCall, ...]:
    """The launches the fake recorded, with machine paths made stable."""
    if not path.exists():
        return ()
    calls = []
    for line in json_lines(path.read_text(encoding="utf-8")):
        if not line.strip():
            continue
        record = jsonvalue.loads(line)
        record["argv"] = [_stable(str(a), work) for a in record.get("argv", ())]
        calls.append(ProviderCall.from_record(record))
    return tuple(calls)


@dataclass(frozen=True)
class Workspace:
    """The folder of one case and the scripts written into it."""

    work: Path
    #: Script file of each launch in order; later launches replay the last.
    scripts: tuple[Path, ...]

    @property
    def record(self) -> Path:
        return self.work / "record.jsonl"

    def provider(self, launch: int = 0) -> Provider:
        """Where the fake is for the ``launch``-th launch (0 is the first)."""
        script = self.scripts[min(launch, len(self.scripts) - 1)]
        fake_env = {
            providers_fake.SCRIPT_ENV: str(script),
            providers_fake.RECORD_ENV: str(self.record),
        }
        return Provider(
            executables=executables(),
            env={**adaptor_environment(), **fake_env},
            work=self.work,
            fake_env=fake_env,
        )

    def calls(self) -> tuple[ProviderCall, ...]:
        """Every launch the fake recorded so far."""
        return _records(self.record, self.work)


def open_for(scenario: Scenario) -> Folder:
    """A fresh private folder with the scenario's scripts: ``with open_for(s) as workspace``."""
    return Folder(scenario)


class Folder:
    """
    The private folder of one case, removed on exit.

    A class rather than ``@contextmanager``: a generator-based manager writes
    ``__traceback__`` on the exception passing through it, which the harness's
    frozen exceptions refuse, turning a target's failure into a different one.
    """

    def __init__(self, scenario: Scenario) -> None:
        self.scenario = scenario
        with signals.held():  # made and noted as one: an interrupt cannot fall between
            self.folder = tempfile.TemporaryDirectory(prefix="harness-")

    def __enter__(self) -> Workspace:
        try:
            return self._fill(Path(self.folder.name))
        except BaseException:
            self._remove()  # ``with`` runs no __exit__ for an __enter__ that raised
            raise

    def _fill(self, work: Path) -> Workspace:
        scenario = self.scenario
        first = scenario.script.to_json(scenario.id) if scenario.script else {}
        later = [script.to_json(scenario.id) for script in scenario.later_scripts]
        paths = []
        for index, script in enumerate([first, *later], start=1):
            path = work / ("script.json" if index == 1 else f"script-{index}.json")
            path.write_text(json.dumps(script), encoding="utf-8")
            paths.append(path)
        return Workspace(work, tuple(paths))

    def __exit__(self, *exc_info: object) -> None:
        self._remove()

    def _remove(self) -> None:
        with signals.held():  # a second stop signal must not cut the removal short
            self.folder.cleanup()
