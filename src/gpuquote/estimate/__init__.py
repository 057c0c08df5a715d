"""Job sizing: memory per GPU, GPU count, throughput and time for a Job on given hardware.

Public API (stable; the planner and the web API call it):
    load_job(path|dict|Job) -> Job
    estimate(job, hardware=None, *, gpu=None, gpus=None) -> EstimateResult (.to_dict() = the JSON contract)
    min_gpus(job, gpu_id, gpus_per_node=8, intra_node=None, inter_kind=None, gbps_per_node=None) -> int | None
    checkpoint_bytes(job) -> float
"""

from gpuquote.estimate.api import EstimateResult, checkpoint_bytes, clear_caches, estimate, min_gpus
from gpuquote.estimate.job import DataSpec, Hardware, InterNode, Job, load_job, merge_hardware

__all__ = [
    "DataSpec",
    "EstimateResult",
    "Hardware",
    "InterNode",
    "Job",
    "checkpoint_bytes",
    "clear_caches",
    "estimate",
    "load_job",
    "merge_hardware",
    "min_gpus",
]
