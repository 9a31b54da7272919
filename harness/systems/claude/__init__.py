"""
The reference model of Claude Code (``claude -p --json-schema``).

`loop` decides (attempts, retries, reminders, fallback, refusals), `wire`
shapes the requests and reads the answers, `ajv` gives the CLI's validation
verdicts in its words, `strict` derives the strict wire schema behind the
``tengu_structured_output_strict`` gate.  What the CLI prints is rendered by
the fake ``claude`` (`providers_fake.cli.claude`).
"""
