"""
The service-api seam: a service on one side, a fake agent CLI behind it.

The system under test is a service that exposes structured output to its
own callers (Throng's initialise API and A2A artifacts, T3's
``delegate_task``).  The harness plays the service's caller over the
conformance binding (`harness.targets.http`) and, behind the service, the agent:
one of the fake CLIs, scripted per turn (``provider.steps``, then
``provider.follow_ups[i].steps`` for the i-th follow-up turn).  What the
fake records says what the service passed on to its provider.

Everything that differs between services is behind `common.SERVICES`,
keyed by ``request.service``.
"""

from __future__ import annotations

from typing import Any, cast

from harness import seams
from harness.catalogue.files import Folder
from harness.catalogue.scenario import Scenario, Script
from harness.catalogue.seam import Parts, Report, merge
from harness.seams.agent_cli import check_steps, script_from
from harness.seams.compare import Mismatch
from harness.seams.service import common, t3, throng
from harness.seams.service.common import SERVICES, ServiceKind, ServiceOutcome
from harness.targets import Service, Target, workspace

common.register("throng", throng.Throng())
common.register("t3", t3.T3())


def _kind(request: object) -> ServiceKind:
    return SERVICES[str(getattr(request, "service", ""))]


class ServiceApi:
    """See the module docstring."""

    schema_def = "service-api"

    def merge_case(self, base: dict[str, Any], case: dict[str, Any]) -> dict[str, Any]:
        return merge(base, case)

    def check(self, doc: dict[str, Any], base: Folder, report: Report) -> None:
        kind = SERVICES[doc["request"]["service"]]
        if "provider" in doc:
            cli = kind.cli(doc["request"])
            provider = doc["provider"]
            if cli is None:
                report(("provider",), "no fake agent CLI stands behind this provider")
            else:
                check_steps(cli, provider["steps"], ("provider",), report)
                for i, later in enumerate(provider.get("follow_ups", ())):
                    check_steps(cli, later["steps"], ("provider", "follow_ups", i), report)
        kind.check(doc, report)

    def parts(self, doc: dict[str, Any], base: Folder) -> Parts:
        kind = SERVICES[doc["request"]["service"]]
        script: Script | None = None
        later: tuple[Script, ...] = ()
        cli = kind.cli(doc["request"])
        if "provider" in doc and cli is not None:
            provider = doc["provider"]
            script = script_from(cli, provider)
            later = tuple(script_from(cli, each) for each in provider.get("follow_ups", ()))
        expect = doc["expect"]
        return Parts(
            request=kind.request(doc["request"]),
            expect=kind.expectation(expect),
            script=script,
            later_scripts=later,
            by_target=tuple(
                (target, kind.expectation(merge(expect, override)))
                for target, override in sorted(doc.get("by_target", {}).items())
            ),
        )

    def observe(
        self, scenario: Scenario, target: Target, options: seams.RunOptions
    ) -> ServiceOutcome:
        assert isinstance(target, Service), target
        kind = _kind(scenario.request)
        with workspace.open_for(scenario) as work, target.connect() as connection:
            return kind.observe(scenario.request, connection, work)

    def compare(self, expect: object, actual: seams.SeamOutcome) -> tuple[Mismatch, ...]:
        service = str(getattr(actual, "service", ""))
        return SERVICES[service].compare(expect, cast(ServiceOutcome, actual))

    def outcome_from_json(self, data: dict[str, Any]) -> ServiceOutcome:
        return SERVICES[data["service"]].outcome_from_json(data)

    def describe(self, scenario: Scenario) -> list[str]:
        kind = _kind(scenario.request)
        out = kind.describe(scenario.expect)
        for target, override in scenario.by_target:
            differs = "; ".join(kind.describe(override)) or "nothing checked"
            out.append(f"on `{target}` targets the expectation differs: {differs}")
        return out


seams.register("service-api", ServiceApi())
