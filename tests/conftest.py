"""Shared fixtures: the catalogue, loaded once per session."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.catalogue import loader

ROOT = Path(__file__).resolve().parent.parent
SCENARIOS = ROOT / "scenarios"


@pytest.fixture(scope="session")
def catalogue() -> loader.Loaded:
    loaded = loader.load([SCENARIOS])
    assert not loaded.problems, "\n".join(map(str, loaded.problems))
    return loaded
