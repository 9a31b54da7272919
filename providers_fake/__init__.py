"""
Scripted fakes of the agent CLIs the harness drives.

``fake-codex``, ``fake-claude``, ``fake-cursor-agent`` and ``fake-codebuddy``
accept the real programs' arguments and replay a JSON script in each one's
real wire format, so adaptors can be tested against every edge case without
a model or a network.  The harness can also call `replay` in-process and act
out the returned chunks itself.

This module stays import-light: the executables start through it, and their
start-up time is part of what the harness measures.
"""

from __future__ import annotations

from types import MappingProxyType

from providers_fake.cli.types import Chunk, Replay

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = [
    "CLIS",
    "MODULES",
    "RECORD_ENV",
    "SCRIPT_ENV",
    "Chunk",
    "Replay",
    "event_names",
    "replay",
]

SCRIPT_ENV = "HARNESS_FAKE_SCRIPT"
RECORD_ENV = "HARNESS_FAKE_RECORD"
#: The fakes' registry of CLIs: each one's module, which exposes its `Cli` spec as
#: ``CLI``.  Names, not imports, so that listing them imports nothing and a launch
#: imports its own CLI's module alone.  The fakes never import the harness, so this
#: is the one table kept beside ``harness.catalogue.agents``: a test holds the two
#: equal (and the console scripts in pyproject.toml, ``fake-COMMAND`` each).
MODULES: Mapping[str, str] = MappingProxyType(
    {
        "codex": "providers_fake.cli.codex",
        "claude": "providers_fake.cli.claude.render",
        "cursor": "providers_fake.cli.cursor",
        "codebuddy": "providers_fake.cli.codebuddy",
    }
)
CLIS: frozenset[str] = frozenset(MODULES)


def event_names(cli: str) -> frozenset[str]:
    """The semantic event names a script for `cli` may use (declared by that CLI's module)."""
    from providers_fake.cli.replay import cli_spec  # noqa: PLC0415 - see `replay`

    return cli_spec(_known(cli)).events


def _known(cli: str) -> str:
    if cli not in CLIS:
        raise ValueError(f"unknown cli {cli!r}; expected one of {sorted(CLIS)}")
    return cli


def replay(cli: str, argv: list[str], env: Mapping[str, str], stdin: bytes | None = None) -> Replay:
    """
    Everything one launch of ``fake-<cli> ARGV`` does, without doing it.

    Reads the script named by ``env[SCRIPT_ENV]``, appends the launch record
    to ``env[RECORD_ENV]`` when set, checks `argv` as the real CLI would and
    renders the script.  Problems with the script itself come back as one
    ``fake-<cli>: ...`` stderr line and exit status 2.
    """
    # Deferred: importing the package must stay cheap for the harness and the executables.
    from providers_fake.cli.replay import replay as _replay  # noqa: PLC0415

    return _replay(
        _known(cli), list(argv), env, stdin, script_env=SCRIPT_ENV, record_env=RECORD_ENV
    )
