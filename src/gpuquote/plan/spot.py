"""Spot interruptions: checkpoint/restart overhead with the Young/Daly checkpoint interval.

With interruptions at rate lambda per node-hour over N nodes, the job's mean time between interruptions
is M = 1 / (lambda N). Checkpointing every tau hours (write time delta each) costs delta / tau of the
time; each interruption loses on average tau / 2 of work plus a restart R. Young/Daly's optimum
tau = sqrt(2 delta M) gives the expected slowdown factor 1 + delta/tau + (tau/2 + R)/M.
"""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class SpotOverhead:
    factor: float  # wall time multiplier (>= 1)
    interval_hours: float | None  # checkpoint interval
    checkpoint_write_hours: float
    mtbi_hours: float
    expected_interruptions: float

    def to_dict(self) -> dict:
        return {"time_factor": round(self.factor, 4),
                "checkpoint_interval_hours": None if self.interval_hours is None else round(self.interval_hours, 3),
                "checkpoint_write_hours": round(self.checkpoint_write_hours, 4),
                "mtbi_hours": round(self.mtbi_hours, 2),
                "expected_interruptions": round(self.expected_interruptions, 2)}


def overhead(hours: float, nodes: int, rate_per_node_hour: float, write_hours: float,
             restart_hours: float) -> SpotOverhead:
    """Expected slowdown of a job of `hours` (uninterrupted) on spot nodes."""
    if rate_per_node_hour <= 0:
        return SpotOverhead(1.0, None, write_hours, math.inf, 0.0)
    mtbi = 1.0 / (rate_per_node_hour * max(nodes, 1))
    if write_hours > 0:
        tau = math.sqrt(2.0 * write_hours * mtbi)
        factor = 1.0 + write_hours / tau + (tau / 2.0 + restart_hours) / mtbi
    else:  # stateless work (inference): only the restart and the half-done batch are lost
        tau = None
        factor = 1.0 + restart_hours / mtbi
    # the overhead can make the job longer, and then it sees more interruptions: solved by the factor itself
    return SpotOverhead(factor, tau, write_hours, mtbi, hours * factor / mtbi)
