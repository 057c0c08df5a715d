"""The one JSON encoding of service dicts: the CLI's --json and the web API's bodies use it.

It lives in the service layer because the CLI and the web app are sibling layers that may not import
each other; both import it from here so their bytes stay identical.
"""

from __future__ import annotations

import json
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
