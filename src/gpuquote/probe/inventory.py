"""Collect what this machine is: GPUs, topology, CPU, RAM, disks, network. Read-only, time-bounded.

Each source runs through a Runner (live commands, or outputs recorded elsewhere) with a per-command
limit, and the whole inventory checks a deadline between sources, so a machine full of hanging tools
still answers within `timeout_s` x (number of commands). A missing or failing source leaves its
fields unknown (None) and is listed in `sources` with its status.
"""

from __future__ import annotations

import time
from pathlib import Path

from gpuquote.i18n import Msg
from gpuquote.probe import amd, host, nvidia
from gpuquote.probe.run import DEFAULT_TIMEOUT_S, CmdResult, Runner, live_runner

NVSMI_Q = ("nvidia-smi", "-q", "-x")
NVSMI_TOPO = ("nvidia-smi", "topo", "-m")
NVSMI_NVLINK = ("nvidia-smi", "nvlink", "-s")
NVSMI_L = ("nvidia-smi", "-L")
LSCPU = ("lscpu",)
ROCM_SMI = ("rocm-smi", "--showproductname", "--showmeminfo", "vram", "--showbus", "--json")
AMD_SMI = ("amd-smi", "static", "--json")


def exclusive_of(gpu: dict) -> bool | str:
    """True (whole GPU) | 'mig:<profile>' | 'shared' (vGPU) for one GPU record."""
    if (gpu.get("mig_mode") or "").lower() == "enabled":
        profiles = sorted({d.get("profile") or "?" for d in gpu.get("mig_devices", [])}) or ["?"]
        return "mig:" + "+".join(profiles)
    if (gpu.get("virtualization_mode") or "").upper() == "VGPU":
        return "shared"
    return True


class _Collector:
    def __init__(self, runner: Runner, timeout_s: float, budget_s: float):
        self.runner = runner
        self.timeout_s = timeout_s
        self.deadline = time.monotonic() + budget_s
        self.sources: list[dict] = []

    def run(self, argv: tuple[str, ...]) -> CmdResult:
        left = self.deadline - time.monotonic()
        if left <= 0.05:
            r = CmdResult(argv, "timeout", stderr="skipped: the probe's overall time bound was reached")
        else:
            r = self.runner(argv, min(self.timeout_s, left))
        self.sources.append(r.to_dict())
        return r

    def note_parse_error(self, argv: tuple[str, ...], err: Exception) -> None:
        for s in reversed(self.sources):
            if s["command"] == " ".join(argv):
                s["status"] = "unreadable"
                s["stderr"] = str(err)[:300]
                return


def _nvidia(c: _Collector, root: Path, pci: dict) -> dict:
    out: dict = {"gpus": [], "driver_version": None, "cuda_version": None, "topology": None, "nvlink": None}
    r = c.run(NVSMI_Q)
    smi = None
    if r.ok:
        try:
            smi = nvidia.parse_smi_xml(r.stdout)
        except ValueError as e:
            c.note_parse_error(NVSMI_Q, e)
    if smi is None:
        # No readable -q -x (a wedged query, a capture without it): `nvidia-smi -L` still gives count and names.
        if r.status == "timeout":
            return out
        lr = c.run(NVSMI_L)
        gpus = nvidia.parse_smi_list_gpus(lr.stdout) if lr.ok else []
        if not gpus:
            return out
    else:
        out["driver_version"], out["cuda_version"] = smi["driver_version"], smi["cuda_version"]
        gpus = smi["gpus"]
    if smi is not None and any((g.get("mig_mode") or "").lower() == "enabled" for g in gpus):
        lr = c.run(NVSMI_L)
        if lr.ok:
            profiles = nvidia.parse_smi_list(lr.stdout)
            for g in gpus:
                for d, p in zip(g["mig_devices"], profiles.get(g["index"], []), strict=False):
                    d["profile"] = p
    for g in gpus:
        g["vendor"] = "NVIDIA"
        g["identity"] = nvidia.identify(g["name"], g["memory_total_mib"], g["max_power_limit_w"]
                                        or g["default_power_limit_w"])
        g["exclusive"] = exclusive_of(g)
    out["gpus"] = gpus
    if len(gpus) >= 1:
        links: dict = {}
        tr = c.run(NVSMI_TOPO) if len(gpus) > 1 else None
        topo = None
        if tr is not None and tr.ok:
            try:
                topo = nvidia.parse_topo(tr.stdout)
                links = topo["links"]
            except ValueError as e:
                c.note_parse_error(NVSMI_TOPO, e)
        nl = c.run(NVSMI_NVLINK)
        nvl = nvidia.parse_nvlink_status(nl.stdout) if nl.ok else {}
        ids = {g["identity"]["gpu_id"] for g in gpus}
        max_links = None
        if nvl:
            max_links = max(v["link_count"] for v in nvl.values()) or None
        if max_links is None and len(ids) == 1:
            max_links = nvidia.links_per_gpu(next(iter(ids)))
        fabric = any((g.get("fabric_state") or "").lower() == "completed" for g in gpus)
        cls = nvidia.classify_intra_node(len(gpus), links, max_links, pci.get("nvswitches"), fabric)
        active = {i: [v for v in d["links"].values() if v] for i, d in nvl.items()}
        if (cls["intra_node"] == "unknown" and len(gpus) > 1 and len(nvl) == len(gpus)
                and not any(active.values()) and any(d["all_inactive"] or d["links"] for d in nvl.values())):
            # No topology matrix, but nvidia-smi itself says no GPU has an active NVLink: peers talk over PCIe.
            cls = {"intra_node": "pcie", "evidence": Msg("probe.ev.no_matrix")}
        out["topology"] = {**cls, "links_per_gpu": max_links, "nvswitch_pci_devices": pci.get("nvswitches"),
                           "fabric_completed": fabric,
                           "matrix": {f"GPU{a}-GPU{b}": v for (a, b), v in sorted(links.items()) if a < b},
                           "nics": topo["nics"] if topo else []}
        out["nvlink"] = {str(i): _nvlink_entry(nvl[i], v) for i, v in active.items()} or None
    return out


def _nvlink_entry(status: dict, active: list[float]) -> dict:
    """Active links and their GB/s for one GPU; None for both when the recorded output left links out."""
    listed_all = len(status["links"]) >= status["link_count"]
    return {"active_links": len(active) if listed_all else None,
            "gbps_per_direction": round(sum(active), 1) if listed_all else None,
            "links": status["link_count"], "all_listed": listed_all}


def _amd(c: _Collector) -> list[dict]:
    r = c.run(AMD_SMI)
    if r.ok:
        try:
            return amd.parse_amd_smi_static(r.stdout)
        except (ValueError, AttributeError, TypeError) as e:
            c.note_parse_error(AMD_SMI, e)
    r = c.run(ROCM_SMI)
    if r.ok:
        try:
            return amd.parse_rocm_smi(r.stdout)
        except (ValueError, AttributeError, TypeError) as e:
            c.note_parse_error(ROCM_SMI, e)
    return []


def _summary(gpus: list[dict], topology: dict | None) -> dict:
    if not gpus:
        return {"count": 0, "gpu_id": None, "memory_gib": None, "variant": None, "exclusive": None,
                "intra_node": None}
    ids = {g["identity"]["gpu_id"] for g in gpus}
    mems = {g["identity"]["memory_gib"] for g in gpus}
    variants = {g["identity"]["variant"] for g in gpus}
    excl = [g.get("exclusive", True) for g in gpus]
    return {"count": len(gpus), "name": gpus[0]["name"],
            "gpu_id": ids.pop() if len(ids) == 1 else "mixed",
            "memory_gib": mems.pop() if len(mems) == 1 else None,
            "variant": variants.pop() if len(variants) == 1 else None,
            "exclusive": True if all(e is True for e in excl) else next(e for e in excl if e is not True),
            "intra_node": (topology or {}).get("intra_node") if len(gpus) > 1 else "none"}


#: Default bound on the whole inventory, seconds (every command together).
INVENTORY_TIMEOUT_S = 60.0


def collect(runner: Runner = live_runner, root: str | Path = "/", timeout_s: float = INVENTORY_TIMEOUT_S,
            per_command_s: float = DEFAULT_TIMEOUT_S) -> dict:
    """The machine's inventory as a JSON-ready dict (see docs/probe.md for every key).

    timeout_s bounds all commands together; each one also gets at most per_command_s.
    """
    root = Path(root)
    c = _Collector(runner, min(per_command_s, timeout_s), budget_s=timeout_s)
    pci = host.pci_devices(root)
    nv = _nvidia(c, root, pci)
    gpus = nv["gpus"]
    if not gpus and (pci["amd_gpus"] or runner is not live_runner):
        gpus = _amd(c)
    lscpu = c.run(LSCPU)
    cpu = host.cpu_info(root, lscpu.stdout if lscpu.ok else None)
    ram = host.ram_info(root)
    disks = host.disk_info(root)
    net = host.network_info(root)
    return {
        "gpus": gpus,
        "gpu_summary": _summary(gpus, nv["topology"]),
        "topology": nv["topology"],
        "nvlink": nv["nvlink"],
        "driver": {"driver_version": nv["driver_version"], "cuda_version": nv["cuda_version"]},
        "pci": pci,
        "cpu": cpu,
        "memory": ram,
        "storage": disks,
        "network": net,
        "sources": c.sources,
    }
