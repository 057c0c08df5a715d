"""`rfq`: the specification to send vendors, sized from the job, with the reason for every line.

The buyer's next step after `plan` is to ask several vendors for the same configuration. This module
turns a job (and its stated hardware, the `--gpu/--gpus` flags, or else the plan's best on-demand
configuration) into that specification: GPU SKU and memory, count per node and nodes, form factor and
link, exclusivity, CPU, RAM, NVMe, network, region, billing, what the price must cover, production
questions and the ten checklist items as questions. Each line carries the figure from the estimate
that justifies it. `service.rfq_doc` renders it as Markdown or as a quote-file template whose answers
go straight back into `quote check` and `plan --quotes`.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from gpuquote.errors import BadInput
from gpuquote.i18n import LANGS, Msg, current_lang, t

FORMATS = ("md", "yaml", "json")
COVERS = ("power", "hosting", "storage", "egress", "support")
#: Inter-node speeds tried for a multi-node job (Gbit/s per node, RDMA): the smallest within NET_SLACK of the
#: fastest is requested.
NET_STEPS = (100.0, 200.0, 400.0, 800.0, 1600.0, 3200.0)
NET_SLACK = 1.03
HOURS_PER_MONTH = 730.0
FORM_NAMES = {"pcie": "PCIe", "sxm": "SXM", "oam": "OAM", "other": "other"}
LINK_SHORT = {"nvswitch": "NVSwitch", "nvlink": "NVLink", "pcie": "PCIe", "none": "-"}
GIB = 2**30


def _lang(lang: str | None) -> str:
    if lang is None:
        return current_lang()
    if lang not in LANGS:
        raise BadInput(Msg("err.not_one_of", field="--lang",
                           value=lang, accepted=", ".join(LANGS)), field="lang", accepted=list(LANGS))
    return lang


def _n(v: float | None, digits: int = 0) -> str:
    """A number for prose: thousands separators, trailing zeros dropped."""
    if v is None:
        return "?"
    s = f"{v:,.{digits}f}"
    return s.rstrip("0").rstrip(".") if "." in s else s


def _hardware_from_plan(job, region: str | None) -> tuple[dict | None, dict | None]:
    """(hardware mapping, plan row) of the best on-demand offer in the current catalog, or (None, None)."""
    from gpuquote.service.plan import plan_job

    res = plan_job(job, spot=False, top=1, region=region)
    if not res["rows"]:
        return None, None
    r = res["rows"][0]
    hw: dict[str, Any] = {"gpu": r["estimated_as"], "gpus": r["gpus"], "gpus_per_node": r["gpus_per_node"]}
    if r.get("intra_node") not in (None, "unknown"):
        hw["intra_node"] = r["intra_node"]
    return hw, r


def _link_for(gpu, gpn: int) -> str:
    if gpn <= 1:
        return "none"
    if gpu.form_factor in ("sxm", "oam", "other"):
        return "nvswitch" if gpn >= 4 else "nvlink"
    return "pcie"


def build_rfq(job: dict | str | Path, *, gpu: str | None = None, gpus: int | None = None, region: str | None = None,
              currency: str | None = None, lang: str | None = None) -> dict:
    """The request for quotes for a job (see the module docstring); strings in `lang` (en | zh-CN)."""
    from gpuquote.estimate import estimate, load_job
    from gpuquote.estimate.api import checkpoint_bytes
    from gpuquote.estimate.job import merge_hardware
    from gpuquote.hardware import get_gpu
    from gpuquote.offers.currency import canonical, rate
    from gpuquote.plan.assumptions import load

    lang = _lang(lang)
    if gpus is not None and gpus < 1:
        raise BadInput(f"--gpus: must be >= 1, got {gpus}", field="gpus")
    cur = canonical(currency) if currency else ("CNY" if lang == "zh-CN" else "USD")
    rate(cur)  # an unknown currency is BadInput naming the accepted codes
    j = load_job(job)
    if j.kind == "compute" and j.arch is None and j.flops is None:
        raise BadInput("job: nothing to size", field="job")
    stated = merge_hardware(j, gpu=gpu, gpus=gpus)
    plan_row = None
    if gpu or gpus:
        basis = "flags"
        hw = stated.model_dump(exclude_none=True)
    elif stated.gpu:
        basis = "job"
        hw = stated.model_dump(exclude_none=True)
    else:
        plan_hw, plan_row = _hardware_from_plan(j, region)
        basis = "plan" if plan_hw else "default"
        hw = plan_hw or {}
    est = estimate(j.model_copy(update={"hardware": None}), hw or None)
    g = get_gpu(est.gpu)
    nodes = est.nodes
    gpn = max(1, est.gpus // max(1, nodes))
    link = hw.get("intra_node") if hw.get("intra_node") not in (None, "unknown") else _link_for(g, gpn)
    if gpn > 1 and link == "none":
        link = _link_for(g, gpn)
    A = load()["host"]
    hours = est.time_hours
    mem_need = est.memory.total / GIB
    ckpt = checkpoint_bytes(j) if j.kind == "train" else 0.0
    ckpt_node_gb = ckpt / nodes / 1e9

    def hw_with(**kw: Any) -> dict:
        base = {"gpu": est.gpu, "gpus": est.gpus, "gpus_per_node": gpn, "intra_node": link}
        base.update(kw)
        return base

    req: list[dict] = []

    def add(key: str, value: Any, text: str, reason: str) -> None:
        req.append({"key": key, "label": t(f"rfq.spec.{key}", lang), "value": value, "text": text,
                    "reason": reason})

    # 1. GPU SKU and memory
    bw = f"{_n(g.memory_bandwidth_gbs)} GB/s" if g.memory_bandwidth_gbs else "?"
    gpu_text = t("rfq.val.gpu", lang, id=g.id, mem=_n(g.memory_gib), type=g.memory_type, bw=bw)
    add("gpu", {"id": g.id, "memory_gib": g.memory_gib, "memory_type": g.memory_type,
                "memory_bandwidth_gbs": g.memory_bandwidth_gbs},
        gpu_text,
        t("rfq.why.gpu", lang, need=_n(mem_need, 1), mem=_n(g.memory_gib), layout=est.layout or "-"))
    # 2. count per node and nodes
    online = j.kind == "infer" and j.requests_per_s is not None and j.total_requests is None
    lat = est.latency or {}
    mg = est.min_gpus if est.min_gpus is not None else "?"
    count_why = (t("rfq.why.gpu_count_online", lang, min_gpus=mg, gpus=est.gpus, rps=_n(j.requests_per_s, 1),
                   ttft=_n(lat.get("ttft_ms")), tpot=_n(lat.get("tpot_ms"), 1)) if online
                 else t("rfq.why.gpu_count", lang, min_gpus=mg, gpus=est.gpus, hours=_n(hours, 1),
                        gpu_hours=_n(est.gpu_hours, 0)))
    add("gpu_count", {"gpus_per_node": gpn, "nodes": nodes, "gpus": est.gpus},
        t("rfq.val.gpu_count", lang, gpn=gpn, nodes=nodes, gpus=est.gpus), count_why)
    # 3. form factor and intra-node link
    link_reason = t("rfq.why.link_single", lang)
    if gpn > 1:
        pcie = estimate(j.model_copy(update={"hardware": None}), hw_with(intra_node="pcie"))
        if link != "pcie" and pcie.fits and pcie.time_hours > hours * 1.02:
            link_reason = t("rfq.why.link_faster", lang, link=LINK_SHORT[link], hours=_n(hours, 1),
                            pcie_hours=_n(pcie.time_hours, 1), pct=_n((pcie.time_hours / hours - 1) * 100))
        elif link == "pcie":
            link_reason = t("rfq.why.link_pcie", lang, form=FORM_NAMES.get(g.form_factor, g.form_factor))
        else:
            link_reason = t("rfq.why.link_little", lang, link=LINK_SHORT[link], pcie_hours=_n(pcie.time_hours, 1),
                            hours=_n(hours, 1))
    add("form_factor", {"form_factor": g.form_factor, "intra_node": link},
        t("rfq.val.form", lang, detail=g.form_factor_detail, link=t(f"rfq.link.{link}", lang)), link_reason)
    # 4. exclusivity
    add("exclusive", True, t("rfq.val.exclusive", lang), t("rfq.why.exclusive", lang, mem=_n(g.memory_gib)))
    # 5. CPU cores
    per_gpu = A["train_cores_per_gpu"] if j.kind == "train" else A["infer_cores_per_gpu"]
    cores = int(per_gpu * gpn)
    add("cpu", {"cores": cores}, t("rfq.val.cpu", lang, cores=cores),
        t("rfq.why.cpu", lang, per=per_gpu, kind=t(f"rfq.kind.{j.kind}", lang)))
    # 6. RAM: the node's GPU memory, checkpoint staging, CPU offload
    node_gpu_mem = g.memory_gib * gpn
    ram = max(A["ram_floor_gib"], A["ram_per_gpu_memory"] * node_gpu_mem, 2 * ckpt_node_gb * 1e9 / GIB)
    ram_reason = (t("rfq.why.ram", lang, gpu_mem=_n(node_gpu_mem), ckpt=_n(ckpt_node_gb, 1)) if ckpt
                  else t("rfq.why.ram_nockpt", lang, gpu_mem=_n(node_gpu_mem)))
    if j.kind == "train" and j.offload != "none":
        on_gpu = estimate(j.model_copy(update={"hardware": None, "offload": "none"}), hw_with())
        off = on_gpu.memory.optimizer + (on_gpu.memory.weights if j.offload == "parameters" else 0.0)
        off_node = off * gpn / GIB
        ram = max(ram, off_node + A["ram_floor_gib"])
        ram_reason = t("rfq.why.ram_offload", lang, off=_n(off_node), what=t(f"rfq.offload.{j.offload}", lang),
                       floor=_n(A["ram_floor_gib"]))
    ram = int(math.ceil(ram / 64.0) * 64)
    add("ram", {"ram_gib": ram}, t("rfq.val.ram", lang, ram=_n(ram)), ram_reason)
    # 7. local NVMe: capacity and write speed
    d = j.data
    dataset = (d.dataset_gb or 0.0) if d else 0.0
    kept = ((d.checkpoints_kept or 1) if d else 1) if ckpt else 0
    weights_gb = 0.0
    if j.arch is not None and not (j.kind == "train" and j.method == "pretrain"):
        weights_gb = j.arch.total_params * 2 / 1e9  # the base model, cached on local disk
    nvme_gb = (dataset + kept * ckpt_node_gb + weights_gb) * 1.2
    nvme_tb = max(0.1, math.ceil(nvme_gb / 100.0) / 10.0)
    write_gbs = round(ckpt_node_gb / A["checkpoint_write_seconds"], 2) if ckpt else None
    nvme_val = t("rfq.val.nvme", lang, tb=_n(nvme_tb, 1))
    if write_gbs:
        nvme_val += t("rfq.val.nvme_write", lang, gbs=_n(max(write_gbs, 0.1), 2))
    add("nvme", {"capacity_tb": nvme_tb, "write_gbs": write_gbs}, nvme_val,
        t("rfq.why.nvme", lang, dataset=_n(dataset, 1), kept=kept, ckpt=_n(ckpt_node_gb, 1),
          weights=_n(weights_gb, 0), secs=A["checkpoint_write_seconds"]))
    # 8. network between nodes
    if nodes <= 1:
        net = {"kind": "none", "gbps_per_node": None}
        add("network", net, t("rfq.val.network_none", lang), t("rfq.why.network_none", lang))
    else:
        times = {}
        for gb in NET_STEPS:
            e = estimate(j.model_copy(update={"hardware": None}),
                         hw_with(inter_node={"kind": "ib", "gbps_per_node": gb}))
            times[gb] = e.time_hours
        best = min(times.values())
        need = next(gb for gb in NET_STEPS if times[gb] <= best * NET_SLACK)
        eth = estimate(j.model_copy(update={"hardware": None}),
                       hw_with(inter_node={"kind": "ethernet", "gbps_per_node": 100.0})).time_hours
        net = {"kind": "ib", "gbps_per_node": need}
        add("network", net, t("rfq.val.network", lang, gbps=_n(need), per_gpu=_n(need / gpn)),
            t("rfq.why.network", lang, gbps=_n(need), hours=_n(times[need], 1), eth_hours=_n(eth, 1), nodes=nodes))
    # 9. region
    add("region", region, region or t("rfq.val.region_any", lang), t("rfq.why.region", lang))
    # 10. billing period and term
    if online:  # a service runs continuously: priced by the month
        billing = {"per": "month", "granularity": "hour", "term_months": 1}
        bill_text = t("rfq.val.billing_monthly", lang, months=1)
    elif hours <= HOURS_PER_MONTH / 2:
        billing = {"per": "hour", "granularity": "minute", "term_months": None}
        bill_text = t("rfq.val.billing_hourly", lang)
    else:
        months = int(math.ceil(hours / HOURS_PER_MONTH))
        billing = {"per": "month", "granularity": "hour", "term_months": months}
        bill_text = t("rfq.val.billing_monthly", lang, months=months)
    bill_why = (t("rfq.why.billing_online", lang, rps=_n(j.requests_per_s, 1)) if online
                else t("rfq.why.billing", lang, hours=_n(hours, 1), days=_n(hours / 24, 1)) if hours >= 24
                else t("rfq.why.billing_short", lang, hours=_n(hours, 1)))
    add("billing", billing, bill_text, bill_why)
    # 11. what the price covers
    egress = (d.egress_gb or 0.0) if d else 0.0
    store_gb = dataset + kept * ckpt / 1e9
    add("covers", list(COVERS), t("rfq.list_sep", lang).join(t(f"rfq.cover.{c}", lang) for c in COVERS),
        t("rfq.why.covers", lang, store=_n(store_gb, 0), egress=_n(egress, 0)))

    values = {"gpu": gpu_text, "mem_need": _n(mem_need, 1),
              "form": FORM_NAMES.get(g.form_factor, g.form_factor), "tdp": _n(g.tdp_w), "gpn": gpn, "nodes": nodes,
              "gpus": est.gpus,
              "link": LINK_SHORT[link] if link != "none" else t("rfq.link.none", lang), "cores": cores,
              "ram": _n(ram), "tb": _n(nvme_tb, 1),
              "gbs": _n(max(write_gbs or 0.0, 0.1), 2) if write_gbs else "-",
              "net": (t("rfq.val.network", lang, gbps=_n(net["gbps_per_node"]), per_gpu=_n(net["gbps_per_node"] / gpn))
                      if nodes > 1 else t("rfq.val.network_none", lang)),
              "billing": bill_text, "hours": _n(hours, 1)}
    from gpuquote.offers.checklist import CHECKLIST_ITEMS

    questions = [{"item": n, "name": name, "question": t(f"rfq.q.{n}", lang, **values)} for n, name in CHECKLIST_ITEMS]
    production = [{"key": k, "question": t(f"rfq.prod.{k}", lang)} for k in ("node_failure", "drivers", "delivery")]
    what = j.model or (j.arch.name if j.arch else None) or (f"{j.flops:.3g} FLOP" if j.flops else j.kind)
    rfq = {
        "title": t("rfq.title", lang, what=what),
        "lang": lang, "date": datetime.now(UTC).date().isoformat(), "currency": cur,
        "job": {"kind": j.kind, "model": what, "method": j.method if j.kind == "train" else None,
                "precision": j.precision, "tokens": j.tokens},
        "basis": {"source": basis, "offer_id": (plan_row or {}).get("offer_id"),
                  "text": t(f"rfq.basis.{basis}", lang, offer=(plan_row or {}).get("offer_id", ""))},
        "hardware": {"gpu": g.id, "memory_gib": g.memory_gib, "memory_type": g.memory_type,
                     "memory_bandwidth_gbs": g.memory_bandwidth_gbs, "form_factor": g.form_factor,
                     "gpus": est.gpus, "gpus_per_node": gpn, "nodes": nodes, "intra_node": link,
                     "inter_node": net},
        "estimate": {"time_hours": round(hours, 3), "gpu_hours": round(est.gpu_hours, 3),
                     "memory_per_gpu_gib": round(mem_need, 2), "min_gpus": est.min_gpus, "layout": est.layout,
                     "bound": est.bound, "fits": est.fits},
        "summary": (t("rfq.summary_online", lang, what=what, rps=_n(j.requests_per_s, 1), gpus=est.gpus, gpu=g.id)
                    if online else t("rfq.summary", lang, what=what, kind=t(f"rfq.kind.{j.kind}", lang),
                                     gpus=est.gpus, gpu=g.id, hours=_n(hours, 1), gpu_hours=_n(est.gpu_hours, 0))),
        "requirements": req,
        "questions": questions,
        "production": production,
        "assumptions": list(est.assumptions),
    }
    rfq["quote_template"] = quote_template(rfq)
    return rfq


def quote_template(rfq: dict) -> dict:
    """The quote-file entry (DESIGN.md section 3) pre-filled with the request; price left for the vendor."""
    h = rfq["hardware"]
    r = {x["key"]: x["value"] for x in rfq["requirements"]}
    b = r["billing"]
    form = "node_rental" if h["gpus_per_node"] > 1 else "cloud_instance"
    price: dict[str, Any] = {"amount": None, "currency": rfq["currency"], "per": b["per"]}
    if b["term_months"]:
        price["term_months"] = b["term_months"]
    net = {"kind": h["inter_node"]["kind"]}
    if h["inter_node"].get("gbps_per_node"):
        net["gbps_per_node"] = h["inter_node"]["gbps_per_node"]
    nvme: dict[str, Any] = {"capacity_tb": r["nvme"]["capacity_tb"]}
    if r["nvme"]["write_gbs"]:
        nvme["write_gbs"] = max(r["nvme"]["write_gbs"], 0.1)
    model = "".join(c if c.isalnum() or c in ".-" else "-" for c in str(rfq["job"]["model"]).lower())
    return {
        "id": f"rfq-{model}-{h['gpu']}-{h['gpus_per_node']}x{h['nodes']}",
        "vendor": "",
        "gpu": h["gpu"],
        "gpu_count": h["gpus_per_node"],
        "form": form,
        "exclusive": True,
        "intra_node": h["intra_node"],
        "cpu": {"model": "", "cores": r["cpu"]["cores"]},
        "ram_gb": r["ram"]["ram_gib"],
        "nvme": nvme,
        "network": net,
        "region": r["region"] or "",
        "price": price,
        "billing": b["granularity"],
        "spot": False,
        "covers": list(r["covers"]),
        "production": {"node_failure": "", "drivers": ""},
    }


def rfq_document(job: dict | str | Path, *, fmt: str = "md", **kw: Any) -> str | dict:
    """The RFQ as Markdown text, a YAML quote-file template, or the JSON-able dict."""
    if fmt not in FORMATS:
        raise BadInput(Msg("err.not_one_of", field="--format", value=fmt, accepted=", ".join(FORMATS)), field="format",
                       accepted=list(FORMATS))
    rfq = build_rfq(job, **kw)
    if fmt == "json":
        return rfq
    from gpuquote.service.rfq_doc import render_markdown, render_yaml

    return render_markdown(rfq) if fmt == "md" else render_yaml(rfq)
