"""
The reference model of Claude Code (``claude -p --json-schema``).

`loop` decides (attempts, retries, reminders, fallback, refusals), `answer`
takes in one answer (its blocks shown, its calls run as they stream),
`failures` says what each HTTP error status leads to, `tools` and
`permissions` answer calls of the other tools, `wire` shapes the requests
and reads the answers, `validator` asks the Ajv the binary bundles (under
Node, ``ajv/``) for verdicts in the CLI's words, `strict` derives the strict
wire schema behind the ``tengu_structured_output_strict`` gate.  What the
CLI prints is rendered by the fake ``claude`` (`providers_fake.cli.claude`).
"""
