"""Constants about offers that light readers need without the Offer model (the CLI's fast listing)."""

from __future__ import annotations

#: What the price buys: pay-as-you-go `rental`, a committed `term` (reserved / term_months), or a `purchase`
#: (its hourly price is a TCO, never a rental rate).
OFFER_FORMS = ("rental", "purchase", "term")
