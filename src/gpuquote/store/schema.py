"""Tables of the catalog store (SQLAlchemy Core). Offers are append-only per snapshot.

The current catalog is, per source, the latest snapshot whose status is `good` (table `current`).
Bump SCHEMA_VERSION and add a step to MIGRATIONS when the schema changes.
"""

from __future__ import annotations

from sqlalchemy import (
    Boolean,
    Column,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Table,
    Text,
)

from gpuquote.store.version import SCHEMA_VERSION  # noqa: E402,F401  (re-exported)

metadata = MetaData()

meta = Table("meta", metadata, Column("key", String(64), primary_key=True), Column("value", Text))

snapshots = Table(
    "snapshots", metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("source", String(64), nullable=False, index=True),
    Column("status", String(16), nullable=False),  # good | refused
    Column("fetched_at", String(40), nullable=False),
    Column("imported_at", String(40), nullable=False),
    Column("offers_count", Integer, nullable=False, default=0),
    Column("repaired", Integer, nullable=False, default=0),
    Column("skipped", Integer, nullable=False, default=0),
    Column("skip_reasons", Text),  # JSON {reason: count}
    Column("reason", Text),  # why refused
    Column("provenance", Text),  # JSON: where the data came from
)

current = Table(
    "current", metadata,
    Column("source", String(64), primary_key=True),
    Column("snapshot_id", Integer, ForeignKey("snapshots.id"), nullable=False),
)

raw_responses = Table(
    "raw_responses", metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("snapshot_id", Integer, ForeignKey("snapshots.id"), nullable=False, index=True),
    Column("name", String(255), nullable=False),
    Column("content_type", String(64)),
    Column("gzip", LargeBinary, nullable=False),
)

offers = Table(
    "offers", metadata,
    Column("pk", Integer, primary_key=True, autoincrement=True),
    Column("snapshot_id", Integer, ForeignKey("snapshots.id"), nullable=False),
    # 1 while the row's snapshot is its source's current one: lets indexes serve current-catalog queries
    Column("is_current", Integer, nullable=False, default=0),
    Column("offer_id", String(255), nullable=False),
    Column("provider", String(64), nullable=False),
    Column("region", String(128)),
    Column("sku", String(255)),
    Column("gpu_id", String(64), nullable=False),
    Column("gpu_count", Float, nullable=False),
    Column("gpu_memory_gib", Float),
    Column("gpu_exclusive", String(64)),
    Column("form_factor", String(16)),
    Column("intra_node", String(16)),
    Column("vcpus", Float),
    Column("cpu_model", String(255)),
    Column("ram_gib", Float),
    Column("nvme_gib", Float),
    Column("inter_node_kind", String(16)),
    Column("inter_node_gbps", Float),
    Column("price_amount", Float, nullable=False),
    Column("price_currency", String(8), nullable=False),
    Column("price_per", String(8), nullable=False),
    Column("term_months", Float),
    Column("billing_granularity_s", Integer),
    Column("spot", Boolean, nullable=False),
    Column("covers", Text),
    Column("extras", Text),
    Column("available", Boolean),
    Column("source", String(255)),
    Column("fetched_at", String(40), nullable=False),
    Column("usd_per_gpu_hour", Float),
    Column("usd_per_node_hour", Float),
    Column("notes", Text),
    Column("form", String(16), nullable=False, server_default="rental"),  # rental | purchase | term
    Column("nvme_write_gbs", Float),  # stated sequential write GB/s per node (quotes' nvme.write_gbs)
    Index("ix_offers_snapshot", "snapshot_id"),
    Index("ix_offers_current_gpu", "is_current", "gpu_id", "usd_per_gpu_hour"),
    Index("ix_offers_current_provider", "is_current", "provider", "region", "offer_id"),
)

# version -> list of SQL statements that bring a store from version-1 to version
MIGRATIONS: dict[int, list[str]] = {
    # 2: offers.form (rental | purchase | term); quotes imported before it say their form in the notes
    2: ["ALTER TABLE offers ADD COLUMN form VARCHAR(16) NOT NULL DEFAULT 'rental'",
        "UPDATE offers SET form = 'purchase' WHERE source LIKE 'quote:%' AND notes LIKE '%: form purchase%'",
        "UPDATE offers SET form = 'term' WHERE form = 'rental' AND source LIKE 'quote:%' "
        "AND (term_months IS NOT NULL OR notes LIKE '%: form reserved%')"],
    # 3: the watch tables below (`migrate` creates missing tables; the step records the version)
    3: [],
    # 4: offers.nvme_write_gbs (a quote's stated NVMe write speed, which plans use for checkpoints)
    4: ["ALTER TABLE offers ADD COLUMN nvme_write_gbs FLOAT"],
}
# --- watches (`gpuquote watch`): rules on offers or a job's best plan, and what each evaluation sent ---------
# New tables only: `migrate` creates them in an existing store (create_all); schema version 3.
watch_rules = Table(
    "watch_rules", metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("name", String(100), nullable=False, unique=True),
    Column("kind", String(16), nullable=False),  # offers | plan
    Column("filters", Text, nullable=False),  # JSON: offer filters (both kinds)
    Column("job", Text),  # JSON job mapping (plan rules)
    Column("below", Float),  # threshold in `currency`: per GPU-hour (offers) or the job's total (plan)
    Column("currency", String(8), nullable=False),
    Column("available", Boolean, nullable=False, default=False),  # offers: only offers reported available
    Column("notify", String(1000), nullable=False),  # webhook:URL | email:ADDR | stdout
    Column("created_at", String(40), nullable=False),
    Column("state", Text),  # JSON: what the last evaluation saw (offer ids and prices below, plan cost)
    Column("last_run_at", String(40)),
    Column("last_value_usd", Float),  # best price or plan cost at the last evaluation
    Column("last_notified_at", String(40)),
)

watch_events = Table(
    "watch_events", metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("rule_id", Integer, ForeignKey("watch_rules.id", ondelete="CASCADE"), nullable=False, index=True),
    Column("at", String(40), nullable=False),
    Column("event", String(16), nullable=False),  # baseline | notified | failed | error
    Column("old_value_usd", Float),
    Column("new_value_usd", Float),
    Column("offer_ids", Text),  # JSON list
    Column("payload", Text),  # JSON: the body sent
    Column("error", Text),
)
