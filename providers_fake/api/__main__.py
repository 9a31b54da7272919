"""
``python -m providers_fake.api SCRIPT.json``: the fake model API as a process of its own.

Serves the ``model_script`` in SCRIPT.json (the format of a scenario's
``provider.model_script``) on 127.0.0.1 at an OS-chosen port, prints its base
URL on one line, and serves until SIGTERM or SIGINT, or until ``--for``
seconds have passed (five minutes by default), so a forgotten server ends
on its own.  For trying a client against a scripted model from a shell,
``harness record --upstream`` for instance.  Stdlib only.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading

from providers_fake.api.loopback import LoopbackServer
from providers_fake.api.script import ScriptError


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m providers_fake.api", description=__doc__)
    parser.add_argument("script", help="a JSON file holding the model_script")
    parser.add_argument("--for", dest="seconds", type=float, default=300.0, help="serve at most")
    args = parser.parse_args(argv)
    try:
        with open(args.script, encoding="utf-8") as handle:
            document = json.load(handle)
        server = LoopbackServer(document)
    except (OSError, ValueError, ScriptError) as error:
        print(f"providers_fake.api: {args.script}: {error}", file=sys.stderr)
        return 2
    done = threading.Event()
    for number in (signal.SIGTERM, signal.SIGINT):
        signal.signal(number, lambda *_: done.set())
    with server:
        print(server.url, flush=True)
        done.wait(args.seconds)
    return 0


if __name__ == "__main__":
    sys.exit(main())
