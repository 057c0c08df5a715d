"""JSON API under /api: each route calls one service function and returns its dict unchanged.

The body of a request equals `gpuquote <command> --json` for the same arguments (same function, same
encoding). Jobs and quote files arrive as text (or a shipped example's id), never as a server path.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, File, Form, Query, UploadFile
from fastapi import Path as PathParam
from fastapi.responses import JSONResponse, Response
from pydantic import AliasChoices, BaseModel, ConfigDict, Field

from gpuquote.service.encoding import dumps_bytes
from gpuquote.web import common, csvout, turns
from gpuquote.web.queries import CsvFormat, Interconnect, OfferFilters, OffersQuery
from gpuquote.web.responses import (
    EstimateBody,
    ExamplesBody,
    GpusBody,
    GpuShowBody,
    HealthBody,
    HistoryBody,
    OffersBody,
    PlanBody,
    QuoteCheckBody,
    SummaryBody,
    TcoBody,
    ok,
)


class GQJSON(JSONResponse):
    """JSON with the CLI's encoding, so `--json` and the API body are the same bytes (a JSONResponse, so
    that OpenAPI takes the 200 schema from the documented model instead of calling it a string)."""

    media_type = "application/json"

    def render(self, content: Any) -> bytes:
        return dumps_bytes(content)


router = APIRouter(prefix="/api", default_response_class=GQJSON)

ERROR_SCHEMA = {
    "description": "Bad input: the message names the field and, where a fixed set exists, the accepted values.",
    "content": {"application/json": {"schema": {"type": "object", "required": ["error", "field"], "properties": {
        "error": {"type": "string"}, "field": {"type": ["string", "null"]},
        "accepted": {"type": ["array", "null"], "items": {"type": "string"}}}}}},
}
ERRORS: dict[int | str, dict[str, Any]] = {400: ERROR_SCHEMA, 422: ERROR_SCHEMA}

Objective = Literal["cost", "time", "balanced"]
QuoteFormat = Literal["yaml", "csv"]
Positive = Annotated[float, Field(gt=0, allow_inf_nan=False)]
Rates = dict[Annotated[str, Field(min_length=3, max_length=3, pattern=r"^[A-Za-z]{3}$")], Positive]


CSV_COLUMNS = csvout.OFFER_COLUMNS


def offers_csv(data: dict) -> str:
    return csvout.text(csvout.offer_rows(data["offers"]), CSV_COLUMNS)


@router.get("/offers", responses={**ERRORS, **ok(OffersBody)},
            summary="Current offers with normalised USD per GPU-hour")
async def api_offers(q: Annotated[OffersQuery, Query()]):
    """The body of `gpuquote offers --json` for the same filters (`format=csv`: `--csv`, streamed)."""
    from gpuquote.service.money import in_currency
    from gpuquote.service.offers import list_offers

    lazy = q.format == "json" and not q.currency  # offers_json splices cached row texts: no row dicts needed
    data = in_currency(list_offers(**q.list_args(), rows=not lazy), q.currency)
    if q.format == "csv":
        return csvout.response(csvout.offer_rows(data["offers"]), CSV_COLUMNS, "offers", stream=True)
    from gpuquote.service.columns import offers_json

    return Response(offers_json(data), media_type="application/json")


@router.get("/offers/summary", responses={**ERRORS, **ok(SummaryBody)},
            summary="One row per GPU id: offers, providers, cheapest and median on-demand and spot $/GPU-h")
async def api_offers_summary(q: Annotated[OfferFilters, Query()]):
    """The body of `gpuquote offers --summary --json` for the same filters (`format=csv`: `--summary --csv`)."""
    from gpuquote.service.offers import SUMMARY_COLUMNS, summarize_offers

    data = summarize_offers(**q.filter_args())
    if q.format == "csv":
        return csvout.response(data["gpus"], SUMMARY_COLUMNS, "summary")
    return GQJSON(data)


@router.get("/gpus", responses={**ERRORS, **ok(GpusBody)}, summary="The GPU catalog with the source of every figure")
def api_gpus(format: CsvFormat = "json"):
    """The body of `gpuquote gpus --json`; `?format=csv` answers text/csv."""
    from gpuquote.service.catalog import list_gpus

    data = list_gpus()
    if format == "csv":
        return csvout.response(data["gpus"], csvout.gpu_columns(data["gpus"]), "gpus")
    return GQJSON(data)


@router.get("/gpus/{name}", responses={**ERRORS, **ok(GpuShowBody)}, summary="One GPU or family by any alias")
def api_gpu(name: Annotated[str, PathParam(max_length=100)]):
    """The body of `gpuquote gpus show NAME --json`."""
    from gpuquote.service.catalog import show_gpu

    return GQJSON(show_gpu(name))


@router.get("/history", responses={**ERRORS, **ok(HistoryBody)},
            summary="Price over time per provider (USD per GPU-hour per day)")
def api_history(
    gpu: Annotated[str, Query(min_length=1, max_length=100, description="GPU id or alias")],
    provider: Annotated[list[str] | None, Query(max_length=50)] = None,
    since: Annotated[str | None, Query(max_length=20, description="YYYY-MM-DD or Nd")] = None,
    spot: bool = False,
    format: CsvFormat = "json",
):
    """The body of `gpuquote history --gpu ID --json`; `?format=csv` answers text/csv."""
    from gpuquote.service.refresh import history

    data = history(gpu, provider=provider, since=since, spot=spot)
    if format == "csv":
        return csvout.response(data["series"], csvout.HISTORY_COLUMNS, "history")
    return GQJSON(data)


@router.get("/examples", responses=ok(ExamplesBody), summary="The shipped example jobs and quote files (their text)")
def api_examples():
    return GQJSON(common.examples())


class JobInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    job: dict[str, Any] | None = Field(None, description="The job as a mapping (DESIGN.md section 3)")
    job_yaml: str | None = Field(None, max_length=common.MAX_TEXT_CHARS, description="The job file's YAML/JSON text")
    example: str | None = Field(None, max_length=100, description="A shipped example job id (see /api/examples)")


class EstimateRequest(JobInput):
    gpu: str | None = Field(None, max_length=100)
    gpus: int | None = Field(None, gt=0, le=100000)
    hardware: dict[str, Any] | None = None


@router.post("/estimate", responses={**ERRORS, **ok(EstimateBody)},
             summary="Memory, GPU count, throughput and time for a job")
def api_estimate(req: EstimateRequest):
    """The body of `gpuquote estimate JOB --json`."""
    from gpuquote.service.estimate import estimate_job

    job = common.parse_job(req.job, req.job_yaml, req.example)
    return GQJSON(estimate_job(job, gpu=req.gpu, gpus=req.gpus, hardware=req.hardware))


class PlanRequest(JobInput):
    quotes_yaml: str | None = Field(None, max_length=common.MAX_TEXT_CHARS,
                                    validation_alias=AliasChoices("quotes_text", "quotes_yaml"),
                                    description="A quote file's YAML or CSV text to rank beside the catalog offers "
                                    "(quotes_yaml: the old name, still accepted)")
    quotes_format: QuoteFormat | None = None
    gpu: str | None = Field(None, max_length=100)
    min_gpus: int | None = Field(None, gt=0, le=100000)
    interconnect: Interconnect | None = None
    region: str | None = Field(None, max_length=100)
    spot: bool | None = None
    provider: list[Annotated[str, Field(max_length=50)]] | None = Field(None, max_length=50)
    max_price_usd: float | None = Field(None, ge=0, allow_inf_nan=False)
    deadline_hours: float | None = Field(None, gt=0, allow_inf_nan=False)
    budget_usd: float | None = Field(None, gt=0, allow_inf_nan=False)
    objective: Objective = "cost"
    top: int = Field(10, gt=0, le=500)
    interruption_rate: float | None = Field(None, ge=0, allow_inf_nan=False,
                                            description="Spot interruptions per hour (default: the plan's estimate)")
    serving_hours: float | None = Field(None, gt=0, allow_inf_nan=False, description="Online serving: hours priced")
    include_catalog: bool = Field(True, description="false: rank only the quotes (CLI --no-catalog)")
    rates: Rates | None = Field(None, description='Currency overrides for quotes, USD per unit: {"CNY": 0.14}')
    gpus: int | None = Field(None, ge=1, le=1_000_000, description="Only this many GPUs (CLI --gpus)")
    nodes: int | None = Field(None, ge=1, le=1_000_000, description="Only this many nodes (CLI --nodes)")
    currency: str | None = Field(None, max_length=10, description="Add *_cny (or other) twins of every USD amount")


def run_plan(req: PlanRequest) -> dict:
    plan_job = common.service("plan", "plan_job")
    job = common.parse_job_model(req.job, req.job_yaml, req.example)
    kw = {"gpu": req.gpu, "min_gpus": req.min_gpus, "interconnect": req.interconnect, "region": req.region,
          "spot": req.spot, "provider": req.provider, "max_price_usd": req.max_price_usd,
          "deadline_hours": req.deadline_hours, "budget_usd": req.budget_usd, "objective": req.objective,
          "top": req.top, "interruption_rate": req.interruption_rate, "serving_hours": req.serving_hours,
          "include_catalog": req.include_catalog, "gpus": req.gpus, "nodes": req.nodes,
          "rate": [f"{k}={v!r}" for k, v in common.rate_overrides(req.rates).items()] or None}
    if req.quotes_yaml and req.quotes_yaml.strip():
        fmt = common.quote_format(req.quotes_yaml, req.quotes_format, None)
        with common.temp_quote_file(req.quotes_yaml, fmt) as path:
            return _in_currency(plan_job(job, quotes=[str(path)], **kw), req)
    return _in_currency(plan_job(job, quotes=None, **kw), req)


def plan_inline(req: PlanRequest) -> bool:
    """A plan cheap enough for the event loop: a job planned before, no quote file, the in-memory catalog.
    Inline plans are served first come, first served (threads sharing the GIL finish them in a scramble, and
    the slowest of 50 waits longest)."""
    from gpuquote.service import columns

    if req.quotes_yaml or not req.include_catalog or not columns.enabled() or not columns.ready():
        return False
    is_warm = common.service("plan", "is_warm")
    try:
        return is_warm(common.parse_job_model(req.job, req.job_yaml, req.example))
    except Exception:  # bad input: the threaded path reports it exactly as before
        return False


def _in_currency(data: dict, req) -> dict:
    from gpuquote.service.money import in_currency

    return in_currency(data, getattr(req, "currency", None), common.rate_overrides(req.rates))


@router.post("/plan", responses={**ERRORS, 501: ERROR_SCHEMA, **ok(PlanBody)},
             summary="Offers ranked by the cost and time to finish a job")
async def api_plan(req: PlanRequest, format: CsvFormat = "json"):
    """The body of `gpuquote plan JOB ... --json`; `?format=csv` answers text/csv."""
    if plan_inline(req):  # evaluated before: milliseconds of NumPy, answered in order on the event loop
        async with turns.turn():
            data = run_plan(req)
    else:  # a job seen for the first time (seconds at most): a worker thread, under the request deadline
        from starlette.concurrency import run_in_threadpool

        data = await run_in_threadpool(run_plan, req)
    if format == "csv":
        rows = [{**r, "warnings": " | ".join(str(w) for w in r.get("warnings") or []), "section": s}
                for s in ("on_demand", "spot", "purchase") for r in data["sections"][s]]
        return csvout.response(rows, csvout.PLAN_COLUMNS, "plan")
    return GQJSON(data)


class QuoteCheckRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    text: str = Field(..., max_length=common.MAX_TEXT_CHARS, validation_alias=AliasChoices("quotes_text", "text"),
                      description="The quote file's YAML or CSV text (text: the old name, still accepted)")
    format: QuoteFormat | None = Field(None, validation_alias=AliasChoices("quotes_format", "format"))
    name: str | None = Field(None, max_length=200, description="A name to show for the file")
    utilisation: float = Field(1.0, gt=0, le=1, allow_inf_nan=False)
    rates: Rates | None = Field(None, description='Currency overrides, USD per unit: {"CNY": 0.14}')
    currency: str | None = Field(None, max_length=10, description="Add *_cny (or other) twins of every USD amount")


def run_quote_check(text: str, fmt: str | None, name: str | None, utilisation: float, rates) -> dict:
    check_quotes = common.service("quotes", "check_quotes")
    text = common.check_text(text, "text")
    fmt = common.quote_format(text, fmt, name)
    return check_quotes(text, utilisation, common.rate_overrides(rates), fmt=fmt, name=name or f"<pasted {fmt}>")


@router.post("/quote-check", responses={**ERRORS, 501: ERROR_SCHEMA, **ok(QuoteCheckBody)},
             summary="Normalised prices, the 10-item checklist and comparability of a quote file")
def api_quote_check(req: QuoteCheckRequest, format: CsvFormat = "json"):
    """The body of `gpuquote quote check FILE --json`; `?format=csv` answers text/csv."""
    data = _in_currency(run_quote_check(req.text, req.format, req.name, req.utilisation, req.rates), req)
    if format == "csv":
        return csvout.response(data["quotes"], csvout.QUOTE_COLUMNS, "quote-check")
    return GQJSON(data)


async def read_upload(file: UploadFile) -> str:
    raw = await file.read(common.MAX_TEXT_CHARS + 1)
    if len(raw) > common.MAX_TEXT_CHARS:
        from gpuquote.errors import BadInput

        raise BadInput(f"file: at most {common.MAX_TEXT_CHARS} bytes", field="file")
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        from gpuquote.errors import BadInput

        raise BadInput("file: not UTF-8 text; upload a YAML or CSV quote file", field="file") from None


@router.post("/quote-check/upload", responses={**ERRORS, 413: ERROR_SCHEMA, 501: ERROR_SCHEMA, **ok(QuoteCheckBody)},
             summary="quote-check for an uploaded file (multipart)")
async def api_quote_check_upload(
    file: Annotated[UploadFile, File(description="A .yaml/.yml or .csv quote file")],
    utilisation: Annotated[float, Form(gt=0, le=1, allow_inf_nan=False)] = 1.0,
    rate: Annotated[str | None, Form(max_length=500, description="CUR=USD_PER_UNIT, comma separated")] = None,
):
    text = await read_upload(file)
    return GQJSON(run_quote_check(text, None, file.filename, utilisation, rate))


class TcoRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    text: str = Field(..., max_length=common.MAX_TEXT_CHARS, validation_alias=AliasChoices("quotes_text", "text"),
                      description="The quote file's YAML or CSV text (text: the old name, still accepted)")
    format: QuoteFormat | None = Field(None, validation_alias=AliasChoices("quotes_format", "format"))
    name: str | None = Field(None, max_length=200)
    buy: list[Annotated[str, Field(max_length=200)]] | None = Field(None, max_length=50)
    rent: list[Annotated[str, Field(max_length=200)]] | None = Field(None, max_length=50)
    utilisation: float = Field(1.0, gt=0, le=1, allow_inf_nan=False)
    rates: Rates | None = None
    currency: str | None = Field(None, max_length=10, description="Add *_cny (or other) twins of every USD amount")


def run_tco(req: TcoRequest) -> dict:
    tco = common.service("quotes", "tco")
    text = common.check_text(req.text, "text")
    fmt = common.quote_format(text, req.format, req.name)
    return tco(text, buy=req.buy or None, rent=req.rent or None, utilisation=req.utilisation,
               rate_overrides=common.rate_overrides(req.rates), fmt=fmt, name=req.name or f"<pasted {fmt}>")


@router.post("/tco", responses={**ERRORS, 501: ERROR_SCHEMA, **ok(TcoBody)},
             summary="Buy vs rent: purchase TCO and break-even")
def api_tco(req: TcoRequest, format: CsvFormat = "json"):
    """The body of `gpuquote tco FILE --json`; `?format=csv` answers text/csv."""
    data = _in_currency(run_tco(req), req)
    if format == "csv":
        return csvout.response(csvout.tco_rows(data), csvout.TCO_COLUMNS, "tco")
    return GQJSON(data)


@router.get("/health", responses=ok(HealthBody), summary="Liveness and which store answers")
def api_health():
    from gpuquote import __version__
    from gpuquote.store import open_reader

    r = open_reader()
    try:
        return GQJSON({"status": "ok", "version": __version__, "store": r.where})
    finally:
        r.close()
