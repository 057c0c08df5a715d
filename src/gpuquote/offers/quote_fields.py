"""Reading the fields of one raw quote: numbers, choices, currencies, texts, each bad value collected.

`_Reader` is the toolkit that offers.quote_reader uses field by field; a bad field is recorded with its
accepted values (in the reader's language where they have words), never raised, so one bad quote is one
QuoteError line that lists all of its fields.
"""

from __future__ import annotations

import math
import re
from typing import Any

from gpuquote.errors import BadInput
from gpuquote.i18n import Msg, t
from gpuquote.offers.currency import currencies, rate
from gpuquote.offers.tco import Money

#: C0 controls (but tab and newline), DEL, and the bidi controls (Trojan Source: text shown in another order)
_UNSAFE_TEXT = re.compile("[\x00-\x08\x0b-\x1f\x7f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


class _Reader:
    """Reads one raw quote (a dict of YAML values or CSV strings), collecting every field error."""

    def __init__(self, raw: dict, overrides: dict[str, float] | None):
        self.raw = raw
        self.errors: list[tuple[str, str, list[str] | None]] = []
        self.overrides = overrides or {}

    def err(self, fld: str, msg: str, accepted: list[str] | None = None) -> None:
        self.errors.append((fld, msg, accepted))

    @staticmethod
    def blank(v: Any) -> bool:
        return v is None or (isinstance(v, str) and not v.strip())

    def num(self, fld: str, v: Any, *, lo: float | None = 0.0, gt: bool = False, hi: float | None = None,
            accepted: str | None = None) -> float | None:
        if self.blank(v):
            return None
        if isinstance(v, bool):
            return self._bad_num(fld, Msg("quote.e.not_number", value=repr(v)), lo, gt, accepted)
        if isinstance(v, str):
            s = v.strip().replace(",", "").replace("_", "").replace(" ", "")
            pct = s.endswith("%")
            try:
                x = float(s[:-1]) / 100 if pct else float(s)
            except ValueError:
                return self._bad_num(fld, Msg("quote.e.not_number", value=f"'{v}'"), lo, gt, accepted)
        elif isinstance(v, int | float):
            x = float(v)
        else:
            return self._bad_num(fld, Msg("quote.e.not_number", value=type(v).__name__), lo, gt, accepted)
        if math.isnan(x) or math.isinf(x):
            return self._bad_num(fld, Msg("quote.e.not_finite", value=f"'{v}'"), lo, gt, accepted)
        if lo is not None and (x < lo or (gt and x == lo)):
            return self._bad_num(fld, Msg("quote.e.not_positive" if gt and lo == 0 else "quote.e.out_of_range",
                                          value=_show(v)), lo, gt, accepted)
        if hi is not None and x > hi:
            return self._bad_num(fld, Msg("quote.e.out_of_range", value=_show(v)), lo, gt, accepted)
        return x

    def _bad_num(self, fld: str, msg: str, lo: float | None, gt: bool, accepted: str | None) -> None:
        """Record a bad number with its accepted values (built only here: a file's good numbers are most of
        its fields, and each phrase is a catalog message)."""
        acc = _acc(accepted) if accepted else (Msg("quote.acc.number_op", op=">" if gt else ">=", lo=f"{lo:g}")
                                               if lo is not None else Msg("quote.acc.number"))
        self.err(fld, msg, [acc])
        return None

    def text(self, fld: str, v: Any) -> str | None:
        if self.blank(v):
            return None
        if isinstance(v, dict | list):
            self.err(fld, Msg("quote.e.expected_text"), [Msg("quote.acc.text")])
            return None
        s = str(v).strip()
        m = _UNSAFE_TEXT.search(s)
        if m is not None:
            bad = m.group(0)  # a bidi override shows text in another order than it is read (Trojan Source)
            self.err(fld, t("hostile.control_char", code=f"{ord(bad):04X}"), [Msg("quote.acc.plain_text")])
            return None
        if len(s) > 20000:
            self.err(fld, f"{len(s)} characters", ["at most 20000 characters"])
            return None
        return s

    def choice(self, fld: str, v: Any, accepted: tuple[str, ...], aliases: dict[str, str] | None = None) -> str | None:
        if self.blank(v):
            return None
        s = str(v).strip().lower().replace("-", "_") if fld == "form" else str(v).strip().lower()
        s = (aliases or {}).get(s, s)
        if s not in accepted:
            self.err(fld, Msg("quote.e.not_accepted", value=f"'{v}'"), list(accepted))
            return None
        return s

    def boolean(self, fld: str, v: Any) -> bool | None:
        if self.blank(v):
            return None
        if isinstance(v, bool):
            return v
        s = str(v).strip().lower()
        if s in ("true", "yes", "1", "y"):
            return True
        if s in ("false", "no", "0", "n"):
            return False
        self.err(fld, Msg("quote.e.not_bool", value=f"'{v}'"), ["true", "false"])
        return None

    def currency(self, fld: str, v: Any, default: str | None = None) -> str | None:
        if self.blank(v):
            if default:
                return default
            self.err(fld, Msg("quote.e.not_stated"),
                     [Msg("quote.acc.currency", codes=", ".join(["USD", *currencies()][:6]))])
            return None
        from gpuquote.offers.currency import canonical

        cur = canonical(str(v))
        if cur in self.overrides:
            return cur
        try:
            rate(cur)
        except BadInput:
            self.err(fld, Msg("quote.e.currency", value=v), ["USD", *currencies()])
            return None
        return cur

    def mapping(self, fld: str, v: Any) -> dict | None:
        if self.blank(v):
            return None
        if not isinstance(v, dict):
            self.err(fld, Msg("quote.e.expected_mapping"), [f"{fld}: {{...}}"])
            return None
        return v

    def strlist(self, fld: str, v: Any) -> list[str] | None:
        if v is None:
            return None
        if isinstance(v, str):
            s = v.strip()
            if s.lower() in ("none", "nothing", "[]"):
                return []
            if not s:
                return None
            return [p.strip().lower() for p in re.split(r"[;,|]", s) if p.strip()]
        if isinstance(v, list):
            return [str(p).strip().lower() for p in v if str(p).strip()]
        self.err(fld, Msg("quote.e.expected_list"), [Msg("quote.acc.list")])
        return None

    def money(self, fld: str, v: Any, *, default_currency: str, default_per: str,
              pers: tuple[str, ...]) -> Money | None:
        if self.blank(v):
            return None
        if not isinstance(v, dict):
            v = {"amount": v}
        amount = self.num(f"{fld}.amount", v.get("amount"))
        if amount is None and self.blank(v.get("amount")):
            self.err(f"{fld}.amount", Msg("quote.e.not_stated"), [Msg("quote.acc.number_op", op=">=", lo="0")])
        cur = self.currency(f"{fld}.currency", v.get("currency"), default_currency)
        per = self.choice(f"{fld}.per", v.get("per"), pers) or default_per
        if amount is None or cur is None:
            return None
        return Money(amount, cur, per)


#: The accepted values written in English words, as catalog messages (the others are units and numbers).
_ACCEPTED = {"a number > 0": ("quote.acc.number_op", {"op": ">", "lo": "0"}),
             "a number of months > 0": ("quote.acc.months", {}), "seconds > 0": ("quote.acc.seconds", {}),
             "years > 0": ("quote.acc.years", {}), "a fraction 0..1": ("quote.acc.fraction", {}),
             "an annual rate 0..1, e.g. 0.06 or '6%'": ("quote.acc.annual_rate", {}),
             "GB/s, or text like '2 TB/s'": ("quote.acc.bandwidth", {}),
             "a number >= 1.0 (1.0 = no cooling overhead)": ("quote.acc.pue", {})}


def _acc(text: str) -> str:
    """An accepted-values phrase in the reader's language where it has words."""
    key = _ACCEPTED.get(text)
    return Msg(key[0], **key[1]) if key else text


def _show(v: Any) -> str:
    return f"'{v}'" if isinstance(v, str) else f"{v:g}" if isinstance(v, float) else str(v)
