"""
From a real incident to a scenario: ``harness record`` and ``harness import``.

`recorder` runs a real CLI through a recording proxy (`proxy`) between it and
its model API and writes a model-api scenario whose ``model_script`` replays
the upstream's answers (`answers`) and whose expectation is what the CLI did;
`importer` turns a CLI's saved stdout into an agent-cli scenario whose fake
CLI replays it (`transcript`, `matcher`, `proposals`) and whose expectation
is the reference pipeline's outcome.  `scrub` keeps secrets and per-run ids
out of both; `write` proves a file lints before it is written.

May import: `harness.mutation`, `harness.reports`, `harness.baselines`,
`harness.seams`, `harness.targets`, `harness.systems`, `harness.adaptor`,
`harness.catalogue` and
`harness.exceptions` (it sits just below the front: only `harness.commands` uses it).
"""
