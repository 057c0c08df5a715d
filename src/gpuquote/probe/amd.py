"""Pure parsers for AMD's tools: `rocm-smi ... --json` and `amd-smi static --json`.

Both print JSON whose keys moved between ROCm releases; the parsers take what they recognise and
leave the rest unknown. The output has the same shape as the NVIDIA GPU records.
"""

from __future__ import annotations

import json
import re

from gpuquote.probe.nvidia import identify


def _gpu(index: int, name: str, mem_bytes: float | None, bus: str | None) -> dict:
    mem_mib = mem_bytes / 2**20 if mem_bytes else None
    return {"index": index, "bus_id": bus, "name": name, "uuid": None, "architecture": None,
            "memory_total_mib": round(mem_mib) if mem_mib else None, "mig_mode": None, "mig_devices": [],
            "virtualization_mode": None, "compute_mode": None, "power_limit_w": None,
            "default_power_limit_w": None, "max_power_limit_w": None, "pcie": {}, "ecc_mode": None,
            "fabric_state": None, "vendor": "AMD", **{"identity": identify(name, mem_mib, None)}}


def parse_rocm_smi(text: str) -> list[dict]:
    """rocm-smi --showproductname --showmeminfo vram --showbus --json: {"card0": {"Card series": ..., ...}}."""
    data = json.loads(text)
    out = []
    for key in sorted((k for k in data if k.startswith("card")), key=lambda k: int(re.sub(r"\D", "", k) or 0)):
        card = data[key]
        name = card.get("Card Series") or card.get("Card series") or card.get("Card SKU") or card.get("Card model")
        mem = card.get("VRAM Total Memory (B)")
        out.append(_gpu(len(out), str(name or ""), float(mem) if mem else None, card.get("PCI Bus")))
    return out


def parse_amd_smi_static(text: str) -> list[dict]:
    """amd-smi static --json: a list (or {"gpu_data": [...]}) of {gpu, asic: {market_name}, vram: {size}, bus}."""
    data = json.loads(text)
    items = data.get("gpu_data", []) if isinstance(data, dict) else data
    out = []
    for item in items:
        asic = item.get("asic", {}) or {}
        vram = (item.get("vram", {}) or {}).get("size")
        mem = None
        if isinstance(vram, dict) and vram.get("value") is not None:
            unit = str(vram.get("unit", "MB")).upper()
            mem = float(vram["value"]) * {"B": 1, "KB": 2**10, "MB": 2**20, "GB": 2**30}.get(unit, 2**20)
        bus = (item.get("bus", {}) or {}).get("bdf")
        out.append(_gpu(len(out), str(asic.get("market_name") or ""), mem, bus))
    return out
