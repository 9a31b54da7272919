"""
The model-api seam: an agent CLI under test, a scripted fake model API behind it.

`seam` registers the seam; `values` holds what a CLI is asked and what it
showed; `expect` what a case expects and how it is compared; `run` runs a
case on the real binaries (against a loopback fake) or on the reference
models (in process).
"""
