"""The RFQ page (job in, document out, download as Markdown or YAML) and the Watches page, with JSON twins.

`/api/rfq` returns the body of `gpuquote rfq JOB --format json` (or the Markdown / YAML document with
`format`); `/api/watches` lists, adds and removes rules exactly as `gpuquote watch list|add|remove --json`.
Watches are evaluated by `gpuquote watch run` (a timer, or `refresh`), never by a web request.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Request
from fastapi import Path as PathParam
from fastapi.responses import RedirectResponse, Response
from pydantic import BaseModel, ConfigDict, Field

from gpuquote.errors import BadInput
from gpuquote.web import common
from gpuquote.web.api import ERRORS, GQJSON, JobInput
from gpuquote.web.responses import RfqBody, WatchBody, WatchesBody, ok

api = APIRouter(prefix="/api", default_response_class=GQJSON)
pages = APIRouter(include_in_schema=False)
RFQ_PAGE_FORMATS = ("html", "md", "yaml", "json")  # html: the page; the others as /api/rfq answers them
DEFAULT_RFQ_JOB = "lora-70b"


class RfqRequest(JobInput):
    gpu: str | None = Field(None, max_length=100, description="Request this GPU (else the job's, else the plan's)")
    gpus: int | None = Field(None, gt=0, le=100000, description="Request this many GPUs in all")
    region: str | None = Field(None, max_length=100)
    currency: str | None = Field(None, max_length=8, description="Currency of the template's price")
    lang: Literal["en", "zh-CN"] = "en"
    format: Literal["json", "md", "yaml"] = "json"


def rfq_answer(req: RfqRequest) -> Any:
    """The dict (format json) or the document as a download (md: text/markdown, yaml: application/yaml)."""
    from gpuquote.service.rfq import rfq_document

    job = common.parse_job(req.job, req.job_yaml, req.example)
    doc = rfq_document(job, fmt=req.format, gpu=req.gpu, gpus=req.gpus, region=req.region, currency=req.currency,
                       lang=req.lang)
    if isinstance(doc, dict):
        return doc
    media = "text/markdown; charset=utf-8" if req.format == "md" else "application/yaml; charset=utf-8"
    name = f"gpuquote-rfq.{'md' if req.format == 'md' else 'yaml'}"
    return Response(doc, media_type=media, headers={"content-disposition": f'attachment; filename="{name}"'})


@api.post("/rfq", responses={**ERRORS, **ok(RfqBody)}, summary="A request for quotes to send vendors, sized from a job")
def api_rfq(req: RfqRequest):
    """The body of `gpuquote rfq JOB --format json` (format md / yaml: the document itself, as a download)."""
    return rfq_answer(req)


class WatchRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(..., min_length=1, max_length=100)
    kind: Literal["offers", "plan"]
    filters: dict[str, Any] | None = Field(None, description="Offer filters: gpu, min_gpus, interconnect, region, "
                                           "spot, provider")
    job: dict[str, Any] | None = Field(None, description="plan: the job as a mapping")
    job_yaml: str | None = Field(None, max_length=common.MAX_TEXT_CHARS, description="plan: the job file's text")
    example: str | None = Field(None, max_length=100, description="plan: a shipped example job id")
    below: float | None = Field(None, allow_inf_nan=False, description="Threshold (per GPU-hour, or the job's "
                                "total cost), in currency")
    currency: str = Field("USD", max_length=8)
    notify: str = Field("stdout", max_length=1000, description="webhook:URL | email:ADDR | stdout")
    available: bool = False


def add_from_request(req: WatchRequest) -> dict:
    from gpuquote.service.watch import add_watch

    plan = None
    if req.kind == "plan":
        plan = common.parse_job(req.job, req.job_yaml, req.example)
    elif req.job is not None or req.job_yaml or req.example:
        raise BadInput("job: only a plan watch takes a job", field="job")
    return add_watch(req.name, offers=(req.filters or {}) if req.kind == "offers" else None, plan=plan,
                     filters=req.filters if req.kind == "plan" else None, below=req.below, currency=req.currency,
                     notify=req.notify, available=req.available)


@api.get("/watches", responses={**ERRORS, **ok(WatchesBody)},
         summary="Watch rules with their last evaluation and notification")
def api_watches():
    """The body of `gpuquote watch list --json`."""
    from gpuquote.service.watch import list_watches

    return list_watches()


@api.post("/watches", responses={**ERRORS, **ok(WatchBody)},
          summary="Add a watch rule (its baseline is the current store)")
def api_watch_add(req: WatchRequest):
    """The body of `gpuquote watch add ... --json`."""
    return add_from_request(req)


@api.get("/watches/{name}", responses={**ERRORS, **ok(WatchBody)}, summary="One watch rule and its history")
def api_watch(name: Annotated[str, PathParam(max_length=100)]):
    """The body of `gpuquote watch history NAME --json`."""
    from gpuquote.service.watch import history

    return history(name)


@api.delete("/watches/{name}", responses={**ERRORS, **ok(WatchBody)}, summary="Remove a watch rule and its history")
def api_watch_remove(name: Annotated[str, PathParam(max_length=100)]):
    """The body of `gpuquote watch remove NAME --json`."""
    from gpuquote.service.watch import remove_watch

    return remove_watch(name)


# --- pages ----------------------------------------------------------------------------------------------------

def _rfq_defaults(request: Request) -> dict:
    ex = common.examples()["jobs"]
    want = request.query_params.get("example") or DEFAULT_RFQ_JOB
    chosen = next((e for e in ex if e["id"] == want), ex[0] if ex else None)
    return {"example": chosen["id"] if chosen else "", "job_yaml": chosen["text"] if chosen else "", "gpu": "",
            "gpus": "", "region": "", "currency": ""}


@pages.get("/rfq")
def rfq_page(request: Request):
    from gpuquote.web.pages import render

    return render(request, "rfq.html", page="rfq", form=_rfq_defaults(request), examples=common.examples()["jobs"],
                  rfq=None, markdown=None, error=None)


@pages.post("/rfq")
async def rfq_submit(request: Request):
    from gpuquote.web.forms import opt_choice, opt_int, opt_str
    from gpuquote.web.pages import json_twin, lang_of, render, wants_json

    form = {k: v for k, v in (await request.form()).items() if isinstance(v, str)}
    shown = {**_rfq_defaults(request), **form}
    error = rfq = markdown = None
    try:
        fmt = opt_choice(form.get("format"), "format", RFQ_PAGE_FORMATS) or "html"
        job_yaml = opt_str(form.get("job_yaml"), "job_yaml", common.MAX_TEXT_CHARS)
        req = RfqRequest(job_yaml=job_yaml, example=None if job_yaml else opt_str(form.get("example"), "example"),
                         gpu=opt_str(form.get("gpu"), "gpu", 100), gpus=opt_int(form.get("gpus"), "gpus"),
                         region=opt_str(form.get("region"), "region", 100),
                         currency=opt_str(form.get("currency"), "currency", 8), lang=lang_of(request),
                         format="json" if fmt == "html" else fmt)
        if fmt != "html" or wants_json(request):
            answer = rfq_answer(req)
            return answer if isinstance(answer, Response) else json_twin(answer)
        rfq = rfq_answer(req)
        from gpuquote.service.rfq_doc import render_markdown

        markdown = render_markdown(rfq)
    except BadInput as e:
        if wants_json(request, form):
            return json_twin(e.to_dict(), 400)
        error = e
    return render(request, "rfq.html", status=400 if error else 200, page="rfq", form=shown,
                  examples=common.examples()["jobs"], rfq=rfq, markdown=markdown, error=error)


def _watch_defaults() -> dict:
    return {"name": "", "kind": "offers", "gpu": "", "min_gpus": "", "interconnect": "", "region": "",
            "spot": "", "provider": "", "below": "", "currency": "USD", "notify": "stdout", "available": "",
            "example": DEFAULT_RFQ_JOB}


@pages.get("/watches")
def watches_page(request: Request):
    from gpuquote.service.watch import list_watches
    from gpuquote.web.pages import json_twin, render, wants_json

    data = list_watches()
    if wants_json(request):
        return json_twin(data)
    return render(request, "watches.html", page="watches", data=data, form=_watch_defaults(),
                  examples=common.examples()["jobs"], error=None, added=request.query_params.get("added"))


@pages.post("/watches")
async def watches_submit(request: Request):
    from gpuquote.service.watch import list_watches
    from gpuquote.web.forms import opt_bool, opt_choice, opt_float, opt_str, providers_of
    from gpuquote.web.pages import json_twin, render, wants_json

    form = {k: v for k, v in (await request.form()).items() if isinstance(v, str)}
    try:
        kind = opt_choice(form.get("kind"), "kind", ("offers", "plan")) or "offers"
        filters = {"gpu": opt_str(form.get("gpu"), "gpu", 100), "min_gpus": opt_float(form.get("min_gpus"), "min_gpus"),
                   "interconnect": opt_choice(form.get("interconnect"), "interconnect", ("nvswitch", "nvlink", "pcie")),
                   "region": opt_str(form.get("region"), "region", 100), "spot": opt_bool(form.get("spot"), "spot"),
                   "provider": providers_of([form.get("provider", "")])}
        req = WatchRequest(name=opt_str(form.get("name"), "name", 100) or "", kind=kind,
                           filters={k: v for k, v in filters.items() if v is not None},
                           example=opt_str(form.get("example"), "example", 100) if kind == "plan" else None,
                           below=opt_float(form.get("below"), "below"),
                           currency=opt_str(form.get("currency"), "currency", 8) or "USD",
                           notify=opt_str(form.get("notify"), "notify", 1000) or "stdout",
                           available=bool(opt_bool(form.get("available"), "available")))
        data = add_from_request(req)
        if wants_json(request, form):
            return json_twin(data)
        return RedirectResponse(f"/watches?added={data['watch']['name']}", status_code=303)
    except BadInput as e:
        if wants_json(request, form):
            return json_twin(e.to_dict(), 400)
        error = e
    except Exception as e:  # pydantic ValidationError from WatchRequest: name the field
        error = common.validation_input_error(e, "form")
        if error is None:
            raise
        if wants_json(request, form):
            return json_twin(error.to_dict(), 422)
    return render(request, "watches.html", status=400, page="watches", data=list_watches(),
                  form={**_watch_defaults(), **form}, examples=common.examples()["jobs"], error=error, added=None)


@pages.post("/watches/remove")
async def watches_remove(request: Request):
    from gpuquote.service.watch import remove_watch

    form = {k: v for k, v in (await request.form()).items() if isinstance(v, str)}
    remove_watch(form.get("name", ""))
    return RedirectResponse("/watches", status_code=303)
