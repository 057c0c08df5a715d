"""Pure parsers for NVIDIA's tools: `nvidia-smi -q -x`, `nvidia-smi topo -m`, `nvidia-smi nvlink -s`, `-L`.

Inputs are the exact text these commands print (recorded fixtures in tests/fixtures/probe/). Field
names changed across drivers (power_readings -> gpu_power_readings at R535, power_limit ->
current_power_limit); both spellings are read. "N/A" and missing tags become None, never a guess.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from gpuquote.hardware import load_gpus, narrow, try_resolve
from gpuquote.i18n import Msg

_NUM = re.compile(r"-?\d+(?:\.\d+)?")
_ANSI = re.compile(r"\x1b\[[0-9;]*m")
#: Columns of `topo -m` that are not devices (GPU NUMA ID appeared with driver R530).
_TOPO_AFFINITY_COLS = ("CPU Affinity", "NUMA Affinity", "GPU NUMA ID")


def _text(el: ET.Element | None, path: str) -> str | None:
    if el is None:
        return None
    node = el.find(path)
    if node is None or node.text is None:
        return None
    v = node.text.strip()
    return None if v in ("", "N/A", "Unknown Error", "[N/A]") or "not supported" in v.lower() else v


def _num(v: str | None) -> float | None:
    """'81920 MiB' -> 81920.0, '400.00 W' -> 400.0, '16x' -> 16.0; None for N/A."""
    if v is None:
        return None
    m = _NUM.search(v)
    return float(m.group()) if m else None


def _first(el: ET.Element, *paths: str) -> str | None:
    for p in paths:
        v = _text(el, p)
        if v is not None:
            return v
    return None


def parse_smi_xml(text: str) -> dict:
    """Parse `nvidia-smi -q -x` into {driver_version, cuda_version, gpus: [...]}.

    Raises ValueError on text that is not nvidia-smi XML (the caller reports the source as unreadable).
    """
    text = re.sub(r"<!DOCTYPE[^>]*>", "", text, count=1)  # never resolve the referenced DTD
    try:
        root = ET.fromstring(text.strip())
    except ET.ParseError as e:
        raise ValueError(f"not nvidia-smi XML: {e}") from None
    if root.tag != "nvidia_smi_log":
        raise ValueError(f"not nvidia-smi XML: root element <{root.tag}>")
    gpus = []
    for i, g in enumerate(root.findall("gpu")):
        gpus.append(_parse_gpu(i, g))
    return {"driver_version": _text(root, "driver_version"), "cuda_version": _text(root, "cuda_version"),
            "attached_gpus": int(_num(_text(root, "attached_gpus")) or len(gpus)), "gpus": gpus}


def _parse_gpu(index: int, g: ET.Element) -> dict:
    pw = g.find("gpu_power_readings")
    if pw is None:
        pw = g.find("power_readings")  # drivers before R535
    power_limit = _num(_first(pw, "current_power_limit", "enforced_power_limit", "power_limit")) if pw is not None \
        else None
    mig_devices = []
    md = g.find("mig_devices")
    if md is not None:
        for d in md.findall("mig_device"):
            mig_devices.append({
                "index": int(_num(_text(d, "index")) or 0),
                "gpu_instance_id": _num(_text(d, "gpu_instance_id")),
                "compute_instance_id": _num(_text(d, "compute_instance_id")),
                "memory_mib": _num(_text(d, "fb_memory_usage/total")),
                "sm_count": _num(_text(d, "device_attributes/shared/multiprocessor_count")),
                "profile": None,
            })
    mem_mib = _num(_text(g, "fb_memory_usage/total"))
    name = _text(g, "product_name") or ""
    return {
        "index": index,
        "bus_id": g.get("id") or _text(g, "pci/pci_bus_id"),
        "name": name,
        "uuid": _text(g, "uuid"),
        "architecture": _text(g, "product_architecture"),
        "memory_total_mib": mem_mib,
        "mig_mode": _text(g, "mig_mode/current_mig"),
        "mig_devices": mig_devices,
        "virtualization_mode": _text(g, "gpu_virtualization_mode/virtualization_mode"),
        "compute_mode": _text(g, "compute_mode"),
        "power_limit_w": power_limit,
        "default_power_limit_w": _num(_text(pw, "default_power_limit")) if pw is not None else None,
        "max_power_limit_w": _num(_text(pw, "max_power_limit")) if pw is not None else None,
        "pcie": {
            "gen_current": _num(_text(g, "pci/pci_gpu_link_info/pcie_gen/current_link_gen")),
            "gen_max": _num(_first(g, "pci/pci_gpu_link_info/pcie_gen/max_link_gen")),
            "gen_max_host": _num(_text(g, "pci/pci_gpu_link_info/pcie_gen/max_host_link_gen")),
            "width_current": _num(_text(g, "pci/pci_gpu_link_info/link_widths/current_link_width")),
            "width_max": _num(_text(g, "pci/pci_gpu_link_info/link_widths/max_link_width")),
        },
        "ecc_mode": _text(g, "ecc_mode/current_ecc"),
        "fabric_state": _text(g, "fabric/state"),
        "vbios_version": _text(g, "vbios_version"),
    }


_L_GPU = re.compile(r"^\s*GPU (\d+): (.*?)(?: \(UUID: ([^)]*)\))?\s*$")


def parse_smi_list_gpus(text: str) -> list[dict]:
    """`nvidia-smi -L` -> one GPU record per 'GPU n: NAME (UUID: ...)' line, MIG lines as its devices.

    The fallback when `-q -x` is missing or unreadable: names and count only, so memory, power and PCIe
    stay unknown (None) and the memory comes from the catalog entry the name resolves to, if any.
    """
    gpus: list[dict] = []
    for line in text.splitlines():
        m = _L_GPU.match(line)
        if m and not line.lstrip().startswith("MIG"):
            gpus.append({"index": int(m.group(1)), "bus_id": None, "name": m.group(2).strip(), "uuid": m.group(3),
                         "architecture": None, "memory_total_mib": None, "mig_mode": None, "mig_devices": [],
                         "virtualization_mode": None, "compute_mode": None, "power_limit_w": None,
                         "default_power_limit_w": None, "max_power_limit_w": None,
                         "pcie": {"gen_current": None, "gen_max": None, "gen_max_host": None, "width_current": None,
                                  "width_max": None},
                         "ecc_mode": None, "fabric_state": None, "vbios_version": None, "source": "nvidia-smi -L"})
            continue
        m = re.match(r"\s+MIG\s+(\S+)\s+Device\s+(\d+):", line)
        if m and gpus:
            gpus[-1]["mig_mode"] = "Enabled"
            gpus[-1]["mig_devices"].append({"index": int(m.group(2)), "gpu_instance_id": None,
                                            "compute_instance_id": None, "memory_mib": None, "sm_count": None,
                                            "profile": m.group(1)})
    return gpus


def parse_smi_list(text: str) -> dict[int, list[str]]:
    """`nvidia-smi -L` -> {gpu index: [MIG profile of each MIG device]} ('MIG 3g.40gb Device 0: ...')."""
    out: dict[int, list[str]] = {}
    cur: int | None = None
    for line in text.splitlines():
        m = re.match(r"\s*GPU (\d+):", line)
        if m:
            cur = int(m.group(1))
            out.setdefault(cur, [])
            continue
        m = re.match(r"\s+MIG\s+(\S+)\s+Device\s+\d+:", line)
        if m and cur is not None:
            out[cur].append(m.group(1))
    return out


def parse_topo(text: str) -> dict:
    """`nvidia-smi topo -m` -> {gpus: [names], links: {(i, j): 'NV12'|'PIX'|...}, nics: {...}, nic_names}."""
    text = _ANSI.sub("", text)  # newer drivers underline the header row when printing to a terminal
    lines = [ln.rstrip("\n") for ln in text.splitlines()]
    # The header row starts with GPU0 (after indentation); GPU0's own row does too, but then says X (self).
    header_i = next((i for i, ln in enumerate(lines)
                     if ln.split()[:1] == ["GPU0"] and ln.split()[1:2] != ["X"]), None)
    if header_i is None:
        raise ValueError("not nvidia-smi topo -m output: no GPU0 header")
    tabbed = "\t" in lines[header_i]

    def cells(ln: str) -> list[str]:
        if tabbed:
            return [p.strip() for p in ln.split("\t")]
        # Pasted copies turn the tabs into spaces; the only names with a space in them are the affinity
        # columns, and a 7-letter NIC name ('mlx5_10') is followed by a single space, so split on any run.
        for name in _TOPO_AFFINITY_COLS:
            ln = ln.replace(name, name.replace(" ", "_"))
        return [""] + ln.split() if ln[:1].isspace() else ln.split()

    header = [c.replace("_", " ") if c.replace("_", " ") in _TOPO_AFFINITY_COLS else c
              for c in cells(lines[header_i]) if c]
    cols = [c for c in header if c not in _TOPO_AFFINITY_COLS]
    rows: dict[str, list[str]] = {}
    for ln in lines[header_i + 1:]:
        if not ln.strip() or ln.strip().startswith("Legend"):
            break
        c = cells(ln)
        c = c if c[0] else c[1:]
        rows[c[0]] = c[1:1 + len(cols)]
    gpus = [c for c in cols if re.fullmatch(r"GPU\d+", c)]
    links: dict[tuple[int, int], str] = {}
    for a in gpus:
        row = rows.get(a, [])
        for j, b in enumerate(cols):
            if b in gpus and a != b and j < len(row):
                links[(int(a[3:]), int(b[3:]))] = row[j]
    nic_names = dict(re.findall(r"^\s*(NIC\d+):\s*(\S+)", text, flags=re.M))
    nics = [nic_names.get(c, c) for c in cols if c not in gpus]
    return {"gpus": gpus, "links": links, "nics": nics}


def nv_count(cell: str) -> int:
    """'NV12' -> 12; anything else (PIX, PXB, PHB, NODE, SYS, X) -> 0."""
    m = re.fullmatch(r"NV(\d+)", cell.strip())
    return int(m.group(1)) if m else 0


def parse_nvlink_status(text: str) -> dict[int, dict]:
    """`nvidia-smi nvlink -s` -> {gpu: {name, links: {n: GB/s per direction, None if inactive}, link_count,
    all_inactive}}.

    Real outputs differ from what one might assume: a GPU without any active link prints no Link lines
    but 'NVML: Unable to retrieve NVLink information as all links are inActive' (all_inactive True);
    pasted copies may elide lines ('...<snip>...'), so link_count is the highest link number + 1,
    not the number of lines.
    """
    out: dict[int, dict] = {}
    cur: int | None = None
    for line in text.splitlines():
        m = re.match(r"\s*GPU (\d+): (.*?)(?: \(UUID: [^)]*\))?\s*$", line)
        if m:
            cur = int(m.group(1))
            out[cur] = {"name": m.group(2), "links": {}, "link_count": 0, "all_inactive": False}
            continue
        if cur is None:
            continue
        m = re.match(r"\s+Link (\d+): (.*)$", line)
        if m:
            v = m.group(2).strip()
            n = int(m.group(1))
            out[cur]["links"][n] = (_num(v) or None) if "GB/s" in v else None
            out[cur]["link_count"] = max(out[cur]["link_count"], n + 1)
        elif "all links are inactive" in line.lower():
            out[cur]["all_inactive"] = True
    return out


#: Bidirectional GB/s of one NVLink link by generation: NVLink 1 (P100) 40, NVLink 2 (V100) 50, NVLink 3 (A100) 50,
#: NVLink 4 (H100) 50, NVLink 5 (B200) 100 (NVIDIA NVLink page: P100 4 links/160 GB/s, V100 6/300, A100 12/600,
#: H100 18/900, B200 18/1800).
NVLINK_GBS_PER_LINK = {"1": 40.0, "2": 50.0, "3": 50.0, "4": 50.0, "5": 100.0}
#: GA102 boards (A40, RTX A6000/A5000, RTX 3090) carry NVLink 3 on 4 narrow links of 28.125 GB/s (112.5 GB/s per
#: the A40 datasheet), so the A100 figure would count 2 links where there are 4.
NVLINK_GBS_PER_LINK_GA102 = 28.125


def links_per_gpu(gpu_id: str | None) -> int | None:
    """NVLink links per GPU from the catalog: total bidirectional GB/s / the per-link rate of its generation.

    None when the catalog does not give an NVLink generation (PCIe-only boards, other vendors' fabrics).
    """
    if not gpu_id:
        return None
    g = load_gpus().get(gpu_id)
    if g is None or not g.nvlink_bandwidth_gbs:
        return None
    m = re.match(r"\s*(\d)\b", g.nvlink_gen or "")
    if not m or m.group(1) not in NVLINK_GBS_PER_LINK:
        return None
    per_link = NVLINK_GBS_PER_LINK[m.group(1)]
    if m.group(1) == "3" and g.nvlink_bandwidth_gbs == 4 * NVLINK_GBS_PER_LINK_GA102:
        per_link = NVLINK_GBS_PER_LINK_GA102
    return round(g.nvlink_bandwidth_gbs / per_link)


def classify_intra_node(n_gpus: int, links: dict[tuple[int, int], str], max_links: int | None,
                        nvswitch_devices: int | None = None, fabric_completed: bool = False) -> dict:
    """nvswitch | nvlink | pcie | none, with the evidence.

    A GPU has a fixed number of NVLink links (A100: 12, H100: 18). If every GPU reaches each of its
    peers over NV# links and the bonds add up to more links than one GPU has (8x A100: 7 x NV12 = 84 > 12),
    the links must go through switches. Bonds that fit the GPU's own links are a direct mesh or bridges.
    """
    if n_gpus <= 0:
        return {"intra_node": None, "evidence": Msg("probe.ev.no_gpu")}
    if n_gpus == 1:
        return {"intra_node": "none", "evidence": Msg("probe.ev.one_gpu")}
    if not links:
        return {"intra_node": "unknown", "evidence": Msg("probe.ev.unreadable")}
    per_gpu: dict[int, list[int]] = {}
    for (a, _b), cell in links.items():
        per_gpu.setdefault(a, []).append(nv_count(cell))
    nv_pairs = sum(1 for c in links.values() if nv_count(c))
    non_nv = sorted({c for c in links.values() if not nv_count(c)})
    if nv_pairs == 0:
        return {"intra_node": "pcie", "evidence": Msg("probe.ev.no_nvlink", paths=", ".join(non_nv))}
    if nv_pairs < len(links):
        return {"intra_node": "nvlink", "partial": True,
                "evidence": Msg("probe.ev.partial", n=nv_pairs // 2, total=len(links) // 2, paths=", ".join(non_nv))}
    bonds = max(sum(v) for v in per_gpu.values())
    if max_links and bonds > max_links:
        return {"intra_node": "nvswitch",
                "evidence": Msg("probe.ev.switched", bonds=bonds, max=max_links)}
    if nvswitch_devices or fabric_completed:
        return {"intra_node": "nvswitch", "evidence": Msg("probe.ev.fabric")}
    if max_links is None:
        return {"intra_node": "nvlink", "evidence": Msg("probe.ev.links_unknown")}
    return {"intra_node": "nvlink", "evidence": Msg("probe.ev.mesh", bonds=bonds, max=max_links)}


def identify(name: str, memory_mib: float | None, power_w: float | None) -> dict:
    """Catalog id, memory label and form of a GPU from its nvidia-smi name, memory and maximum power.

    The name decides where it can ('NVIDIA A100-SXM4-80GB'); a name that leaves the form open
    ('NVIDIA H200') is narrowed by memory and then by the board's power limit against the catalog TDP.
    """
    res = try_resolve(name) if name else None
    mem_gib = memory_mib / 1024 if memory_mib else None
    if res is None:
        return {"gpu_id": None, "memory_gib": round(mem_gib, 1) if mem_gib else None, "variant": None,
                "how": "name not in the catalog"}
    how = "name"
    if res.is_family and mem_gib:
        res = narrow(res.id, memory_gib=mem_gib)
        how = "name + memory"
    if res.is_family and power_w:
        gpus = load_gpus()
        close = [m for m in res.members if gpus[m].tdp_w and abs(gpus[m].tdp_w - power_w) <= 0.1 * gpus[m].tdp_w]
        if len(close) == 1:
            res = narrow(close[0])
            how += " + power limit"
    return {"gpu_id": res.id, "memory_gib": res.memory_gib if res.memory_gib else (round(mem_gib, 1) if mem_gib
            else None), "variant": res.variant, "kind": res.kind, "how": how}
