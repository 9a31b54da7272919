"""
What a run leaves behind: the reports, the differential, the drift, the benchmark.

`render` writes the matrix, failures, coverage, catalogue, JSON and JUnit
reports and `html` the one-page report (`about`: which implementation each
target was, or why it did not start); `differential` pairs the reference
models with the real CLIs on the model-api seam; `drift` follows a CLI from
one release to the next and `versions` the clauses by release; `bench`
measures what scenarios and fakes cost.  Baselines (`harness.baselines`)
and mutation testing (`harness.mutation`) have their own packages.

May import: `harness.baselines`, `harness.seams`, `harness.targets`,
`harness.systems`, `harness.adaptor`, `harness.catalogue`,
`harness.exceptions`, `providers_fake`.
"""
