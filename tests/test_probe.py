"""gpuquote probe: parsers on recorded outputs, verdicts against quotes, time bounds, no stray writes."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gpuquote.hardware import load_gpus
from gpuquote.probe import RecordedRunner, collect, compare, host, load_quote, nvidia
from gpuquote.probe.amd import parse_amd_smi_static, parse_rocm_smi
from gpuquote.probe.bench import compare_to_peak, disk_bench, gpu_bench

SRC = Path(__file__).resolve().parents[1] / "src"
FIX = Path(__file__).parent / "fixtures" / "probe"
QUOTES = FIX / "quotes.yaml"
HGX, PCIE, MIG, H100, NOGPU = (FIX / n for n in ("hgx-a100-sxm4-8x", "a100-pcie-40gb-8x", "a100-sxm4-80gb-mig",
                                                 "h100-sxm-8x", "no-gpu"))


def inventory(folder: Path) -> dict:
    return collect(RecordedRunner(folder), folder / "root", timeout_s=10)


def by_item(items: list[dict]) -> dict[int, dict]:
    return {i["item"]: i for i in items}


# --- parsers ---------------------------------------------------------------------------------------------------

def test_smi_xml_new_schema_hgx():
    smi = nvidia.parse_smi_xml((HGX / "nvidia-smi-q-x.xml").read_text())
    assert smi["driver_version"] == "535.129.03" and smi["cuda_version"] == "12.2"
    assert len(smi["gpus"]) == 8 == smi["attached_gpus"]
    g = smi["gpus"][0]
    assert g["name"] == "NVIDIA A100-SXM4-80GB"
    assert g["memory_total_mib"] == 81920
    assert g["power_limit_w"] == 400 and g["max_power_limit_w"] == 400
    assert g["pcie"] == {"gen_current": 4, "gen_max": 4, "gen_max_host": 4, "width_current": 16, "width_max": 16}
    assert g["mig_mode"] == "Disabled" and g["mig_devices"] == []
    assert g["bus_id"] == "00000000:07:00.0" and g["ecc_mode"] == "Enabled"


def test_smi_xml_old_schema_reads_power_limit():
    smi = nvidia.parse_smi_xml((PCIE / "nvidia-smi-q-x.xml").read_text())
    g = smi["gpus"][3]
    assert g["name"] == "NVIDIA A100-PCIE-40GB"
    assert g["power_limit_w"] == 250  # <power_readings><power_limit>, before R535
    assert g["pcie"]["gen_max_host"] is None  # not printed by R470
    assert g["fabric_state"] is None


def test_smi_xml_mig_devices_and_profiles():
    smi = nvidia.parse_smi_xml((MIG / "nvidia-smi-q-x.xml").read_text())
    g = smi["gpus"][0]
    assert g["mig_mode"] == "Enabled"
    assert [(d["gpu_instance_id"], d["memory_mib"], d["sm_count"]) for d in g["mig_devices"]] == [(2, 40192, 42)]
    assert nvidia.parse_smi_list((MIG / "nvidia-smi-L.txt").read_text()) == {0: ["3g.40gb"]}


def test_smi_xml_rejects_other_text():
    with pytest.raises(ValueError):
        nvidia.parse_smi_xml("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.")
    with pytest.raises(ValueError):
        nvidia.parse_smi_xml("<?xml version='1.0'?><other/>")


def test_topo_hgx_all_nvlink_is_switched():
    topo = nvidia.parse_topo((HGX / "nvidia-smi-topo-m.txt").read_text())
    assert topo["gpus"] == [f"GPU{i}" for i in range(8)]
    assert len(topo["links"]) == 56 and set(topo["links"].values()) == {"NV12"}
    assert topo["nics"] == [f"mlx5_{k}" for k in range(12)]
    cls = nvidia.classify_intra_node(8, topo["links"], 12)
    assert cls["intra_node"] == "nvswitch"


def test_topo_with_nic_legend_and_numa_id_column():
    topo = nvidia.parse_topo((H100 / "nvidia-smi-topo-m.txt").read_text())
    assert set(topo["links"].values()) == {"NV18"}
    assert topo["nics"] == [f"mlx5_{k}" for k in range(8)]


def test_topo_pcie_only():
    topo = nvidia.parse_topo((PCIE / "nvidia-smi-topo-m.txt").read_text())
    assert topo["links"][(0, 1)] == "PIX" and topo["links"][(0, 2)] == "NODE" and topo["links"][(0, 7)] == "SYS"
    assert nvidia.classify_intra_node(8, topo["links"], 12)["intra_node"] == "pcie"


def _matrix(n: int, cell) -> dict:
    return {(a, b): cell(a, b) for a in range(n) for b in range(n) if a != b}


def test_classify_bridged_pairs_and_direct_mesh():
    bridged = _matrix(4, lambda a, b: "NV12" if a // 2 == b // 2 else "SYS")
    cls = nvidia.classify_intra_node(4, bridged, 12)
    assert cls["intra_node"] == "nvlink" and cls["partial"]
    mesh = _matrix(4, lambda a, b: "NV4")  # HGX A100 4-GPU: 3 peers x 4 links = the GPU's 12 links
    assert nvidia.classify_intra_node(4, mesh, 12)["intra_node"] == "nvlink"
    assert nvidia.classify_intra_node(4, mesh, 12, nvswitch_devices=4)["intra_node"] == "nvswitch"
    assert nvidia.classify_intra_node(1, {}, 12)["intra_node"] == "none"
    assert nvidia.classify_intra_node(2, {}, None)["intra_node"] == "unknown"


def test_nvlink_status():
    nl = nvidia.parse_nvlink_status((H100 / "nvidia-smi-nvlink-s.txt").read_text())
    assert len(nl) == 8 and nl[0]["name"] == "NVIDIA H100 80GB HBM3"
    assert len(nl[0]["links"]) == 18 and set(nl[0]["links"].values()) == {26.562}
    inactive = nvidia.parse_nvlink_status((PCIE / "nvidia-smi-nvlink-s.txt").read_text())
    assert set(inactive[0]["links"].values()) == {None}


def test_identify_narrows_family_by_power():
    gpus = load_gpus()
    sxm_w, nvl_w = gpus["h200-141gb-sxm"].tdp_w, gpus["h200-nvl-141gb"].tdp_w
    assert nvidia.identify("NVIDIA H200", 143771, sxm_w)["gpu_id"] == "h200-141gb-sxm"
    assert nvidia.identify("NVIDIA H200", 143771, nvl_w)["gpu_id"] == "h200-nvl-141gb"
    assert nvidia.identify("NVIDIA H200", 143771, None)["gpu_id"] == "h200"  # stays a family: never guessed
    assert nvidia.identify("NVIDIA H100 80GB HBM3", 81559, 700)["gpu_id"] == "h100-80gb-sxm5"
    assert nvidia.identify("Some Future GPU", 1024, None)["gpu_id"] is None


def test_host_cpu_ram_from_proc():
    cpu = host.cpu_info(HGX / "root")
    assert (cpu["model"], cpu["sockets"], cpu["cores"], cpu["threads"]) == \
        ("AMD EPYC 7742 64-Core Processor", 2, 128, 256)
    assert host.ram_info(HGX / "root")["ram_gib"] == round(1056561564 / 2**20, 2)


def test_lscpu_fills_what_cpuinfo_lacks(tmp_path):
    (tmp_path / "proc").mkdir()
    (tmp_path / "proc/cpuinfo").write_text("".join(
        f"processor\t: {i}\nBogoMIPS\t: 2000.00\nFeatures\t: fp asimd evtstrm\nCPU implementer\t: 0x41\n"
        f"CPU part\t: 0xd4f\n\n" for i in range(72)))
    lscpu = ("Architecture:             aarch64\nCPU(s):                   72\nVendor ID:                ARM\n"
             "Model name:               Neoverse-V2\nThread(s) per core:      1\nCore(s) per socket:      72\n"
             "Socket(s):                1\n")
    cpu = host.cpu_info(tmp_path, lscpu)
    assert (cpu["model"], cpu["sockets"], cpu["cores"], cpu["threads"]) == ("Neoverse-V2", 1, 72, 72)


def test_disks_split_system_from_data():
    d = host.disk_info(HGX / "root")  # / on md0 = nvme0n1p2 + nvme1n1p2
    system = {x["name"] for x in d["disks"] if x["system"]}
    assert system == {"nvme0n1", "nvme1n1"}
    assert d["nvme_count"] == 6 and d["nvme_data_tb"] == pytest.approx(4 * 3.840755982336, abs=0.01)
    h = host.disk_info(H100 / "root")  # / on LVM (dm-0 'vg0-root') on md127 on nvme0n1p2 + nvme1n1p2
    assert {x["name"] for x in h["disks"] if x["system"]} == {"nvme0n1", "nvme1n1"}
    vm = host.disk_info(MIG / "root")  # a persistent disk is a network volume, never local NVMe
    assert vm["nvme_count"] == 0


def test_network_kinds():
    assert (host.network_info(HGX / "root")["kind"], host.network_info(HGX / "root")["gbps_per_node"]) == ("ib", 1600)
    assert host.network_info(PCIE / "root")["kind"] == "roce"
    no = host.network_info(NOGPU / "root")
    assert (no["kind"], no["gbps_per_node"]) == ("ethernet", 10)  # the down port is not counted
    assert host.network_info(MIG / "root")["kind"] == "unknown"  # virtio NIC reports no speed


def test_amd_parsers():
    rocm = json.dumps({"card0": {"Card Series": "AMD Instinct MI300X OAM", "Card model": "0x74a1",
                                 "VRAM Total Memory (B)": "206141652992", "PCI Bus": "0000:11:00.0"}})
    g = parse_rocm_smi(rocm)
    assert len(g) == 1 and g[0]["identity"]["gpu_id"] == "mi300x" and g[0]["memory_total_mib"] == 196592
    amd = json.dumps([{"gpu": 0, "asic": {"market_name": "AMD Instinct MI300X"}, "bus": {"bdf": "0000:11:00.0"},
                       "vram": {"type": "HBM", "size": {"value": 196592, "unit": "MB"}}}])
    assert parse_amd_smi_static(amd)[0]["identity"]["gpu_id"] == "mi300x"


# --- verdicts on the recorded machines -------------------------------------------------------------------------

def test_hgx_matches_its_quote():
    items = by_item(compare(load_quote(QUOTES, "hgx-a100-80-sxm-8x"), inventory(HGX)))
    assert [items[n]["status"] for n in range(1, 10)] == ["confirmed"] * 9
    assert items[10]["status"] == "unverifiable"
    assert items[7]["found"] == pytest.approx(1007.62, abs=0.01)


def test_pcie_topology_under_nvswitch_quote_differs_and_40gb_under_80gb_differs():
    items = by_item(compare(load_quote(QUOTES, "pcie-a100-80-8x-nvswitch"), inventory(PCIE)))
    assert items[5]["status"] == "differs" and (items[5]["quoted"], items[5]["found"]) == ("nvswitch", "pcie")
    assert items[1]["status"] == "differs"
    assert "80" in items[1]["quoted"] and "40" in items[1]["found"]
    assert items[2]["status"] == "confirmed"  # PCIe both
    assert items[3]["status"] == "confirmed"


def test_mig_instance_under_exclusive_quote_differs():
    inv = inventory(MIG)
    items = by_item(compare(load_quote(QUOTES, "one-a100-80-exclusive"), inv))
    assert items[4]["status"] == "differs" and items[4]["found"] == "mig:3g.40gb"
    assert items[1]["status"] == "confirmed"  # the card itself is the 80 GB one
    assert items[5]["status"] == "unverifiable"  # quote says unknown
    assert items[6]["status"] == "confirmed" and "logical" in items[6]["note"]
    same = by_item(compare(load_quote(QUOTES, "one-a100-mig-3g"), inv))
    assert same[4]["status"] == "confirmed"


def test_h100_node_and_wrong_model():
    inv = inventory(H100)
    assert inv["gpu_summary"]["intra_node"] == "nvswitch"
    items = by_item(compare(load_quote(QUOTES, "h100-sxm-8x"), inv))
    assert {items[n]["status"] for n in range(1, 10)} == {"confirmed"}
    wrong = by_item(compare(load_quote(QUOTES, "hgx-a100-80-sxm-8x"), inv))
    assert wrong[1]["status"] == "differs" and "a100" in wrong[1]["note"]


def test_quantity_below_quote_differs():
    q = dict(load_quote(QUOTES, "hgx-a100-80-sxm-8x"), ram_gb=2048, nvme={"capacity_tb": 30.72},
             network={"kind": "ib", "gbps_per_node": 3200}, cpu={"model": "2x AMD EPYC 7763", "cores": 128})
    items = by_item(compare(q, inventory(HGX)))
    assert [items[n]["status"] for n in (6, 7, 8, 9)] == ["differs"] * 4


def test_ib_quote_on_a_machine_without_rdma_differs():
    q = load_quote(QUOTES, "hgx-a100-80-sxm-8x")
    assert by_item(compare(q, inventory(NOGPU)))[9]["status"] == "differs"  # 10 GbE only
    vm = by_item(compare(q, inventory(MIG)))[9]  # no RDMA device, NIC without speed: still a difference
    assert vm["status"] == "differs" and "RDMA" in vm["note"]


# --- the real CLI ----------------------------------------------------------------------------------------------

def test_cli_recorded_json_verdict_and_exit_code(cli):
    r = cli("probe", "--recorded", str(PCIE), "--quote", str(QUOTES), "--id", "pcie-a100-80-8x-nvswitch", "--json")
    assert r.returncode == 3, r.stderr
    data = json.loads(r.stdout)
    assert len(data["verdict"]) == 10
    assert set(data["verdict"][0]) >= {"item", "name", "status", "quoted", "found"}
    assert by_item(data["verdict"])[5]["status"] == "differs"
    assert data["exit_code"] == 3 and data["summary"]["differs"] >= 2
    ok = cli("probe", "--recorded", str(HGX), "--quote", str(QUOTES), "--id", "hgx-a100-80-sxm-8x")
    assert ok.returncode == 0, ok.stderr
    assert "confirmed" in ok.stdout and "nvswitch" in ok.stdout


def test_cli_no_gpu_recorded_against_8_gpu_quote(cli):
    r = cli("probe", "--recorded", str(NOGPU), "--quote", str(QUOTES), "--id", "hgx-a100-80-sxm-8x", "--json")
    assert r.returncode == 3
    data = json.loads(r.stdout)
    assert data["gpus"] == [] and by_item(data["verdict"])[3] == {
        "item": 3, "name": "gpu_count", "status": "differs", "quoted": 8, "found": 0, "note": None}


def _cpu_count_from_proc() -> int:
    return sum(1 for ln in Path("/proc/cpuinfo").read_text().splitlines() if ln.startswith("processor"))


def test_cli_live_on_this_machine_without_gpu(cli, tmp_path):
    empty_bin = tmp_path / "bin"
    empty_bin.mkdir()  # PATH without nvidia-smi / rocm-smi: a machine with no GPU tools
    r = cli("probe", "--json", env={"PATH": str(empty_bin)})
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    assert data["gpus"] == [] and data["gpu_summary"]["count"] == 0
    assert data["cpu"]["threads"] == _cpu_count_from_proc() == os.cpu_count()
    ram = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    assert data["memory"]["ram_gib"] == pytest.approx(ram, abs=0.01)
    q = cli("probe", "--json", "--quote", str(QUOTES), "--id", "hgx-a100-80-sxm-8x", env={"PATH": str(empty_bin)})
    assert q.returncode == 3
    assert by_item(json.loads(q.stdout)["verdict"])[3]["status"] == "differs"


def test_cli_bad_input_one_line_exit_2(cli, tmp_path):
    r = cli("probe", "--quote", str(QUOTES))
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "id:" in r.stderr and "hgx-a100-80-sxm-8x" in r.stderr
    r = cli("probe", "--quote", str(QUOTES), "--id", "nope")
    assert r.returncode == 2 and "id:" in r.stderr
    r = cli("probe", "--id", "x")
    assert r.returncode == 2 and "--quote" in r.stderr
    r = cli("probe", "--quote", str(tmp_path / "missing.yaml"))
    assert r.returncode == 2 and "quote:" in r.stderr
    r = cli("probe", "--recorded", str(tmp_path / "nothing"))
    assert r.returncode == 2 and "recorded:" in r.stderr


def test_csv_quote_gives_the_same_verdict(tmp_path):
    csv_path = tmp_path / "q.csv"
    csv_path.write_text(
        "id,gpu,gpu_count,exclusive,intra_node,cpu.model,cpu.cores,ram_gb,nvme.capacity_tb,network.kind,"
        "network.gbps_per_node,covers\n"
        'hgx,A100 80GB SXM4,8,true,nvswitch,2x AMD EPYC 7742,128,1024,15.36,ib,1600,"[power, hosting, storage]"\n')
    q_csv = load_quote(csv_path)
    q_yaml = load_quote(QUOTES, "hgx-a100-80-sxm-8x")
    inv = inventory(HGX)
    assert [i["status"] for i in compare(q_csv, inv)] == [i["status"] for i in compare(q_yaml, inv)]


# --- time bound, writes, bench ---------------------------------------------------------------------------------

def _fake_tool(folder: Path, name: str, body: str) -> None:
    p = folder / name
    p.write_text("#!/bin/sh\n" + body)
    p.chmod(p.stat().st_mode | stat.S_IEXEC)


def test_hanging_nvidia_smi_is_killed_within_the_bound(cli, tmp_path):
    bin_ = tmp_path / "bin"
    bin_.mkdir()
    pidfile = tmp_path / "pid"
    _fake_tool(bin_, "nvidia-smi", f"echo $$ > {pidfile}\nexec {shutil.which('sleep')} 60\n")
    t0 = time.monotonic()
    r = cli("probe", "--json", "--timeout", "2", env={"PATH": str(bin_)})
    elapsed = time.monotonic() - t0
    assert r.returncode == 0, r.stderr
    assert elapsed < 8, elapsed  # 2 s bound + interpreter start-up
    data = json.loads(r.stdout)
    assert data["gpus"] == []
    smi = [s for s in data["sources"] if s["command"].startswith("nvidia-smi")]
    assert smi[0]["status"] == "timeout"
    with pytest.raises(ProcessLookupError):  # the hung tool was killed, not left behind
        os.kill(int(pidfile.read_text()), 0)


def test_fake_nvidia_smi_on_path_is_parsed(cli, tmp_path):
    bin_ = tmp_path / "bin"
    bin_.mkdir()
    cat = shutil.which("cat")
    _fake_tool(bin_, "nvidia-smi", f"""case "$1" in
  -q) {cat} {HGX / 'nvidia-smi-q-x.xml'} ;;
  topo) {cat} {HGX / 'nvidia-smi-topo-m.txt'} ;;
  nvlink) {cat} {HGX / 'nvidia-smi-nvlink-s.txt'} ;;
  *) exit 9 ;;
esac
""")
    r = cli("probe", "--json", env={"PATH": f"{bin_}"})
    data = json.loads(r.stdout)
    assert data["gpu_summary"]["count"] == 8 and data["gpu_summary"]["gpu_id"] == "a100-80gb-sxm4"
    assert data["topology"]["intra_node"] == "nvswitch"


def test_probe_with_bench_writes_nothing_outside_a_temporary_dir(cli, tmp_path):
    tmp, cwd, home = tmp_path / "tmp", tmp_path / "cwd", tmp_path / "home"
    for d in (tmp, cwd, home):
        d.mkdir()
    env = dict(os.environ, TMPDIR=str(tmp), HOME=str(home), GPUQUOTE_HOME=str(home / "gq"), PATH=str(cwd),
               PYTHONPATH=str(SRC))
    r = subprocess.run([sys.executable, "-m", "gpuquote", "probe", "--json", "--bench", "--bench-seconds", "4"],
                       capture_output=True, text=True, env=env, cwd=cwd, timeout=60)
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    b = data["bench"]
    assert b["seconds"] <= 4 + 1
    assert b["disk"]["status"] in ("ok", "unavailable")
    if b["disk"]["status"] == "ok":
        assert b["disk"]["bytes_written"] > 0 and b["disk"]["read_gbs"] > 0
        assert b["disk"]["directory"] == str(tmp)
    assert b["host_memory"]["status"] == "ok" and b["host_memory"]["copy_gbs"] > 0
    assert b["gpu"]["status"] == "unavailable"
    assert list(tmp.iterdir()) == [] and list(cwd.iterdir()) == [] and list(home.iterdir()) == []


def test_disk_bench_bounded_and_cleans_up(tmp_path):
    t0 = time.monotonic()
    res = disk_bench(tmp_path, size_mib=64, seconds=2)
    assert time.monotonic() - t0 < 4
    if res["status"] == "ok":
        assert 0 < res["bytes_written"] <= 64 * 2**20 and res["bytes_read"] == res["bytes_written"]
    assert list(tmp_path.iterdir()) == []


def test_gpu_bench_child_reports_missing_torch():
    try:
        import torch  # noqa: F401
        pytest.skip("PyTorch is installed here; the GPU benchmark is checked on a GPU machine")
    except ImportError:
        pass
    res = gpu_bench(5, 60, "a100-80gb-sxm4")
    assert res["status"] == "unavailable" and "PyTorch" in res["reason"]


def test_compare_to_peak_uses_the_catalog():
    g = load_gpus()["a100-80gb-sxm4"]
    rows = {r["metric"]: r for r in compare_to_peak({"bf16_matmul_tflops": 270.0, "hbm_copy_gbs": 1700.0}, g.id)}
    assert rows["bf16_matmul_tflops"]["percent_of_peak"] == round(100 * 270 / g.bf16_tflops)
    assert f"{round(100 * 270 / g.bf16_tflops)}% of the a100-80gb-sxm4" in rows["bf16_matmul_tflops"]["text"]
    assert rows["hbm_copy_gbs"]["peak"] == g.memory_bandwidth_gbs


def test_service_json_equals_cli_json(cli):
    from gpuquote.service.probe import probe_machine

    lib = probe_machine(recorded=MIG, quote_path=QUOTES, quote_id="one-a100-80-exclusive")
    r = cli("probe", "--recorded", str(MIG), "--quote", str(QUOTES), "--id", "one-a100-80-exclusive", "--json")
    out = json.loads(r.stdout)
    for d in (lib, out):
        d.pop("probed_at")
    assert json.loads(json.dumps(lib)) == out


# --- real recorded outputs (tests/fixtures/probe/SOURCES.md names each origin) --------------------------------

REAL_MIG, REAL_H100, REAL_PCIE = (FIX / n for n in ("real-a100-sxm4-40gb-mig-gcp", "real-h100-sxm-8x-rhelai",
                                                    "real-a100-pcie-40gb-2x-hpe"))
TOPO = FIX / "real-topo"


def test_real_mig_xml_driver_510_old_layout():
    smi = nvidia.parse_smi_xml((REAL_MIG / "nvidia-smi-q-x.xml").read_text())
    assert (smi["driver_version"], smi["cuda_version"], len(smi["gpus"])) == ("510.47.03", "11.6", 1)
    g = smi["gpus"][0]
    assert g["name"] == "NVIDIA A100-SXM4-40GB" and g["memory_total_mib"] == 40960
    assert g["mig_mode"] == "Enabled" and g["virtualization_mode"] == "Pass-Through"
    assert [(d["gpu_instance_id"], d["memory_mib"], d["sm_count"]) for d in g["mig_devices"]] == \
        [(1, 19968, 42), (2, 19968, 42)]
    assert g["power_limit_w"] == 400 and g["max_power_limit_w"] == 400  # <power_readings>, before R535
    assert g["pcie"]["gen_max"] == 4 and g["pcie"]["gen_max_host"] is None and g["fabric_state"] is None


def test_real_mig_gpu_under_exclusive_80gb_quote():
    inv = inventory(REAL_MIG)
    s = inv["gpu_summary"]
    assert (s["count"], s["gpu_id"], s["memory_gib"], s["variant"]) == (1, "a100-40gb-sxm4", 40.0, "sxm")
    assert s["exclusive"].startswith("mig:")  # no -L recorded: the profile stays unknown, never guessed
    items = by_item(compare(load_quote(QUOTES, "one-a100-80-exclusive"), inv))
    assert items[4]["status"] == "differs" and items[4]["found"].startswith("mig:")
    assert items[1]["status"] == "differs" and "40" in items[1]["found"] and "80" in items[1]["quoted"]
    assert items[2]["status"] == "confirmed" and items[3]["status"] == "confirmed"


def test_real_h100_vm_from_list_topo_and_snipped_nvlink(cli):
    r = cli("probe", "--recorded", str(REAL_H100), "--quote", str(QUOTES), "--id", "h100-sxm-8x", "--json")
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    s = data["gpu_summary"]
    assert (s["count"], s["name"], s["gpu_id"], s["variant"]) == (8, "NVIDIA H100 80GB HBM3", "h100-80gb-sxm5", "sxm")
    assert s["intra_node"] == "nvswitch" and data["topology"]["links_per_gpu"] == 18
    assert all(g["source"] == "nvidia-smi -L" and g["memory_total_mib"] is None for g in data["gpus"])
    status = {x["command"]: x["status"] for x in data["sources"]}
    assert status["nvidia-smi -q -x"] == "missing" and status["nvidia-smi -L"] == "ok"
    # the pasted nvlink -s elided links 2-16: the count of active links is unknown, not 3
    assert data["nvlink"]["0"] == {"active_links": None, "gbps_per_direction": None, "links": 18, "all_listed": False}
    items = by_item(data["verdict"])
    assert [items[n]["status"] for n in (1, 2, 3, 4, 5)] == ["confirmed"] * 5


def test_real_two_a100_pcie_without_nvlink_under_nvswitch_quote():
    inv = inventory(REAL_PCIE)
    s = inv["gpu_summary"]
    assert (s["count"], s["gpu_id"], s["memory_gib"], s["intra_node"]) == (2, "a100-40gb-pcie", 40.0, "pcie")
    assert "no active NVLink" in inv["topology"]["evidence"]
    items = by_item(compare(load_quote(QUOTES, "pcie-a100-80-8x-nvswitch"), inv))
    assert (items[5]["status"], items[5]["quoted"], items[5]["found"]) == ("differs", "nvswitch", "pcie")
    assert items[1]["status"] == "differs" and items[3]["status"] == "differs"  # 40 GB of 80; 2 GPUs of 8
    assert items[2]["status"] == "confirmed"


def test_real_nvlink_status_all_inactive_and_bridge():
    none = nvidia.parse_nvlink_status((REAL_PCIE / "nvidia-smi-nvlink-s.txt").read_text())
    assert none[0] == {"name": "NVIDIA A100-PCIE-40GB", "links": {}, "link_count": 0, "all_inactive": True}
    bridge = nvidia.parse_nvlink_status((TOPO / "h100-pcie-2x-nvlink-bridge-hpe-nvlink-s.txt").read_text())
    assert bridge[1]["link_count"] == 18 and sum(1 for v in bridge[1]["links"].values() if v) == 12
    assert bridge[1]["links"][4] is None and bridge[1]["links"][15] == 26.562


def test_real_topo_dgx_a100_old_layout():
    topo = nvidia.parse_topo((TOPO / "dgx-a100-8x.txt").read_text())
    assert topo["gpus"] == [f"GPU{i}" for i in range(8)] and set(topo["links"].values()) == {"NV12"}
    assert topo["nics"] == [f"mlx5_{k}" for k in range(12)]
    cls = nvidia.classify_intra_node(8, topo["links"], nvidia.links_per_gpu("a100-80gb-sxm4"))
    assert cls["intra_node"] == "nvswitch" and "84 bonded links per GPU > 12" in cls["evidence"]


def test_real_topo_hgx_h100_blank_affinity_cells_and_nic_legend():
    topo = nvidia.parse_topo((TOPO / "hgx-h100-8x-della.txt").read_text())
    assert len(topo["links"]) == 56 and set(topo["links"].values()) == {"NV18"}
    assert topo["nics"] == [f"mlx5_{k}" for k in range(6)]
    assert nvidia.classify_intra_node(8, topo["links"], 18)["intra_node"] == "nvswitch"


def test_real_topo_pcie_pair_partial_nvlink_and_bridge():
    della = nvidia.parse_topo((TOPO / "a100-2x-pcie-della.txt").read_text())
    assert della["links"] == {(0, 1): "SYS", (1, 0): "SYS"} and della["nics"] == ["mlx5_0", "mlx5_1"]
    assert nvidia.classify_intra_node(2, della["links"], 12)["intra_node"] == "pcie"
    traverse = nvidia.parse_topo((TOPO / "v100-sxm2-4x-traverse.txt").read_text())
    cls = nvidia.classify_intra_node(4, traverse["links"], nvidia.links_per_gpu("v100-32gb-sxm2"))
    assert cls["intra_node"] == "nvlink" and cls["partial"] and "2 of 6" in cls["evidence"]
    hpe = nvidia.parse_topo((TOPO / "h100-pcie-2x-nvlink-bridge-hpe.txt").read_text())  # pasted: spaces, no tabs
    assert hpe["links"] == {(0, 1): "NV12", (1, 0): "NV12"} and hpe["nics"] == []
    assert nvidia.classify_intra_node(2, hpe["links"], 18)["intra_node"] == "nvlink"  # a bridge, not a switch


def test_topo_ansi_underlined_header_and_space_aligned_nic_names():
    header = "\t\x1b[4mGPU0\tGPU1\tNIC0\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\x1b[0m\n"
    rows = "GPU0\t X \tNV18\tPXB\t0-63\t0\t\tN/A\nGPU1\tNV18\t X \tNODE\t0-63\t0\t\tN/A\nNIC0\tPXB\tNODE\t X \n"
    topo = nvidia.parse_topo(header + rows + "\nNIC Legend:\n\n  NIC0: mlx5_0\n")
    assert topo["links"] == {(0, 1): "NV18", (1, 0): "NV18"} and topo["nics"] == ["mlx5_0"]
    spaced = ("        GPU0    GPU1    mlx5_9  mlx5_10 mlx5_11 CPU Affinity    NUMA Affinity\n"
              "GPU0     X      PIX     SYS     SYS     SYS     0-23            0\n"
              "GPU1    PIX      X      SYS     SYS     SYS     0-23            0\n")
    sp = nvidia.parse_topo(spaced)
    assert sp["nics"] == ["mlx5_9", "mlx5_10", "mlx5_11"] and sp["links"][(0, 1)] == "PIX"


def test_links_per_gpu_by_nvlink_generation():
    gpus = load_gpus()
    assert nvidia.links_per_gpu("p100-16gb-sxm2") == 4  # NVLink 1: 160 GB/s at 40 GB/s a link
    assert nvidia.links_per_gpu("v100-32gb-sxm2") == 6
    assert nvidia.links_per_gpu("a100-80gb-sxm4") == 12 and nvidia.links_per_gpu("h100-80gb-sxm5") == 18
    assert nvidia.links_per_gpu("b200-sxm") == 18  # NVLink 5: 1800 GB/s at 100 GB/s a link
    assert nvidia.links_per_gpu("a40") == 4  # GA102: 112.5 GB/s on 4 narrow links
    assert nvidia.links_per_gpu("t4") is None and nvidia.links_per_gpu("mi300x") is None
    assert gpus["p100-16gb-sxm2"].nvlink_bandwidth_gbs == 160  # the catalog figure the count is derived from
