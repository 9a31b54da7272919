"""
``harness doctor``: one line per prerequisite (`checks.CHECKS`), each with
the command that fixes it; exit 0 only when all that the default run needs
is there.
"""

from __future__ import annotations

import argparse

from harness import exitcodes
from harness.commands.command import Command, no_options


def doctor(args: argparse.Namespace) -> int:
    from harness.commands import checks  # noqa: PLC0415  (the probes load when it runs)

    width = max(len(check.name) for check in checks.CHECKS)
    missing = []
    for check in checks.CHECKS:
        found = check.probe()
        required = check.required()
        if found.ok:
            status = "ok"
        else:
            status = "MISSING" if required else "absent"
            if required:
                missing.append(check.name)
        line = f"{status:8} {check.name:{width}}  {found.seen}"
        if not found.ok:
            kind = "needed by" if required else "optional, for"
            line += f" ({kind} {check.needed_by}); fix: {found.fix or check.fix}"
        print(line)
    if missing:
        cause = f"the default run needs {', '.join(missing)}"
        print(exitcodes.last_line(exitcodes.FAILED, cause))
        return exitcodes.FAILED
    print("harness: doctor: all that the default run needs is here")
    return exitcodes.OK


COMMANDS = (
    Command(
        "doctor",
        "check the prerequisites (Python, Node, npm, the Ajv worker, the real CLIs, ...) "
        "and say how to fix each",
        no_options,
        doctor,
    ),
)
