"""Per-GPU memory read by each catalog's own convention, usable memory in the GPU catalog, plans that fit it."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime
from pathlib import Path

import pytest

from gpuquote.config import DATA_DIR
from gpuquote.hardware import load_gpus, members
from gpuquote.sources.skypilot import MEMORY_SEMANTICS, parse_path, parse_vms_csv

NOW = datetime(2026, 5, 20, tzinfo=UTC)
ROOT = Path(__file__).resolve().parents[1]
HEADER = "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Price,SpotPrice,Region\n"


def _catalog_memory(gpu_id: str) -> float | None:
    mems = {load_gpus()[m].memory_gib for m in members(gpu_id)}
    return mems.pop() if len(mems) == 1 else None


def test_every_offer_of_the_embedded_snapshot_has_its_gpu_catalog_memory():
    con = sqlite3.connect(f"file:{DATA_DIR / 'snapshot.sqlite'}?mode=ro", uri=True)
    rows = con.execute("SELECT offer_id, gpu_id, gpu_memory_gib, gpu_exclusive FROM offers").fetchall()
    assert len(rows) > 3000
    # a shared vGPU slice (Alibaba's A10*1/6, T4/4) carries the memory of its slice: never more than the card
    wrong = [(oid, gid, mem) for oid, gid, mem, excl in rows
             if (mem > _catalog_memory(gid) if excl == "shared" else mem != _catalog_memory(gid))]
    assert wrong == []
    assert any(excl == "shared" for *_, excl in rows)


def _snapshot_offers(sku_like: str) -> list[tuple]:
    con = sqlite3.connect(f"file:{DATA_DIR / 'snapshot.sqlite'}?mode=ro", uri=True)
    return con.execute("SELECT provider, sku, gpu_id, gpu_memory_gib FROM offers WHERE sku LIKE ?",
                       (sku_like,)).fetchall()


def test_the_rows_the_issue_names_get_their_real_card():
    vast = _snapshot_offers("2x-A100_PCIE-32-65536")
    assert vast and all(r[2] == "a100-40gb-pcie" and r[3] == 40 for r in vast)  # 81920 MiB is 2 x 40 GB
    for sku in ("datacrunch__2xV100_16GB%", "datacrunch__4xV100_16GB%"):
        rows = _snapshot_offers(sku)
        assert rows and all(set(members(r[2])) <= {"v100-16gb-pcie", "v100-16gb-sxm2"} and r[3] == 16 for r in rows)
    lium = [r for r in _snapshot_offers("L40S_%") if r[0] == "lium"]
    assert lium and all(r[2] == "l40s" for r in lium)  # 46080 MiB (ECC on) is the 48 GB L40S, nothing else


def _one(cloud: str, name: str, count: int, size_mib: float, sku: str = "x") -> object:
    info = f"{{'Gpus': [{{'Name': '{name}', 'Count': {count}, 'MemoryInfo': {{'SizeInMiB': {size_mib}}}}}]}}"
    res = parse_vms_csv(HEADER + f'{sku},{name},{count},32,64,"{info}",2.0,,r1\n', cloud, fetched_at=NOW, source="t")
    assert len(res.offers) == 1
    return res.offers[0]


@pytest.mark.parametrize(("cloud", "count", "size", "want"), [
    ("vast", 2, 81920, "a100-40gb"),  # vast sums over the GPUs
    ("primeintellect", 4, 327680, "a100-80gb"),
    ("lambda", 2, 81920, "a100-80gb"),  # per GPU
    ("shadeform", 8, 40, "a100-40gb"),  # GB per GPU
    ("somecloud", 1, 40960, "a100-40gb"),  # unlisted cloud, one GPU: one reading
    ("somecloud", 2, 81920, "a100"),  # unlisted cloud: 2 x 40 or 80 each? left unknown
    ("nebius", 1, 30000, "a100"),  # fits no A100: the model with memory unknown, never snapped to a larger card
])
def test_memory_convention_per_cloud(cloud, count, size, want):
    o = _one(cloud, "A100", count, size)
    assert o.gpu_id == want
    assert o.gpu_memory_gib == _catalog_memory(want)


def test_every_cloud_file_in_shared_has_a_declared_convention(shared_dir):
    base = shared_dir / "data" / "skypilot-catalog"
    clouds = {p.parent.name for p in base.glob("*/*/vms*.csv")} - {"slurm"}
    assert clouds - set(MEMORY_SEMANTICS) == set()


def test_the_wrong_memory_a_row_reports_is_never_kept(shared_dir):
    """A v8 vast RTX 4090 row says 48 GiB per GPU (a modified card?): it stays an RTX 4090 at the catalog 24 GB."""
    res = parse_path(shared_dir / "data" / "skypilot-catalog" / "v8" / "vast")[0]
    for o in res.offers:
        assert o.gpu_memory_gib == _catalog_memory(o.gpu_id), o.sku
    odd = [o for o in res.offers if any("fits no" in n for n in o.notes)]
    assert odd and all(o.gpu_id == "rtx-4090" for o in odd)


def test_usable_memory_is_in_the_catalog_with_its_source():
    gpus = load_gpus()
    assert gpus["a100-80gb-sxm4"].usable_memory_mib == 81920
    assert gpus["l40s"].usable_memory_mib == 46068 and gpus["l40s"].usable_memory_gib < 45
    assert gpus["h100-80gb-sxm5"].usable_memory_mib == 81559
    for g in gpus.values():
        assert g.usable_memory_source, g.id
        assert g.usable_memory_gib <= g.memory_gib * 1.03, g.id
        assert g.memory_matches(g.usable_memory_gib) and g.memory_matches(g.memory_gib), g.id
    assert not gpus["a100-80gb-sxm4"].memory_matches(40) and not gpus["a100-40gb-sxm4"].memory_matches(80)


def test_the_estimator_fits_jobs_in_the_usable_memory():
    from gpuquote.estimate.setup import GIB, Machine

    m = Machine(load_gpus()["l40s"], 1, 1, "none", "none", 0.0, None)
    assert m.hbm_bytes == 46068 * 2**20 and m.hbm_bytes < 48 * GIB


@pytest.mark.parametrize("job", sorted(p.name for p in (ROOT / "examples" / "jobs").glob("*.yaml")))
def test_no_plan_row_puts_more_on_a_gpu_than_its_usable_memory(job):
    from gpuquote.service.plan import plan_job

    data = plan_job(str(ROOT / "examples" / "jobs" / job), top=40)
    gpus = load_gpus()
    for r in data["rows"]:
        usable = min(gpus[m].usable_memory_gib for m in members(r["gpu_id"]))
        assert r["memory_per_gpu_gib"] <= usable + 0.01, (r["offer_id"], r["gpu_id"], r["memory_per_gpu_gib"])
