"""
A protocol adaptor that misbehaves on purpose, for the protocol target's tests.

Usage: ``python misbehaving_adaptor.py MODE:SCENARIO_ID``; it serves every
other scenario with the reference pipeline and, on SCENARIO_ID (``*``: on
every scenario), does MODE:
crash, hang, wrong-seq, garbage, invalid-outcome, errored or skipped; or
nan (a reply holding NaN), orphan (start a child that keeps stdout open,
then exit), detach (start a child in a session of its own that keeps stdout
and stderr open, then exit), detach-hang (the same, then ignore SIGTERM and
hang), double-fork (start ``sleep 300.25`` through a double fork and
``setsid``, its streams closed, out of the adaptor's group and tree, then
answer properly), chatty (write 64 MiB to stderr, then answer properly) or env
(report the names of the variables it was given, as an error).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

from harness.targets import serve


def main() -> int:
    mode, _, victim = sys.argv[1].partition(":")
    for line in sys.stdin:
        message = json.loads(line)
        if message.get("cmd") == "stop":
            return 0
        seq = message["seq"]
        if message.get("cmd") == "run" and victim in ("*", message.get("scenario")):
            print(f"misbehaving on purpose: {mode}", file=sys.stderr, flush=True)
            if mode == "crash":
                return 3
            if mode == "hang":
                time.sleep(3600)
            if mode == "orphan":
                subprocess.Popen(["sleep", "271"], stdout=sys.stdout)
                return 0
            if mode in ("detach", "detach-hang"):
                # A child in a session of its own, holding stderr (and stdout): out
                # of the adaptor's process group, so killing the group misses it.
                subprocess.Popen(["setsid", "sleep", "271"], stdout=sys.stdout, stderr=sys.stderr)
                if mode == "detach":
                    return 0
                signal.signal(signal.SIGTERM, signal.SIG_IGN)
                time.sleep(3600)
            if mode == "double-fork":
                _double_fork(["sleep", "300.25"])
                print(json.dumps(serve._answer(message)), flush=True)
                continue
            if mode == "chatty":
                block = b"x" * 65536
                for _ in range(1024):
                    sys.stderr.buffer.write(block)
                sys.stderr.flush()
                print(json.dumps(serve._answer(message)), flush=True)
                continue
            replies = {
                "wrong-seq": json.dumps({"seq": seq + 41, "outcome": {"status": "ok"}}),
                "garbage": "this is not JSON at all",
                "env": json.dumps({"seq": seq, "errored": True, "message": " ".join(os.environ)}),
                "nan": '{"seq": ' + str(seq) + ', "outcome": {"status": "ok", "value": NaN}}',
                "invalid-outcome": json.dumps({"seq": seq, "outcome": {"status": "fine"}}),
                "errored": json.dumps({"seq": seq, "errored": True, "message": "no idea"}),
                "skipped": json.dumps({"seq": seq, "skipped": True, "reason": "no cursor here"}),
            }
            print(replies[mode], flush=True)
            continue
        print(json.dumps(serve._answer(message)), flush=True)
    return 0


def _double_fork(argv: list[str]) -> None:
    """The daemon's way out: fork, setsid, fork again, the middle one exits at once."""
    middle = os.fork()
    if middle == 0:
        os.setsid()
        if os.fork() == 0:
            null = os.open(os.devnull, os.O_RDWR)
            for fd in (0, 1, 2):
                os.dup2(null, fd)
            os.execvp(argv[0], argv)
        os._exit(0)
    os.waitpid(middle, 0)


if __name__ == "__main__":
    sys.exit(main())
