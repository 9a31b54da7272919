"""
junit.xml, written for the CI dashboards that read it.

A green run must look green there, so a case the target's baseline lists as
a known failure is reported as ``<skipped>`` with the baseline's reason
(``type="known-failure"``), never as ``<failure>``; a regression or a stale
baseline entry, which fail the run, are ``<failure>``; an errored case that
is not known is ``<error>``, and so is a target that could not start (one
``(start)`` case; its cases are skipped).  Failures and errors carry the diff and what the
provider printed.

Adaptors write anything to stderr, ANSI colours included, and XML 1.0 has no
way to hold most control characters: colour sequences are dropped and every
other such character is shown as ``\\xNN``, so any parser accepts the file.

Each case's ``time`` is the measured duration (`CaseResult.seconds`), the one
thing in the reports that differs from run to run.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Iterable
from typing import TYPE_CHECKING

from harness.seams.case import CaseResult

if TYPE_CHECKING:
    from harness.reports.render import Report

#: Colour and cursor sequences (CSI, and OSC up to BEL or ST) a terminal reads.
_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[@-Z\\-_]")
#: What XML 1.0 cannot hold, even escaped.
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
#: How long a ``message`` attribute may be (the body holds the rest).
_MESSAGE = 300


def clean(text: str) -> str:
    """``text`` without ANSI sequences, other control characters shown as ``\\xNN``."""
    text = _ANSI.sub("", text)
    return _NOT_XML.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def _message(text: str) -> str:
    first = clean(text).strip().splitlines()[0] if text.strip() else ""
    return first if len(first) <= _MESSAGE else first[: _MESSAGE - 1] + "…"


def _body(result: CaseResult) -> str:
    parts = [m.render() for m in result.mismatches]
    if result.reason and result.status != "skipped":
        parts.append(result.reason)
    if result.context:
        parts.append(result.context)
    return clean("\n".join(parts))


def _outcome(result: CaseResult) -> tuple[str, str, str] | None:
    """The element a case gets (tag, type, message), or None for a plain pass."""
    if result.verdict == "expected":
        return "skipped", "known-failure", f"known failure: {result.note or ''}"
    if result.verdict == "stale":
        return "failure", "stale", f"stale baseline entry: {result.note or ''}"
    if result.status == "skipped":
        if result.verdict == "regression":
            return "failure", "regression", f"skipped ({result.reason}), {result.note}"
        return "skipped", f"skipped-by-{result.skipped_by or 'target'}", result.reason or ""
    if result.status == "errored":
        return "error", "errored", result.reason or "errored"
    if result.status == "failed":
        fields = ", ".join(sorted({m.field for m in result.mismatches}))
        return "failure", "regression", f"outcome differs on {fields}"
    return None


def _suite(
    parent: ET.Element, target: str, cases: Iterable[CaseResult], not_started: str | None
) -> None:
    suite = ET.SubElement(parent, "testsuite", name=target)
    counts = {"failure": 0, "error": 0, "skipped": 0}
    total = 0.0
    if not_started is not None:
        # The one failure of a target that could not start; its cases are skipped.
        case = ET.SubElement(suite, "testcase", classname=target, name="(start)", time="0.000")
        error = ET.SubElement(case, "error", type="not-started", message=_message(not_started))
        error.text = clean(not_started)
        counts["error"] += 1
    for result in cases:
        case = ET.SubElement(
            suite,
            "testcase",
            classname=target,
            name=result.scenario,
            time=f"{result.seconds:.3f}",
        )
        total += result.seconds
        found = _outcome(result)
        if found is None:
            continue
        tag, kind, message = found
        counts[tag] += 1
        element = ET.SubElement(case, tag, type=kind, message=_message(message))
        if tag != "skipped":
            element.text = _body(result)
    suite.set("tests", str(len(suite)))
    suite.set("failures", str(counts["failure"]))
    suite.set("errors", str(counts["error"]))
    suite.set("skipped", str(counts["skipped"]))
    suite.set("time", f"{total:.3f}")


def render(report: Report) -> str:
    root = ET.Element("testsuites")
    not_started = report.not_started()
    for target in report.targets:
        mine = (r for r in report.results if r.target == target)
        _suite(root, target, mine, not_started.get(target))
    ET.indent(root)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(root, "unicode") + "\n"
