"""
The ``harness`` command's subcommands: one `Command` record each (its name,
its help, a function declaring its options, the code that runs it), kept
beside that code; `COMMANDS` lists them in the order ``harness --help``
does, and `harness.cli` derives its parser from the table.  A new command is
a module here with its record, and one entry below.

Part of the front, as `harness.cli` is: a command module loads only the
standard library and `harness.exitcodes` at import, and the rest of the
harness when it runs, so that help answers at once.

May import: the front (`harness.engine`, `harness.pytest_plugin`,
`harness.shards`), `harness.compat`, `harness.fuzz`, `harness.record`,
`harness.mutation`, `harness.reports`, `harness.baselines`, `harness.seams`,
`harness.targets`, `harness.systems`, `harness.adaptor`, `harness.catalogue` and
`harness.exceptions`.
"""

from __future__ import annotations

from harness.commands import (
    adaptor,
    baseline,
    catalogue,
    docs,
    doctor,
    fuzz,
    measure,
    merge,
    record,
    run,
    schema,
)
from harness.commands.command import Command

COMMANDS: tuple[Command, ...] = (
    *catalogue.COMMANDS,
    *run.COMMANDS,
    *merge.COMMANDS,
    *baseline.COMMANDS,
    *record.COMMANDS,
    *fuzz.COMMANDS,
    *schema.COMMANDS,
    *adaptor.COMMANDS,
    *measure.COMMANDS,
    *doctor.COMMANDS,
    *docs.COMMANDS,
)
