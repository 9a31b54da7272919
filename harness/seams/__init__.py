"""
The seams: how a scenario of each seam runs on a target and is judged.

A seam is one object registered in the catalogue's seam registry
(`harness.catalogue.seam`): its loading half (`SeamFormat`) checks and builds
the scenario's sections, its running half (`SeamKind`, here) sets up the
fake, drives the target, reads back what was observed and holds it against
the expectation.  `case` runs one scenario on one target whatever its seam;
`compare` holds the comparisons every seam shares.  One module (or folder)
per seam: `agent_cli`, `model_api/`, `service/`.

May import: `harness.targets`, `harness.systems`, `harness.adaptor`,
`harness.catalogue`, `harness.exceptions`, `providers_fake`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, cast

from harness.catalogue import seam as registry
from harness.catalogue.seam import SeamFormat

if TYPE_CHECKING:
    from harness.catalogue.scenario import Scenario
    from harness.seams.compare import Mismatch
    from harness.targets import Target


@dataclass(frozen=True)
class RunOptions:
    """
    What the user allowed a run to do to the machine it runs on.

    A catalogue is untrusted input: by default no scenario makes any system
    run a command (``allow_exec``); cases that would are skipped with the
    reason, and ``harness run --allow-exec`` opts in.
    """

    allow_exec: bool = False


class SeamOutcome(Protocol):
    """What one case observed on a seam; it travels between processes as JSON."""

    seam: ClassVar[str]

    def to_json(self) -> dict[str, Any]: ...

    def summary(self) -> str:
        """One line for a failing case: what the system under test did."""
        ...


class SeamKind(SeamFormat, Protocol):
    """A seam as the runner sees it: loaded (`SeamFormat`), then run and compared."""

    def observe(self, scenario: Scenario, target: Target, options: RunOptions) -> SeamOutcome:
        """
        Run ``scenario`` on ``target`` and return what was observed.

        Raises `harness.targets.protocol.Skipped` for a case the run may not
        do (``options``) or the target cannot serve.

        Raises when the target itself fails (it cannot be reached, it breaks
        its protocol); the executor records that as ``errored``.
        """
        ...

    def compare(self, expect: object, actual: SeamOutcome) -> tuple[Mismatch, ...]:
        """Every way ``actual`` fails to meet ``expect``."""
        ...

    def outcome_from_json(self, data: dict[str, Any]) -> SeamOutcome: ...


def require(name: str) -> SeamKind:
    """The registered seam called ``name``, with its running half."""
    return cast(SeamKind, registry.require(name))


def register(name: str, kind: SeamKind) -> None:
    """Register a seam: the catalogue can then load its scenarios and the runner run them."""
    registry.register(name, kind)
