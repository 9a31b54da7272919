"""
reports/index.html: the whole run on one self-contained page.

One file with its style and script inline and nothing fetched (no network,
no build step), so it opens from a CI artifact or a mail attachment as it
is.  A row per case (scenario × target) carries its target, seam, status
and clauses as data attributes; a few lines of script hide the rows the
filters leave out, and read the filters from the address's fragment
(``index.html#status=failed&target=mine``) so a link can share a view.
Each failing case unfolds into its diff and what the provider printed, and
every case into its catalogue entry.  Like the other reports it is a pure
function of the run: the same run, the same bytes.
"""

from __future__ import annotations

from collections import Counter
from html import escape
from typing import TYPE_CHECKING

from harness.seams.case import CaseResult

if TYPE_CHECKING:
    from harness.catalogue.scenario import Scenario
    from harness.reports.render import Report

#: What the status filter offers, in order: a case's status, or its verdict
#: against the baseline where it has one that changes what it means.
STATUSES = ("passed", "failed", "errored", "skipped", "known", "stale")
_FILTERS = ("target", "seam", "status", "clause")

_STYLE = """
body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5em; color: #222; }
table { border-collapse: collapse; margin: 0.5em 0 1em; }
th, td { border: 1px solid #ccc; padding: 2px 6px; text-align: left; vertical-align: top; }
tr.case[hidden] { display: none; }
.passed { color: #176117; } .failed, .errored, .stale { color: #a31515; font-weight: bold; }
.skipped { color: #666; } .known { color: #8a5a00; }
pre { background: #f6f6f6; padding: 6px; white-space: pre-wrap; max-width: 110ch; }
#filters label { margin-right: 1em; }
"""

_SCRIPT = """
(function () {
  "use strict";
  const names = ["target", "seam", "status", "clause"];
  const control = (name) => document.getElementById("filter-" + name);
  function apply() {
    const wanted = {};
    for (const name of names) wanted[name] = control(name).value;
    let shown = 0;
    for (const row of document.querySelectorAll("tr.case")) {
      const clauses = row.dataset.clauses.split(" ");
      const keep = (!wanted.target || row.dataset.target === wanted.target) &&
        (!wanted.seam || row.dataset.seam === wanted.seam) &&
        (!wanted.status || row.dataset.status === wanted.status) &&
        (!wanted.clause || clauses.includes(wanted.clause));
      row.hidden = !keep;
      if (keep) shown += 1;
    }
    document.getElementById("shown").textContent = String(shown);
    const fragment = names.filter((n) => wanted[n]).map(
      (n) => n + "=" + encodeURIComponent(wanted[n])).join("&");
    history.replaceState(null, "", fragment ? "#" + fragment : location.pathname);
  }
  const given = new URLSearchParams(location.hash.slice(1));
  for (const name of names) {
    const value = given.get(name);
    if (value !== null) control(name).value = value;
    control(name).addEventListener("change", apply);
  }
  apply();
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


def _select(name: str, values: list[str]) -> str:
    options = [f'<option value="">any {name}</option>']
    options += [f'<option value="{escape(v)}">{escape(v)}</option>' for v in values]
    return (
        f'<label>{name} <select id="filter-{name}" name="{name}">'
        + "".join(options)
        + "</select></label>"
    )


def _summary(report: Report) -> list[str]:
    rows = ["<table id='summary'><tr><th>target</th>"]
    rows[0] += "".join(f"<th>{s}</th>" for s in STATUSES) + "</tr>"
    for target in report.targets:
        counts = Counter(status_of(r) for r in report.results if r.target == target)
        cells = "".join(f"<td>{counts.get(s, 0)}</td>" for s in STATUSES)
        rows.append(f"<tr><th>{escape(target)}</th>{cells}</tr>")
    rows.append("</table>")
    return rows


def _details(result: CaseResult, scenario: Scenario | None, report: Report) -> str:
    parts = []
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
    if scenario is not None:
        where = f"{report.relative(scenario.path)}:{scenario.line}"
        parts.append(
            f"<p class='entry'><b>{escape(scenario.title)}</b> ({escape(where)})<br>"
            f"{escape(scenario.description)}</p>"
        )
    opened = " open" if status_of(result) in {"failed", "errored", "stale"} else ""
    return f"<details{opened}><summary>details</summary>{''.join(parts)}</details>"


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
        *_summary(report),
        '<form id="filters" onsubmit="return false">',
        _select("target", list(report.targets)),
        _select("seam", seams),
        _select("status", list(STATUSES)),
        _select("clause", clauses),
        f'<span><span id="shown">{len(report.results)}</span> of {len(report.results)} '
        "cases shown</span></form>",
    ]
    if report.problems:
        lines.append("<h2>Scenario files rejected</h2><ul>")
        lines += [f"<li><code>{escape(str(p))}</code></li>" for p in report.problems]
        lines.append("</ul>")
    lines.append(
        '<table id="cases"><tr><th>scenario</th><th>target</th><th>seam</th>'
        "<th>status</th><th>clauses</th><th></th></tr>"
    )
    for result in report.results:
        status = status_of(result)
        scenario = scenarios.get(result.scenario)
        own = scenario.clauses if scenario is not None else ()
        seam = seam_of.get(result.scenario, "")
        lines.append(
            f'<tr class="case" id="{escape(result.scenario)}@{escape(result.target)}" '
            f'data-target="{escape(result.target)}" data-seam="{escape(seam)}" '
            f'data-status="{status}" data-clauses="{escape(" ".join(own))}">'
            f"<td>{escape(result.scenario)}</td><td>{escape(result.target)}</td>"
            f'<td>{escape(seam)}</td><td class="{status}">{status}</td>'
            f"<td>{escape(', '.join(own))}</td>"
            f"<td>{_details(result, scenario, report)}</td></tr>"
        )
    lines += ["</table>", f"<script>{_SCRIPT}</script>", "</body></html>"]
    return "\n".join(lines) + "\n"
