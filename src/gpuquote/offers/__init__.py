"""Offers and quotes: the Offer type, prices and their normalisation, currencies."""

from gpuquote.offers.model import PER, InterNode, Offer, Price, offer_id
from gpuquote.offers.normalize import HOURS_PER, usd_per_gpu_hour, usd_per_node_hour

__all__ = ["PER", "HOURS_PER", "InterNode", "Offer", "Price", "offer_id", "usd_per_gpu_hour", "usd_per_node_hour"]
