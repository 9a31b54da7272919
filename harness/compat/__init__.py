"""
Will my schema work there? ``harness schema``: one schema put to every system.

A user's first question is not a scenario: it is whether the JSON Schema in
hand is accepted by Claude Code, by Codex and by an adaptor following seed
001, what each sends to its model, and where their validators part ways.
The harness already knows each answer (the CLIs' start-up checks, the wire
schema each sends, Ajv against Draft 2020-12); this subpackage asks them of
any schema file.

`systems` is the registry of systems a schema is handed to (the adaptor
contract, each CLI at a release) and runs each CLI through the model-api
seam, on the reference models or the real binaries; `values` generates
values from the schema and finds the ones two layers judge differently;
`main` is the command and its two renderings (text and JSON lines).

May import: `harness.fuzz`, `harness.record`, `harness.mutation`, `harness.reports`,
`harness.baselines`, `harness.seams`, `harness.targets`,
`harness.systems`, `harness.adaptor`, `harness.catalogue`, `harness.exceptions`,
`providers_fake`.
"""
