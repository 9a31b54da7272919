"""
The reference adaptor: seed 001's structured-output contract, end to end.

`pipeline` runs ``intake → negotiate → launch → parse → validate → policy →
decode``: `intake` (and `derive`, schemas from declared types) prepares the
schema, `negotiate` picks native or prompt validation from a driver's
descriptor, `drivers` is the driver registry (`codex`, `claudelike` for
Claude Code, Cursor and CodeBuddy), `launch` starts the fake CLI (a real
subprocess or an in-process replay), `validation` words the diagnostics.
`fullstack` reads a real CLI's finished run the same way.

May import: `harness.catalogue`, `harness.exceptions`, `providers_fake`.
"""
