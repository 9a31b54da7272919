"""
The targets of a run as the reports show them: which implementation each one
was (name, version, language, what it announced), or why it did not start.

A pure function of `harness.targets.announce.About` values, rendered into
the matrix; the JSON report and JUnit carry the same facts in their own shape.
"""

from __future__ import annotations

from collections.abc import Iterable

from harness.targets.announce import About


def _one_line(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def table(abouts: Iterable[About]) -> list[str]:
    """The matrix's *Targets* section, or nothing when no target is known."""
    rows = list(abouts)
    if not rows:
        return []
    lines = ["", "## Targets", "", "| target | kind | implementation | drivers | features |"]
    lines.append("|---|---|---|---|---|")
    for about in rows:
        found = about.implementation
        if about.not_started is not None:
            why = _one_line(about.not_started.splitlines()[0])
            lines.append(f"| {about.target} | {about.kind} | **did not start**: {why} | | |")
        elif found is None:
            lines.append(f"| {about.target} | {about.kind} | — | | |")
        else:
            drivers = ", ".join(sorted(found.drivers))
            features = ", ".join(sorted(found.features)) or "—"
            shown = _one_line(found.shown())
            lines.append(f"| {about.target} | {about.kind} | {shown} | {drivers} | {features} |")
    if any(about.not_started is not None for about in rows):
        lines += [
            "",
            "A target that did not start is one failure of the run: its cases were not run "
            "(each counted as skipped).",
        ]
    return lines
