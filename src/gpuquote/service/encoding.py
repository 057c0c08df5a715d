"""The one JSON encoding of service dicts: the CLI's --json and the web API's bodies use it.

It lives in the service layer because the CLI and the web app are sibling layers that may not import
each other; both import it from here so their bytes stay identical.
"""

from __future__ import annotations

import json
from datetime import date, datetime
from typing import Any

import orjson


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


#: orjson: ~10x the speed of json.dumps with indent (which falls back to the pure-Python encoder), so a
#: 2,000-quote check encodes in a tenth of a second. Dataclasses and datetimes go through _default (their
#: to_dict / isoformat), as they did with json.
_OPTS = (orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS | orjson.OPT_SERIALIZE_NUMPY
         | orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_DATETIME)


def dumps_bytes(data: Any) -> bytes:
    """dumps as UTF-8 bytes (the web API's body)."""
    try:
        return orjson.dumps(data, default=_default, option=_OPTS)
    except orjson.JSONEncodeError as e:
        if "Integer exceeds" not in str(e):  # not serialisable: the same TypeError json gave
            raise TypeError(str(e)) from None
        return json.dumps(data, default=_default, ensure_ascii=False, indent=2).encode("utf-8")


def dumps(data: Any) -> str:
    """The one JSON encoding used by the CLI's --json and the web API (NaN and infinity are written null)."""
    return dumps_bytes(data).decode("utf-8")
