"""Pure readers of the host: CPU, RAM, disks, network, PCI devices.

Every function takes `root` (default "/") and reads files below it, so a test (or `--root`) can
point at a copied or recorded tree. Nothing here writes anything or runs a command.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

#: NVMe models that are network volumes presented as NVMe, not local disks (EBS, GCP persistent disk).
NETWORK_NVME_MODELS = re.compile(r"elastic block store|persistentdisk|nvme_card-pd|azure.*disk", re.I)


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except (OSError, ValueError):
        return None


def _read_strip(path: Path) -> str | None:
    v = _read(path)
    return v.strip() if v is not None else None


# --- CPU -------------------------------------------------------------------------------------------------------

def parse_cpuinfo(text: str) -> dict:
    """/proc/cpuinfo -> model, sockets, physical cores, logical CPUs (sockets/cores None when not stated)."""
    blocks = [b for b in re.split(r"\n\s*\n", text) if b.strip()]
    models: list[str] = []
    phys: set[tuple[str, str]] = set()
    sockets: set[str] = set()
    logical = 0
    has_topology = True
    for b in blocks:
        kv = {}
        for line in b.splitlines():
            if ":" in line:
                k, _, v = line.partition(":")
                kv[k.strip().lower()] = v.strip()
        if "processor" not in kv:
            continue
        logical += 1
        model = kv.get("model name") or kv.get("cpu model") or kv.get("hardware")
        if model and model not in models:
            models.append(model)
        if "physical id" in kv and "core id" in kv:
            sockets.add(kv["physical id"])
            phys.add((kv["physical id"], kv["core id"]))
        else:
            has_topology = False
    return {"model": models[0] if models else None, "models": models,
            "sockets": len(sockets) if has_topology and sockets else None,
            "cores": len(phys) if has_topology and phys else None, "threads": logical or None}


def parse_lscpu(text: str) -> dict:
    """`lscpu` text -> model, sockets, cores, threads (fills what /proc/cpuinfo leaves open, e.g. on ARM)."""
    kv = {}
    for line in text.splitlines():
        if ":" in line:
            k, _, v = line.partition(":")
            kv.setdefault(k.strip(), v.strip())

    def num(k: str) -> int | None:
        m = re.match(r"\d+", kv.get(k, ""))
        return int(m.group()) if m else None

    sockets = num("Socket(s)")
    per_socket = num("Core(s) per socket") or num("Core(s) per cluster")
    return {"model": kv.get("Model name"), "sockets": sockets,
            "cores": sockets * per_socket if sockets and per_socket else None, "threads": num("CPU(s)")}


def cpu_info(root: str | Path = "/", lscpu_text: str | None = None) -> dict:
    info = parse_cpuinfo(_read(Path(root) / "proc/cpuinfo") or "")
    source = "/proc/cpuinfo" if info["threads"] else None
    if lscpu_text:
        ls = parse_lscpu(lscpu_text)
        for k in ("model", "sockets", "cores", "threads"):
            if info.get(k) is None and ls.get(k) is not None:
                info[k] = ls[k]
                source = f"{source} + lscpu" if source else "lscpu"
    info["source"] = source
    return info


# --- RAM -------------------------------------------------------------------------------------------------------

def parse_meminfo(text: str) -> dict:
    """/proc/meminfo -> MemTotal in GiB (what the kernel sees: a few % under the installed DIMMs)."""
    m = re.search(r"^MemTotal:\s+(\d+)\s*kB", text, flags=re.M)
    if not m:
        return {"ram_gib": None}
    return {"ram_gib": round(int(m.group(1)) / 2**20, 2)}


def ram_info(root: str | Path = "/") -> dict:
    return {**parse_meminfo(_read(Path(root) / "proc/meminfo") or ""), "source": "/proc/meminfo"}


# --- disks -----------------------------------------------------------------------------------------------------

def _parent_disk(dev: str) -> str:
    """nvme0n1p2 -> nvme0n1, sda3 -> sda, vda1 -> vda, md0 -> md0."""
    m = re.fullmatch(r"(nvme\d+n\d+|mmcblk\d+)p\d+", dev)
    if m:
        return m.group(1)
    m = re.fullmatch(r"((?:s|v|xv|h)d[a-z]+)\d+", dev)
    return m.group(1) if m else dev


def _system_disks(root: Path) -> set[str]:
    """Disks under '/' (through LVM/md/dm slaves): the OS disk is not the data NVMe a quote promises."""
    mounts = _read(root / "proc/mounts") or _read(root / "proc/self/mounts") or ""
    devs = [ln.split()[0] for ln in mounts.splitlines() if len(ln.split()) > 1 and ln.split()[1] in ("/", "/boot")]
    out: set[str] = set()

    def walk(name: str, depth: int = 0) -> None:
        if depth > 6:
            return
        base = _parent_disk(name)
        slaves = root / "sys/block" / base / "slaves"
        if slaves.is_dir() and any(slaves.iterdir()):
            for s in slaves.iterdir():
                walk(s.name, depth + 1)
        else:
            out.add(base)

    for d in devs:
        if not d.startswith("/dev/"):
            continue
        name = d[5:]
        if name.startswith("mapper/"):
            for dm in (root / "sys/block").glob("dm-*"):
                if _read_strip(dm / "dm/name") == name[7:]:
                    name = dm.name
                    break
        walk(name)
    return out


def disk_info(root: str | Path = "/") -> dict:
    """Block disks from /sys/block: size, model, NVMe or not, rotational, system disk or data disk."""
    root = Path(root)
    block = root / "sys/block"
    disks = []
    system = _system_disks(root)
    if block.is_dir():
        for d in sorted(block.iterdir(), key=lambda p: p.name):
            name = d.name
            if re.match(r"(loop|ram|zram|dm-|md|sr|fd|nbd)", name) or re.fullmatch(r"nvme\d+c\d+n\d+", name):
                continue
            sectors = _read_strip(d / "size")
            if not sectors or not sectors.isdigit() or int(sectors) == 0:
                continue
            size_b = int(sectors) * 512  # /sys/block/*/size is always in 512-byte units
            model = _read_strip(d / "device/model")
            nvme = name.startswith("nvme")
            network = bool(model and NETWORK_NVME_MODELS.search(model))
            disks.append({"name": name, "model": model, "size_gib": round(size_b / 2**30, 1),
                          "size_tb": round(size_b / 1e12, 3), "nvme": nvme, "network_volume": network,
                          "rotational": _read_strip(d / "queue/rotational") == "1", "system": name in system})
    local_nvme = [x for x in disks if x["nvme"] and not x["network_volume"]]
    data_nvme = [x for x in local_nvme if not x["system"]]
    return {"disks": disks,
            "nvme_count": len(local_nvme),
            "nvme_total_tb": round(sum(x["size_tb"] for x in local_nvme), 3),
            "nvme_data_tb": round(sum(x["size_tb"] for x in data_nvme), 3),
            "nvme_total_gib": round(sum(x["size_gib"] for x in local_nvme), 1),
            "source": "/sys/block" if block.is_dir() else None}


def parse_lsblk(text: str) -> list[dict]:
    """`lsblk -J -b -d -o NAME,SIZE,MODEL,TRAN,TYPE,ROTA` -> disks (used when /sys/block is not readable)."""
    data = json.loads(text)
    out = []
    for d in data.get("blockdevices", []):
        if d.get("type") != "disk" or not d.get("size"):
            continue
        size = int(d["size"])
        model = (d.get("model") or "").strip() or None
        nvme = d.get("tran") == "nvme" or str(d.get("name", "")).startswith("nvme")
        out.append({"name": d.get("name"), "model": model, "size_gib": round(size / 2**30, 1),
                    "size_tb": round(size / 1e12, 3), "nvme": nvme,
                    "network_volume": bool(model and NETWORK_NVME_MODELS.search(model)),
                    "rotational": d.get("rota") in (True, "1", 1), "system": False})
    return out


# --- network ---------------------------------------------------------------------------------------------------

def _rate_gbps(text: str | None) -> float | None:
    """'200 Gb/sec (4X HDR)' -> 200.0."""
    if not text:
        return None
    m = re.match(r"\s*(\d+(?:\.\d+)?)\s*Gb/sec", text)
    return float(m.group(1)) if m else None


def network_info(root: str | Path = "/") -> dict:
    """Physical NICs (/sys/class/net) and RDMA ports (/sys/class/infiniband) with speeds and link layers.

    kind: ib when an active RDMA port runs InfiniBand; roce when active RDMA ports run Ethernet;
    ethernet otherwise. gbps_per_node sums the active ports of that kind.
    """
    root = Path(root)
    nics = []
    net = root / "sys/class/net"
    if net.is_dir():
        for d in sorted(net.iterdir(), key=lambda p: p.name):
            if d.name == "lo" or not (d / "device").exists():
                continue  # virtual interfaces (bridges, veth, bonds, ifb) have no device
            speed = _read_strip(d / "speed")
            mbps = int(speed) if speed and speed.lstrip("-").isdigit() and int(speed) > 0 else None
            nics.append({"name": d.name, "type": "infiniband" if _read_strip(d / "type") == "32" else "ethernet",
                         "state": _read_strip(d / "operstate"), "gbps": mbps / 1000 if mbps else None})
    ports = []
    ib = root / "sys/class/infiniband"
    if ib.is_dir():
        for dev in sorted(ib.iterdir(), key=lambda p: p.name):
            for p in sorted((dev / "ports").glob("*"), key=lambda p: p.name):
                state = _read_strip(p / "state") or ""
                ports.append({"device": dev.name, "port": p.name,
                              "link_layer": _read_strip(p / "link_layer"),
                              "state": state.split(":")[-1].strip() or None,
                              "gbps": _rate_gbps(_read_strip(p / "rate"))})
    active = [p for p in ports if p["state"] == "ACTIVE" and p["gbps"]]
    ib_ports = [p for p in active if (p["link_layer"] or "").lower() == "infiniband"]
    roce_ports = [p for p in active if (p["link_layer"] or "").lower() == "ethernet"]
    eth = [n for n in nics if n["type"] == "ethernet" and n["state"] == "up" and n["gbps"]]
    if ib_ports:
        kind, gbps = "ib", sum(p["gbps"] for p in ib_ports)
    elif roce_ports:
        kind, gbps = "roce", sum(p["gbps"] for p in roce_ports)
    elif eth:
        kind, gbps = "ethernet", sum(n["gbps"] for n in eth)
    else:
        kind, gbps = "unknown", None  # a VM NIC often reports no speed
    return {"kind": kind, "gbps_per_node": gbps, "nics": nics, "rdma_ports": ports,
            "rdma_readable": (root / "sys/class").is_dir(),
            "source": "/sys/class/net, /sys/class/infiniband"}


# --- PCI -------------------------------------------------------------------------------------------------------

def pci_devices(root: str | Path = "/") -> dict:
    """GPUs and NVSwitches seen on the PCI bus (counts even without a driver; a container may see the host's)."""
    base = Path(root) / "sys/bus/pci/devices"
    nvidia_gpus = amd_gpus = nvswitches = 0
    if base.is_dir():
        for d in base.iterdir():
            vendor = (_read_strip(d / "vendor") or "").lower()
            cls = (_read_strip(d / "class") or "").lower()
            if vendor == "0x10de" and cls[:6] in ("0x0302", "0x0300"):
                nvidia_gpus += 1
            elif vendor == "0x10de" and cls[:6] == "0x0680":
                nvswitches += 1
            elif vendor == "0x1002" and cls[:6] in ("0x0380", "0x0302", "0x0300") and (d / "drm").exists():
                amd_gpus += 1
    return {"nvidia_gpus": nvidia_gpus, "amd_gpus": amd_gpus, "nvswitches": nvswitches,
            "source": "/sys/bus/pci/devices" if base.is_dir() else None}
