"""
What a run leaves behind: reports, baselines, the differential, the benchmark.

`render` writes the matrix, failures, coverage, catalogue, JSON and JUnit
reports (`about`: which implementation each target was, or why it did not
start); `baseline` judges results against a target's known failures;
`differential` pairs the reference models with the real CLIs on the
model-api seam; `bench` measures what scenarios and fakes cost.

May import: `harness.seams`, `harness.targets`, `harness.systems`,
`harness.adaptor`, `harness.catalogue`, `harness.exceptions`, `providers_fake`.
"""
