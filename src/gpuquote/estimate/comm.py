"""Collective communication times (ring/tree bus-bandwidth model, NCCL conventions).

`collective` places a group of ranks on the machine: inside one node it is a ring over NVLink/PCIe;
across nodes it is hierarchical (NCCL tree / 2D): a reduce-scatter inside the node, the node's share
across the network (every GPU of the node shares its NICs), an all-gather inside the node again.
"""

from __future__ import annotations

import math

from gpuquote.estimate.constants import K
from gpuquote.estimate.setup import Machine


def all_reduce(nbytes: float, ranks: int, bus_bw: float, latency_us: float | None = None) -> float:
    """All-reduce: 2 (n-1)/n of the buffer per rank; latency of a tree (2 log2 n hops)."""
    if ranks <= 1:
        return 0.0
    hops = 2.0 * math.log2(ranks)
    base = K.collective_latency_us if latency_us is None else latency_us
    return 2.0 * (ranks - 1) / ranks * nbytes / bus_bw + (base + hops * K.hop_latency_us) * 1e-6


def all_gather(nbytes: float, ranks: int, bus_bw: float, latency_us: float | None = None) -> float:
    """All-gather (or reduce-scatter) of a buffer whose full size is nbytes."""
    if ranks <= 1:
        return 0.0
    hops = ranks - 1  # NCCL all-gather / reduce-scatter are rings: latency grows with the ring
    base = K.collective_latency_us if latency_us is None else latency_us
    return (ranks - 1) / ranks * nbytes / bus_bw + (base + hops * K.hop_latency_us) * 1e-6


def intra_latency_us(m: Machine, group: int) -> float:
    """Fixed cost of one collective inside a node: NVLink/NVSwitch, or PCIe (through the host bridges)."""
    return K.pcie_collective_latency_us if m.intra_link(group) == "pcie" else K.collective_latency_us


def collective(m: Machine, op: str, nbytes: float, group: int, stride: int) -> float:
    """Seconds for `op` (all_reduce | all_gather | reduce_scatter) of nbytes over `group` ranks
    placed `stride` apart (TP groups stride 1, DP groups stride TP x CP, ...)."""
    if group <= 1:
        return 0.0
    per_node = max(1, m.gpus_per_node // max(1, stride))
    local = min(group, per_node)
    remote = -(-group // local)  # nodes the group spans
    fn = all_reduce if op == "all_reduce" else all_gather
    intra = m.intra_bw(local)
    if remote <= 1:
        return fn(nbytes, local, intra, intra_latency_us(m, local))
    # hierarchical: the node's GPUs all talk at once, so each gets 1/gpus_per_node of the NICs
    nic = m.inter_bw_per_node() / m.gpus_per_node
    t_inter = fn(nbytes / local, remote, nic)
    t_intra = 0.0
    if local > 1:
        lat = intra_latency_us(m, local)
        t_intra = all_gather(nbytes, local, intra, lat) * (2.0 if op == "all_reduce" else 1.0)
    return t_inter + t_intra
