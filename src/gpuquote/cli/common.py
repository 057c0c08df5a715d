"""Output helpers shared by the commands: JSON that equals the API body, Rich tables, CSV."""

from __future__ import annotations

import json
import sys
from datetime import date, datetime
from typing import Any


def _default(o: Any) -> Any:
    if isinstance(o, datetime | date):
        return o.isoformat()
    if hasattr(o, "model_dump"):
        return o.model_dump(mode="json")
    if hasattr(o, "to_dict"):
        return o.to_dict()
    if isinstance(o, set | tuple):
        return list(o)
    try:  # numpy scalars
        return o.item()
    except AttributeError:
        raise TypeError(f"not JSON serialisable: {type(o).__name__}") from None


def dumps(data: Any) -> str:
    """The one JSON encoding used by the CLI's --json and the web API."""
    return json.dumps(data, default=_default, ensure_ascii=False, indent=2)


def print_json(data: Any) -> None:
    sys.stdout.write(dumps(data) + "\n")


def print_csv(rows: list[dict], columns: list[str]) -> None:
    import csv

    w = csv.DictWriter(sys.stdout, fieldnames=columns, extrasaction="ignore", lineterminator="\n")
    w.writeheader()
    for r in rows:
        w.writerow({k: ("" if r.get(k) is None else r.get(k)) for k in columns})


def console():
    from rich.console import Console

    return Console()


def fmt_num(v: Any, digits: int = 2, unknown: str = "?") -> str:
    if v is None:
        return unknown
    if isinstance(v, float):
        return f"{v:,.{digits}f}"
    return str(v)
