"""Watch rules and their history in the store (SQLAlchemy Core: SQLite or PostgreSQL).

A rule is stored with the state of its last evaluation (which offers were below the threshold, the
plan's cost), so that `watch run` notifies only on a change and never repeats what it already sent.
Every baseline, notification and failed delivery is an event row: the rule's history.

Two `watch run`s at once (a refresh timer and a watch timer, say) must not both send a crossing: a run writes
a rule's new state only if the state is still the one it evaluated (`claim`, one conditional UPDATE), and sends
only after its write won. The run that lost skips the rule; what it would have said is already said.
"""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy import Engine, delete, func, insert, select, update

from gpuquote.errors import BadInput
from gpuquote.store import schema

R = schema.watch_rules
E = schema.watch_events


def _rule(row) -> dict:
    m = dict(row._mapping)
    m["filters"] = json.loads(m["filters"] or "{}")
    m["job"] = json.loads(m["job"]) if m["job"] else None
    m["state_stored"] = m["state"]  # the stored text, for claim()'s comparison
    m["state"] = json.loads(m["state"]) if m["state"] else None
    m["available"] = bool(m["available"])
    return m


def _has_tables(engine: Engine) -> bool:
    with engine.connect() as c:
        return engine.dialect.has_table(c, R.name)


def add_rule(engine: Engine, rule: dict, baseline: dict) -> dict:
    """Insert a validated rule and its baseline event in one transaction; a taken name is BadInput."""
    with engine.begin() as c:
        if c.execute(select(R.c.id).where(R.c.name == rule["name"])).first() is not None:
            raise BadInput(f"NAME: a watch named '{rule['name']}' exists; remove it first or pick another name",
                           field="name")
        vals = {**rule, "filters": json.dumps(rule.get("filters") or {}, sort_keys=True),
                "job": json.dumps(rule["job"], sort_keys=True, default=str) if rule.get("job") else None,
                "state": json.dumps(baseline["state"], sort_keys=True), "last_run_at": baseline["at"],
                "last_value_usd": baseline.get("value_usd")}
        rid = c.execute(insert(R).values(**vals)).inserted_primary_key[0]
        c.execute(insert(E).values(rule_id=rid, at=baseline["at"], event="baseline", old_value_usd=None,
                                   new_value_usd=baseline.get("value_usd"),
                                   offer_ids=json.dumps(baseline.get("offer_ids") or [])))
        row = c.execute(select(R).where(R.c.id == rid)).first()
    return _rule(row)


def list_rules(engine: Engine, names: list[str] | None = None) -> list[dict]:
    """Every rule (or the named ones), oldest first, with its last notification event if any."""
    if not _has_tables(engine):
        return []
    q = select(R).order_by(R.c.id)
    if names:
        q = q.where(R.c.name.in_(names))
    with engine.connect() as c:
        rules = [_rule(r) for r in c.execute(q)]
        counts = dict(c.execute(select(E.c.rule_id, func.count()).group_by(E.c.rule_id)).all())
        for r in rules:
            r["events"] = int(counts.get(r["id"], 0))
            last = c.execute(select(E).where(E.c.rule_id == r["id"], E.c.event.in_(("notified", "failed")))
                             .order_by(E.c.id.desc()).limit(1)).first()
            r["last_event"] = _event(last) if last is not None else None
    return rules


def _event(row) -> dict:
    m = dict(row._mapping)
    m["offer_ids"] = json.loads(m["offer_ids"] or "[]")
    m["payload"] = json.loads(m["payload"]) if m["payload"] else None
    return m


def events(engine: Engine, rule_id: int, limit: int = 50) -> list[dict]:
    with engine.connect() as c:
        return [_event(r) for r in c.execute(select(E).where(E.c.rule_id == rule_id).order_by(E.c.id.desc())
                                             .limit(limit))]


def remove_rule(engine: Engine, name: str) -> dict:
    """Delete a rule and its history; BadInput when there is no such rule."""
    if not _has_tables(engine):
        raise BadInput(f"NAME: no watch named '{name}'; see `gpuquote watch list`", field="name")
    with engine.begin() as c:
        row = c.execute(select(R).where(R.c.name == name)).first()
        if row is None:
            raise BadInput(f"NAME: no watch named '{name}'; see `gpuquote watch list`", field="name")
        c.execute(delete(E).where(E.c.rule_id == row.id))
        c.execute(delete(R).where(R.c.id == row.id))
    return _rule(row)


def _insert_event(c, rule_id: int, at: str, event: dict[str, Any]) -> None:
    c.execute(insert(E).values(rule_id=rule_id, at=at, event=event["event"], old_value_usd=event.get("old_value_usd"),
                               new_value_usd=event.get("new_value_usd"),
                               offer_ids=json.dumps(event.get("offer_ids") or []),
                               payload=json.dumps(event["payload"], default=str) if event.get("payload") else None,
                               error=event.get("error")))


def claim(engine: Engine, rule: dict, *, at: str, state: dict, value_usd: float | None) -> str | None:
    """Write the rule's new state if it is still the stored one this run evaluated; returns the new stored text,
    or None when another run wrote first (this run must then not notify). One conditional UPDATE: atomic on
    SQLite (one writer at a time) and on PostgreSQL (the row is locked, the condition re-checked)."""
    new = json.dumps(state, sort_keys=True)
    old = rule.get("state_stored")
    cond = R.c.state.is_(None) if old is None else R.c.state == old
    with engine.begin() as c:
        n = c.execute(update(R).where(R.c.id == rule["id"], cond)
                      .values(state=new, last_run_at=at, last_value_usd=value_usd)).rowcount
    return new if n == 1 else None


def settle(engine: Engine, rule_id: int, *, at: str, claimed: str, event: dict[str, Any],
           state: dict | None = None) -> None:
    """After a claimed run's delivery: its event, the notification time, and (a failed delivery) the state that
    leaves the crossing unsent, unless yet another run has written since."""
    with engine.begin() as c:
        if event["event"] == "notified":
            c.execute(update(R).where(R.c.id == rule_id).values(last_notified_at=at))
        if state is not None:
            c.execute(update(R).where(R.c.id == rule_id, R.c.state == claimed)
                      .values(state=json.dumps(state, sort_keys=True)))
        _insert_event(c, rule_id, at, event)
