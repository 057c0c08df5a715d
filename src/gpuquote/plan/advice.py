"""What to do when the plan is not enough: why nothing fits, and upgrade advice (H100, H200, Hopper, B200).

Split from planner.py; the advice re-plans the job on the upgrade GPUs' offers.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

import numpy as np

from gpuquote.estimate.job import Job
from gpuquote.hardware import load_gpus
from gpuquote.i18n import Msg, join
from gpuquote.plan.table import OfferTable

if TYPE_CHECKING:
    from gpuquote.plan.planner import PlanOptions


def _nothing_fits(table, excluded, deadline_fail, budget_fail, opts) -> dict:
    def closest(items, by):
        t, c, i = min(items, key=by)
        r = table.row(i)
        return {"offer_id": r["offer_id"], "provider": r["provider"], "gpu_id": r["gpu_id"],
                "time_hours": round(t, 3), "total_cost_usd": round(c, 2)}

    if deadline_fail and opts.deadline_hours:
        c = closest(deadline_fail, lambda x: x[0])
        return {"constraint": "deadline", "closest": c,
                "message": Msg("plan.nf.deadline", deadline=f"{opts.deadline_hours:g}", hours=f"{c['time_hours']:g}",
                               offer=c["offer_id"])}
    if budget_fail and opts.budget_usd:
        c = closest(budget_fail, lambda x: x[1])
        return {"constraint": "budget", "closest": c,
                "message": Msg("plan.nf.budget", budget=f"{opts.budget_usd:,.0f}", cost=f"{c['total_cost_usd']:,.0f}",
                               offer=c["offer_id"])}
    reasons = list(excluded)
    kind = "memory" if any(r.startswith("memory") for r in reasons) else ("offers" if not len(table) else "constraints")
    return {"constraint": kind, "closest": None,
            "message": Msg("plan.nf.none", reasons=join("; ", reasons[:3]) if reasons else Msg("plan.nf.no_candidate"))}


UPGRADES = (
    ("compute", "a100", ("h100",), "plan.adv.a100_h100"),
    ("memory", "a100", ("h200",), "plan.adv.h200"),
    ("memory", "h100", ("h200",), "plan.adv.h200"),
    ("fp8", None, ("h100", "h200"), "plan.adv.fp8"),
    ("compute", "h100", ("b200",), "plan.adv.h100_b200"),
)
B200 = "plan.adv.b200"


def _advice(job: Job, result: dict, excluded: Counter, advice_rows: OfferTable | list[dict],
            opts: PlanOptions) -> list[dict]:
    """When it applies: move up to H100 for compute, to H200 for memory, to Hopper for FP8."""
    gpus = load_gpus()
    if not isinstance(advice_rows, OfferTable):
        advice_rows = OfferTable.from_rows(advice_rows)  # once: each upgrade re-plans on a part of it
    best = result["rows"][0] if result["rows"] else None
    fam = gpus[best["estimated_as"]].family if best else None
    oom_80 = any(r.startswith("memory") for r in excluded)
    fp8 = any("Hopper" in r or "FP8" in r for r in excluded)
    out = []
    for trigger, from_fam, to_fams, why in UPGRADES:
        if trigger == "compute" and not (best and fam == from_fam and best["bound"] == "compute"):
            continue
        if trigger == "memory" and not ((best and fam == from_fam and best["bound"] == "memory")
                                        or (oom_80 and (fam == from_fam or best is None))):
            continue
        if trigger == "fp8" and not (fp8 and (best is None or not gpus[best["estimated_as"]].has_fp8)):
            continue
        sub = _best_on(job, advice_rows, to_fams, opts)
        if not sub["rows"]:
            continue
        b = sub["rows"][0]
        if to_fams == ("b200",) and best and b["total_cost_usd"] >= best["total_cost_usd"]:
            continue  # B200 is advised where it is the cheaper way to finish
        entry = {"trigger": trigger, "advice": Msg(why), "gpu": b["estimated_as"], "offer_id": b["offer_id"],
                 "provider": b["provider"], "gpus": b["gpus"], "time_hours": b["time_hours"],
                 "total_cost_usd": b["total_cost_usd"]}
        if best:
            entry["vs_best"] = {"offer_id": best["offer_id"], "time_hours": best["time_hours"],
                                "total_cost_usd": best["total_cost_usd"]}
        out.append(entry)
        if "b200" not in to_fams and not any(e["trigger"] == "b200" for e in out):
            bb = _best_on(job, advice_rows, ("b200",), opts)["rows"]
            if bb and bb[0]["total_cost_usd"] < b["total_cost_usd"]:
                x = bb[0]
                out.append({**entry, "trigger": "b200", "advice": Msg(B200, gpu=b["estimated_as"]),
                            "gpu": x["estimated_as"], "offer_id": x["offer_id"], "provider": x["provider"],
                            "gpus": x["gpus"], "time_hours": x["time_hours"], "total_cost_usd": x["total_cost_usd"]})
    return out


def _best_on(job: Job, advice: OfferTable | list[dict], fams: tuple[str, ...], opts: PlanOptions) -> dict:
    """The plan of the job on the advice offers of these GPU families (the best row only)."""
    from gpuquote.plan.planner import PlanOptions, plan

    table = advice if isinstance(advice, OfferTable) else OfferTable.from_rows(advice)
    cand = table.subset(("families", fams),
                        lambda t: np.nonzero(np.isin(t.families(), np.array(fams, dtype=object)))[0])
    sub = PlanOptions(objective=opts.objective, top=1, interruption_rate=opts.interruption_rate,
                      serving_hours=opts.serving_hours, gpus=opts.gpus, nodes=opts.nodes)
    if not cand.__dict__.get("shared"):
        return plan(job, cand, sub, brief=True)
    # a table the server keeps: the same job's upgrade is the same answer under any budget, top or GPU filter
    memo = cand.__dict__.setdefault("_best", {})
    key = (job.cache_key(), sub.objective, sub.interruption_rate, sub.serving_hours, sub.gpus, sub.nodes)
    got = memo.get(key)
    if got is None:
        if len(memo) >= 256:
            memo.clear()
        got = memo[key] = plan(job, cand, sub, brief=True)
    return got


def _sku(gpu_id: str) -> str:
    from gpuquote.plan.candidates import conservative_sku

    return conservative_sku(gpu_id) or gpu_id
