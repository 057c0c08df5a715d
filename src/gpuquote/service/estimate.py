"""`estimate` service: the dict that `gpuquote estimate --json` prints and the web API returns."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def estimate_job(
    job: dict | str | Path, gpu: str | None = None, gpus: int | None = None, hardware: dict | None = None
) -> dict[str, Any]:
    """Estimate a job (a mapping, or a YAML/JSON file path); `gpu`/`gpus` override its hardware."""
    from gpuquote.estimate import estimate, load_job

    j = load_job(job)
    return estimate(j, hardware, gpu=gpu, gpus=gpus).to_dict()
