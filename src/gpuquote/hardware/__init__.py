"""GPU catalog (specs with sources), name aliases and families, interconnect kinds."""

from gpuquote.hardware.aliases import (
    Resolved,
    group_ids,
    group_of,
    matches,
    members,
    narrow,
    resolve,
    settle_memory,
    try_resolve,
)
from gpuquote.hardware.interconnect import FORM_FACTORS, INTER_NODE_KINDS, INTRA_NODE
from gpuquote.hardware.specs import GPU, PRECISIONS, load_gpus


def get_gpu(gpu_id: str) -> GPU:
    """A SKU's specs; a family id raises BadInput (its specs differ between members)."""
    r = resolve(gpu_id)
    if r.is_family:
        from gpuquote.errors import BadInput

        raise BadInput(
            f"gpu: '{gpu_id}' is a family ({', '.join(r.members)}); name the {' and '.join(r.unknown)}",
            field="gpu", accepted=list(r.members),
        )
    return load_gpus()[r.id]


__all__ = [
    "GPU", "PRECISIONS", "Resolved", "FORM_FACTORS", "INTER_NODE_KINDS", "INTRA_NODE",
    "get_gpu", "group_ids", "group_of", "load_gpus", "matches", "members", "narrow", "resolve", "settle_memory",
    "try_resolve",
]
