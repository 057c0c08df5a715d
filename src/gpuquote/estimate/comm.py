"""Collective communication times (ring/tree bus-bandwidth model, NCCL conventions)."""

from __future__ import annotations

from gpuquote.estimate.constants import K


def all_reduce(nbytes: float, ranks: int, bus_bw: float) -> float:
    """Ring all-reduce: each rank moves 2 (n-1)/n of the buffer, plus a fixed latency."""
    if ranks <= 1:
        return 0.0
    return 2.0 * (ranks - 1) / ranks * nbytes / bus_bw + K.collective_latency_us * 1e-6


def all_gather(nbytes: float, ranks: int, bus_bw: float) -> float:
    """All-gather (or reduce-scatter) of a buffer whose full size is nbytes."""
    if ranks <= 1:
        return 0.0
    return (ranks - 1) / ranks * nbytes / bus_bw + K.collective_latency_us * 1e-6
