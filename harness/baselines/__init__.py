"""
Baselines: what a target is known to get wrong, and which cases it declines.

`verdicts` reads a target's ``baselines/NAME.yaml`` against the catalogue
and judges each result against it (expected, regression, stale), and says
which entries the run no longer bears out (`verdicts.stale`, the one count
of stale entries); `rebaseline` is ``harness baseline``: a target's current
failures and skips merged into its file, kept as written.

May import: `harness.seams`, `harness.targets`, `harness.systems`,
`harness.adaptor`, `harness.catalogue`, `harness.exceptions`, `providers_fake`.
"""
