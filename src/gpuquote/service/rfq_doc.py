"""Render a request for quotes (service.rfq) as a Markdown document or a YAML quote-file template.

The YAML is a valid quote file (DESIGN.md section 3) with every field pre-filled from the request and
`price.amount` left empty: `quote check` refuses it until the vendor fills the price, then checks it
like any other quote, and `plan --quotes` ranks it. Comments (in the request's language) say why.
"""

from __future__ import annotations

import json
from typing import Any

from gpuquote.i18n import t


def _md_cell(s: Any) -> str:
    return str(s).replace("|", "\\|").replace("\n", " ")


def render_markdown(rfq: dict) -> str:
    lang = rfq["lang"]
    out = [f"# {rfq['title']}", "",
           t("rfq.doc.meta", lang, date=rfq["date"], currency=rfq["currency"]), "",
           f"## {t('rfq.doc.overview', lang)}", "", rfq["summary"], "", rfq["basis"]["text"], "",
           f"## {t('rfq.doc.spec', lang)}", "",
           f"| {t('rfq.doc.col.item', lang)} | {t('rfq.doc.col.need', lang)} | {t('rfq.doc.col.why', lang)} |",
           "|---|---|---|"]
    for r in rfq["requirements"]:
        out.append(f"| {_md_cell(r['label'])} | {_md_cell(r['text'])} | {_md_cell(r['reason'])} |")
    out += ["", f"## {t('rfq.doc.questions', lang)}", ""]
    out += [f"{q['item']}. {q['question']}" for q in rfq["questions"]]
    out += ["", f"## {t('rfq.doc.production', lang)}", ""]
    out += [f"- {p['question']}" for p in rfq["production"]]
    out += ["", f"## {t('rfq.doc.reply', lang)}", "", t("rfq.doc.reply_text", lang), ""]
    return "\n".join(out)


def _flow(v: Any) -> str:
    """A YAML scalar or flow collection (JSON is valid YAML); None stays empty for the vendor."""
    if v is None:
        return ""
    if isinstance(v, dict):
        return "{" + ", ".join(f"{k}: {_flow(x) or 'null'}" for k, x in v.items()) + "}"
    if isinstance(v, list):
        return "[" + ", ".join(_flow(x) for x in v) + "]"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int | float):
        return f"{v:g}" if isinstance(v, float) else str(v)
    return json.dumps(v, ensure_ascii=False)


#: template field -> the requirement whose reason is its comment
_WHY = {"gpu": "gpu", "gpu_count": "gpu_count", "intra_node": "form_factor", "exclusive": "exclusive",
        "cpu": "cpu", "ram_gb": "ram", "nvme": "nvme", "network": "network", "region": "region",
        "billing": "billing", "covers": "covers"}


def render_yaml(rfq: dict) -> str:
    lang = rfq["lang"]
    why = {r["key"]: r["reason"] for r in rfq["requirements"]}
    q = rfq["quote_template"]
    lines = [f"# {rfq['title']} ({rfq['date']})", f"# {rfq['summary']}",
             *(f"# {ln}" for ln in t("rfq.yaml.header", lang).splitlines()), "quotes:"]
    first = True
    for k, v in q.items():
        if k == "price":
            body, comment = _flow({**v, "amount": None}), t("rfq.yaml.price", lang)
        elif k == "vendor":
            body, comment = '""', t("rfq.yaml.vendor", lang)
        elif k == "cpu":
            body, comment = _flow(v), t("rfq.yaml.cpu", lang) + " " + why["cpu"]
        elif k == "production":
            body, comment = '{node_failure: "", drivers: ""}', t("rfq.yaml.production", lang)
        elif k == "covers":
            body, comment = _flow(v), t("rfq.yaml.covers", lang)
        else:
            body = _flow(v) if v != "" else '""'
            comment = why.get(_WHY.get(k, ""), "")
        lead = "  - " if first else "    "
        first = False
        lines.append(f"{lead}{k}: {body}" + (f"   # {comment}" if comment else ""))
    return "\n".join(lines) + "\n"
