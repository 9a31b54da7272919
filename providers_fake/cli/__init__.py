"""
The fake agent CLIs: argument parsing, script replay and each CLI's wire format.

`main` holds the executables' entry points, `replay` runs a script for one
CLI (`codex`, `claude/`, `cursor`, `codebuddy`), `base` and `argv` are what
the CLIs share (the renderer base class, argument dialects), `script` reads
the scripts, `jsonout` prints JSON the way each CLI's runtime does.

Kept import-light: the executables' start-up time is measured.
"""
