"""The Plan page (`/plan`): the form, its permalink (a GET URL that re-runs the same request) and the result.

Split from pages.py; it renders through pages.render like every other page, and its JSON twin is /api/plan.
"""

from __future__ import annotations

from urllib.parse import urlencode

from fastapi import APIRouter, Request

from gpuquote.errors import BadInput
from gpuquote.web import charts, common
from gpuquote.web.forms import opt_bool, opt_choice, opt_float, opt_int, opt_str, providers_of
from gpuquote.web.pages import json_twin, lang_of, render, wants_json

router = APIRouter(include_in_schema=False)

DEFAULT_JOB = "qlora-7b"


def _plan_form_defaults(request: Request) -> dict:
    ex = common.examples()["jobs"]
    want = request.query_params.get("example") or DEFAULT_JOB
    chosen = next((e for e in ex if e["id"] == want), ex[0] if ex else None)
    return {"example": chosen["id"] if chosen else "", "job_yaml": chosen["text"] if chosen else "", "gpu": "",
            "min_gpus": "", "interconnect": "", "region": "", "spot": "", "provider": "", "max_price_usd": "",
            "deadline_hours": "", "budget_usd": "", "objective": "cost", "top": "10", "quotes_yaml": "",
            "interruption_rate": "", "serving_hours": "", "rates": "", "include_catalog": "true"}


PLAN_FIELDS = ("example", "job_yaml", "quotes_yaml", "gpu", "min_gpus", "interconnect", "region", "spot", "provider",
               "max_price_usd", "deadline_hours", "budget_usd", "objective", "top", "interruption_rate",
               "serving_hours", "rates", "include_catalog")


def plan_permalink(form: dict) -> str:
    """A GET URL that re-runs the same request: the example id when the job is that example's text."""
    ex = {e["id"]: e["text"].replace("\r\n", "\n").strip() for e in common.examples()["jobs"]}
    form = {k: v.replace("\r\n", "\n") if isinstance(v, str) else v for k, v in form.items()}
    items = []
    for k in PLAN_FIELDS:
        v = (form.get(k) or "").strip() if isinstance(form.get(k), str) else ""
        if k == "job_yaml" and form.get("example") in ex and v == ex[form["example"]]:
            continue
        if k == "example" and (form.get("job_yaml") or "").strip() not in ("", ex.get(v, "")):
            continue
        if v and not (k == "objective" and v == "cost") and not (k == "top" and v == "10") and \
                not (k == "include_catalog" and v == "true"):
            items.append((k, v))
    return "/plan?" + urlencode([*items, ("run", "1")])


def _plan_fields_to_request(form: dict):
    from gpuquote.web.api import PlanRequest

    job_yaml = opt_str(form.get("job_yaml"), "job_yaml", common.MAX_TEXT_CHARS)
    return PlanRequest(
        job_yaml=job_yaml, example=None if job_yaml else opt_str(form.get("example"), "example", 100),
        quotes_yaml=opt_str(form.get("quotes_yaml"), "quotes_yaml", common.MAX_TEXT_CHARS),
        gpu=opt_str(form.get("gpu"), "gpu", 100), min_gpus=opt_int(form.get("min_gpus"), "min_gpus"),
        interconnect=opt_choice(form.get("interconnect"), "interconnect", ("nvswitch", "nvlink", "pcie")),
        region=opt_str(form.get("region"), "region", 100), spot=opt_bool(form.get("spot"), "spot"),
        provider=providers_of([form.get("provider", "")]),
        max_price_usd=opt_float(form.get("max_price_usd"), "max_price_usd", ge=0),
        deadline_hours=opt_float(form.get("deadline_hours"), "deadline_hours", gt=0),
        budget_usd=opt_float(form.get("budget_usd"), "budget_usd", gt=0),
        objective=opt_choice(form.get("objective"), "objective", ("cost", "time", "balanced")) or "cost",
        top=opt_int(form.get("top"), "top", le=500) or 10,
        interruption_rate=opt_float(form.get("interruption_rate"), "interruption_rate", ge=0),
        serving_hours=opt_float(form.get("serving_hours"), "serving_hours", gt=0),
        rates=common.rate_overrides(opt_str(form.get("rates"), "rates", 500)) or None,
        include_catalog=opt_bool(form.get("include_catalog"), "include_catalog") is not False)


def _sizing(job: dict, req, result: dict | None) -> dict | None:
    """The job's sizing on the GPU asked for, else on the best-ranked offer's GPU (never a hidden default)."""
    from gpuquote.service.estimate import estimate_job

    own = (job.get("hardware") or {}).get("gpu") if isinstance(job.get("hardware"), dict) else None
    gpu = req.gpu or own or next((r["gpu_id"] for r in (result or {}).get("rows", [])), None)
    if gpu is None:
        return None
    try:
        return estimate_job(job, gpu=gpu)
    except BadInput:
        rows = (result or {}).get("rows", [])
        if rows and gpu != rows[0]["gpu_id"]:  # a family filter (h100): size on the SKU the plan chose
            try:
                return estimate_job(job, gpu=rows[0]["gpu_id"])
            except BadInput:
                return None
        return None


def _run_plan_page(request: Request, form: dict, status_ok: int = 200):
    from gpuquote.web.api import run_plan

    shown = {**_plan_form_defaults(request), **form}
    error = unavailable = result = estimate = chart = None
    try:
        req = _plan_fields_to_request(form)
        if wants_json(request, form):
            return json_twin(run_plan(req))
        job = common.parse_job(req.job, req.job_yaml, req.example)
        try:
            result = run_plan(req)
            chart = charts.plan_chart(result, lang_of(request))
        except common.NotAvailable as e:
            unavailable = str(e)
        estimate = _sizing(job, req, result)
    except BadInput as e:
        if wants_json(request, form):
            return json_twin(e.to_dict(), 400)
        error = e
    except Exception as e:  # pydantic ValidationError from PlanRequest: name the field
        error = common.validation_input_error(e)
        if error is None:
            raise
        if wants_json(request, form):
            return json_twin(error.to_dict(), 422)
    return render(request, "plan.html", status=400 if error else status_ok, page="plan", form=shown,
                  examples=common.examples()["jobs"], result=result, estimate=estimate, error=error,
                  unavailable=unavailable, chart=chart, permalink=plan_permalink(shown) if result else None)


@router.get("/plan")
def plan_page(request: Request):
    q = request.query_params
    if q.get("run"):  # a permalink: the same request again
        form = {k: q.get(k, "") for k in PLAN_FIELDS if q.get(k) is not None}
        if "job_yaml" not in form:
            form["job_yaml"] = ""
        return _run_plan_page(request, form)
    form = _plan_form_defaults(request)
    return render(request, "plan.html", page="plan", form=form, examples=common.examples()["jobs"], result=None,
                  estimate=None, error=None, unavailable=None, chart=None, permalink=None)


@router.post("/plan")
async def plan_submit(request: Request):
    form = dict(await request.form())
    form = {k: (v if isinstance(v, str) else "") for k, v in form.items()}
    return _run_plan_page(request, form)
