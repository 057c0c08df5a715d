"""GPU catalog queries."""

from __future__ import annotations

from gpuquote.hardware import load_gpus, resolve


def list_gpus() -> dict:
    return {"gpus": [g.to_dict() for g in load_gpus().values()]}


def show_gpu(name: str) -> dict:
    r = resolve(name)
    gpus = load_gpus()
    return {"resolved": r.to_dict(), "gpus": [gpus[m].to_dict() for m in r.members]}
