"""
The catalogue as one parametrized pytest test.

Import `test_scenario` into any test module to run the scenario catalogue
there; the plugin parametrizes it over scenarios × targets.
"""

from __future__ import annotations

import pytest

from harness.engine import RESULT_PROPERTY, TARGET_PROPERTY, Case, result_to_json, verdict


def test_scenario(harness_case: Case, request: pytest.FixtureRequest) -> None:
    """Each scenario meets its expectation on each selected target."""
    if harness_case.problem is not None:
        pytest.fail(str(harness_case.problem), pytrace=False)
    result = harness_case.run()
    request.node.user_properties.append((RESULT_PROPERTY, result_to_json(result)))
    request.node.user_properties.append((TARGET_PROPERTY, harness_case.about()))
    verdict(result, harness_case.scenario)
