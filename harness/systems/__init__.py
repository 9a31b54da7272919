"""
Reference models of the systems under test, other than the adaptor.

`claude/` is Claude Code's structured-output loop towards the model API,
`codex` is ``codex exec``; both run in process against the fake model APIs
and print what the real binaries print.  `throng` and `t3` are the services
of the service-api seam, `turns` runs their agent turns through the
reference adaptor, `a2a` shapes Throng's artifacts, and `service` puts both
services behind the HTTP conformance binding.

May import: `harness.adaptor`, `harness.catalogue`, `harness.exceptions`,
`providers_fake`.
"""
