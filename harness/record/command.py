"""
The two commands' shells: arguments in, a file out, one line of news on stderr.

The work is in `recorder` and `importer`; here is only what the user sees:
the written file (or the YAML on stdout), what could not be kept, and
whether the file reproduces what it was made from.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from harness.record import importer, recorder, write


def record(args: argparse.Namespace) -> int:
    out = Path(args.out) if args.out else None
    options = recorder.Options(
        cli=args.cli,
        argv=tuple(args.after_dashes),
        upstream=args.upstream,
        out=out,
        redact=tuple(args.redact),
        binary=Path(args.binary) if args.binary else None,
        timeout=args.timeout,
        scenario_id=args.id,
        clauses=tuple(args.clause),
        verify=not args.no_verify,
    )
    done = recorder.record(options)
    write.emit(done.text, out)
    for note in done.notes:
        print(f"harness record: note: {note}", file=sys.stderr)
    where = out or "<stdout>"
    print(f"harness record: wrote {where}: {done.summary}", file=sys.stderr)
    if not options.verify:
        return 0
    if done.mismatches:
        print("harness record: the replay on the real binary differs:", file=sys.stderr)
        for mismatch in done.mismatches:
            print(f"  {mismatch}", file=sys.stderr)
        return 1
    print(
        "harness record: replayed on the real binary: it reproduces the recording", file=sys.stderr
    )
    return 0


def import_(args: argparse.Namespace) -> int:
    out = Path(args.out) if args.out else None
    options = importer.Options(
        driver=args.driver,
        transcript=Path(args.file),
        schema=Path(args.schema) if args.schema else None,
        exit_code=args.exit,
        out=out,
        scenario_id=args.id,
        prompt=args.prompt,
        clauses=tuple(args.clause),
    )
    done = importer.import_transcript(options)
    write.emit(done.text, out)
    print(f"harness import: wrote {out or '<stdout>'}: {done.summary}", file=sys.stderr)
    return 0
