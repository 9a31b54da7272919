"""The pinned real CLI a test runs: skipped only when switched off, failed when missing."""

from __future__ import annotations

from pathlib import Path

import pytest

from providers_fake.api import realcli


def real_binary(cli: str) -> Path:
    """The pinned ``cli``; a missing install fails the test with the install command."""
    if not realcli.enabled():
        pytest.skip(f"{realcli.SWITCH_ENV}=off")
    try:
        return realcli.locate(cli)
    except FileNotFoundError as missing:
        pytest.fail(str(missing), pytrace=False)
