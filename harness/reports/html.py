"""
reports/index.html: the whole run on one self-contained page.

One file with its style and script inline and nothing fetched (no network,
no build step), so it opens from a CI artifact or a mail attachment as it
is.  It is read by a person looking for what went wrong, so it opens on
that: a bar per target with its counts (each part a link that filters the
page to those cases), then the cases, regressions and failures first and
skipped ones last.  Filters take several values each (boxes to tick; none
ticked: any), and live in the address's fragment
(``index.html#status=failed,errored&target=mine``) so a link can share a
view.  A failing case unfolds into its scenario's title and why, its diff,
what the provider printed, and the scenario's YAML as written, with the
file and line it comes from.  Like the other reports it is a pure function
of the run (and the scenario files): the same run, the same bytes.
"""

from __future__ import annotations

from collections import Counter
from html import escape
from typing import TYPE_CHECKING

from harness.catalogue import loader
from harness.seams.case import CaseResult

if TYPE_CHECKING:
    from harness.catalogue.scenario import Scenario
    from harness.reports.render import Report

#: What the status filter offers, in the order the cases are listed: a
#: case's status, or its verdict against the baseline where it has one that
#: changes what it means.  What needs a look comes first.
STATUSES = ("failed", "errored", "stale", "known", "passed", "skipped")
#: The parts of a target's bar, in reading order.
BAR = ("passed", "known", "failed", "errored", "stale", "skipped")
#: The statuses whose cases show the scenario as written.
_LOOK = frozenset({"failed", "errored", "stale", "known"})

_STYLE = """
body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5em; color: #222; }
table { border-collapse: collapse; margin: 0.5em 0 1em; }
th, td { border: 1px solid #ccc; padding: 2px 6px; text-align: left; vertical-align: top; }
tr.case[hidden] { display: none; }
.passed { color: #176117; } .failed, .errored, .stale { color: #a31515; font-weight: bold; }
.skipped { color: #666; } .known { color: #8a5a00; }
pre { background: #f6f6f6; padding: 6px; white-space: pre-wrap; max-width: 110ch; }
#filters fieldset { display: inline-block; vertical-align: top; margin: 0 1em 0.5em 0; }
#filters label { margin-right: 0.8em; white-space: nowrap; }
.target { margin: 0 0 0.8em; max-width: 110ch; }
.target h2 { font-size: 1em; margin: 0 0 2px; }
.bar { display: flex; height: 1.6em; border: 1px solid #999; border-radius: 3px; overflow: hidden; }
.bar a { color: #fff; text-decoration: none; font-weight: normal; padding: 0 4px;
  white-space: nowrap; overflow: hidden; min-width: 0.4em; line-height: 1.6em; }
.bar a.passed { background: #2e7d32; } .bar a.known { background: #b7791f; }
.bar a.failed { background: #c62828; } .bar a.errored { background: #6a1b9a; }
.bar a.stale { background: #ad1457; } .bar a.skipped { background: #9e9e9e; }
.counts { color: #444; }
"""

_SCRIPT = """
(function () {
  "use strict";
  const names = ["target", "seam", "status", "clause"];
  const boxes = (name) => document.querySelectorAll('#filters input[name="' + name + '"]');
  const chosen = (name) => Array.from(boxes(name)).filter((b) => b.checked).map((b) => b.value);
  function apply() {
    const wanted = {};
    for (const name of names) wanted[name] = chosen(name);
    const any = (name, value) => wanted[name].length === 0 || wanted[name].includes(value);
    let shown = 0;
    for (const row of document.querySelectorAll("tr.case")) {
      const clauses = row.dataset.clauses.split(" ");
      const keep = any("target", row.dataset.target) && any("seam", row.dataset.seam) &&
        any("status", row.dataset.status) &&
        (wanted.clause.length === 0 || wanted.clause.some((c) => clauses.includes(c)));
      row.hidden = !keep;
      if (keep) shown += 1;
    }
    document.getElementById("shown").textContent = String(shown);
    const fragment = names.filter((n) => wanted[n].length).map(
      (n) => n + "=" + wanted[n].map(encodeURIComponent).join(",")).join("&");
    history.replaceState(null, "", fragment ? "#" + fragment : location.pathname);
  }
  function load() {
    const given = new URLSearchParams(location.hash.slice(1));
    for (const name of names) {
      const values = (given.get(name) || "").split(",").filter((v) => v);
      for (const box of boxes(name)) box.checked = values.includes(box.value);
    }
    apply();
  }
  document.getElementById("filters").addEventListener("change", apply);
  document.getElementById("clear").addEventListener("click", () => {
    for (const box of document.querySelectorAll("#filters input")) box.checked = false;
    apply();
  });
  window.addEventListener("hashchange", load);
  load();
  document.body.dataset.ready = "yes";
})();
"""


def status_of(result: CaseResult) -> str:
    """The row's status: a verdict that changes the meaning wins over the status."""
    if result.verdict == "expected":
        return "known"
    if result.verdict == "stale":
        return "stale"
    return result.status


def ordered(results: tuple[CaseResult, ...]) -> list[CaseResult]:
    """The cases as the page lists them: by `STATUSES` (what needs a look first), then id."""
    rank = {status: i for i, status in enumerate(STATUSES)}
    return sorted(results, key=lambda r: (rank[status_of(r)], r.scenario, r.target))


def _boxes(name: str, values: list[str]) -> str:
    """A group of boxes to tick: a filter that takes several values (none ticked: any)."""
    ticks = "".join(
        f'<label><input type="checkbox" name="{name}" value="{escape(v)}"> {escape(v)}</label>'
        for v in values
    )
    return f'<fieldset id="filter-{name}"><legend>{name}</legend>{ticks}</fieldset>'


def _bars(report: Report) -> list[str]:
    """Per target, a bar of its counts; each part links to the page filtered to those cases."""
    out = ['<section id="summary">']
    for target in report.targets:
        counts = Counter(status_of(r) for r in report.results if r.target == target)
        parts = []
        for status in BAR:
            n = counts.get(status, 0)
            if n:
                parts.append(
                    f'<a class="{status}" style="flex-grow:{n}" '
                    f'href="#target={escape(target)}&amp;status={status}" '
                    f'title="{n} {status}">{n} {status}</a>'
                )
        said = " · ".join(
            f"{counts.get(s, 0)} {s}" for s in BAR if s != "stale" or counts.get(s, 0)
        )
        out.append(
            f'<div class="target" data-target="{escape(target)}">'
            f"<h2>{escape(target)}</h2>"
            f'<div class="bar">{"".join(parts)}</div>'
            f'<div class="counts">{said}</div></div>'
        )
    out.append("</section>")
    return out


def _as_written(scenario: Scenario, report: Report, *, opened: bool) -> str:
    """The scenario's YAML as written, with the file and line it starts on."""
    where = f"{report.relative(scenario.path)}:{scenario.line}"
    try:
        text = loader.source(scenario)
    except (OSError, UnicodeDecodeError):
        return f"<p class='written'>The scenario is written at {escape(where)}.</p>"
    return (
        f"<details class='written'{' open' * opened}><summary>the scenario as written: "
        f"<code>{escape(where)}</code></summary><pre>{escape(text)}</pre></details>"
    )


def _details(result: CaseResult, scenario: Scenario | None, report: Report) -> str:
    status = status_of(result)
    parts = []
    if scenario is not None:
        where = f"{report.relative(scenario.path)}:{scenario.line}"
        parts.append(
            f"<p class='entry'><b>{escape(scenario.title)}</b> ({escape(where)})<br>"
            f"why: {escape(scenario.description)}</p>"
        )
    if result.note:
        parts.append(f"<p>Baseline: {escape(result.verdict or '')}: {escape(result.note)}</p>")
    if result.reason:
        parts.append(f"<pre class='reason'>{escape(result.reason)}</pre>")
    if result.mismatches:
        diff = "\n".join(m.render() for m in result.mismatches)
        parts.append(f"<pre class='diff'>{escape(diff)}</pre>")
    if result.context:
        parts.append(
            f"<p>What the provider printed:</p><pre class='context'>{escape(result.context)}</pre>"
        )
    failing = status in {"failed", "errored", "stale"}
    if scenario is not None and status in _LOOK:
        parts.append(_as_written(scenario, report, opened=failing))
    return f"<details{' open' * failing}><summary>details</summary>{''.join(parts)}</details>"


def render(report: Report) -> str:
    scenarios = {s.id: s for s in report.scenarios}
    seam_of = {s.id: s.seam.value for s in report.scenarios}
    clauses = sorted({c for s in report.scenarios for c in s.clauses})
    seams = sorted(set(seam_of.values()))
    lines = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        "<title>Conformance report</title>",
        f"<style>{_STYLE}</style></head><body>",
        "<h1>Conformance report</h1>",
        f"<p>Commands a scenario makes a system run: {escape(report.commands)}.</p>",
        *_bars(report),
        '<form id="filters" onsubmit="return false">',
        _boxes("status", list(STATUSES)),
        _boxes("target", list(report.targets)),
        _boxes("seam", seams),
        f"<details><summary>clause ({len(clauses)})</summary>{_boxes('clause', clauses)}</details>",
        f'<p><span id="shown">{len(report.results)}</span> of {len(report.results)} '
        'cases shown <button type="button" id="clear">show all</button></p></form>',
    ]
    if report.problems:
        lines.append("<h2>Scenario files rejected</h2><ul>")
        lines += [f"<li><code>{escape(str(p))}</code></li>" for p in report.problems]
        lines.append("</ul>")
    lines.append(
        '<table id="cases"><tr><th>scenario</th><th>target</th><th>seam</th>'
        "<th>status</th><th>clauses</th><th></th></tr>"
    )
    for result in ordered(report.results):
        status = status_of(result)
        scenario = scenarios.get(result.scenario)
        own = scenario.clauses if scenario is not None else ()
        seam = seam_of.get(result.scenario, "")
        title = f' title="{escape(scenario.title)}"' if scenario is not None else ""
        lines.append(
            f'<tr class="case" id="{escape(result.scenario)}@{escape(result.target)}" '
            f'data-target="{escape(result.target)}" data-seam="{escape(seam)}" '
            f'data-status="{status}" data-clauses="{escape(" ".join(own))}">'
            f"<td{title}>{escape(result.scenario)}</td><td>{escape(result.target)}</td>"
            f'<td>{escape(seam)}</td><td class="{status}">{status}</td>'
            f"<td>{escape(', '.join(own))}</td>"
            f"<td>{_details(result, scenario, report)}</td></tr>"
        )
    lines += ["</table>", f"<script>{_SCRIPT}</script>", "</body></html>"]
    return "\n".join(lines) + "\n"
