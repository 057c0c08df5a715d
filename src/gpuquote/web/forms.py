"""Lenient parsing of HTML form fields: "" means "any"; a bad value is BadInput naming the field.

The pages (web/pages.py, web/rfq_watch.py) hand the parsed values to the same service functions as the API.
"""

from __future__ import annotations

import math
from typing import Any

from gpuquote.errors import BadInput


def opt_str(v: Any, field: str, max_len: int = 200) -> str | None:
    if v is None:
        return None
    s = str(v).strip()
    if len(s) > max_len:
        raise BadInput(f"{field}: at most {max_len} characters", field=field)
    return s or None


def opt_float(v: Any, field: str, *, gt: float | None = None, ge: float | None = None,
              le: float | None = None) -> float | None:
    s = opt_str(v, field, 50)
    if s is None:
        return None
    try:
        x = float(s)
    except ValueError:
        raise BadInput(f"{field}: '{s}' is not a number", field=field) from None
    if not math.isfinite(x) or (gt is not None and x <= gt) or (ge is not None and x < ge) or \
            (le is not None and x > le):
        bound = " and ".join(b for b in ((f"> {gt:g}" if gt is not None else ""),
                                         (f">= {ge:g}" if ge is not None else ""),
                                         (f"<= {le:g}" if le is not None else "")) if b)
        raise BadInput(f"{field}: must be a finite number {bound}, got {s}", field=field)
    return x


def opt_int(v: Any, field: str, *, gt: int = 0, le: int = 100000) -> int | None:
    x = opt_float(v, field, gt=gt, le=le)
    if x is None:
        return None
    if not x.is_integer():
        raise BadInput(f"{field}: must be a whole number, got {x:g}", field=field)
    return int(x)


def opt_choice(v: Any, field: str, choices: tuple[str, ...]) -> str | None:
    s = opt_str(v, field, 50)
    if s is not None and s not in choices:
        raise BadInput(f"{field}: '{s}' is not one of {', '.join(choices)}", field=field, accepted=list(choices))
    return s


def opt_bool(v: Any, field: str) -> bool | None:
    s = opt_str(v, field, 10)
    if s is None:
        return None
    if s.lower() in ("1", "true", "yes", "on", "spot"):
        return True
    if s.lower() in ("0", "false", "no", "off", "on-demand", "ondemand"):
        return False
    raise BadInput(f"{field}: '{s}' is not one of true, false", field=field, accepted=["true", "false"])


def providers_of(values: list[str]) -> list[str] | None:
    out = [p.strip() for v in values for p in v.split(",") if p.strip()]
    return out or None
