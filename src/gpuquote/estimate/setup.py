"""Resolved, hashable inputs of one estimate: the machine (GPU, links) and the parallel layout."""

from __future__ import annotations

from dataclasses import dataclass

from gpuquote.errors import BadInput
from gpuquote.estimate.constants import K
from gpuquote.hardware import GPU
from gpuquote.hardware.interconnect import PCIE_EFFECTIVE_GBS
from gpuquote.i18n import Msg

GIB = float(1 << 30)


@dataclass(frozen=True)
class Machine:
    """A GPU type with its node shape and links, bandwidths in bytes/s (achieved, one direction)."""

    gpu: GPU
    gpus: int
    gpus_per_node: int
    intra_node: str
    inter_kind: str
    inter_gbps: float  # per node, line rate
    power_limit_w: float | None

    @property
    def nodes(self) -> int:
        return -(-self.gpus // self.gpus_per_node)

    @property
    def hbm_bytes(self) -> float:
        """Usable memory (what nvidia-smi reports), not the label: a 48 GB L40S with ECC holds 45 GiB."""
        return self.gpu.usable_memory_gib * GIB

    @property
    def hbm_bw(self) -> float:
        return (self.gpu.memory_bandwidth_gbs or 100.0) * 1e9

    def intra_link(self, group: int) -> str:
        """The link a collective among `group` GPUs of one node runs over: nvlink or pcie."""
        g = self.gpu
        if not g.nvlink_bandwidth_gbs or self.intra_node in ("pcie", "none"):
            return "pcie"
        if self.intra_node == "nvlink" and group > 2 and g.form_factor not in ("sxm", "oam", "other"):
            return "pcie"  # bridged pairs: a larger group crosses PCIe
        return "nvlink"

    def intra_bw(self, group: int) -> float:
        """Per-GPU bus bandwidth of a collective among `group` GPUs of one node."""
        g = self.gpu
        pcie = PCIE_EFFECTIVE_GBS.get(int(g.pcie_gen or 4), 25.0) * 1e9
        nvl = (g.nvlink_bandwidth_gbs or 0.0) / 2 * 1e9 * K.nvlink_efficiency
        if self.intra_node == "nvswitch" and nvl:
            return nvl
        if self.intra_node == "nvlink" and nvl:
            if group <= 2:
                return nvl
            return nvl / 2 if g.form_factor in ("sxm", "oam", "other") else pcie
        return pcie

    def inter_bw_per_node(self) -> float:
        eff = K.net_efficiency.get(self.inter_kind, K.net_efficiency["unknown"])
        return self.inter_gbps / 8 * 1e9 * eff

    def group_bw(self, group: int, stride: int) -> float:
        """Bus bandwidth per GPU for a collective over `group` ranks placed `stride` apart.

        Ranks closer than a node share NVLink/PCIe; a group spanning nodes is limited by the node's
        NIC share: each of the node's gpus_per_node/local groups gets an equal share (ring/tree model).
        """
        per_node = max(1, self.gpus_per_node // max(1, stride))
        local = min(group, per_node)
        if group <= per_node:
            return self.intra_bw(local)
        share = self.inter_bw_per_node() * local / self.gpus_per_node
        return min(self.intra_bw(local), share) if local > 1 else share

    def power_scale(self) -> float:
        tdp = self.gpu.tdp_w
        if not self.power_limit_w or not tdp or self.power_limit_w >= tdp:
            return 1.0
        return (self.power_limit_w / tdp) ** K.power_clock_exponent


@dataclass(frozen=True)
class Layout:
    """How a job is split over GPUs: tensor/pipeline/context/data parallel degrees and memory knobs."""

    tp: int = 1
    pp: int = 1
    cp: int = 1
    dp: int = 1
    sharding: str = "none"
    ckpt: str = "none"
    micro_batch: int = 1
    sp: bool = False
    vstages: int = 1  # interleaved virtual pipeline stages per GPU (1 = plain 1F1B)

    @property
    def model_parallel(self) -> int:
        return self.tp * self.pp * self.cp

    def to_dict(self) -> dict:
        """The layout as `estimate --json` and plan rows print it (DESIGN.md section 3: `layout`)."""
        return {
            "tp": self.tp,
            "pp": self.pp,
            "dp": self.dp,
            "cp": self.cp,
            "sharding": self.sharding,
            "checkpointing": self.ckpt,
            "micro_batch": self.micro_batch,
            "virtual_stages": self.vstages,
            "sequence_parallel": self.sp,
            "describe": self.describe(),
        }

    def short(self) -> str:
        """TP/PP/sharding only, for one-line advice ("TP1 PP2 hsdp")."""
        s = f"TP{self.tp} PP{self.pp}" + (f" CP{self.cp}" if self.cp > 1 else "") + f" DP{self.dp}"
        return s + (f" {self.sharding}" if self.sharding != "none" and self.dp > 1 else "")

    def describe(self) -> str:
        s = f"TP{self.tp} PP{self.pp}"
        if self.vstages > 1:
            s += f"x{self.vstages}v"
        if self.cp > 1:
            s += f" CP{self.cp}"
        s += f" DP{self.dp}"
        if self.sharding != "none":
            s += f" {self.sharding}"
        if self.sp:
            s += " +SP"
        return s + f", checkpointing {self.ckpt}, micro-batch {self.micro_batch}"


def check_precision(gpu: GPU, precision: str) -> float:
    """Peak dense FLOP/s for a precision; FP8 on a GPU without it is refused (Hopper and later)."""
    p = precision.lower()
    if p == "fp8" and not gpu.has_fp8:
        raise BadInput(
            Msg("err.precision.fp8", gpu=gpu.id, arch=gpu.architecture),
            field="precision",
            accepted=["fp32", "tf32", "bf16", "fp16"],
        )
    if p == "fp32":
        peak = gpu.fp32_tflops
    elif p in ("int8", "int4"):
        peak = gpu.peak_tflops("bf16") or gpu.peak_tflops("fp16")  # weight-only: 16-bit math
    else:
        peak = gpu.peak_tflops(p)
        if peak is None and p in ("bf16", "tf32"):
            peak = gpu.peak_tflops("fp16") if p == "bf16" else gpu.fp32_tflops
    if not peak:
        have = [q for q in ("fp32", "tf32", "bf16", "fp16", "fp8") if gpu.peak_tflops(q)]
        raise BadInput(
            Msg("err.precision.none", gpu=gpu.id, precision=p, have=", ".join(have)),
            field="precision",
            accepted=have,
        )
    return peak * 1e12
