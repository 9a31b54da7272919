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
from collections import Counter
from html import escape
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
    """
    The rows, the filters' boxes, the targets' bars and anything that would
    load from elsewhere (a link within the page is no fetch).
    """

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[dict[str, str | None]] = []
        self.options: dict[str, list[str]] = {}
        self.bars: dict[str, list[tuple[str, str]]] = {}
        self.fetches: list[str] = []
        self._target: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if tag == "tr" and found.get("class") == "case":
            self.rows.append(found)
        if tag == "input" and found.get("type") == "checkbox":
            self.options.setdefault(found["name"] or "", []).append(found["value"] or "")
        if tag == "div" and found.get("class") == "target":
            self._target = found["data-target"] or ""
            self.bars[self._target] = []
        if tag == "a" and self._target is not None:
            self.bars[self._target].append((found["class"] or "", found["href"] or ""))
        for name in ("src", "href", "action"):
            value = found.get(name)
            if value and not (tag == "a" and name == "href" and value.startswith("#")):
                self.fetches.append(f"{tag} {name}={value}")
        if tag in {"link", "iframe", "img", "object", "embed"}:
            self.fetches.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if tag == "section":
            self._target = None


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, render.Report]:
    # The claude folder, and service-api cases the naive adaptor's kind skips.
    service = ROOT / "scenarios" / "service-api" / "t3" / "unsupported.yaml"
    catalogue = loader.load([ROOT / "scenarios" / "agent-cli" / "claude", service])
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
    assert parsed.options["seam"] == ["agent-cli", "service-api"]
    assert parsed.options["status"] == list(html.STATUSES)
    clauses = {c for s in report.scenarios for c in s.clauses}
    assert parsed.options["clause"] == sorted(clauses)
    assert parsed.fetches == []  # self-contained: nothing loads from anywhere
    text = path.read_text(encoding="utf-8")
    assert "What the provider printed:" in text
    assert "provider: fake claude" in text


def test_the_page_opens_on_what_needs_a_look(page: tuple[Path, render.Report]) -> None:
    """Failures first and skipped cases last, not the alphabet; a bar per target on top."""
    path, report = page
    parsed = _Page()
    parsed.feed(path.read_text(encoding="utf-8"))
    shown = [row["data-status"] or "" for row in parsed.rows]
    rank = {status: i for i, status in enumerate(html.STATUSES)}
    assert shown == sorted(shown, key=rank.__getitem__)
    assert shown[0] == "failed"
    assert "skipped" in shown  # the cases the naive adaptor declines...
    assert shown[-1] == "skipped"  # ...come last
    for target in report.targets:
        counts = Counter(html.status_of(r) for r in report.results if r.target == target)
        # Each part of the bar is a count, linking to the page filtered to those cases.
        assert parsed.bars[target] == [
            (status, f"#target={target}&status={status}") for status in html.BAR if counts[status]
        ]
    assert [c for c, _ in parsed.bars["naive"]][:3] == ["passed", "failed", "skipped"]


def test_a_failure_shows_its_scenario_as_written(page: tuple[Path, render.Report]) -> None:
    path, report = page
    text = path.read_text(encoding="utf-8")
    (scenario,) = [s for s in report.scenarios if s.id == WRONG]
    row = text[text.index(f'id="{WRONG}@naive"') :]
    row = row[: row.index("</tr>")]
    where = f"scenarios/agent-cli/claude/{scenario.path.name}:{scenario.line}"
    assert f"the scenario as written: <code>{where}</code>" in row
    assert escape(loader.source(scenario)) in row
    assert f"<b>{escape(scenario.title)}</b>" in row
    assert f"why: {escape(scenario.description)}" in row
    # A passing case does not carry its YAML: the page stays the size of what failed.
    passing = text[text.index(f'id="{WRONG}@reference-inproc"') :]
    assert "the scenario as written" not in passing[: passing.index("</tr>")]


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

    # Several values of one filter: any of them; the boxes show what is ticked.
    dom, console = _open(path, "status=failed,skipped", tmp_path)
    assert console == []
    wanted = sorted(
        f"{r.scenario}@{r.target}"
        for r in report.results
        if html.status_of(r) in {"failed", "skipped"}
    )
    assert {html.status_of(r) for r in report.results} > {"failed", "skipped"}
    assert sorted(_shown(dom)) == wanted

    clause = report.scenarios[0].clauses[0]
    dom, _ = _open(path, f"clause={clause}&target=reference-inproc", tmp_path)
    wanted = sorted(f"{s.id}@reference-inproc" for s in report.scenarios if clause in s.clauses)
    assert sorted(_shown(dom)) == wanted
