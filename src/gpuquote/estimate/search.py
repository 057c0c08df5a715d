"""Choosing a layout: the fastest split that fits, and the smallest GPU count that fits at all.

Fields the job states (tensor_parallel, sharding, activation_checkpointing, ...) are kept; the rest
are searched the way practitioners do: least recomputation that fits, ZeRO-1 by default and
ZeRO-3 when states do not fit, TP inside a node, PP when TP alone is not enough.
"""

from __future__ import annotations

from collections.abc import Iterator

from gpuquote.estimate.job import Job
from gpuquote.estimate.memory import Memory, default_seq_len, train_memory
from gpuquote.estimate.setup import Layout, Machine
from gpuquote.estimate.training import TrainPerf, micro_batches, train_perf
from gpuquote.models import Architecture

MAX_GPUS = 1024
_POW2 = (1, 2, 4, 8, 16, 32, 64, 128)


_NODE_COUNTS = (1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024)


def gpu_counts(gpus_per_node: int, limit: int = MAX_GPUS, multiple_of: int = 1) -> list[int]:
    """Counts worth renting: 1, 2, 4... inside a node, then whole nodes (1, 2, 3, 4, 6, 8, 12...);
    with a fixed model-parallel size, only its multiples."""
    out = {c for c in _POW2 if c < gpus_per_node}
    out |= {k * gpus_per_node for k in _NODE_COUNTS if k * gpus_per_node <= limit}
    if multiple_of > 1:
        out |= {
            k * multiple_of
            for k in range(1, limit // multiple_of + 1)
            if k * multiple_of <= gpus_per_node or (k * multiple_of) % gpus_per_node == 0
        }
    return sorted(c for c in out if c % multiple_of == 0 and c <= limit)


def _layouts(job: Job, a: Architecture, n: int, gpus_per_node: int) -> Iterator[tuple[int, int, str]]:
    # a stated ZeRO/FSDP sharding means a data-parallel framework: no TP/PP unless stated
    dp_only = job.sharding is not None
    tps = (
        [job.tensor_parallel]
        if job.tensor_parallel
        else ([1] if dp_only else [t for t in _POW2 if t <= min(gpus_per_node, n) and a.heads % t == 0])
    )
    pps = (
        [job.pipeline_parallel]
        if job.pipeline_parallel
        else ([1] if dp_only else [p for p in _POW2 if p <= a.total_layers])
    )
    cp = job.context_parallel
    lora = job.method in ("lora", "qlora")
    combos = sorted(
        ((tp, pp) for tp in tps for pp in pps if n % (tp * pp * cp) == 0), key=lambda x: (x[0] * x[1], x[1])
    )
    for tp, pp in combos:
        dp = n // (tp * pp * cp)
        if job.sharding:
            shardings = [job.sharding]
        elif dp == 1:
            shardings = ["none"]
        else:
            shardings = ["none", "zero3"] if lora else ["zero1", "zero3"]
        for sh in shardings:
            yield tp, pp, sh


def _fit_layout(
    job: Job, a: Architecture, m: Machine, tp: int, pp: int, sh: str
) -> tuple[Layout, Memory, bool]:
    """The layout with the least recomputation that fits (or the full-recompute one if none does)."""
    cp = job.context_parallel
    dp = m.gpus // (tp * pp * cp)
    sp = job.sequence_parallel if job.sequence_parallel is not None else tp > 1
    ckpts = [job.activation_checkpointing] if job.activation_checkpointing else ["none", "selective", "full"]
    mb = job.micro_batch or 1
    seq = default_seq_len(job)
    cap = m.hbm_bytes
    lay = mem = None
    for ck in ckpts:
        lay = Layout(tp=tp, pp=pp, cp=cp, dp=dp, sharding=sh, ckpt=ck, micro_batch=mb, sp=sp)
        mem = train_memory(job, a, m, lay, micro_batches(job, lay, seq))
        if mem.total <= cap:
            return lay, mem, True
    assert lay is not None and mem is not None
    return lay, mem, False


def best_train_layout(job: Job, a: Architecture, m: Machine) -> tuple[Layout, Memory, TrainPerf | None, bool]:
    """Fastest fitting layout on m.gpus GPUs; else the one that needs the least memory (fits=False)."""
    best: tuple[Layout, Memory, TrainPerf] | None = None
    smallest: tuple[Layout, Memory] | None = None
    found_mp = None
    for tp, pp, sh in _layouts(job, a, m.gpus, m.gpus_per_node):
        if found_mp is not None and tp * pp > 2 * found_mp:
            break  # more model parallelism than needed only adds communication and bubbles
        lay, mem, fits = _fit_layout(job, a, m, tp, pp, sh)
        if not fits:
            if smallest is None or mem.total < smallest[1].total:
                smallest = (lay, mem)
            continue
        found_mp = found_mp or tp * pp
        perf = train_perf(job, a, m, lay)
        if best is None or perf.tokens_per_s > best[2].tokens_per_s:
            best = (lay, mem, perf)
    if best is not None:
        return best[0], best[1], best[2], True
    if smallest is None:
        from gpuquote.errors import BadInput

        raise BadInput(
            f"gpus: {m.gpus} GPUs cannot be split as tensor_parallel x pipeline_parallel x "
            f"context_parallel x data parallel for this job",
            field="gpus",
        )
    return smallest[0], smallest[1], None, False


def train_fits(job: Job, a: Architecture, m: Machine) -> bool:
    return any(
        _fit_layout(job, a, m, tp, pp, sh)[2] for tp, pp, sh in _layouts(job, a, m.gpus, m.gpus_per_node)
    )
