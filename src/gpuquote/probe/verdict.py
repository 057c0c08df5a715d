"""Compare what the probe found with what a quote promised: the 10 checklist items.

Each item is `confirmed`, `differs` (both values given) or `unverifiable` (the quote does not say,
or the machine cannot show it). Quantities the machine has more of than quoted (RAM, NVMe, cores,
network) are confirmed with a note; GPU facts (model, memory, form, count, slicing, links) must match.

The quote is a plain mapping with the fields of DESIGN.md section 3 (`gpu`, `gpu_count`, `exclusive`,
`intra_node`, `cpu {model, cores}`, `ram_gb`, `nvme {capacity_tb}`, `network {kind, gbps_per_node}`,
`covers`); `load_quote` reads one from a quote file and can be swapped for the offers.quotes parser.
"""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path
from typing import Any

from gpuquote.errors import BadInput
from gpuquote.hardware import load_gpus, try_resolve
from gpuquote.i18n import Msg, join
from gpuquote.offers.checklist import CHECKLIST_ITEMS

# The ten checklist items, numbered and named as in offers.checklist (the quote check and the probe agree).
ITEMS = dict(CHECKLIST_ITEMS)
STATUSES = ("confirmed", "differs", "unverifiable")

#: Tolerances. RAM: the kernel's MemTotal is 1-4 % under the installed DIMMs, and a vendor's "GB" may be
#: GiB or 10^9 B (7 %); NVMe: vendors label decimal TB and partitions round; network: link rates are exact.
RAM_MIN_RATIO = 0.85
NVME_MIN_RATIO = 0.95
NET_MIN_RATIO = 0.95
MORE_RATIO = 1.10


# --- quote file ------------------------------------------------------------------------------------------------

def _cell(v: str) -> Any:
    import yaml

    v = v.strip()
    if v == "":
        return None
    try:
        return yaml.safe_load(v)
    except yaml.YAMLError:
        return v


def _read_quotes(path: Path) -> list[dict]:

    try:
        text = path.read_text(encoding="utf-8")
    except OSError as e:
        raise BadInput(f"quote: cannot read {path}: {e.strerror}", field="quote") from None
    if path.suffix.lower() == ".csv":
        rows = []
        for row in csv.DictReader(io.StringIO(text)):
            q: dict = {}
            for k, v in row.items():
                if k is None:
                    continue
                val = _cell(v or "")
                if val is None:
                    continue
                parts = k.strip().split(".")
                d = q
                for p in parts[:-1]:
                    d = d.setdefault(p, {})
                d[parts[-1]] = val
            rows.append(q)
        return rows
    from gpuquote.safeload import load_yaml

    data = load_yaml(text, "quote")
    if isinstance(data, dict) and isinstance(data.get("quotes"), list):
        return [q for q in data["quotes"] if isinstance(q, dict)]
    if isinstance(data, list):
        return [q for q in data if isinstance(q, dict)]
    if isinstance(data, dict) and "gpu" in data:
        return [data]
    raise BadInput(f"quote: {path} has no 'quotes:' list", field="quote", accepted=["quotes: [...]"])


def load_quote(path: str | Path, quote_id: str | None = None) -> dict:
    """One quote from a YAML/CSV quote file; `quote_id` may be omitted when the file holds one quote."""
    quotes = _read_quotes(Path(path))
    ids = [str(q.get("id")) for q in quotes if q.get("id") is not None]
    if quote_id is None:
        if len(quotes) == 1:
            return quotes[0]
        raise BadInput(f"id: {path} holds {len(quotes)} quotes; choose one with --id ({', '.join(ids)})",
                       field="id", accepted=ids)
    for q in quotes:
        if str(q.get("id")) == quote_id:
            return q
    raise BadInput(f"id: no quote '{quote_id}' in {path}; accepted: {', '.join(ids) or '(none)'}",
                   field="id", accepted=ids)


# --- comparison ------------------------------------------------------------------------------------------------

def _item(n: int, status: str, quoted: Any, found: Any, note: str | None = None) -> dict:
    return {"item": n, "name": ITEMS[n], "status": status, "quoted": quoted, "found": found, "note": note}


def _norm_exclusive(v: Any) -> bool | str | None:
    if v is None:
        return None
    if v is True or str(v).strip().lower() in ("true", "yes", "exclusive", "dedicated", "1"):
        return True
    s = str(v).strip().lower()
    if s in ("unknown", ""):
        return None
    if s.startswith("mig"):
        return "mig:" + s.split(":", 1)[1].strip() if ":" in s else "mig:?"
    return "shared"


def _check_gpu(q: dict, inv: dict) -> list[dict]:
    s = inv["gpu_summary"]
    count = s["count"]
    out = []
    res = try_resolve(str(q["gpu"])) if q.get("gpu") else None
    found_id = s.get("gpu_id")
    found_mem = s.get("memory_gib")
    gpus = load_gpus()
    # 1: memory (and the model it belongs to)
    found_txt = f"{found_id} ({found_mem:g} GB)" if found_id and found_mem else (found_id or None)
    if count == 0:
        out.append(_item(1, "unverifiable", q.get("gpu"), None, Msg("probe.v.no_gpu")))
    elif res is None:
        out.append(_item(1, "unverifiable", q.get("gpu"), found_txt,
                         Msg("probe.v.gpu_not_in_catalog") if q.get("gpu") else Msg("probe.v.no_gpu_named")))
    else:
        q_fams = {gpus[m].family for m in res.members}
        f_fam = gpus[found_id].family if found_id in gpus else None
        q_txt = f"{res.id} ({res.memory_gib:g} GB)" if res.memory_gib else res.id
        if f_fam and f_fam not in q_fams:
            note = Msg("probe.v.family_differs", quoted="/".join(sorted(q_fams)), found=f_fam)
            out.append(_item(1, "differs", q_txt, found_txt, note))
        elif res.memory_gib is None:
            out.append(_item(1, "unverifiable", q_txt, found_txt, Msg("probe.v.no_memory_stated")))
        elif found_mem is None:
            out.append(_item(1, "unverifiable", q_txt, found_txt, Msg("probe.v.memory_unreadable")))
        elif abs(found_mem - res.memory_gib) <= 0.07 * res.memory_gib:
            out.append(_item(1, "confirmed", q_txt, found_txt))
        else:
            out.append(_item(1, "differs", q_txt, found_txt))
    # 2: form factor
    q_var = res.variant if res else None
    f_var = s.get("variant")
    if count == 0:
        out.append(_item(2, "unverifiable", q_var, None, Msg("probe.v.no_gpu")))
    elif q_var is None:
        out.append(_item(2, "unverifiable", None, f_var, Msg("probe.v.no_form_stated")))
    elif f_var is None:
        out.append(_item(2, "unverifiable", q_var, None, Msg("probe.v.form_unknown")))
    else:
        out.append(_item(2, "confirmed" if q_var == f_var else "differs", q_var, f_var))
    # 3: count
    qc = q.get("gpu_count")
    if qc is None:
        out.append(_item(3, "unverifiable", None, count, Msg("probe.v.no_count_stated")))
    else:
        out.append(_item(3, "confirmed" if int(qc) == count else "differs", int(qc), count))
    # 4: exclusive
    qe = _norm_exclusive(q.get("exclusive"))
    fe = s.get("exclusive")
    if count == 0:
        out.append(_item(4, "unverifiable", q.get("exclusive"), None, Msg("probe.v.no_gpu")))
    elif qe is None:
        out.append(_item(4, "unverifiable", q.get("exclusive"), fe, Msg("probe.v.exclusive_not_stated")))
    elif qe is True:
        out.append(_item(4, "confirmed" if fe is True else "differs", True, fe,
                         None if fe is True else Msg("probe.v.sliced")))
    elif qe == "shared":
        out.append(_item(4, "confirmed", "shared", fe, Msg("probe.v.time_slicing_invisible") if fe is True else None))
    else:  # a MIG profile
        ok = isinstance(fe, str) and fe.startswith("mig:") and (qe == "mig:?" or fe == qe or "?" in fe)
        out.append(_item(4, "confirmed" if ok else "differs", qe, fe))
    # 5: intra-node links
    qi = (str(q["intra_node"]).lower() if q.get("intra_node") else None)
    fi = s.get("intra_node")
    ev = (inv.get("topology") or {}).get("evidence")
    if qi in (None, "unknown"):
        out.append(_item(5, "unverifiable", qi, fi, Msg("probe.v.no_intra_stated")))
    elif count == 0:
        out.append(_item(5, "unverifiable", qi, None, Msg("probe.v.no_gpu")))
    elif fi in (None, "unknown"):
        out.append(_item(5, "unverifiable", qi, fi, ev or Msg("probe.v.topology_unreadable")))
    elif qi == fi:
        out.append(_item(5, "confirmed", qi, fi, ev))
    elif qi == "nvlink" and fi == "nvswitch":
        out.append(_item(5, "confirmed", qi, fi, Msg("probe.v.nvswitch_more")))
    else:
        out.append(_item(5, "differs", qi, fi, ev))
    return out


_MODEL_NUM = re.compile(r"\b(\d{3,5}[a-z]{0,2})\b", re.I)


def _check_cpu(q: dict, inv: dict) -> dict:
    qc = q.get("cpu") if isinstance(q.get("cpu"), dict) else ({"model": q["cpu"]} if q.get("cpu") else {})
    cpu = inv["cpu"]
    found = {"model": cpu.get("model"), "sockets": cpu.get("sockets"), "cores": cpu.get("cores"),
             "threads": cpu.get("threads")}
    if not qc:
        return _item(6, "unverifiable", None, found, Msg("probe.v.no_cpu_stated"))
    notes, verdicts = [], []
    q_model = str(qc.get("model") or "")
    q_nums = {n.lower() for n in _MODEL_NUM.findall(q_model)} if q_model else set()
    f_nums = {n.lower() for n in _MODEL_NUM.findall(found["model"] or "")}
    if q_nums:
        if not f_nums:
            notes.append(Msg("probe.v.cpu_masked"))
        elif q_nums & f_nums:
            verdicts.append(True)
        else:
            verdicts.append(False)
            notes.append(Msg("probe.v.cpu_model_differs", quoted=", ".join(sorted(q_nums)), found=found["model"]))
    qcores = qc.get("cores")
    if qcores:
        qcores = int(qcores)
        have = [v for v in (found["cores"], found["threads"]) if v]
        if not have:
            notes.append(Msg("probe.v.cores_unreadable"))
        elif qcores in have or max(have) >= qcores:
            verdicts.append(True)
            if found["cores"] and found["cores"] != qcores and found["threads"] == qcores:
                notes.append(Msg("probe.v.cores_logical", n=qcores, physical=found["cores"]))
        else:
            verdicts.append(False)
            notes.append(Msg("probe.v.cores_differ", n=qcores, physical=found["cores"], logical=found["threads"]))
    status = "unverifiable" if not verdicts else ("confirmed" if all(verdicts) else "differs")
    return _item(6, status, qc, found, join("; ", notes) if notes else None)


def _ratio_item(n: int, quoted: float | None, found: float | None, min_ratio: float, unit: str,
                what: str) -> dict:
    if not quoted:
        return _item(n, "unverifiable", quoted, found, Msg("probe.v.not_stated", what=what))
    if found is None:
        return _item(n, "unverifiable", quoted, None, Msg("probe.v.unreadable", what=what))
    r = found / float(quoted)
    if r < min_ratio:
        return _item(n, "differs", quoted, found, Msg("probe.v.ratio_low", found=f"{found:g}", unit=unit,
                                                          ratio=f"{r:.0%}", quoted=f"{quoted:g}"))
    return _item(n, "confirmed", quoted, found, (Msg("probe.v.more_than_quoted_ratio", ratio=f"{r:.0%}")
                                                    if r > MORE_RATIO else None))


def _check_nvme(q: dict, inv: dict) -> dict:
    nv = q.get("nvme") if isinstance(q.get("nvme"), dict) else {}
    qtb = nv.get("capacity_tb") if nv else None
    st = inv["storage"]
    if not qtb:
        return _item(8, "unverifiable", qtb, st.get("nvme_total_tb"), Msg("probe.v.no_nvme_stated"))
    if st.get("source") is None:
        return _item(8, "unverifiable", qtb, None, Msg("probe.v.disks_unreadable"))
    data, total = st.get("nvme_data_tb") or 0.0, st.get("nvme_total_tb") or 0.0
    if data >= NVME_MIN_RATIO * qtb:
        return _item(8, "confirmed", qtb, data, Msg("probe.v.more_than_quoted") if data > MORE_RATIO * qtb else None)
    if total >= NVME_MIN_RATIO * qtb:
        return _item(8, "confirmed", qtb, total, Msg("probe.v.system_disk_counted"))
    return _item(8, "differs", qtb, total, Msg("probe.v.nvme_found", n=st.get("nvme_count", 0), tb=f"{total:g}"))


def _check_network(q: dict, inv: dict) -> dict:
    qn = q.get("network") if isinstance(q.get("network"), dict) else {}
    net = inv["network"]
    found = {"kind": net.get("kind"), "gbps_per_node": net.get("gbps_per_node")}
    if not qn or not qn.get("kind"):
        return _item(9, "unverifiable", qn or None, found, Msg("probe.v.no_network_stated"))
    kind = str(qn["kind"]).lower()
    if kind == "none":
        return _item(9, "confirmed", qn, found, Msg("probe.v.no_network_promised"))
    if kind in ("ib", "roce") and net.get("rdma_readable") and not net.get("rdma_ports"):
        return _item(9, "differs", qn, found, Msg("probe.v.no_rdma", kind=kind))
    if found["kind"] in (None, "unknown"):
        return _item(9, "unverifiable", qn, found, Msg("probe.v.no_link_speed"))
    if kind != found["kind"]:
        return _item(9, "differs", qn, found, Msg("probe.v.network_differs", kind=kind, found=found["kind"]))
    if not qn.get("gbps_per_node"):
        return _item(9, "confirmed", qn, found)
    it = _ratio_item(9, float(qn["gbps_per_node"]), found["gbps_per_node"], NET_MIN_RATIO, "Gb/s",
                     Msg("probe.v.what.network_speed"))
    it["quoted"], it["found"] = qn, found
    return it


def compare(quote: dict, inventory: dict) -> list[dict]:
    """The 10 checklist items for this quote against this machine's inventory."""
    items = _check_gpu(quote, inventory)
    items.append(_check_cpu(quote, inventory))
    items.append(_ratio_item(7, quote.get("ram_gb"), inventory["memory"].get("ram_gib"), RAM_MIN_RATIO, "GiB",
                             Msg("probe.v.what.ram")))
    items.append(_check_nvme(quote, inventory))
    items.append(_check_network(quote, inventory))
    items.append(_item(10, "unverifiable", quote.get("covers"), None,
                       Msg("probe.v.covers_contract")))
    return items


def exit_code(items: list[dict]) -> int:
    """0 when everything checkable is confirmed, 3 when something differs."""
    return 3 if any(i["status"] == "differs" for i in items) else 0
