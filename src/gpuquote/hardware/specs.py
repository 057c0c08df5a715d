"""GPU specs from data/gpus.csv (built from the sourced reference table)."""

from __future__ import annotations

import csv
from dataclasses import dataclass, field
from functools import lru_cache

from gpuquote.config import DATA_DIR

# Per-GPU memory read from a catalog matches a card from (usable x 0.95) to (label x 1.03): driver versions move
# nvidia-smi's total by ~1-2% (L40S 46068 vs 46080 MiB; B300 268288 vs 275456); the label side only absorbs
# GB-vs-GiB rounding. The windows of 40/80 GB, 16/32 GB and 80/94 GB cards stay apart.
MEMORY_LOW_TOLERANCE = 0.05
MEMORY_HIGH_TOLERANCE = 0.03
PRECISIONS = ("fp64", "fp32", "tf32", "bf16", "fp16", "fp8", "int8", "int4", "fp4")


def _f(v: str) -> float | None:
    v = (v or "").strip()
    if not v:
        return None
    try:
        return float(v)
    except ValueError:
        return None


@dataclass(frozen=True)
class GPU:
    id: str
    family: str
    vendor: str
    architecture: str
    form_factor: str  # pcie | sxm | oam | other
    form_factor_detail: str
    memory_gib: float
    memory_type: str
    memory_bandwidth_gbs: float | None
    fp64_tflops: float | None
    fp64_tensor_tflops: float | None
    fp32_tflops: float | None
    tf32_tflops: float | None
    bf16_tflops: float | None
    fp16_tflops: float | None
    fp8_tflops: float | None
    int8_tops: float | None
    fp4_tflops: float | None
    nvlink_gen: str
    nvlink_bandwidth_gbs: float | None
    pcie_gen: float | None
    pcie_bandwidth_gbs: float | None
    tdp_w: float | None
    mig_max: int | None
    launch_year: int | None
    source: str
    notes: str = field(repr=False, default="")
    usable_memory_mib: float | None = None  # nvidia-smi memory.total; None: not recorded (label used)
    usable_memory_source: str = field(repr=False, default="")

    @property
    def variant(self) -> str:
        """pcie | sxm | nvl | oam | other: the form as names spell it (NVL is a bridged PCIe card)."""
        return "nvl" if "nvl" in self.id.split("-") else self.form_factor

    @property
    def usable_memory_gib(self) -> float:
        """What a job can allocate (nvidia-smi memory.total: ECC and firmware reserve taken off the label)."""
        return self.usable_memory_mib / 1024 if self.usable_memory_mib else self.memory_gib

    def memory_matches(self, gib: float) -> bool:
        """Whether a per-GPU memory a catalog reports can be this card: from just under what nvidia-smi shows
        (drivers differ by a few %) up to the label. Above the label it is a larger card, never this one."""
        low = self.usable_memory_gib * (1 - MEMORY_LOW_TOLERANCE)
        return low <= gib <= self.memory_gib * (1 + MEMORY_HIGH_TOLERANCE)

    @property
    def has_fp8(self) -> bool:
        return self.fp8_tflops is not None

    def peak_tflops(self, precision: str) -> float | None:
        """Dense peak for a precision; tensor-core figure where the chip has one."""
        p = precision.lower()
        if p == "fp64":
            return self.fp64_tensor_tflops or self.fp64_tflops
        if p == "int4":
            return self.int8_tops
        return getattr(self, f"{p}_tflops" if p != "int8" else "int8_tops", None)

    def to_dict(self) -> dict:
        d = {k: getattr(self, k) for k in self.__dataclass_fields__}
        d["variant"] = self.variant
        d["usable_memory_gib"] = round(self.usable_memory_gib, 3)
        return d


@lru_cache(maxsize=1)
def load_gpus() -> dict[str, GPU]:
    path = DATA_DIR / "gpus.csv"
    with path.open(newline="", encoding="utf-8") as fh:
        lines = [ln for ln in fh if not ln.startswith("#")]
    out: dict[str, GPU] = {}
    for r in csv.DictReader(lines):
        mig = _f(r["mig_max"])
        year = _f(r["launch_year"])
        out[r["id"]] = GPU(
            id=r["id"], family=r["family"], vendor=r["vendor"], architecture=r["architecture"],
            form_factor=r["form_factor"], form_factor_detail=r["form_factor_detail"],
            memory_gib=float(r["memory_gib"]), memory_type=r["memory_type"],
            memory_bandwidth_gbs=_f(r["memory_bandwidth_gbs"]),
            fp64_tflops=_f(r["fp64_tflops"]), fp64_tensor_tflops=_f(r["fp64_tensor_tflops"]),
            fp32_tflops=_f(r["fp32_tflops"]), tf32_tflops=_f(r["tf32_tflops"]),
            bf16_tflops=_f(r["bf16_tflops"]), fp16_tflops=_f(r["fp16_tflops"]),
            fp8_tflops=_f(r["fp8_tflops"]), int8_tops=_f(r["int8_tops"]), fp4_tflops=_f(r["fp4_tflops"]),
            nvlink_gen=r["nvlink_gen"], nvlink_bandwidth_gbs=_f(r["nvlink_bandwidth_gbs"]),
            pcie_gen=_f(r["pcie_gen"]), pcie_bandwidth_gbs=_f(r["pcie_bandwidth_gbs"]),
            tdp_w=_f(r["tdp_w"]), mig_max=int(mig) if mig is not None else None,
            launch_year=int(year) if year is not None else None,
            source=r["source"], notes=r["notes"],
            usable_memory_mib=_f(r.get("usable_memory_mib", "")),
            usable_memory_source=r.get("usable_memory_source", ""),
        )
    return out
