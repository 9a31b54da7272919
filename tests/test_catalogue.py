"""The scenario catalogue, run as one parametrized test over scenarios × targets."""

from harness.testing import test_scenario

__all__ = ["test_scenario"]
