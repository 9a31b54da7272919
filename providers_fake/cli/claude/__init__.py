"""
The fake ``claude``: Claude Code's print mode (json and stream-json).

`render` turns semantic events into capture-faithful lines, `result` builds
the final result record, `beyond` prints refusals, other tools and thinking,
`data` holds the CLI's fixed texts and figures.
"""
