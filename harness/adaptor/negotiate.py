"""
Capability negotiation: a fixed rule, not a consumer choice (NEG-01..07).

Given a driver's descriptor, the consumer's call (run or stream) and the
approval policy, pick the mechanism (native, else prompt validation) and the
transport (the rich streaming one only when it can carry structured output),
or refuse before anything is launched.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Final

from harness.catalogue.scenario import Descriptor

#: The built-in declarations (NEG-06).
BUILTIN: Final = MappingProxyType(
    {
        "codex": Descriptor(native=True, prompt=True, run=True, streaming=False),
        "claude": Descriptor(native=True, prompt=True, run=True, streaming=True),
        "cursor": Descriptor(native=False, prompt=True, run=True, streaming=True),
        "codebuddy": Descriptor(native=True, prompt=True, run=True, streaming=False),
    }
)


class Refused(ValueError):
    """Negotiation failed; ``kind`` is the outcome error kind."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


@dataclass(frozen=True)
class Plan:
    """What negotiation decided for one run."""

    mechanism: str | None
    transport: str


def check(descriptor: Descriptor) -> None:
    """Reject a self-contradictory descriptor (NEG-07)."""
    mechanism = descriptor.native or descriptor.prompt
    flags = descriptor.run or descriptor.streaming or descriptor.hitl
    if flags and not mechanism:
        raise Refused(
            "invalid_driver_config",
            "descriptor sets a WorksWith flag but declares no structured-output mechanism",
        )
    if mechanism and not descriptor.run:
        raise Refused(
            "invalid_driver_config", "descriptor declares a mechanism without WorksWithRun"
        )


def negotiate(descriptor: Descriptor, *, wants_schema: bool, mode: str, approval: str) -> Plan:
    """Choose mechanism and transport, or raise `Refused`."""
    rich = mode == "stream"
    if not wants_schema:
        return Plan(None, "rich" if rich else "batch")
    check(descriptor)
    ask = approval == "ask"
    for mechanism, declared in (("native", descriptor.native), ("prompt", descriptor.prompt)):
        if declared and (not ask or descriptor.hitl_for(mechanism)):
            transport = "rich" if rich and descriptor.streaming else "batch"
            return Plan(mechanism, transport)
    reason = "no mechanism works with an Ask approval policy" if ask else "no mechanism declared"
    raise Refused("structured_output_unsupported", f"structured output unsupported: {reason}")
