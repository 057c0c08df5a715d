"""Build src/gpuquote/data/gpus.csv from ../shared/reference/gpu_specs.csv plus src/gpuquote/data/gpus_extra.csv.

The reference table is the sourced record (see its gpu_specs.md); gpus_extra.csv adds, in the same columns and
conventions, GPUs the price catalogs sell but the reference lacks (GH200, RTX 5090, P100, ...). This script only
renames columns to gpuquote's contract (DESIGN.md section 3), adds the `family` and `form` keys the alias resolver
needs, and keeps the `source` and `notes` columns untouched. Extra rows come after the reference rows; an id in both
files is an error (the reference wins only by someone deleting the extra row on purpose).

Run: python scripts/build_gpus.py [--shared ../shared]
"""

from __future__ import annotations

import argparse
import csv
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "src" / "gpuquote" / "data" / "gpus.csv"
EXTRA = ROOT / "src" / "gpuquote" / "data" / "gpus_extra.csv"
USABLE = ROOT / "src" / "gpuquote" / "data" / "gpu_usable_memory.csv"

RENAME = {
    "memory_bandwidth_gbps": "memory_bandwidth_gbs",
    "tf32_tflops_dense": "tf32_tflops",
    "bf16_tflops_dense": "bf16_tflops",
    "fp16_tflops_dense": "fp16_tflops",
    "fp8_tflops_dense": "fp8_tflops",
    "int8_tops_dense": "int8_tops",
    "fp4_tflops_dense": "fp4_tflops",
    "nvlink_bandwidth_gbps": "nvlink_bandwidth_gbs",
    "pcie_bandwidth_gbps": "pcie_bandwidth_gbs",
    "mig_max_instances": "mig_max",
    "form_factor": "form_factor_detail",
}

COLUMNS = [
    "id", "family", "vendor", "architecture", "form_factor", "form_factor_detail", "memory_gib",
    "memory_type", "memory_bandwidth_gbs", "fp64_tflops", "fp64_tensor_tflops", "fp32_tflops",
    "tf32_tflops", "bf16_tflops", "fp16_tflops", "fp8_tflops", "int8_tops", "fp4_tflops",
    "sparsity_supported", "nvlink_gen", "nvlink_bandwidth_gbs", "pcie_gen", "pcie_bandwidth_gbs",
    "tdp_w", "mig_max", "launch_year", "source", "notes", "usable_memory_mib", "usable_memory_source",
]


def read_usable(ids: set[str]) -> dict[str, dict]:
    """Usable memory (nvidia-smi memory.total, MiB) by GPU id, each row with its source."""
    with USABLE.open(newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(ln for ln in fh if not ln.startswith("#")))
    unknown = [r["id"] for r in rows if r["id"] not in ids]
    unsourced = [r["id"] for r in rows if not r["source"].strip()]
    if unknown or unsourced:
        raise SystemExit(f"{USABLE.name}: unknown ids {unknown} or rows without a source {unsourced}")
    return {r["id"]: r for r in rows}


def form_factor(detail: str, gpu_id: str) -> str:
    """Collapse the reference's descriptive form factor to pcie | sxm | oam | other."""
    d = detail.lower()
    if "nvl" in gpu_id and "pcie" in d:
        return "pcie"
    if d.startswith("sxm") or "hgx" in d:
        return "sxm"
    if d.startswith("pcie"):
        return "pcie"
    if d.startswith("oam"):
        return "oam"
    return "other"


def family(gpu_id: str) -> str:
    """The model name without memory size or form factor: a100-80gb-sxm4 -> a100."""
    base = re.sub(r"-(\d+gb|sxm\d?|pcie|nvl|per-gpu|server|blackwell)\b", "", gpu_id)
    return base


def read_rows(path: Path) -> tuple[list[str], list[dict]]:
    with path.open(newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        return list(reader.fieldnames or []), list(reader)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--shared", default=str(ROOT.parent / "shared"))
    args = ap.parse_args()
    src = Path(args.shared) / "reference" / "gpu_specs.csv"
    ref_cols, ref_rows = read_rows(src)
    extra_cols, extra_rows = read_rows(EXTRA)
    if extra_cols != ref_cols:
        raise SystemExit(f"{EXTRA.name}: columns differ from {src.name}: {sorted(set(extra_cols) ^ set(ref_cols))}")
    clash = {r["id"] for r in ref_rows} & {r["id"] for r in extra_rows}
    if clash:
        raise SystemExit(f"{EXTRA.name}: ids already in the reference: {', '.join(sorted(clash))}")
    unsourced = [r["id"] for r in extra_rows if not r["source"].startswith("http")]
    if unsourced:
        raise SystemExit(f"{EXTRA.name}: rows without a source URL: {', '.join(unsourced)}")
    usable = read_usable({r["id"] for r in ref_rows + extra_rows})
    out = []
    for r in ref_rows + extra_rows:
        r = {RENAME.get(k, k): v for k, v in r.items()}
        r["memory_gib"] = r.pop("memory_gb")
        r["form_factor"] = form_factor(r["form_factor_detail"], r["id"])
        r["family"] = family(r["id"])
        u = usable.get(r["id"])
        r["usable_memory_mib"] = u["usable_memory_mib"] if u else ""
        r["usable_memory_source"] = (f"{u['source']} ({u['note']})" if u else
                                     "none recorded: the label memory (memory_gib x 1024 MiB) is used")
        out.append({c: r.get(c, "") for c in COLUMNS})
    with OUT.open("w", newline="", encoding="utf-8") as fh:
        fh.write(f"# generated by scripts/build_gpus.py from shared/reference/gpu_specs.csv ({len(ref_rows)} rows) "
                 f"and src/gpuquote/data/gpus_extra.csv ({len(extra_rows)} rows); "
                 "memory_gib is the vendor's GB label (NVIDIA's 40/80 GB are GiB-class), tensor TFLOPS dense; "
                 "usable_memory_mib from src/gpuquote/data/gpu_usable_memory.csv (nvidia-smi memory.total)\n")
        w = csv.DictWriter(fh, fieldnames=COLUMNS, lineterminator="\n")
        w.writeheader()
        w.writerows(out)
    print(f"wrote {OUT} ({len(out)} GPUs: {len(ref_rows)} reference + {len(extra_rows)} extra)")


if __name__ == "__main__":
    main()
