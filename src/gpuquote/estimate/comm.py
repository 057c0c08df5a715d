"""Collective communication times (ring/tree bus-bandwidth model, NCCL conventions)."""

from __future__ import annotations

import math

from gpuquote.estimate.constants import K


def all_reduce(nbytes: float, ranks: int, bus_bw: float) -> float:
    """All-reduce: 2 (n-1)/n of the buffer per rank; latency of a tree (2 log2 n hops)."""
    if ranks <= 1:
        return 0.0
    hops = 2.0 * math.log2(ranks)
    return (
        2.0 * (ranks - 1) / ranks * nbytes / bus_bw
        + (K.collective_latency_us + hops * K.hop_latency_us) * 1e-6
    )


def all_gather(nbytes: float, ranks: int, bus_bw: float) -> float:
    """All-gather (or reduce-scatter) of a buffer whose full size is nbytes."""
    if ranks <= 1:
        return 0.0
    hops = ranks - 1  # NCCL all-gather / reduce-scatter are rings: latency grows with the ring
    return (ranks - 1) / ranks * nbytes / bus_bw + (K.collective_latency_us + hops * K.hop_latency_us) * 1e-6
