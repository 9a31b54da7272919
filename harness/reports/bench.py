"""
The benchmark: what a scenario costs, and what a fake CLI costs to start.

Prints figures rather than asserting them: how long the catalogue takes to
load, one scenario as a whole ``harness run`` beside the scenario's own time,
the whole catalogue on ``reference-inproc``; in-process and subprocess
scenarios per second over the agent-cli catalogue, the in-process cost per
scenario, the median start-up time of each fake CLI beside a bare
``python -c pass`` from the same interpreter, and what one real-CLI
model-api scenario costs bare (loopback fake plus the binary), through the
harness in process, and as a whole ``harness run`` command.

`busy` is the one step that asserts: the real-CLI part of the catalogue
must pass while other processes keep every core busy (no verdict may depend
on the machine's speed); its exit status is the run's.
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import cast
from unittest import mock

import providers_fake
from harness import targets
from harness.adaptor.launch import EXECUTABLES, find_executable
from harness.catalogue import loader, yamlcache
from harness.catalogue.scenario import Scenario, Seam
from harness.seams.case import execute
from harness.seams.model_api.run import model_script, run_case
from harness.seams.model_api.values import ModelApiRequest
from harness.targets import Target
from providers_fake.api import realcli

#: Start-ups timed per command and per ``--repeat``: 40 at the default 3, so a
#: quick ``--repeat 1`` stays quick.
_STARTS_PER_REPEAT = 13


def _catalogue(path: str) -> list[Scenario]:
    loaded = loader.load([Path(path)])
    return [s for s in loaded.scenarios if s.seam is Seam.AGENT_CLI]


def _pauses(scenario: Scenario) -> bool:
    steps = scenario.script.steps if scenario.script else ()
    return any(step.kind in {"sleep", "hang"} for step in steps)


def _rate(scenarios: list[Scenario], target: str, repeat: int) -> tuple[float, float, int]:
    return _rate_on(scenarios, targets.create(target), repeat)


def _rate_on(scenarios: list[Scenario], runner: Target, repeat: int) -> tuple[float, float, int]:
    best = float("inf")
    failures = 0
    for _ in range(repeat):
        start = time.perf_counter()
        for scenario in scenarios:
            failures += execute(scenario, runner).status != "passed"
        best = min(best, time.perf_counter() - start)
    return len(scenarios) / best, best / len(scenarios) * 1000, failures


def _median_start(argv: list[str], env: dict[str, str], runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(argv, env=env, capture_output=True, timeout=30, check=False)
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def startup(runs: int) -> dict[str, float]:
    """Median start-up in ms of bare Python and of each fake replaying one line."""
    # The same minimal environment for every command, bare Python included.
    base = {"PATH": "/usr/bin:/bin"}
    figures = {"python -c pass": _median_start([sys.executable, "-c", "pass"], base, runs)}
    with tempfile.TemporaryDirectory() as folder:
        for cli, exe in EXECUTABLES.items():
            script = Path(folder) / f"{cli}.json"
            script.write_text(json.dumps({"cli": cli, "seed": "bench", "steps": []}))
            env = {**base, providers_fake.SCRIPT_ENV: str(script)}
            argv = {"codex": ["exec", "--json", "hi"]}.get(
                cli, ["-p", "--output-format", "json", "hi"]
            )
            figures[exe] = _median_start([find_executable(cli), *argv], env, runs)
    return figures


#: The scenario the one-scenario figure is taken on (agent-cli, no pauses).
ONE_SCENARIO = "codex-happy"


def _seconds(command: list[str]) -> tuple[float, int]:
    # A fresh process as an installed package runs one: with its bytecode kept
    # (PYTHONDONTWRITEBYTECODE would make each one compile the harness again).
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, timeout=600, check=False, env=env)
    return time.perf_counter() - start, done.returncode


def _loads(path: str, times: int) -> tuple[float, int]:
    """The best of ``times`` loads of the catalogue in this process, and its size."""
    best, size = float("inf"), 0
    for _ in range(times):
        start = time.perf_counter()
        loaded = loader.load([Path(path)])
        best = min(best, time.perf_counter() - start)
        size = len(loaded.scenarios)
    return best, size


def command_figures(path: str, repeat: int) -> int:
    """
    What a user waits for: the catalogue loaded (in this process, and in a
    fresh one with its imports), one scenario as a whole ``harness run``
    beside the scenario's own time, and the whole catalogue on
    ``reference-inproc``; the number of failures.
    """
    times = max(3, repeat)
    with mock.patch.dict(os.environ, {yamlcache.SWITCH_ENV: "off"}):
        afresh, _ = _loads(path, times)
    kept, size = _loads(path, times)
    script = "from pathlib import Path; from harness.catalogue import loader; "
    script += f"loader.load([Path({path!r})])"
    fresh = min(_seconds([sys.executable, "-c", script])[0] for _ in range(times))
    print(
        f"catalogue load: {kept:.3f} s ({size} scenarios; {afresh:.3f} s with "
        f"{yamlcache.SWITCH_ENV}=off, YAML parsed afresh; "
        f"{fresh:.3f} s in a fresh process, imports included)"
    )
    loaded = loader.load([Path(path)])
    one = next((s for s in loaded.scenarios if s.id == ONE_SCENARIO), None)
    failures = 0
    with tempfile.TemporaryDirectory() as reports:
        harness = [sys.executable, "-m", "harness", "run"]
        if one is not None:
            own = min(_time_one(one) for _ in range(max(3, repeat)))
            command = [*harness, str(one.path), "--target", "reference-inproc", "-k", one.id]
            runs = [_seconds([*command, "--reports", reports]) for _ in range(max(3, repeat))]
            whole = min(seconds for seconds, _ in runs)
            failures += sum(code != 0 for _, code in runs)
            print(
                f"one scenario ({one.id}), whole `harness run`: {whole:.3f} s; "
                f"the scenario itself: {own:.3f} s; on top: {whole - own:.3f} s"
            )
        seconds, code = _seconds(
            [*harness, path, "--target", "reference-inproc", "--reports", reports]
        )
        failures += code != 0
        print(f"whole catalogue on reference-inproc, `harness run`: {seconds:.2f} s")
    return failures


def _time_one(scenario: Scenario) -> float:
    target = targets.create("reference-inproc")
    start = time.perf_counter()
    execute(scenario, target)
    return time.perf_counter() - start


def main(path: str, repeat: int) -> int:
    bad_commands = command_figures(path, repeat)
    scenarios = _catalogue(path)
    print(f"agent-cli scenarios: {len(scenarios)} (best of {repeat} passes)")
    rate, each, bad = _rate(scenarios, "reference-inproc", repeat)
    print(f"in-process:  {rate:8.1f} scenarios/s  ({each:.2f} ms per scenario)")
    rate, each, bad2 = _rate(scenarios, "reference", max(1, repeat // 3))
    print(f"subprocess:  {rate:8.1f} scenarios/s  ({each:.2f} ms per scenario)")
    # The protocol hop, measured on scenarios without scripted pauses so that
    # sleeps and timeouts do not drown it.
    quick = [s for s in scenarios if not _pauses(s)]
    _, direct, _ = _rate(quick, "reference", 1)
    served = targets.create(f"cmd:{sys.executable} -m harness serve")
    try:
        execute(quick[0], served)  # start the server outside the timing
        _, remote, bad3 = _rate_on(quick, served, 1)
    finally:
        getattr(served, "close", lambda: None)()
    print(
        f"protocol:    {remote:.2f} ms per scenario through `harness serve` vs "
        f"{direct:.2f} ms direct ({remote - direct:+.2f} ms; {len(quick)} scenarios "
        "without scripted pauses)"
    )
    bad2 += bad3
    starts = _STARTS_PER_REPEAT * repeat + 1
    figures = startup(starts)
    bare = figures["python -c pass"]
    print(f"start-up medians over {starts} runs:")
    for name, ms in figures.items():
        print(f"  {name:20} {ms:7.2f} ms  ({ms / bare:.2f}x bare python)")
    bad2 += real_cli(path) + bad_commands
    if bad or bad2:
        print(f"warning: {bad + bad2} case(s) did not pass during the benchmark")
    return 0


#: The model-api scenario the real-CLI figures are taken on, and how often.
REAL_SCENARIO, REAL_RUNS = "model-claude-happy-json", 5


def real_cli(path: str) -> int:
    """Median seconds of one real-CLI scenario three ways; the number of failures."""
    if not realcli.enabled():
        print(f"real CLI: not measured ({realcli.SWITCH_ENV}=off)")
        return 0
    loaded = loader.load([Path(path)])
    scenario = next((s for s in loaded.scenarios if s.id == REAL_SCENARIO), None)
    if scenario is None:
        print(f"real CLI: not measured ({REAL_SCENARIO} is not under {path})")
        return 0
    request = cast(ModelApiRequest, scenario.request)
    binary = realcli.locate(request.cli)
    target = targets.create("real")
    bare, harnessed, whole, failures = [], [], [], 0
    with tempfile.TemporaryDirectory() as reports:
        command = [sys.executable, "-m", "harness", "run", str(scenario.path), "--target", "real"]
        command += ["-k", scenario.id, "--reports", reports, "-n", "0"]
        for _ in range(REAL_RUNS):
            start = time.perf_counter()
            run_case(request, model_script(scenario), binary)
            bare.append(time.perf_counter() - start)
            start = time.perf_counter()
            failures += execute(scenario, target).status != "passed"
            harnessed.append(time.perf_counter() - start)
            start = time.perf_counter()
            done = subprocess.run(command, capture_output=True, timeout=300, check=False)
            whole.append(time.perf_counter() - start)
            failures += done.returncode != 0
    print(f"real CLI, {REAL_SCENARIO}, medians of {REAL_RUNS} (claude {realcli.CLAUDE_VERSION}):")
    print(f"  bare (loopback fake + binary):   {statistics.median(bare):.3f} s")
    print(f"  through the harness, in process: {statistics.median(harnessed):.3f} s")
    print(f"  whole `harness run` command:     {statistics.median(whole):.3f} s")
    return failures


#: A busy process gives up on its own after this many seconds, should it ever be left behind.
BUSY_LIMIT = 1800
_BUSY = f"import time\nend = time.monotonic() + {BUSY_LIMIT}\nwhile time.monotonic() < end: pass"


@contextlib.contextmanager
def busy(count: int) -> Iterator[list[subprocess.Popen[bytes]]]:
    """``count`` processes spinning on a core each while the block runs; always killed."""
    hogs: list[subprocess.Popen[bytes]] = []
    try:
        for _ in range(count):
            hogs.append(
                subprocess.Popen(
                    [sys.executable, "-c", _BUSY],
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.DEVNULL,
                    start_new_session=True,
                )
            )
        yield hogs
    finally:
        for hog in hogs:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(hog.pid, signal.SIGKILL)
            hog.wait()


def under_load(path: str, hogs: int, workers: str | None) -> int:
    """
    The real-CLI part of the catalogue (its model-api scenarios on the
    ``real`` target) while ``hogs`` processes keep the cores busy; the exit
    status of that run.
    """
    if not realcli.enabled():
        print(f"under load: not run ({realcli.SWITCH_ENV}=off)")
        return 0
    folder = Path(path)
    if (folder / "model-api").is_dir():
        folder = folder / "model-api"
    command = [sys.executable, "-m", "harness", "run", str(folder), "--target", "real"]
    command += ["--allow-exec", "--reports", "", "--progress", "log"]
    if Path("baselines").is_dir():
        command += ["--baselines", "baselines"]
    if workers:
        command += ["-n", workers]
    print(f"under load: {shlex.join(command[2:])}, beside {hogs} busy process(es)")
    with busy(hogs):
        start = time.perf_counter()
        done = subprocess.run(command, capture_output=True, text=True, timeout=3600, check=False)
        seconds = time.perf_counter() - start
    lines = done.stdout.splitlines()
    shown = [line for line in lines if line.startswith("harness: real:") and " passed, " in line]
    for line in [*shown, *lines[-1:]]:
        print(f"  {line}")
    print(f"under load: {seconds:.1f} s, exit {done.returncode}")
    return done.returncode
