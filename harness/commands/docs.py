"""
``harness docs [TOPIC]``: the reference pages, shipped with the package
(``harness/docs``, a link to the project's ``docs/``), so that help and
messages can name a page an installed harness has.
"""

from __future__ import annotations

import argparse
import sys
from importlib import resources
from importlib.resources.abc import Traversable

from harness import exitcodes
from harness.commands.command import Command


def pages() -> dict[str, Traversable]:
    """Each page by topic (its file name without ``.md``)."""
    folder = resources.files("harness").joinpath("docs")
    found = {entry.name.removesuffix(".md"): entry for entry in folder.iterdir()}
    return {topic: found[topic] for topic in sorted(found) if found[topic].name.endswith(".md")}


def _title(page: Traversable) -> str:
    for line in page.read_text(encoding="utf-8").splitlines():
        if line.startswith("# "):
            return line[2:].replace("`", "")
    return ""


def docs_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("topic", nargs="?", metavar="TOPIC", help="the page to print (default: list)")


def docs(args: argparse.Namespace) -> int:
    from harness.catalogue.suggest import did_you_mean  # noqa: PLC0415  (when it runs)

    found = pages()
    if args.topic is None:
        width = max(map(len, found))
        for topic, page in found.items():
            print(f"{topic:{width}}  {_title(page)}")
        return exitcodes.OK
    topic = args.topic.removesuffix(".md").removeprefix("docs/")
    if topic not in found:
        hint = did_you_mean(topic, list(found))
        known = ", ".join(found)
        print(f"harness: no page {args.topic!r}{hint} (pages: {known})", file=sys.stderr)
        return exitcodes.USAGE
    sys.stdout.write(found[topic].read_text(encoding="utf-8"))
    return exitcodes.OK


COMMANDS = (
    Command(
        "docs",
        "print a reference page of the harness, or list them",
        docs_options,
        docs,
    ),
)
