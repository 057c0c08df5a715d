"""Offers and quotes: the Offer type, prices and their normalisation, currencies.

The names below load on first use (PEP 562): `gpuquote.offers.currency` is read by the CLI's fast `offers`
listing, which must not pay for Pydantic's import when it prints a table from the store.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

_WHERE = {"PER": "model", "InterNode": "model", "Offer": "model", "Price": "model", "offer_id": "model",
          "HOURS_PER": "normalize", "usd_per_gpu_hour": "normalize", "usd_per_node_hour": "normalize"}

if TYPE_CHECKING:
    from gpuquote.offers.model import PER, InterNode, Offer, Price, offer_id
    from gpuquote.offers.normalize import HOURS_PER, usd_per_gpu_hour, usd_per_node_hour


def __getattr__(name: str):
    if name in _WHERE:
        value = getattr(importlib.import_module(f"gpuquote.offers.{_WHERE[name]}"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'gpuquote.offers' has no attribute {name!r}")


__all__ = ["PER", "HOURS_PER", "InterNode", "Offer", "Price", "offer_id", "usd_per_gpu_hour", "usd_per_node_hour"]
