"""Helpers shared by the API adapters: lenient JSON reading, numbers, prices, offer building.

"Liberal in what we accept": pages may come wrapped ({"Items": [...]}) or bare ([...]), as one
file or many; numbers may be strings. Anything that is not an offer we can price is skipped with a
counted reason, never guessed.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from typing import Any

from pydantic import ValidationError

from gpuquote.errors import BadInput
from gpuquote.i18n import t
from gpuquote.offers import Offer
from gpuquote.sources.base import GpuFields, ParseResult
from gpuquote.sources.http import Raw


def load_json(source: str, item: Raw) -> Any:
    from gpuquote.safeload import load_json as bounded_json

    name, _, body = item
    head = body[:2048].lstrip().lower()
    if head.startswith((b"<!doctype html", b"<html", b"<head", b"<body", b"<?xml", b"<")):
        m = re.search(rb"<title[^>]*>(.*?)</title>", body[:65536], re.IGNORECASE | re.DOTALL)
        title = " ".join(m.group(1).decode("utf-8", "replace").split())[:80] if m else "no title"
        raise BadInput(t("hostile.html_page", source=source, name=name, title=title), field="PATH")
    try:
        doc = bounded_json(body, name, max_depth=None)
    except BadInput as e:
        raise BadInput(f"{source}: {name} is not a JSON response ({str(e).removeprefix(name + ': ')[:160]})",
                       field="PATH") from None
    error_body(source, name, doc)
    return doc


_KEY_WORDS = re.compile(r"api[ _-]?key|unauthori[sz]ed|forbidden|authenticat|invalid token|access denied|"
                        r"credential", re.IGNORECASE)


def _message(v: Any) -> str:
    if isinstance(v, dict):
        v = v.get("message") or v.get("detail") or v.get("error_description") or v.get("code") or v
    if isinstance(v, list) and v:
        return _message(v[0])
    return " ".join(str(v).split())[:160]


def error_body(source: str, name: str, doc: Any) -> None:
    """Raise BadInput naming a provider's error answer (GraphQL `errors`, `{"error": ...}`, a refused key).

    Such a body parses as JSON but holds no prices; said plainly, it is not mistaken for an empty list.
    """
    if not isinstance(doc, dict):
        return
    if isinstance(doc.get("errors"), list) and doc["errors"] and not doc.get("data"):
        msg = _message(doc["errors"])
        key = "hostile.api_key" if _KEY_WORDS.search(msg) else "hostile.graphql_errors"
        raise BadInput(t(key, source=source, name=name, message=msg), field="PATH")
    err = doc.get("error") or (doc.get("message") if len(doc) <= 3 and "message" in doc else None)
    data_keys = {"data", "Items", "items", "value", "offers", "products", "skus", "instances", "terms"}
    if err and not (data_keys & set(doc)):
        msg = _message(err)
        key = "hostile.api_key" if _KEY_WORDS.search(msg) or _KEY_WORDS.search(str(doc.get("code", ""))) \
            else "hostile.api_error"
        raise BadInput(t(key, source=source, name=name, message=msg), field="PATH")


def records(doc: Any, keys: tuple[str, ...]) -> list[Any]:
    """The records of a page under any of `keys`, or the page itself when it is a bare list.

    A list of wrapped pages ([{"Items": [...]}, {"Items": [...]}]) is flattened too.
    """
    if isinstance(doc, list):
        if doc and all(isinstance(d, dict) and any(k in d for k in keys) for d in doc):
            return [r for d in doc for r in records(d, keys)]
        return doc
    if isinstance(doc, dict):
        for k in keys:
            if k in doc:
                v = doc[k]
                if isinstance(v, list):
                    return v
                if isinstance(v, dict):
                    inner = records(v, keys)
                    return inner if inner else [v]
        return []
    return []


def num(v: Any) -> float | None:
    """A finite number from a number or numeric string; None for anything else (bools included)."""
    if v is None or isinstance(v, bool):
        return None
    if isinstance(v, int | float):
        x = float(v)
    elif isinstance(v, str):
        try:
            x = float(v.strip().replace(",", ""))
        except ValueError:
            return None
    else:
        return None
    return x if math.isfinite(x) else None


def price_or_skip(result: ParseResult, value: Any, what: str = "price") -> float | None:
    """A usable positive price, or None after counting why it is not."""
    if value is None or value == "":
        result.skip(f"missing {what}")
        return None
    x = num(value)
    shown = " ".join(repr(value).split())[:40]
    if x is None:
        result.skip(f"{what} is not a number", f"{what} {shown}")
        return None
    if x < 0:
        result.skip(f"negative {what}", f"{what} {shown}")
        return None
    if x == 0:
        result.skip(f"zero {what} (not offered)", f"{what} {shown}")
        return None
    return x


def build(result: ParseResult, **fields: Any) -> Offer | None:
    """An Offer, or None with the failing field counted as the skip reason."""
    try:
        return Offer(**fields)
    except ValidationError as e:
        err = e.errors()[0]
        loc = ".".join(str(x) for x in err.get("loc", ())) or "offer"
        result.skip(f"invalid {loc}: {err.get('msg', 'invalid')}")
        return None


def fact_notes(g: GpuFields) -> list[str]:
    notes = list(g.notes)
    if g.facts and g.facts.note:
        notes.append(f"{g.facts.note} ({g.facts.source})")
    return notes


def add_unique(result: ParseResult, offers: Iterable[Offer]) -> None:
    """Append offers; a repeated id keeps the cheaper one (a duplicate row) and counts it."""
    seen = {o.id: i for i, o in enumerate(result.offers)}
    for o in offers:
        i = seen.get(o.id)
        if i is None:
            seen[o.id] = len(result.offers)
            result.offers.append(o)
            continue
        result.corrections["duplicate offer id: kept the lower price"] += 1
        if o.price.amount < result.offers[i].price.amount:
            result.offers[i] = o


def memory_gib_from_mb(mb: Any) -> float | None:
    """Marketplace 'MB' memory (vast gpu_ram 81559 for an 80 GB card) to GiB."""
    x = num(mb)
    return x / 1024 if x and x > 0 else None


def currency_or_skip(result: ParseResult, code: Any, default: str = "USD") -> str | None:
    """A currency we hold a rate for (missing means the source's default), else None with a reason."""
    from gpuquote.offers.currency import rate

    cur = str(code).strip().upper() if code not in (None, "") else default
    try:
        rate(cur)
    except BadInput:
        result.skip(f"unknown currency {cur}")
        return None
    return cur


def csv_rows(reader: Iterable, result: ParseResult):
    """Rows of a csv reader; a row the csv module cannot read (a 5 MB cell, a NUL byte) is skipped and
    counted instead of ending the import with an internal error."""
    import csv

    it = iter(reader)
    while True:
        try:
            row = next(it)
        except StopIteration:
            return
        except csv.Error as e:
            result.skip(f"unreadable CSV row ({' '.join(str(e).split())[:80]})")
            continue
        yield row
