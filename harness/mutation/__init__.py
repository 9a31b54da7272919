"""
Mutation testing of the catalogue (``harness mutants``): how much of the
reference pipeline's behaviour the scenarios pin down.

`operators` generates the mutants of a module (one operator change each)
and installs one in the running process; `runner` runs the catalogue
against each mutant in a forked child and reports the survivors, less the
equivalent ones `baselines/mutants.yaml` lists.

May import: `harness.reports`, `harness.baselines`, `harness.seams`,
`harness.targets`, `harness.systems`, `harness.adaptor`, `harness.catalogue`,
`harness.exceptions`, `providers_fake`.
"""
