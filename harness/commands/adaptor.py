"""``harness serve`` and ``harness init adaptor``: the protocol served, and a skeleton."""

from __future__ import annotations

import argparse

from harness import exitcodes
from harness.commands.command import Command, no_options

#: ``harness init adaptor --lang``; tests/test_init.py holds it to
#: `harness.targets.skeleton.SKELETONS` (kept here so that help answers without importing it).
LANGUAGES = ("python", "node", "go")


def serve(args: argparse.Namespace) -> int:
    from harness.targets import serve  # noqa: PLC0415  (only the protocol server needs it)

    return serve.main()


def init_options(p: argparse.ArgumentParser) -> None:
    things = p.add_subparsers(dest="thing", required=True, metavar="WHAT")
    a = things.add_parser(
        "adaptor",
        help="an adaptor speaking the JSON-lines protocol, passing the cases without a schema",
        description="Write an adaptor skeleton into DIR (new or empty): it speaks the "
        "JSON-lines protocol, runs the CLI a request names, passes the agent-cli cases without "
        "a schema and answers the others skipped. Prints the command that runs the catalogue "
        "against it.",
    )
    a.add_argument("--lang", required=True, choices=LANGUAGES, help="the skeleton's language")
    a.add_argument("--name", default=None, help="the adaptor's target name (default: from DIR)")
    a.add_argument("dir", metavar="DIR", help="the folder to write (new, or empty)")


def init(args: argparse.Namespace) -> int:
    """``init adaptor``, the one thing ``init`` writes today."""
    from harness.targets import skeleton  # noqa: PLC0415  (only this command needs it)

    written = skeleton.write(args.lang, args.dir, args.name)
    files = ", ".join(str(f) for f in written.files)
    print(f"wrote {files}: a {args.lang} adaptor named {written.name} (harness docs adaptors)")
    if written.build:
        print(f"build it, then run the catalogue against it:\n  {written.build}\n  {written.run}")
    else:
        print(f"run the catalogue against it:\n  {written.run}")
    return exitcodes.OK


COMMANDS = (
    Command(
        "serve",
        "serve the reference adaptor over the JSON-lines target protocol",
        no_options,
        serve,
    ),
    Command(
        "init", "write a starting point: an adaptor skeleton in a language", init_options, init
    ),
)
