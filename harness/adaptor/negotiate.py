"""
Capability negotiation: a fixed rule, not a consumer choice (NEG-01..07).

Seed 001: "The consumer's choice between Run and Stream does not select the
provider transport. The unified invocation pipeline prefers a Driver's rich
transport, then negotiates its batch transport when structured output is not
supported by that rich transport."  So the inputs are the driver's
descriptor, whether the driver has a rich transport at all, and the approval
policy; the consumer's mode is not one of them.  On each transport, native
enforcement comes before prompt validation ("use provider-native JSON Schema
enforcement when the selected transport and policy support it; otherwise
inject exact-JSON instructions"), and "if neither transport can honor the
request, the run fails before the Driver is invoked" with
``structured_output_unsupported``.  A descriptor that contradicts itself
(a WorksWith flag without a mechanism) is simply one no transport can
honour: the SDK's resolver has no separate runtime error for it (its
consistency rule is a conformance-kit check on drivers).
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Final

from harness.catalogue.agents import AGENT_CLIS, Descriptor

#: The built-in declarations (NEG-06), one per agent CLI.
BUILTIN: Final = MappingProxyType({cli.name: cli.descriptor for cli in AGENT_CLIS})


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


def _carries(descriptor: Descriptor, mechanism: str, transport: str, ask: bool) -> bool:
    """Whether ``transport`` can carry ``mechanism`` for this descriptor and policy."""
    declared = descriptor.native if mechanism == "native" else descriptor.prompt
    streams = transport == "batch" or descriptor.streaming
    hitl = not ask or descriptor.hitl_for(mechanism)
    return declared and descriptor.run and streams and hitl


def negotiate(descriptor: Descriptor, *, wants_schema: bool, rich: bool, approval: str) -> Plan:
    """
    Choose mechanism and transport, or raise `Refused`.

    ``rich`` says whether the driver has a rich (streaming) transport.  Under
    an explicit Ask the batch transport is never a fallback from the rich
    one: a one-shot batch run cannot pause for a human, so giving the Ask's
    interactive transport up to keep a schema would approve silently (the
    SDK's later resolvers, after seed 001; see docs/seed-001.md).
    """
    first = "rich" if rich else "batch"
    if not wants_schema:
        return Plan(None, first)
    ask = approval == "ask"
    transports = [first]
    if rich and not ask:
        transports.append("batch")
    for transport in transports:
        for mechanism in ("native", "prompt"):
            if _carries(descriptor, mechanism, transport, ask):
                return Plan(mechanism, transport)
    reason = (
        "no mechanism works with an Ask approval policy"
        if ask
        else "no transport of this driver can carry a declared mechanism"
    )
    raise Refused("structured_output_unsupported", f"structured output unsupported: {reason}")
