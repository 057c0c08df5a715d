"""Cost and time of every offer at every node count worth renting, in one NumPy pass over all configurations.

Why one pass: a catalog has hundreds of hardware configurations with a few offers each. Pricing them one
configuration at a time costs some forty small NumPy calls per configuration and node count, which was most
of a plan's time; here every (offer, node count) pair is one cell of an offers x node-counts matrix (cells past
a configuration's own node counts are NaN and never chosen), so a plan costs the same few calls at any size.
The arithmetic per cell is unchanged (spot: Young/Daly checkpointing; billing granularity; storage; egress).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass

import numpy as np

from gpuquote.plan.candidates import Config
from gpuquote.plan.rows import NodeEval, _cost_of_run
from gpuquote.plan.table import OfferTable


@dataclass
class Priced:
    """The feasible offers, in configuration order: table row, configuration index, chosen node-eval index,
    time (h), total cost (USD), spot factor and CPU factor of the chosen node count."""

    rows: np.ndarray
    group: np.ndarray
    j: np.ndarray
    T: np.ndarray
    C: np.ndarray
    F: np.ndarray
    cpuf: np.ndarray

    def __len__(self) -> int:
        return len(self.rows)


def data_loading_factor(cores_per_gpu: np.ndarray, A: dict) -> np.ndarray:
    """Training time factor from vCPUs per GPU: smooth, (1 + (c0/c)^k)^(1/k) (data/plan_assumptions.yaml host)."""
    c0, k = A["host"]["train_min_cores_per_gpu"], A["host"]["data_loading_overlap_k"]
    with np.errstate(invalid="ignore", divide="ignore"):
        f = (1.0 + (c0 / cores_per_gpu) ** k) ** (1.0 / k)
    return np.where(np.isfinite(cores_per_gpu) & (cores_per_gpu > 0), f, 1.0)


@dataclass
class Matrix:
    """Every offer of the configurations at each node count: what does not depend on a deadline or budget."""

    ia: np.ndarray  # table rows
    g_of: np.ndarray  # configuration index per row
    T: np.ndarray  # hours (n x kmax; NaN past a configuration's node counts)
    C: np.ndarray  # USD
    f: np.ndarray  # spot factor
    cpuf: np.ndarray  # CPU factor per row
    valid: np.ndarray


#: Matrices of recent (table, job, options) triples: a server plans the same job on the same cached table under
#: many budgets, tops and objectives, and only the choice below depends on those. Bounded (~1 MB each).
_MATRICES: OrderedDict = OrderedDict()
_MATRICES_MAX = 32
_LOCK = threading.Lock()


def price_all(job, groups: list[tuple[Config, list[NodeEval], np.ndarray]], table: OfferTable, lam_col, opts,
              restart_h: float, ckpt: float, store_gb: float, egress_gb: float, A: dict, deadline_fail: list,
              budget_fail: list, *, eg_col: np.ndarray, wr_col: np.ndarray) -> Priced:
    """Every offer of every configuration priced at each of its node counts; the best count per offer.

    deadline_fail / budget_fail get (time, cost, row) of the closest an infeasible offer comes.
    """
    if not groups:
        z, e = np.zeros(0, dtype=np.int64), np.zeros(0)
        return Priced(z, z, z, e, e, e, e)
    m = None
    key = None
    if table.__dict__.get("shared"):  # a table the server keeps (service.columns): worth remembering
        key = (id(table), job.cache_key(), opts.gpus, opts.nodes, opts.deadline_hours, opts.interruption_rate,
               restart_h, ckpt, store_gb, egress_gb, tuple(id(evs) for _, evs, _ in groups))
        with _LOCK:
            hit = _MATRICES.get(key)
            if hit is not None and hit[0] is table:
                _MATRICES.move_to_end(key)
                m = hit[1]
    if m is None:
        m = _matrix(job, groups, table, lam_col, restart_h, ckpt, store_gb, egress_gb, A, eg_col, wr_col)
        if key is not None:
            with _LOCK:
                _MATRICES[key] = (table, m, groups)  # table and groups kept alive: their ids stay theirs
                while len(_MATRICES) > _MATRICES_MAX:
                    _MATRICES.popitem(last=False)
    T, C = m.T, m.C
    feasible = np.isfinite(C) & m.valid
    if opts.deadline_hours:
        feasible &= opts.deadline_hours >= T
    if opts.budget_usd:
        feasible &= opts.budget_usd >= C
    with np.errstate(invalid="ignore"):
        score = {"cost": C + T * 1e-9, "time": T + C * 1e-12, "balanced": C * T}[opts.objective]
    score = np.where(feasible, score, np.inf)
    best = np.argmin(score, axis=1)
    ar = np.arange(len(m.ia))
    ok = np.isfinite(score[ar, best])
    _fails(~ok, T, C, m.valid, m.ia, opts, deadline_fail, budget_fail)
    b = best[ok]
    return Priced(m.ia[ok], m.g_of[ok], b, T[ar[ok], b], C[ar[ok], b], m.f[ar[ok], b], m.cpuf[ok])


def _matrix(job, groups, table: OfferTable, lam_col, restart_h, ckpt, store_gb, egress_gb, A, eg_col,
            wr_col) -> Matrix:
    c = table.c
    sizes = np.array([len(idx) for _, _, idx in groups], dtype=np.int64)
    ia = np.concatenate([np.asarray(idx, dtype=np.int64) for _, _, idx in groups])
    g_of = np.repeat(np.arange(len(groups)), sizes)
    n = len(ia)
    kmax = max(len(evs) for _, evs, _ in groups)
    H = np.full((n, kmax), np.nan)
    NODES = np.ones((n, kmax))
    gpn = np.repeat(np.array([cfg.gpus_per_node for cfg, _, _ in groups], dtype=float), sizes)
    start = 0
    for (_, evs, _), size in zip(groups, sizes.tolist(), strict=True):
        k = len(evs)
        H[start:start + size, :k] = [e.hours for e in evs]
        NODES[start:start + size, :k] = [e.nodes for e in evs]
        start += size
    rate, gran, simple, lam = c["rate"][ia], c["gran"][ia], c["per_simple"][ia], lam_col[ia]
    cpuf = data_loading_factor(c["vcpus"][ia] / gpn, A) if job.kind == "train" else np.ones(n)
    egress = np.where(c["cov_eg"][ia], 0.0, eg_col[ia] * egress_gb)
    wr = wr_col[ia]

    with np.errstate(divide="ignore", invalid="ignore"):
        w = ckpt / NODES / (wr[:, None] * 1e9) / 3600.0 if ckpt else np.zeros((n, kmax))
        lam2 = lam[:, None]
        mtbi = np.where(lam2 > 0, 1.0 / (lam2 * NODES), np.inf)
        tau = np.sqrt(2.0 * w * mtbi)
        f = np.where(lam2 > 0, np.where(w > 0, 1.0 + w / tau + (tau / 2.0 + restart_h) / mtbi,
                                        1.0 + restart_h / mtbi), 1.0)
        T = H * f * cpuf[:, None]
        billed = np.ceil(T * 3600.0 / gran[:, None] - 1e-9) * gran[:, None] / 3600.0
        run = billed * rate[:, None] * NODES
    for m in np.nonzero(~simple)[0].tolist():  # monthly, term and other forms: the billing rules of offers.billing
        row = table.row(int(ia[m]))
        for j in range(len(groups[int(g_of[m])][1])):
            run[m, j] = _cost_of_run(row, float(T[m, j]), int(NODES[m, j]))
    storage = np.where(c["cov_st"][ia][:, None], 0.0, c["st"][ia][:, None] * store_gb * T / 730.0)
    C = run + storage + egress[:, None]
    for a in (T, C, f):
        a.flags.writeable = False
    return Matrix(ia, g_of, T, C, f, cpuf, ~np.isnan(H))


def _fails(bad: np.ndarray, T, C, valid, ia, opts, deadline_fail: list, budget_fail: list) -> None:
    """Why each infeasible offer cannot be chosen: the closest it comes to the deadline, else to the budget."""
    if not bad.any():
        return
    Tb, Cb, vb, rows = T[bad], C[bad], valid[bad], ia[bad]
    t_or_inf = np.where(vb & ~np.isnan(Tb), Tb, np.inf)
    late = ~((Tb <= opts.deadline_hours) & vb).any(axis=1) if opts.deadline_hours else np.zeros(len(rows), bool)
    jt = np.argmin(t_or_inf, axis=1)
    for m in np.nonzero(late)[0].tolist():
        deadline_fail.append((float(Tb[m, jt[m]]), float(Cb[m, jt[m]]), int(rows[m])))
    c_fin = np.isfinite(Cb) & vb
    rest = ~late & c_fin.any(axis=1)
    jc = np.argmin(np.where(c_fin, Cb, np.inf), axis=1)
    for m in np.nonzero(rest)[0].tolist():
        budget_fail.append((float(Tb[m, jc[m]]), float(Cb[m, jc[m]]), int(rows[m])))
