"""
What installing the harness's wheel costs an unrelated pytest project
(issue 21.6), and whether the wheel behaves outside the repository.

Builds the wheel from this checkout, makes two fresh virtualenvs in a
temporary folder (pytest alone, at the version the wheel resolves; and the
wheel), writes a project of one test, and times ``pytest`` in it from each,
alternating so that the machine's load falls on both alike; the median of
each (wall clock, and CPU time, which a loaded machine disturbs less) and
their ratios are printed.  Then, from the wheel's virtualenv and a
folder outside the checkout: ``harness run -n 2`` without the ``xdist``
extra, ``harness docs``, ``harness list`` on the bundled catalogue.

Needs the network (pip installs the wheel's dependencies, from its cache
when it can); ``make bench`` runs it after ``harness bench``.  Nothing is
left behind: the temporary folder goes with the script.

Usage: python scripts/bench-wheel.py [RUNS]
"""

from __future__ import annotations

import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: What the wheel is not built from: virtualenvs, node_modules, caches, build output,
#: and the checkout's own reports (harness/reports is a package: only the top one).
_SKIPPED = {".git", ".venv", "node_modules", "__pycache__", ".mypy_cache", ".ruff_cache"}


def _not_source(folder: str, names: list[str]) -> set[str]:
    top = Path(folder) == ROOT
    return {
        n
        for n in names
        if n in _SKIPPED or n.endswith(".egg-info") or (top and n in {"build", "reports"})
    }


TEST = "def test_one():\n    assert 1 + 1 == 2\n"


def _run(argv: list[str], cwd: Path | None = None, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(
        argv, cwd=cwd, env=env, capture_output=True, text=True, check=False, timeout=900
    )
    if done.returncode != 0:
        tail = "\n".join((done.stdout + done.stderr).splitlines()[-5:])
        raise SystemExit(f"bench-wheel: {' '.join(argv[:4])}... failed:\n{tail}")
    return done.stdout


def _venv(where: Path, *packages: str) -> Path:
    _run([sys.executable, "-m", "venv", str(where)])
    pip = [str(where / "bin" / "python"), "-m", "pip", "install", "--quiet"]
    _run([*pip, "--disable-pip-version-check", *packages])
    return where / "bin"


def _time(binary: Path, project: Path, env: dict[str, str]) -> tuple[float, float]:
    """Wall and CPU seconds (user + system) of one ``pytest -q`` in ``project``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(
        [str(binary / "pytest"), "-q"], cwd=project, env=env, capture_output=True, check=False
    )
    seconds = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"bench-wheel: pytest failed in {project}: {done.stdout[-300:]!r}")
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return seconds, cpu


def main(runs: int) -> int:
    with tempfile.TemporaryDirectory(prefix="harness-bench-wheel-") as scratch:
        tmp = Path(scratch)
        # Built from a copy: the build leaves nothing in the checkout.
        source = tmp / "source"
        shutil.copytree(ROOT, source, symlinks=True, ignore=_not_source)
        wheel_argv = [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w"]
        _run([*wheel_argv, str(tmp), str(source)])
        [wheel] = tmp.glob("structured_output_harness-*.whl")
        with_wheel = _venv(tmp / "with", str(wheel))
        pinned = _run(
            [str(with_wheel / "python"), "-c", "import pytest; print(pytest.__version__)"]
        )
        plain = _venv(tmp / "plain", f"pytest=={pinned.strip()}")
        project = tmp / "project"
        project.mkdir()
        (project / "test_one.py").write_text(TEST, encoding="utf-8")
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST", "PYTHON"))}
        for binary in (plain, with_wheel):  # bytecode of the project written once, as it would be
            _time(binary, project, env)
        times: dict[Path, list[tuple[float, float]]] = {plain: [], with_wheel: []}
        for _ in range(runs):
            for binary in (plain, with_wheel):
                times[binary].append(_time(binary, project, env))
        print(f"wheel: {wheel.name} ({wheel.stat().st_size // 1024} KiB)")
        print(f"one-test pytest project, medians of {runs} alternating runs (wall; CPU):")
        walls = [statistics.median(t[0] for t in times[b]) for b in (plain, with_wheel)]
        cpus = [statistics.median(t[1] for t in times[b]) for b in (plain, with_wheel)]
        print(f"  pytest {pinned.strip()} alone:     {walls[0]:.3f} s; {cpus[0]:.3f} s")
        print(
            f"  with the wheel installed: {walls[1]:.3f} s; {cpus[1]:.3f} s "
            f"({walls[1] / walls[0]:.2f}x wall, {cpus[1] / cpus[0]:.2f}x CPU)"
        )
        outside = tmp / "elsewhere"
        outside.mkdir()
        harness = str(with_wheel / "harness")
        env["XDG_CACHE_HOME"] = str(tmp / "cache")
        done = subprocess.run(
            [harness, "run", "-n", "2", "--target", "reference-inproc", "-k", "codex-happy"],
            cwd=outside, env=env, capture_output=True, text=True, check=False, timeout=600,
        )  # fmt: skip
        said = (done.stdout + done.stderr).strip().splitlines()
        print(f"  harness run -n 2 without the xdist extra: exit {done.returncode}: {said[-1]}")
        topics = _run([harness, "docs"], cwd=outside, env=env).splitlines()
        print(f"  harness docs: {len(topics)} pages")
        listed = _run([harness, "list"], cwd=outside, env=env).splitlines()
        print(f"  harness list (the bundled catalogue): {len(listed)} scenarios")
    return 0


if __name__ == "__main__":
    sys.exit(main(int(sys.argv[1]) if len(sys.argv) > 1 else 15))
