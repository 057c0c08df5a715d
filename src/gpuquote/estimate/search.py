"""Choosing a layout: the fastest split that fits, and the smallest GPU count that fits at all.

The space is the one practitioners search (Megatron-LM / DeepSpeed / FSDP): TP over the divisors of
the heads inside a node, PP over the divisors of the layers (Megatron-DeepSpeed also counts the two
embedding slots), context parallel for long sequences, data-parallel sharding none / ZeRO-1 / 2 / 3
(= FSDP full shard) / hsdp (full shard inside the node, replicas across nodes), activation
checkpointing, micro-batch size and interleaved virtual stages. A field the job states fixes its own
dimension only. Pruned by memory: states shrink none > zero1 > zero2 > hsdp > zero3 and activations
grow with the micro-batch, so a (TP, PP, CP) whose leanest setting does not fit is skipped whole, and
the micro-batch grows only while it fits.
"""

from __future__ import annotations

from collections.abc import Iterator

from gpuquote.estimate.constants import K
from gpuquote.estimate.job import Job
from gpuquote.estimate.memory import Memory, default_seq_len, local_dp, train_memory
from gpuquote.estimate.setup import Layout, Machine
from gpuquote.estimate.training import (
    TrainPerf,
    best_vstages,
    micro_batches,
    seconds_per_token_floor,
    train_perf,
)
from gpuquote.models import Architecture

MAX_GPUS = 1024
_POW2 = (1, 2, 4, 8, 16, 32, 64, 128)
_CKPTS = ("none", "selective", "full")

_NODE_COUNTS = (1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024)

#: the free layout fields a job may state (each fixes only its own dimension)
LAYOUT_FIELDS = (
    "tensor_parallel",
    "pipeline_parallel",
    "context_parallel",
    "sharding",
    "activation_checkpointing",
    "micro_batch",
)


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


def _tps(job: Job, a: Architecture, n: int, gpn: int) -> list[int]:
    if job.tensor_parallel:
        return [job.tensor_parallel]
    return [t for t in range(1, min(gpn, n) + 1) if a.heads % t == 0 and n % t == 0]


def _pps(job: Job, a: Architecture, n: int) -> list[int]:
    if job.pipeline_parallel:
        return [job.pipeline_parallel]
    lay = a.total_layers
    return [p for p in range(1, min(lay, n) + 1) if n % p == 0 and (lay % p == 0 or (lay + 2) % p == 0)]


def _cps(job: Job, n: int, gpn: int) -> list[int]:
    if job.is_set("context_parallel"):
        return [job.context_parallel]
    seq = default_seq_len(job)
    if seq < K.context_parallel_min_seq:
        return [1]
    return [c for c in _POW2 if c <= gpn and n % c == 0 and seq % (2 * c) == 0]


def shardings(job: Job, lay: Layout, m: Machine) -> list[str]:
    """Data-parallel sharding to try, leanest (least memory) last."""
    if job.sharding:
        return [job.sharding]
    if lay.dp == 1:
        return ["none"]
    spans = local_dp(lay, m) < lay.dp
    # least sharded first. Full training: ZeRO-1 moves the bytes of a DDP all-reduce (reduce-scatter +
    # all-gather) with less memory and a sharded optimizer step, so plain DDP never wins and is left out
    lora = job.method in ("lora", "qlora")
    out = ["none", "hsdp", "zero3"] if lora else ["zero1", "zero2", "hsdp", "zero3"]
    if not spans:
        out.remove("hsdp")  # the same as zero3 inside one node
    return out


def _splits(job: Job, a: Architecture, m: Machine) -> Iterator[Layout]:
    """(TP, PP, CP, DP) splits of m.gpus, least model parallelism first (sharding etc. still open)."""
    n, gpn = m.gpus, m.gpus_per_node
    combos = [
        (tp, pp, cp)
        for tp in _tps(job, a, n, gpn)
        for pp in _pps(job, a, n)
        for cp in _cps(job, n, gpn)
        if n % (tp * pp * cp) == 0 and tp * cp <= max(gpn, job.tensor_parallel or 1)
    ]
    combos.sort(key=lambda x: (x[0] * x[1] * x[2], x[1], x[2]))
    for tp, pp, cp in combos:
        sp = job.sequence_parallel if job.sequence_parallel is not None else tp > 1
        yield Layout(tp=tp, pp=pp, cp=cp, dp=n // (tp * pp * cp), sp=sp, micro_batch=job.micro_batch or 1)


def _mem(job: Job, a: Architecture, m: Machine, lay: Layout) -> Memory:
    return train_memory(job, a, m, lay, micro_batches(job, lay, default_seq_len(job)))


def _micro_batch_options(job: Job, lay: Layout) -> list[int]:
    """Micro-batch sizes to try: stated; 1 without a global batch (no accumulation); else powers of
    two while at least one micro-batch per replica (and per stage, with PP) remains."""
    if job.micro_batch:
        return [job.micro_batch]
    gbt = job.global_batch_tokens
    if gbt is None:
        return [1]
    seqs = gbt / default_seq_len(job) / lay.dp  # sequences per replica per step
    need = max(1, lay.pp)
    return [b for b in _POW2[:8] if b == 1 or seqs / b >= need]


def _ckpt_options(job: Job) -> tuple[str, ...]:
    return (job.activation_checkpointing,) if job.activation_checkpointing else _CKPTS


def _leanest(job: Job, lay: Layout, m: Machine) -> Layout:
    return Layout(**{**lay.__dict__, "sharding": shardings(job, lay, m)[-1], "ckpt": _ckpt_options(job)[-1]})


def _split_best(
    job: Job, a: Architecture, m: Machine, split: Layout
) -> tuple[Layout, Memory, TrainPerf] | None:
    """The fastest fitting layout of one split. Per sharding (least sharded first): the least
    recomputation that fits, then larger micro-batches while they fit and keep getting faster. A more
    sharded option moves more bytes for the same compute, so it is tried only where it reaches what
    the less sharded ones could not: lighter recomputation, or a larger micro-batch."""
    best: tuple[Layout, Memory, TrainPerf] | None = None
    ckpts = _ckpt_options(job)
    reached = (len(ckpts), 0)  # (lightest checkpointing index fitted so far, largest micro-batch there)
    for sh in shardings(job, split, m):
        for ci, ck in enumerate(ckpts):
            if ci > reached[0]:
                break
            lay = Layout(**{**split.__dict__, "sharding": sh, "ckpt": ck})
            mbs = _micro_batch_options(job, lay)
            if ci == reached[0]:
                mbs = [b for b in mbs if b > reached[1]]
                if not mbs:
                    break
            prev: TrainPerf | None = None
            top = 0
            for mb in mbs:
                cand = Layout(**{**lay.__dict__, "micro_batch": mb})
                mem = _mem(job, a, m, cand)
                if mem.total > m.hbm_bytes:
                    break
                top = mb
                perf = train_perf(job, a, m, cand)
                cand, vmem, perf = _with_vstages(job, a, m, cand, perf)
                if best is None or perf.tokens_per_s > best[2].tokens_per_s * 1.0001:
                    best = (cand, vmem or mem, perf)
                if prev is not None and perf.tokens_per_s < prev.tokens_per_s:
                    top = max(_micro_batch_options(job, lay))  # past the optimum: larger ones lose too
                    break
                prev = perf
            if top:
                if ci < reached[0] or top > reached[1]:
                    reached = (ci, top) if ci < reached[0] else (ci, max(top, reached[1]))
                break
    return best


def _leanest_reach(job: Job, a: Architecture, m: Machine, split: Layout) -> tuple[str, list[int]] | None:
    """With the leanest sharding: the least recomputation that fits and the micro-batches that fit
    with it (what any layout of the split can at best reach); None when nothing fits."""
    sh = shardings(job, split, m)[-1]
    for ck in _ckpt_options(job):
        lay = Layout(**{**split.__dict__, "sharding": sh, "ckpt": ck})
        opts = _micro_batch_options(job, lay)

        def fits(i: int, lay: Layout = lay, opts: list[int] = opts) -> bool:
            return _mem(job, a, m, Layout(**{**lay.__dict__, "micro_batch": opts[i]})).total <= m.hbm_bytes

        if not fits(0):
            continue
        lo, hi = 0, len(opts)  # memory grows with the micro-batch: bisect for the last one that fits
        while hi - lo > 1:
            mid = (lo + hi) // 2
            lo, hi = (mid, hi) if fits(mid) else (lo, mid)
        return ck, opts[: lo + 1]
    return None


def _with_vstages(
    job: Job, a: Architecture, m: Machine, lay: Layout, perf: TrainPerf
) -> tuple[Layout, Memory | None, TrainPerf]:
    """Interleave the pipeline where it pays (and still fits)."""
    if lay.pp <= 1:
        return lay, None, perf
    v = best_vstages(a, lay.pp, perf.n_micro, perf.t_stage, perf.t_p2p)
    if v <= 1:
        return lay, None, perf
    vl = Layout(**{**lay.__dict__, "vstages": v})
    mem = _mem(job, a, m, vl)
    if mem.total > m.hbm_bytes:
        return lay, None, perf
    vp = train_perf(job, a, m, vl)
    return (vl, mem, vp) if vp.tokens_per_s > perf.tokens_per_s else (lay, None, perf)


def best_train_layout(job: Job, a: Architecture, m: Machine) -> tuple[Layout, Memory, TrainPerf | None, bool]:
    """Fastest fitting layout on m.gpus GPUs; else the one that needs the least memory (fits=False)."""
    splits = list(_splits(job, a, m))
    if job.sharding not in (None, "none"):
        # a stated sharding shards over data-parallel ranks: splits with some come first
        with_dp = [s for s in splits if s.dp > 1]
        if with_dp and len(with_dp) < len(splits):
            first = best_train_layout_of(job, a, m, with_dp)
            if first[3]:
                return first
    return best_train_layout_of(job, a, m, splits)


def best_train_layout_of(
    job: Job, a: Architecture, m: Machine, splits: list[Layout]
) -> tuple[Layout, Memory, TrainPerf | None, bool]:
    """The fastest fitting layout among these splits; else the leanest (fits=False)."""
    best: tuple[Layout, Memory, TrainPerf] | None = None
    smallest: tuple[Layout, Memory] | None = None
    # branch and bound: visit splits by their floor (seconds per token no layout of theirs beats)
    # first a loose floor (no memory: every micro-batch, no recomputation), then, for a split still in
    # the race, the floor of what fits its memory
    loose = sorted(
        (seconds_per_token_floor(job, a, m, s, shardings(job, s, m), _micro_batch_options(job, s)), i)
        for i, s in enumerate(splits)
    )
    for floor, i in loose:
        if best is not None and floor * best[2].tokens_per_s >= 1.0:
            break  # this split and every later one cannot beat the best found
        split = splits[i]
        reach = _leanest_reach(job, a, m, split)
        if reach is None:
            continue
        if best is not None:
            tight = seconds_per_token_floor(job, a, m, split, shardings(job, split, m), reach[1], reach[0])
            if tight * best[2].tokens_per_s >= 1.0:
                continue
        got = _split_best(job, a, m, split)
        if got is not None and (best is None or got[2].tokens_per_s > best[2].tokens_per_s * 1.0001):
            best = got
    if best is not None:
        return best[0], best[1], best[2], True
    for split in splits:  # none fits: the leanest layout, to say by how much
        lean = _leanest(job, split, m)
        lmem = _mem(job, a, m, lean)
        if smallest is None or lmem.total < smallest[1].total:
            smallest = (lean, lmem)
    if smallest is None:
        from gpuquote.errors import BadInput

        raise BadInput(
            f"gpus: {m.gpus} GPUs cannot be split as tensor_parallel x pipeline_parallel x "
            f"context_parallel x data parallel for this job",
            field="gpus",
        )
    return smallest[0], smallest[1], None, False


def train_fits(job: Job, a: Architecture, m: Machine) -> bool:
    return any(_mem(job, a, m, _leanest(job, s, m)).total <= m.hbm_bytes for s in _splits(job, a, m))
