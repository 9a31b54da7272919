"""
Generative differential testing: ``harness fuzz``.

Hand-written scenarios cover the cases their authors thought of; a model of
a CLI, or an adaptor, can pass every one of them and still be wrong a step
away.  This subpackage generates cases instead (hypothesis strategies over
what users write: JSON Schemas, model scripts, CLI transcripts, settings),
runs each on two targets, compares what a conforming implementation must
reproduce, and writes every class of disagreement, shrunk by hypothesis's
engine, as a lint-clean scenario whose expectations are the truth's.

`jsonschemas` generates schemas and the values held against them; `model_api`
and `agent_cli` are the two seams' fuzzers (cases, the compared projection,
the expectation written back); `run` drives generation, judging, shrinking
and replay through hypothesis's example database; `write` turns a finding
into a scenario file; `main` is the command.  It sits above the reports
(it reuses the differential's projection) and runs seams and targets.

May import: `harness.record`, `harness.mutation`, `harness.reports`,
`harness.baselines`, `harness.seams`, `harness.targets`, `harness.systems`,
`harness.adaptor`, `harness.catalogue`, `harness.exceptions`, `providers_fake`.
"""
