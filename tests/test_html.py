"""
reports/index.html: one self-contained page that filters the run.

Its structure is read with an HTML parser (every case a row with its
target, seam, status and clauses; the filters offer every value; nothing
is fetched).  Its script runs in headless Chromium from Debian's packages
(.ci/run installs it; a machine without it skips these, CI fails): the
filters in the address's fragment leave the right rows, and the console
stays empty.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest

from harness import targets
from harness.catalogue import loader
from harness.reports import html, render
from harness.seams.case import execute

ROOT = Path(__file__).resolve().parent.parent
NAIVE = "naive=python:tests.adaptors:naive"
WRONG = "claude-json-result-without-structured-output"


class _Page(HTMLParser):
    """The rows, the filters' options and anything that would load from elsewhere."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[dict[str, str | None]] = []
        self.options: dict[str, list[str]] = {}
        self.fetches: list[str] = []
        self._select: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if tag == "tr" and found.get("class") == "case":
            self.rows.append(found)
        if tag == "select":
            self._select = found.get("name")
            self.options[self._select or ""] = []
        if tag == "option" and self._select is not None and found.get("value"):
            self.options[self._select].append(found["value"] or "")
        for name in ("src", "href", "action"):
            if found.get(name):
                self.fetches.append(f"{tag} {name}={found[name]}")
        if tag in {"link", "iframe", "img", "object", "embed"}:
            self.fetches.append(tag)


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, render.Report]:
    catalogue = loader.load([ROOT / "scenarios" / "agent-cli" / "claude"])
    results = []
    for spec in (NAIVE, "reference-inproc"):
        target = targets.create(spec)
        results += [execute(s, target) for s in catalogue.scenarios]
    report = render.Report.build(catalogue.scenarios, results, [], ROOT)
    folder = tmp_path_factory.mktemp("html")
    (folder / "index.html").write_text(html.render(report), encoding="utf-8")
    return folder / "index.html", report


def test_every_case_is_a_row_with_what_the_filters_read(
    page: tuple[Path, render.Report],
) -> None:
    path, report = page
    parsed = _Page()
    parsed.feed(path.read_text(encoding="utf-8"))
    assert len(parsed.rows) == len(report.results)
    by_id = {row["id"]: row for row in parsed.rows}
    wrong = by_id[f"{WRONG}@naive"]
    assert (wrong["data-target"], wrong["data-seam"], wrong["data-status"]) == (
        "naive",
        "agent-cli",
        "failed",
    )
    assert "CLA-" in (wrong["data-clauses"] or "")
    assert parsed.options["target"] == ["naive", "reference-inproc"]
    assert parsed.options["seam"] == ["agent-cli"]
    assert parsed.options["status"] == list(html.STATUSES)
    clauses = {c for s in report.scenarios for c in s.clauses}
    assert parsed.options["clause"] == sorted(clauses)
    assert parsed.fetches == []  # self-contained: nothing loads from anywhere
    text = path.read_text(encoding="utf-8")
    assert "What the provider printed:" in text
    assert "provider: fake claude" in text


def test_a_known_failure_and_a_stale_entry_have_their_own_status() -> None:
    from harness.seams.case import CaseResult  # noqa: PLC0415

    known = CaseResult("a", "t", "failed", verdict="expected", note="why")
    stale = CaseResult("b", "t", "passed", verdict="stale", note="passes now")
    assert (html.status_of(known), html.status_of(stale)) == ("known", "stale")


def _chromium() -> str:
    found = shutil.which("chromium")
    if found is None:
        if os.environ.get("CI"):
            pytest.fail("CI must have chromium (.ci/run installs it)")
        pytest.skip("chromium is not installed (apt-get install chromium)")
    return found


def _open(path: Path, fragment: str, tmp_path: Path) -> tuple[str, list[str]]:
    """The page's DOM after its script ran, and what it wrote to the console."""
    done = subprocess.run(
        [
            _chromium(),
            *("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic"),
            *("--no-first-run", "--disable-background-networking", "--disable-sync"),
            *("--disable-component-update", f"--user-data-dir={tmp_path / 'profile'}"),
            *("--enable-logging=stderr", "--v=0", "--dump-dom"),
            f"{path.as_uri()}#{fragment}",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    console = [line for line in done.stderr.splitlines() if ":CONSOLE" in line]
    return done.stdout, console


def _shown(dom: str) -> list[str]:
    rows = re.findall(r'<tr class="case" id="([^"]+)"([^>]*)>', dom)
    return [row for row, rest in rows if " hidden" not in rest]


def test_the_filters_run_in_a_browser_without_console_errors(
    page: tuple[Path, render.Report], tmp_path: Path
) -> None:
    path, report = page
    dom, console = _open(path, "", tmp_path)
    assert console == []
    assert 'data-ready="yes"' in dom
    assert len(_shown(dom)) == len(report.results)

    dom, console = _open(path, "status=failed&target=naive", tmp_path)
    assert console == []
    expected = sorted(
        f"{r.scenario}@{r.target}"
        for r in report.results
        if r.target == "naive" and html.status_of(r) == "failed"
    )
    assert sorted(_shown(dom)) == expected
    assert f"{WRONG}@naive" in expected
    assert f'<span id="shown">{len(expected)}</span>' in dom

    clause = report.scenarios[0].clauses[0]
    dom, _ = _open(path, f"clause={clause}&target=reference-inproc", tmp_path)
    wanted = sorted(f"{s.id}@reference-inproc" for s in report.scenarios if clause in s.clauses)
    assert sorted(_shown(dom)) == wanted
