"""
The catalogue: scenario files in, immutable scenarios out.

`loader` reads YAML safely (`yamlpos`, with positions; `yamlcache` keeps what
loaded cleanly between runs), checks every document
against the packaged scenario schema and each seam's own rules (`seam`, the
registry of seam formats), and builds the values of `scenario`; `clauses`
is the clause registry the scenarios cite; `agents` the registry of agent
CLIs, one record each, from which every other list of them is derived;
`outcome` is the canonical outcome every agent-cli implementation reports;
`jsonvalue` keeps JSON exact (big integers, key order); `yamlfile` reads the
harness's other YAML files (baselines, differential expectations).

May import: `harness.exceptions` only.  The seams are named in
`seam.BUILTIN` and imported by name, as plugins.
"""
