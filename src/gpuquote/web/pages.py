"""HTML pages (Jinja2, autoescaped). Each page `/x` has a JSON twin: `/api/x`, or `/x?format=json`.

Pages parse form input leniently (an empty field means "any") and hand the same arguments to the same
service function as the API; a BadInput is shown in the page, naming the field.
"""

from __future__ import annotations

import math
from functools import lru_cache
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from gpuquote.errors import BadInput
from gpuquote.i18n import LANGS, localize, t
from gpuquote.service.encoding import dumps
from gpuquote.web import charts, common
from gpuquote.web.forms import opt_bool, opt_choice, opt_float, opt_int, opt_str, providers_of

router = APIRouter(include_in_schema=False)
TEMPLATES = Path(__file__).parent / "templates"
NAV = (("offers", "/offers"), ("plan", "/plan"), ("quote_check", "/quote-check"), ("tco", "/tco"),
       ("gpus", "/gpus"), ("history", "/history"), ("rfq", "/rfq"), ("watches", "/watches"))
HTML_OFFERS_LIMIT = 100  # one page of the offers table; `offset` pages on
MEMORY_CHOICES = (16, 24, 32, 40, 48, 80, 94, 96, 141, 180, 192)


@lru_cache(maxsize=1)
def env():
    import jinja2

    e = jinja2.Environment(loader=jinja2.FileSystemLoader(str(TEMPLATES)), autoescape=True,
                           trim_blocks=True, lstrip_blocks=True)  # lenient: optional keys may be absent
    e.filters["num"] = fmt_num
    e.filters["pct"] = lambda v, d=0: "?" if v is None else f"{v * 100:.{d}f}%"
    return e


def fmt_num(v: Any, digits: int = 2, unknown: str = "?") -> str:
    if v is None:
        return unknown
    if isinstance(v, bool):
        return str(v).lower()
    if isinstance(v, int):
        return f"{v:,}"
    if isinstance(v, float):
        if math.isinf(v) or math.isnan(v):
            return str(v)
        if v.is_integer() and abs(v) < 1e15 and digits == 0:
            return f"{int(v):,}"
        return f"{v:,.{digits}f}"
    return str(v)


def lang_of(request: Request) -> str:
    return common.pick_lang(request.query_params.get("lang"), request.cookies.get(common.LANG_COOKIE),
                            request.headers.get("accept-language"))


def render(request: Request, template: str, status: int = 200, **ctx: Any) -> HTMLResponse:
    lang = lang_of(request)
    params = [(k, v) for k, v in request.query_params.multi_items() if k != "lang"]
    switch = {code: f"{request.url.path}?{urlencode([*params, ('lang', code)])}" for code in LANGS}

    def _(key: str, **kw: Any) -> str:
        return t(key, lang, **kw)

    page = ctx.pop("page", "")
    # sentences computed below (plan warnings, checklist findings, errors) in the page's language
    ctx = {k: (_LocalError(v, lang) if isinstance(v, BadInput) else localize(v, lang)) for k, v in ctx.items()}
    html = env().get_template(template).render(_=_, lang=lang, nav=NAV, page=page, switch=switch,
                                               path=request.url.path, max_chars=common.MAX_TEXT_CHARS, **ctx)
    resp = HTMLResponse(html, status_code=status)
    if request.query_params.get("lang"):
        resp.set_cookie(common.LANG_COOKIE, lang, max_age=365 * 86400, samesite="lax", httponly=True)
    return resp


class _LocalError:
    """A BadInput as a template shows it: its message in the page's language, its field and accepted values."""

    def __init__(self, e: BadInput, lang: str):
        self.field, self.accepted = e.field, e.accepted
        self.text = str(localize(getattr(e, "message", str(e)), lang))

    def __str__(self) -> str:
        return self.text


def error_page(request: Request, status: int, message: str) -> HTMLResponse:
    return render(request, "error.html", status=status, page="", message=message, status_code=status)


def json_twin(data: Any, status: int = 200) -> Response:
    return Response(dumps(data), status_code=status, media_type="application/json")


def wants_json(request: Request, form: dict | None = None) -> bool:
    return request.query_params.get("format") == "json" or (form or {}).get("format") == "json"


# --- pages ---------------------------------------------------------------------------------------------------

@router.get("/")
def index(request: Request):
    q = request.url.query
    return RedirectResponse("/offers" + (f"?{q}" if q else ""), status_code=307)


def zone_of(offer: dict) -> str:
    """The zone that tells apart offers equal in every shown column (GCP prices per zone)."""
    for n in offer.get("notes") or []:
        if isinstance(n, str) and n.startswith("zones: "):
            return n[len("zones: "):]
    oid = offer.get("offer_id") or ""
    return oid.split("@", 1)[1].split(":", 1)[0] if "@" in oid else ""


@router.get("/offers")
def offers_page(request: Request):
    from gpuquote.service.offers import FORM_FILTERS, INTERCONNECTS, list_offers, summarize_offers
    from gpuquote.store import SORT_COLUMNS

    q = request.query_params

    def parse() -> dict:
        return {
            "gpu": opt_str(q.get("gpu"), "gpu", 100),
            "memory_gib": opt_float(q.get("memory_gib"), "memory_gib", gt=0),
            "form_factor": opt_choice(q.get("form_factor"), "form_factor", FORM_FILTERS),
            "interconnect": opt_choice(q.get("interconnect"), "interconnect", INTERCONNECTS),
            "min_gpus": opt_float(q.get("min_gpus"), "min_gpus", gt=0),
            "region": opt_str(q.get("region"), "region", 100),
            "provider": providers_of(q.getlist("provider")),
            "spot": opt_bool(q.get("spot"), "spot"),
            "max_price_usd": opt_float(q.get("max_price_usd"), "max_price_usd", ge=0),
            "sort": opt_choice(q.get("sort"), "sort", tuple(sorted(SORT_COLUMNS))) or "price",
            "descending": bool(opt_bool(q.get("desc"), "desc")),
            "limit": opt_int(q.get("limit"), "limit", le=1000) or (None if wants_json(request) else HTML_OFFERS_LIMIT),
            "offset": opt_int(q.get("offset"), "offset", gt=-1, le=10_000_000) or 0,
        }

    # The page opens on the summary by GPU; a GPU filter (a drill-down from a summary row) or view=offers
    # shows the offers themselves.
    view = opt_choice(q.get("view"), "view", ("summary", "offers")) or ("offers" if q.get("gpu") else "summary")
    if wants_json(request):
        args = parse()
        if view == "summary" and not q.get("view") and not q.get("gpu"):
            return json_twin(list_offers(**args))
        if view == "summary":
            return json_twin(summarize_offers(**summary_args(args)))
        return json_twin(list_offers(**args))
    error = data = summary = None
    args = {"gpu": None, "memory_gib": None, "form_factor": None, "interconnect": None, "min_gpus": None,
            "region": None, "provider": None, "spot": None, "max_price_usd": None, "sort": "price",
            "descending": False, "limit": HTML_OFFERS_LIMIT, "offset": 0}
    try:
        args = parse()
        if view == "summary":
            summary = summarize_offers(**summary_args(args))
            data = list_offers(**{**args, "limit": 1, "offset": 0}, facets=True)
        else:
            data = list_offers(**args, facets=True)
    except BadInput as e:
        error = e
        # keep what was typed: the text fields as given, the rest as far as they parse
        for k in ("gpu", "region", "min_gpus", "max_price_usd"):
            if q.get(k):
                args[k] = q.get(k)[:100]
        args["provider"] = providers_of(q.getlist("provider"))
    # the current view as query strings: export links carry every filter and no page (the whole result)
    base = [(k, v) for k, v in q.multi_items() if k not in ("lang", "format", "offset", "limit", "view") and v != ""]
    export_json = "/api/offers?" + urlencode(base)
    export_csv = "/api/offers?" + urlencode([*base, ("format", "csv")])
    summary_csv = "/api/offers/summary?" + urlencode([*[(k, v) for k, v in base if k not in ("sort", "desc")],
                                                       ("format", "csv")])
    keep_limit = [("limit", q["limit"])] if q.get("limit") else []

    def sort_link(key: str) -> str:
        b = [(k, v) for k, v in base if k not in ("sort", "desc")]
        desc = args["sort"] == key and not args["descending"]
        return "/offers?" + urlencode([*b, ("view", "offers"), ("sort", key)] + ([("desc", "1")] if desc else [])
                                      + keep_limit)

    def page_link(offset: int) -> str:
        return "/offers?" + urlencode([*base, ("view", "offers"), *keep_limit, ("offset", str(max(0, offset)))])

    def drill_link(gpu_id: str) -> str:
        return "/offers?" + urlencode([*[(k, v) for k, v in base if k != "gpu"], ("gpu", gpu_id),
                                       ("view", "offers")])

    def provider_link(p: str) -> str:
        return "/offers?" + urlencode([*[(k, v) for k, v in base if k != "provider"], ("provider", p),
                                       ("view", view)])

    def view_link(v: str) -> str:
        return "/offers?" + urlencode([*base, ("view", v)])

    from gpuquote.service.catalog import list_gpus

    gpu_ids = [g["id"] for g in list_gpus()["gpus"]]
    return render(request, "offers.html", status=400 if error else 200, page="offers", data=data, error=error,
                  summary=summary, view=view, f=args, q=q, export_json=export_json, export_csv=export_csv,
                  summary_csv=summary_csv, sort_link=sort_link, page_link=page_link, drill_link=drill_link,
                  view_link=view_link, provider_link=provider_link, zone_of=zone_of,
                  facets=(data or {}).get("facets") or {},
                  interconnects=INTERCONNECTS, form_factors=FORM_FILTERS, memories=MEMORY_CHOICES, gpu_ids=gpu_ids,
                  provider_text=", ".join(args["provider"] or []))


def summary_args(args: dict) -> dict:
    return {k: v for k, v in args.items() if k not in ("sort", "descending", "limit", "offset")}


@router.get("/gpus")
def gpus_page(request: Request):
    from gpuquote.service.catalog import list_gpus, show_gpu

    raw = [x.strip() for v in request.query_params.getlist("ids") for x in v.split(",") if x.strip()]
    if len(raw) > 12:
        raise BadInput("ids: compare at most 12 GPUs at a time", field="ids")
    all_gpus = list_gpus()
    chosen: list[dict] = []
    resolved: list[dict] = []
    for name in raw or ["a100-80gb-sxm4", "h100-80gb-sxm5", "h200-141gb-sxm"]:
        try:
            s = show_gpu(name)
        except BadInput:
            if raw:
                raise
            continue
        resolved.append(s["resolved"])
        chosen.extend(g for g in s["gpus"] if g["id"] not in {c["id"] for c in chosen})
    if wants_json(request):
        return json_twin(all_gpus if not raw else {"resolved": resolved, "gpus": chosen})
    fields = ("vendor", "architecture", "form_factor", "memory_gib", "memory_type", "memory_bandwidth_gbs",
              "fp64_tflops", "tf32_tflops", "bf16_tflops", "fp16_tflops", "fp8_tflops", "int8_tops", "fp4_tflops",
              "nvlink_bandwidth_gbs", "pcie_gen", "tdp_w", "mig_max", "launch_year")
    return render(request, "gpus.html", page="gpus", gpus=all_gpus["gpus"], chosen=chosen, fields=fields,
                  chosen_ids=[c["id"] for c in chosen])


@router.get("/history")
def history_page(request: Request):
    from gpuquote.service.refresh import history

    q = request.query_params
    if wants_json(request):
        gpu = opt_str(q.get("gpu"), "gpu", 100) or "a100-80gb"
        args = {"provider": providers_of(q.getlist("provider")), "since": opt_str(q.get("since"), "since", 20),
                "spot": bool(opt_bool(q.get("spot"), "spot"))}
        return json_twin(history(gpu, **args))
    # a bad value is shown inside the page, in its language, with the form as the user typed it
    raw_gpu = (q.get("gpu") or "")[:100]
    args = {"provider": providers_of(q.getlist("provider")), "since": (q.get("since") or "")[:20] or None,
            "spot": False}
    data = chart = error = None
    try:
        gpu = opt_str(q.get("gpu"), "gpu", 100) or "a100-80gb"
        args["since"] = opt_str(q.get("since"), "since", 20)
        args["spot"] = bool(opt_bool(q.get("spot"), "spot"))
        data = history(gpu, **args)
        chart = charts.history_chart(data, lang_of(request))
    except BadInput as e:
        error, gpu = e, raw_gpu
    from gpuquote.service.refresh import empty_message

    return render(request, "history.html", status=400 if error else 200, page="history", data=data, gpu=gpu,
                  f=args, chart=chart, error=error, provider_text=", ".join(args["provider"] or []),
                  empty=empty_message(data) if data else None)


# --- quote check and TCO ------------------------------------------------------------------------------------------

def _default_quotes() -> dict | None:
    ex = common.examples()["quotes"]
    return next((e for e in ex if e["id"].startswith("a100-quotes") and e["format"] == "yaml"), ex[0] if ex else None)


async def _quote_form(request: Request) -> tuple[dict, str | None, str | None]:
    """The form fields, the quote text (an uploaded file wins over the textarea) and its file name."""
    from starlette.datastructures import UploadFile

    form = await request.form()
    fields = {k: v for k, v in form.items() if isinstance(v, str)}
    text, name = fields.get("text"), None
    up = form.get("file")
    if isinstance(up, UploadFile) and up.filename:
        from gpuquote.web.api import read_upload

        text, name = await read_upload(up), up.filename
        fields["text"] = text
    return fields, text, name


def _form_failure(request: Request, fields: dict, e: Exception) -> tuple[Response | None, BadInput | None, str | None]:
    """A submitted form that failed: the JSON twin answers at once; the page shows the error or what is missing."""
    if isinstance(e, BadInput):
        if wants_json(request, fields):
            return json_twin(e.to_dict(), 400), None, None
        return None, e, None
    if wants_json(request, fields):
        raise e
    return None, None, str(e)


@router.get("/quote-check")
def quote_check_page(request: Request):
    ex = _default_quotes()
    return render(request, "quote_check.html", page="quote_check", form={"text": ex["text"] if ex else "",
                  "utilisation": "1", "rates": ""}, result=None, error=None, unavailable=None)


@router.post("/quote-check")
async def quote_check_submit(request: Request):
    from gpuquote.web.api import run_quote_check

    error = unavailable = result = None
    fields: dict = {}
    try:
        fields, text, name = await _quote_form(request)
        u = opt_float(fields.get("utilisation"), "utilisation", gt=0, le=1) or 1.0
        rates = opt_str(fields.get("rates"), "rates", 500)
        result = run_quote_check(text or "", opt_choice(fields.get("format"), "format", ("yaml", "csv")), name, u,
                                 rates)
        if wants_json(request, fields):
            return json_twin(result)
    except (BadInput, common.NotAvailable) as e:
        answer, error, unavailable = _form_failure(request, fields, e)
        if answer is not None:
            return answer
    form = {"text": fields.get("text", ""), "utilisation": fields.get("utilisation", "1"),
            "rates": fields.get("rates", "")}
    return render(request, "quote_check.html", status=400 if error else 200, page="quote_check", form=form,
                  result=result, error=error, unavailable=unavailable)


@router.get("/tco")
def tco_page(request: Request):
    ex = _default_quotes()
    return render(request, "tco.html", page="tco", form={"text": ex["text"] if ex else "", "buy": "", "rent": "",
                  "utilisation": "0.7", "rates": ""}, result=None, error=None, unavailable=None, chart=None)


@router.post("/tco")
async def tco_submit(request: Request):
    from gpuquote.web.api import TcoRequest, run_tco

    error = unavailable = result = chart = None
    fields: dict = {}
    try:
        fields, text, name = await _quote_form(request)
        u = opt_float(fields.get("utilisation"), "utilisation", gt=0, le=1) or 1.0
        req = TcoRequest(text=text or "", name=name, utilisation=u,
                         buy=providers_of([fields.get("buy", "")]), rent=providers_of([fields.get("rent", "")]),
                         format=opt_choice(fields.get("format"), "format", ("yaml", "csv")))
        rates = common.rate_overrides(opt_str(fields.get("rates"), "rates", 500))
        req.rates = rates or None
        result = run_tco(req)
        if wants_json(request, fields):
            return json_twin(result)
        chart = charts.tco_chart(result, req, lang_of(request))
    except (BadInput, common.NotAvailable) as e:
        answer, error, unavailable = _form_failure(request, fields, e)
        if answer is not None:
            return answer
    form = {"text": fields.get("text", ""), "buy": fields.get("buy", ""), "rent": fields.get("rent", ""),
            "utilisation": fields.get("utilisation", "0.7"), "rates": fields.get("rates", "")}
    return render(request, "tco.html", status=400 if error else 200, page="tco", form=form, result=result,
                  error=error, unavailable=unavailable, chart=chart)
