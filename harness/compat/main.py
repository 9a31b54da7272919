"""
``harness schema FILE...``: each schema put to the adaptor contract and each CLI release.

For every file, every system asked (the adaptor contract of seed 001, and
each CLI at each release, the pinned ones by default) is one row: accepted
at start or the refusal in the system's words, the wire schema and its
strict flag with a diff against the schema as written, and the values the
layers' validators judge differently.  With ``--against real`` every CLI row
is asked of the real binary too, and ``agree`` says whether the reference
model answered the same.  ``--json`` prints one JSON object per row.

Exit status as for ``harness run``: 0 when every system takes every schema
(and, against the real binaries, the reference agrees with each), 1 when a
system refuses one or a reference disagrees with its binary, 4 for a file
that cannot be read; value-level differences are reported, not failed on.
"""

from __future__ import annotations

import argparse
import difflib
import json
import stat
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness import targets
from harness.compat import corpus, values
from harness.compat import systems as known
from harness.compat.systems import Answer
from harness.exceptions import HarnessError

Json = Any
#: The largest schema file read (the catalogue's own bound for schema files).
MAX_BYTES = 1024 * 1024
#: The exit statuses of `harness.exitcodes` this command gives (the front sits above).
OK, FAILED, USAGE = 0, 1, 4
#: Lines of a wire-schema diff shown in the text report.
DIFF_LINES = 40


@dataclass(frozen=True)
class Row:
    """One schema on one system at one release."""

    schema: str
    system: str
    release: str | None
    answer: Answer
    differences: tuple[values.Difference, ...]
    real: Answer | None = None

    @property
    def disagree(self) -> tuple[str, ...]:
        return () if self.real is None else self.answer.same(self.real)

    def to_json(self) -> dict[str, Json]:
        data: dict[str, Json] = {
            "schema": self.schema,
            "system": self.system,
            "release": self.release,
            **self.answer.to_json(),
            "differences": [d.to_json() for d in self.differences],
            "agree": None if self.real is None else not self.disagree,
        }
        if self.real is not None:
            data["real"] = self.real.to_json()
            data["disagree"] = list(self.disagree)
        return data


def _releases(args: argparse.Namespace) -> list[tuple[str, str | None]]:
    """(system, release) pairs asked, the adaptor first, in the order given."""
    wanted = ",".join(known.CLIS) if args.cli is None else str(args.cli)
    clis = [c.strip() for c in wanted.split(",") if c.strip()]
    for cli in clis:
        if cli not in known.CLIS:
            raise _Usage(f"--cli {cli!r}: choose from {', '.join(known.CLIS)}")
    named: dict[str, list[str]] = {}
    for given in args.release:
        cli, eq, version = str(given).partition("=")
        if not eq or not version or cli not in known.CLIS:
            raise _Usage(f"--release {given!r}: give CLI=VERSION, CLI one of {known.CLIS}")
        if cli not in clis:
            raise _Usage(f"--release {given!r}: {cli} is not among --cli {','.join(clis)}")
        named.setdefault(cli, []).append(version)
    asked: list[tuple[str, str | None]] = [("adaptor", known.CONTRACT)]
    for cli in clis:
        asked += [(cli, v) for v in named.get(cli, [known.SYSTEMS[cli].pinned])]
    return asked


class _Usage(HarnessError):
    """A usage error of this command: one line, exit 4."""


def _read(name: str) -> str:
    path = Path(name)
    try:
        info = path.stat()
    except OSError as failure:
        raise _Usage(f"{name}: cannot read: {failure.strerror}") from None
    if not stat.S_ISREG(info.st_mode):
        raise _Usage(f"{name}: not a regular file")
    if info.st_size > MAX_BYTES:
        raise _Usage(f"{name}: {info.st_size} bytes, over the {MAX_BYTES}-byte bound")
    try:
        return path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as failure:
        raise _Usage(f"{name}: not UTF-8 ({failure.reason} at byte {failure.start})") from None


def rows(name: str, text: str, asked: Sequence[tuple[str, str | None]], real: bool) -> list[Row]:
    """Every row of one schema: each system asked, and the values its layers differ on."""
    answers = []
    for system, release in asked:
        spec = known.SYSTEMS[system]
        own = None if system == "adaptor" else release
        truth = spec.ask(text, own, "real") if real and spec.pinned is not None else None
        answers.append((system, release, spec.ask(text, own, "reference"), truth))
    taken = {(s, r) for s, r, answer, _ in answers if answer.accepted}
    document = _document(text)
    found: tuple[values.Difference, ...] = ()
    if ("adaptor", known.CONTRACT) in taken:  # the contract's validator is the yardstick
        claude = tuple(r for s, r in taken if s == "claude" and r is not None)
        found = values.differences(text, document, tuple(sorted(claude)))
    out: list[Row] = []
    for system, release, answer, truth in answers:
        mine = found if system == "adaptor" else _involving(found, f"{system} {release}")
        validates = known.SYSTEMS[system].validates and answer.accepted
        out.append(Row(name, system, release, answer, mine if validates else (), truth))
    return out


_UNREADABLE = object()


def _document(text: str) -> Json:
    try:
        document = json.loads(text)
    except ValueError:
        return _UNREADABLE
    return document if isinstance(document, dict | bool) else _UNREADABLE


def _involving(found: Sequence[values.Difference], layer: str) -> tuple[values.Difference, ...]:
    """The differences in which ``layer`` (or its strict gate) judges apart from the adaptor."""
    picked = []
    for difference in found:
        verdicts = dict(difference.verdicts)
        base = verdicts.get("adaptor")
        mine = [v for k, v in verdicts.items() if k == layer or k.startswith("claude strict")]
        if any((v == "accepts") != (base == "accepts") for v in mine):
            picked.append(difference)
    return tuple(picked)


def main(args: argparse.Namespace) -> int:
    """The command; one line and exit 4 for a usage error."""
    try:
        asked = _releases(args)
        if (args.corpus is None) == (not args.files):
            raise _Usage("give schema files or --corpus PATH, not both")
        texts = [(name, _read(name)) for name in args.files]
        if args.against:
            for system, release in asked:
                if system != "adaptor":
                    targets.prepare(targets.shared(f"real:{system}={release}"))
        if args.corpus is not None:
            return _corpus(args, asked)
        failed = False
        for name, text in texts:
            found = rows(name, text, asked, bool(args.against))
            failed |= any(not r.answer.accepted or r.disagree for r in found)
            sys.stdout.write("".join(_json(found) if args.json else _text(name, text, found)))
            sys.stdout.flush()
    except _Usage as problem:
        print(f"harness schema: {problem}", file=sys.stderr)
        return USAGE
    finally:
        targets.close_all()
    return FAILED if failed else OK


def _corpus(args: argparse.Namespace, asked: Sequence[tuple[str, str | None]]) -> int:
    """The corpus report: every schema on every system, counted; exit 1 on a disagreement."""
    entries, left = corpus.read(args.corpus)
    rows: list[Json] = []
    for index, found in enumerate(corpus.run(entries, asked, bool(args.against), args.jobs), 1):
        rows += found
        if index % 25 == 0 or index == len(entries):
            print(f"schema: {index} of {len(entries)} schemas", file=sys.stderr, flush=True)
    data = corpus.summary(rows, left, args.corpus.name)
    if args.report is not None:
        args.report.mkdir(parents=True, exist_ok=True)
        (args.report / "schemas.json").write_text(
            json.dumps(
                {**data, "rows": [corpus.compact(r) for r in rows]}, indent=1, sort_keys=True
            )
            + "\n",
            encoding="utf-8",
        )
        (args.report / "schemas.md").write_text(corpus.markdown(data), encoding="utf-8")
    sys.stdout.write(corpus.markdown(data))
    disagree = any(slot["disagree"] for slot in data["systems"].values())
    return FAILED if disagree else OK


def _json(found: Sequence[Row]) -> Iterator[str]:
    for row in found:
        yield json.dumps(row.to_json(), ensure_ascii=False, sort_keys=False) + "\n"


def _text(name: str, text: str, found: Sequence[Row]) -> Iterator[str]:
    yield f"{name}\n"
    written = _document(text)
    for row in found:
        yield f"  {row.system} {row.release}: {_summary(row.answer, row.system)}\n"
        if row.answer.how == "rewritten" and written is not _UNREADABLE:
            yield from _diff(written, row.answer.wire_schema)
        if row.answer.gated is not None:
            yield f"    {_gate(row.answer.gated)}\n"
        if row.real is not None:
            agreed = "agrees" if not row.disagree else f"DISAGREES on {', '.join(row.disagree)}"
            yield f"    real binary: {_summary(row.real, row.system)}; the reference {agreed}\n"
    shown = found[0].differences if found else ()
    if shown:
        yield "  values the layers judge differently:\n"
        for difference in shown:
            value = json.dumps(difference.value, ensure_ascii=False)
            verdicts = "; ".join(f"{layer}: {v}" for layer, v in difference.verdicts)
            yield f"    {value}\n      {verdicts}\n"


def _summary(answer: Answer, system: str) -> str:
    if not answer.accepted:
        return f"REFUSED: {answer.error}"
    if system == "adaptor":
        return f"accepted; hands the CLI the schema {answer.how}"
    flag = {True: "strict", False: "not strict", None: "no strict flag"}[answer.strict]
    return f"accepted; sends the model the schema {answer.how} ({flag})"


def _gate(gated: Json) -> str:
    if isinstance(gated, dict) and set(gated) == {"falls_back"}:
        return (
            f"with its strict gate on: falls back to the schema as written ({gated['falls_back']})"
        )
    return "with its strict gate on: sends a derived strict schema (--json shows it)"


def _diff(written: Json, sent: Json) -> Iterator[str]:
    before = json.dumps(written, indent=2, ensure_ascii=False).splitlines()
    after = json.dumps(sent, indent=2, ensure_ascii=False).splitlines()
    lines = list(difflib.unified_diff(before, after, "as written", "as sent", lineterm="", n=1))
    for line in lines[:DIFF_LINES]:
        yield f"    {line}\n"
    if len(lines) > DIFF_LINES:
        yield f"    ... {len(lines) - DIFF_LINES} more diff lines (--json has the whole schema)\n"
