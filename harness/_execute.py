"""
Execution of one case: a scenario against a target, as a result value.

The fake provider gets its script and a record file in a private temporary
folder; the target runs; the record tells how often and how the provider was
launched; the outcome is compared with the expectation.  Whatever the target
does (raise, hang past its own timeout, return garbage), the case ends as a
`CaseResult` and the run goes on.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import providers_fake
from harness._compare import Mismatch, compare
from harness._launch import EXECUTABLES, find_executable
from harness._outcome import Outcome, ProviderCall
from harness._pipeline import Provider
from harness._protocol import AdaptorFailed, Skipped
from harness._scenario import Scenario
from harness._targets import Target
from harness.exceptions import HarnessError

#: The four ways a case can end.
STATUSES = ("passed", "failed", "errored", "skipped")


@dataclass(frozen=True)
class CaseResult:
    """How one scenario fared on one target."""

    scenario: str
    target: str
    status: str
    outcome: Outcome | None = None
    mismatches: tuple[Mismatch, ...] = ()
    reason: str | None = None
    #: Against the target's baseline: None, "expected", "regression" or "stale".
    verdict: str | None = None
    #: Why the verdict is what it is (the baseline's reason, or what is new).
    note: str | None = None

    @property
    def case_id(self) -> str:
        return f"{self.scenario}[{self.target}]"


def _records(path: Path, work: Path) -> tuple[ProviderCall, ...]:
    """The launches the fake recorded, with machine paths made stable."""
    if not path.exists():
        return ()
    calls = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        record = json.loads(line)
        argv = [str(a).replace(str(work), "<work>") for a in record.get("argv", ())]
        record["argv"] = argv
        calls.append(ProviderCall.from_record(record))
    return tuple(calls)


@cache
def _executables() -> dict[str, str]:
    found = {}
    for cli in EXECUTABLES:
        try:
            found[cli] = find_executable(cli)
        except HarnessError:
            continue
    return found


def execute(scenario: Scenario, target: Target) -> CaseResult:
    """Run ``scenario`` on ``target``; never raises for a misbehaving target."""
    if scenario.seam not in target.seams:
        return CaseResult(
            scenario.id,
            target.name,
            "skipped",
            reason=f"{target.name} does not serve the {scenario.seam.value} seam",
        )
    with tempfile.TemporaryDirectory(prefix="harness-") as folder:
        work = Path(folder)
        script = work / "script.json"
        record = work / "record.jsonl"
        script_json = scenario.script.to_json(scenario.id) if scenario.script else {}
        script.write_text(json.dumps(script_json), encoding="utf-8")
        fake_env = {providers_fake.SCRIPT_ENV: str(script), providers_fake.RECORD_ENV: str(record)}
        provider = Provider(
            executables=_executables(), env={**os.environ, **fake_env}, work=work, fake_env=fake_env
        )
        try:
            outcome = target.run(scenario.request, provider, scenario.id)
        except Skipped as skip:
            return CaseResult(scenario.id, target.name, "skipped", reason=str(skip))
        except AdaptorFailed as failure:
            return CaseResult(scenario.id, target.name, "errored", reason=str(failure))
        except Exception as error:  # noqa: BLE001  (a broken target is data, not a crash)
            return CaseResult(
                scenario.id, target.name, "errored", reason=f"{type(error).__name__}: {error}"
            )
        outcome = outcome.observed(_records(record, work))
    mismatches = compare(scenario.expectation_for(target.kind), outcome)
    status = "failed" if mismatches else "passed"
    return CaseResult(scenario.id, target.name, status, outcome, mismatches)
