"""Live prices: fetch a source (or read a downloaded response), parse, store one snapshot per source.

`refresh`, `import_source` and `reparse` all end in the same step: the adapter's pure parse of raw
responses, then one `store.import_offers` transaction per store source (integrity checks decide
whether it becomes current). The raw responses are archived with the snapshot so that a parse
bug can be fixed and re-run (`reparse`, `refresh --from-archive`) without refetching.
"""

from __future__ import annotations

import hashlib
import os
import re
import time
from collections.abc import Callable, Mapping
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

from gpuquote.errors import BadInput, StoreError
from gpuquote.i18n import t
from gpuquote.sources import registry
from gpuquote.sources.base import ParseResult
from gpuquote.sources.http import FetchError, Http, Raw, make_client

Progress = Callable[[str, str, str], None]  # (source, event, detail); events: start request parse store done
MAX_IMPORT_FILES = 1000
_CTYPES = {".json": "application/json", ".csv": "text/csv", ".gz": "application/gzip"}


def _engine():
    from gpuquote.store import write_engine

    return write_engine()


def _checks(adapter: registry.Adapter):
    from gpuquote.store import integrity

    return integrity.MARKETPLACE if adapter.name == "vast" else integrity.DEFAULT


def _store(engine, adapter: registry.Adapter, results: list[ParseResult], raw: list[Raw], *, mode: str,
           fetched_at: datetime, provenance: dict, force: bool) -> list[dict]:
    from gpuquote.store import import_offers

    out = []
    for res in results:
        blobs = res.raw or raw
        prov = {**provenance, **(res.provenance or {}), "mode": mode, "adapter": adapter.name,
                "raw_files": [n for n, _, _ in blobs], "corrections": dict(res.corrections), "forced": force}
        r = import_offers(engine, res.source, res.offers, repaired=res.repaired, skipped=res.skipped,
                          skip_reasons=dict(res.skip_reasons.most_common()), provenance=prov, raw=blobs,
                          check=not force, fetched_at=res.fetched_at or fetched_at, checks=_checks(adapter),
                          skip_examples=dict(res.skip_examples))
        d = r.to_dict()
        d.update({"corrections": dict(res.corrections), "fetched_at": (res.fetched_at or fetched_at).isoformat(),
                  "mode": mode, "raw_files": len(blobs)})
        out.append(d)
    return out


def _combine(name: str, parts: list[dict]) -> dict:
    """One dict for an import that produced one or several snapshots (SkyPilot: one per cloud)."""
    if len(parts) == 1:
        return {**parts[0], "results": parts}
    statuses = {p["status"] for p in parts}
    skip: dict[str, int] = {}
    examples: dict[str, str] = {}
    for p in parts:
        for k, v in p["skip_reasons"].items():
            skip[k] = skip.get(k, 0) + v
        for k, v in (p.get("skip_examples") or {}).items():
            examples.setdefault(k, v)
    return {"source": name, "snapshot_id": None, "status": statuses.pop() if len(statuses) == 1 else "partial",
            "imported": sum(p["imported"] for p in parts), "repaired": sum(p["repaired"] for p in parts),
            "skipped": sum(p["skipped"] for p in parts), "skip_reasons": skip, "skip_examples": examples,
            "reasons": [f"{p['source']}: {r}" for p in parts for r in p["reasons"]], "results": parts}


_NOTE_SUFFIXES = {".md", ".txt", ".rst", ".headers"}
#: What a folder of a source's pages holds (named when a folder holds none).
_LOOKS_FOR = {"skypilot": "<cloud>/vms.csv files", "aws": "*.json or *.csv price-list files (.gz ok)"}
#: fetched_at of an import whose data says nothing and no --fetched-at: shown as "date unknown", stale.
DATE_UNKNOWN = datetime(1970, 1, 1, tzinfo=UTC)
_STAMP_KEYS = re.compile(rb'"(publicationDate|fetched_at|fetchedAt|generated_at|generatedAt|retrieved_at|'
                         rb'timestamp)"\s*:\s*"([^"]{8,40})"')
_NOTE_DATE = re.compile(r"(?:fetched|downloaded|retrieved|copied|snapshot|mirror(?:ed)?)\D{0,40}?"
                        r"(\d{4}-\d{2}-\d{2})", re.IGNORECASE)
_NAME_DATE = re.compile(r"(?<!\d)(20\d{2}-\d{2}-\d{2})(?!\d)")


def parse_fetched_at(text: str | None) -> datetime | None:
    """--fetched-at: an ISO date or date-time (UTC unless it says otherwise); BadInput names the flag."""
    if text is None or not str(text).strip():
        return None
    try:
        d = datetime.fromisoformat(str(text).strip().replace("Z", "+00:00"))
    except ValueError:
        raise BadInput(t("hostile.fetched_at_bad", text=text), field="fetched_at",
                       accepted=["YYYY-MM-DD", "ISO date-time"]) from None
    d = d if d.tzinfo else d.replace(tzinfo=UTC)
    if d > datetime.now(UTC) + timedelta(days=1):
        raise BadInput(t("hostile.fetched_at_future", date=d.date()), field="fetched_at")
    return d


def _as_utc(text: str) -> datetime | None:
    from email.utils import parsedate_to_datetime

    text = text.strip()
    try:
        d = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        try:
            d = parsedate_to_datetime(text)  # an HTTP Date header: "Tue, 01 Dec 2026 09:00:00 GMT"
        except (TypeError, ValueError, IndexError):
            return None
    d = d if d.tzinfo else d.replace(tzinfo=UTC)
    return d if datetime(2000, 1, 1, tzinfo=UTC) < d <= datetime.now(UTC) + timedelta(days=1) else None


def header_time(files: list[Path]) -> tuple[datetime | None, str | None]:
    """The HTTP `Date` header saved beside a page (`curl -D page.json.headers -o page.json`): the fetch time."""
    dates: list[tuple[datetime, str]] = []
    for f in files:
        h = f.with_name(f.name + ".headers")
        if h.is_file():
            for line in h.read_text(encoding="utf-8", errors="replace").splitlines():
                if line.lower().startswith("date:") and (d := _as_utc(line[5:])):
                    dates.append((d, f"HTTP Date header ({h.name})"))
    return max(dates) if dates else (None, None)


def data_time(path: Path, files: list[Path], raw: list[Raw]) -> tuple[datetime | None, str | None]:
    """When the data is as of, from the data itself, and how we know; (None, None) if it does not say.

    A timestamp inside the response (AWS `publicationDate`, a `fetched_at` field), a date in the notes
    beside the pages (SOURCE.md: "mirrored 2026-05-20") or in the folder's name (SkyPilot mirror
    folders). Never the file's mtime: a copy or a checkout stamps that with today.
    """
    dates: list[tuple[datetime, str]] = []
    for name, _, body in raw:
        m = _STAMP_KEYS.search(body[:65536])
        if m and (d := _as_utc(m.group(2).decode("ascii", "replace"))):
            dates.append((d, f"{m.group(1).decode()} in {name}"))
    if dates:
        return max(dates)
    base = path if path.is_dir() else path.parent
    for folder in (base, base.parent):
        for note in sorted(folder.glob("*.md")):
            m = _NOTE_DATE.search(note.read_text(encoding="utf-8", errors="replace")[:20000])
            if m and (d := _as_utc(m.group(1))):
                return d, f"{note.name}"
    for part in (path.name, base.name, base.parent.name):
        m = _NAME_DATE.search(part)
        if m and (d := _as_utc(m.group(1))):
            return d, f"folder name {part}"
    return None, None


def read_raw(path: Path, source: str) -> tuple[list[Raw], datetime | None, str | None]:
    """A downloaded response (one file, or a folder of pages read in name order) and its fetch time when a
    saved HTTP Date header says it (see header_time)."""
    path = Path(path)
    if path.is_dir():
        # notes kept beside the pages (README.md, SOURCES.md) and saved headers are not responses
        files = sorted(p for p in path.rglob("*") if p.is_file() and not p.name.startswith(".")
                       and p.suffix.lower() not in _NOTE_SUFFIXES)
        if not files:
            raise BadInput(t("hostile.empty_folder", source=source, path=path,
                             looked=_LOOKS_FOR.get(source, "*.json or *.json.gz response pages")), field="PATH")
        if len(files) > MAX_IMPORT_FILES:
            raise BadInput(f"{source}: folder {path} holds {len(files)} files (at most {MAX_IMPORT_FILES})",
                           field="PATH")
    elif path.is_file():
        files = [path]
    else:
        raise BadInput(f"{source}: no such file or folder: {path}", field="PATH")
    raw: list[Raw] = []
    for f in files:
        try:
            body = f.read_bytes()
        except OSError as e:
            raise BadInput(f"{source}: cannot read {f}: {e.strerror}", field="PATH") from None
        if f.suffix == ".gz":
            import gzip

            body = gzip.decompress(body)
        # a lone file keeps its folder name: SkyPilot's <cloud>/vms.csv says the cloud that way
        name = f.relative_to(path).as_posix() if path.is_dir() else f"{f.parent.name}/{f.name}".lstrip("/")
        raw.append((name, _CTYPES.get(f.suffix.lower(), "application/octet-stream"), body))
    when, how = header_time(files)
    return raw, when, how


def import_source(source: str, path: str | Path, *, force: bool = False, fetched_at: datetime | None = None) -> dict:
    """Parse a downloaded raw response exactly as `refresh` would after fetching it, and store it.

    Returns {source, snapshot_id, status, imported, repaired, skipped, skip_reasons, reasons, results}.
    """
    adapter = registry.get(source)
    raw, when, how = read_raw(Path(path), adapter.name)
    # the fetch time (saved HTTP Date header), else what the user says (--fetched-at), else what the data is
    # as of (a timestamp inside it, its notes, its folder's name), else "date unknown" (stale); never the mtime
    if when is None and fetched_at is not None:
        when, how = fetched_at, "--fetched-at"
    if when is None:
        when, how = data_time(Path(path), [Path(path)], raw)
    ts = when or DATE_UNKNOWN
    how = how or "date unknown"
    results = adapter.parse(raw, ts)
    prov = {"files": [{"name": n, "sha256": hashlib.sha256(b).hexdigest(), "bytes": len(b)} for n, _, b in raw],
            "fetched_at_from": how, "fetched_at_known": ts != DATE_UNKNOWN}
    parts = _store(_engine(), adapter, results, raw, mode="import", fetched_at=ts, provenance=prov, force=force)
    return _combine(adapter.name, parts)


def reparse(snapshot_id: int, *, force: bool = False) -> dict:
    """Re-run today's parser on a stored snapshot's archived raw responses; stores a new snapshot."""
    from gpuquote.store import raw_responses
    from gpuquote.store.history import snapshot

    engine = _engine()
    snap = snapshot(engine, int(snapshot_id))
    if snap is None:
        raise BadInput(f"snapshot: no snapshot {snapshot_id}; see `gpuquote snapshots`", field="SNAPSHOT_ID")
    raw = [(n, c or "application/octet-stream", b) for n, c, b in raw_responses(engine, int(snapshot_id))]
    if not raw:
        raise BadInput(f"snapshot: snapshot {snapshot_id} ({snap['source']}) has no archived raw response",
                       field="SNAPSHOT_ID")
    adapter = registry.get(snap["source"].split(":")[0])
    ts = datetime.fromisoformat(snap["fetched_at"])
    if ts.tzinfo is None:
        ts = ts.replace(tzinfo=UTC)
    results = [r for r in adapter.parse(raw, ts) if r.source == snap["source"]]
    if not results:
        raise BadInput(f"snapshot: the {adapter.name} parser produced nothing for source {snap['source']}",
                       field="SNAPSHOT_ID")
    prov = {"reparsed_from": int(snapshot_id), "original": snap["provenance"]}
    parts = _store(engine, adapter, results, raw, mode="reparse", fetched_at=ts, provenance=prov, force=force)
    return {**_combine(adapter.name, parts), "reparsed_from": int(snapshot_id)}


def refresh(sources: list[str] | None = None, *, env: Mapping[str, str] | None = None, client=None,
            sleep: Callable[[float], None] = time.sleep, progress: Progress | None = None,
            from_archive: bool = False, force: bool = False) -> list[dict]:
    """Fetch each source live (or re-parse its latest archived response) and store one snapshot per source.

    A source that fails (offline, HTTP error, missing key when asked for by name) reports
    status "error" and does not stop the others; a source skipped for a missing optional key
    reports status "skipped". API keys come from `env` (default: the process environment) only.
    """
    env = os.environ if env is None else env
    explicit = bool(sources)
    adapters = [registry.get(s) for s in (sources or registry.names())]
    seen: set[str] = set()
    adapters = [a for a in adapters if not (a.name in seen or seen.add(a.name))]
    tick = progress or (lambda *_: None)
    if from_archive:
        return [r for a in adapters for r in _from_archive(a, force, tick)]
    own = client is None
    client = client or make_client()
    out: list[dict] = []
    try:
        for a in adapters:
            if a.missing_auth(env):
                msg = f"{a.name}: needs an API key in {' or '.join(a.auth_env)}"
                out.append({"source": a.name, "status": "error" if explicit else "skipped", "error": msg,
                            "field": a.auth_env[0]})
                tick(a.name, "done", "skipped")
                continue
            out.extend(_refresh_one(a, client, env, sleep, tick, force))
    finally:
        if own:
            client.close()
    return out


def _refresh_one(a: registry.Adapter, client, env, sleep, tick: Progress, force: bool) -> list[dict]:
    fetched_at = datetime.now(UTC)
    tick(a.name, "start", a.endpoint)
    http = Http(client, a.name, sleep=sleep, on_request=lambda url: tick(a.name, "request", url))
    try:
        raw = a.fetch(http, env)
        tick(a.name, "parse", f"{len(raw)} responses")
        results = a.parse(raw, fetched_at)
    except FetchError as e:
        tick(a.name, "done", "error")
        return [{"source": a.name, "status": "error", "error": str(e), "field": e.field}]
    except BadInput as e:  # a response we cannot read at all (not JSON, wrong format)
        tick(a.name, "done", "error")
        return [{"source": a.name, "status": "error", "error": str(e), "field": e.field}]
    tick(a.name, "store", f"{sum(len(r.offers) for r in results)} offers")
    served = [d for d in (_as_utc(x) for x in http.dates) if d]
    if served:  # the server's clock, not ours: the time the data is as of
        fetched_at = max(served)
        for r in results:
            r.fetched_at = fetched_at if r.fetched_at is None or r.fetched_at > fetched_at else r.fetched_at
    prov = {"endpoint": a.endpoint, "urls": http.urls[:50], "requests": len(http.urls), "http_dates": http.dates[:50],
            "fetched_at_from": "HTTP Date header" if served else "fetch time"}
    parts = _store(_engine(), a, results, raw, mode="fetch", fetched_at=fetched_at, provenance=prov, force=force)
    tick(a.name, "done", ", ".join(f"{p['source']} {p['status']}" for p in parts))
    return parts


def _from_archive(a: registry.Adapter, force: bool, tick: Progress) -> list[dict]:
    from gpuquote.store.history import latest_snapshot_ids

    ids = latest_snapshot_ids(_engine(), [a.name])
    ids = {s: i for s, i in ids.items() if s == a.name or s.startswith(a.name + ":")}
    if not ids:
        tick(a.name, "done", "no archive")
        return [{"source": a.name, "status": "error", "error": f"{a.name}: no archived raw response to re-parse",
                 "field": "source"}]
    out = []
    for _src, sid in sorted(ids.items()):
        tick(a.name, "parse", f"snapshot {sid}")
        r = reparse(sid, force=force)
        out.extend(r["results"])
    tick(a.name, "done", "reparsed")
    return out


def _since(raw: str | None) -> str | None:
    if not raw:
        return None
    s = raw.strip().lower()
    m = re.fullmatch(r"(\d+)d", s)
    try:
        d = date.today() - timedelta(days=int(m.group(1))) if m else date.fromisoformat(s[:10])
    except ValueError:
        raise BadInput(f"--since: '{raw}' is not a date; accepted: YYYY-MM-DD or Nd (e.g. 30d)",
                       field="since", accepted=["YYYY-MM-DD", "Nd"]) from None
    return d.isoformat()


def history(gpu: str, provider: list[str] | str | None = None, since: str | None = None,
            spot: bool = False) -> dict:
    """Price over time: min / median / max USD per GPU-hour per day and provider (good snapshots only).

    A family id (`a100-80gb`) covers its SKUs and sub-families; an offer whose GPU is only known
    as a wider family (`a100`) is not counted, so 40 GB and 80 GB never mix.
    """
    from gpuquote.hardware import group_ids, matches, resolve
    from gpuquote.store import read_engine
    from gpuquote.store.db import user_store_exists
    from gpuquote.store.history import history_extent, price_history
    from gpuquote.store.rows import AGING_HOURS, FRESH_HOURS

    r = resolve(gpu)
    ids = [g for g in group_ids() if matches(g, r.id)]
    providers = provider if isinstance(provider, list) else [provider] if provider else []
    providers = [p.strip().lower() for x in providers for p in x.split(",") if p.strip()]
    since_d = _since(since)
    extent: list[dict] = []
    try:
        engine, where = read_engine()
        series = price_history(engine, ids, providers or None, since_d, spot)
        if not series:  # say what the store does hold, so "nothing" is not read as "never"
            extent = history_extent(engine, ids)
    except StoreError:
        if user_store_exists():
            raise
        where, series = "empty store", []
    return {"gpu": r.to_dict(), "gpu_ids": ids, "providers": providers or None, "since": since_d, "spot": spot,
            "store": where, "series": series, "providers_seen": sorted({s["provider"] for s in series}),
            "days": len({s["day"] for s in series}), "available": extent,
            "empty_reason": _empty_reason(series, extent, since_d, providers, spot),
            "unit": "USD per GPU-hour", "freshness_bands": {"fresh_hours": FRESH_HOURS, "aging_hours": AGING_HOURS}}


def empty_message(data: dict) -> str | None:
    """The sentence for an empty history (CLI and page): what the store holds and which filter hides it."""
    why = data.get("empty_reason")
    if not why:
        return None
    from gpuquote.i18n import Msg

    gpu = data["gpu"]["id"]
    kind = Msg("history.spot" if data.get("spot") else "history.ondemand")
    r = why["reason"]
    if r == "since":
        return Msg("history.empty.since", kind=kind, gpu=gpu, since=data["since"], days=why["days"],
                   first=why["first_day"], last=why["last_day"])
    if r == "provider":
        return Msg("history.empty.provider", kind=kind, gpu=gpu, asked=", ".join(data.get("providers") or []),
                   providers=", ".join(why["providers"]))
    if r == "spot":
        return Msg("history.empty.spot", kind=kind, gpu=gpu, other=Msg("history.spot" if why["spot"] else
                                                                         "history.ondemand"),
                   first=why["first_day"], last=why["last_day"])
    if r == "filters":
        return Msg("history.empty.filters", kind=kind, gpu=gpu, first=why["first_day"], last=why["last_day"])
    return Msg("history.none", gpu=gpu)


def _empty_reason(series: list, extent: list[dict], since: str | None, providers: list[str], spot: bool):
    """Why a history is empty: None (it is not), 'none' (the store has nothing for this GPU), or the filter that
    hides what it has ('since', 'provider', 'spot'), with what would show it."""
    if series:
        return None
    if not extent:
        return {"reason": "none"}
    mine = next((e for e in extent if e["spot"] == spot), None)
    if mine is None:
        other = extent[0]
        return {"reason": "spot", "spot": other["spot"], "first_day": other["first_day"], "last_day": other["last_day"]}
    if since and mine["last_day"] < since:
        return {"reason": "since", "first_day": mine["first_day"], "last_day": mine["last_day"], "days": mine["days"]}
    if providers and not set(providers) & set(mine["providers"]):
        return {"reason": "provider", "providers": mine["providers"]}
    return {"reason": "filters", "first_day": mine["first_day"], "last_day": mine["last_day"]}


def sources_status(env: Mapping[str, str] | None = None) -> dict:
    """Registered sources: endpoint, key env vars (whether set, never the value), current snapshot and age."""
    from gpuquote.store import freshness, list_snapshots, open_reader
    from gpuquote.store.rows import AGING_HOURS, FRESH_HOURS

    env = os.environ if env is None else env
    try:
        snaps = list_snapshots(open_reader())
    except StoreError:
        snaps = []
    out = []
    for a in registry.ADAPTERS.values():
        mine = [s for s in snaps if s["source"] == a.name or s["source"].startswith(a.name + ":")]
        cur = [s for s in mine if s["current"]]
        out.append({
            "name": a.name, "title": a.title, "endpoint": a.endpoint, "auth_env": list(a.auth_env),
            "auth_required": a.auth_required, "key_present": a.key_present(env), "accepts": a.accepts,
            "current": [{"source": s["source"], "snapshot_id": s["id"], "fetched_at": s["fetched_at"],
                         "freshness": freshness(s["fetched_at"]), "offers": s["offers_count"]} for s in cur],
            "last": ({"snapshot_id": mine[-1]["id"], "status": mine[-1]["status"], "reason": mine[-1]["reason"],
                      "fetched_at": mine[-1]["fetched_at"]} if mine else None),
        })
    return {"sources": out, "freshness_bands": {"fresh_hours": FRESH_HOURS, "aging_hours": AGING_HOURS}}


def snapshots(source: str | None = None, limit: int = 50) -> dict:
    """Stored snapshots, newest first: status, reason, counts, whether current and whether re-parsable."""
    from gpuquote.store import freshness, list_snapshots, open_reader, read_engine
    from gpuquote.store.history import snapshot_ids_with_raw

    try:
        engine = read_engine()[0]
        rows = list_snapshots(open_reader())
        with_raw = snapshot_ids_with_raw(engine)
    except StoreError:
        rows, with_raw = [], set()
    if source:
        rows = [s for s in rows if s["source"] == source or s["source"].startswith(source + ":")]
    rows = rows[::-1][:max(1, limit)]
    return {"snapshots": [{"id": s["id"], "source": s["source"], "status": s["status"], "reason": s["reason"],
                           "current": s["current"], "fetched_at": s["fetched_at"], "imported_at": s["imported_at"],
                           "freshness": freshness(s["fetched_at"]), "offers": s["offers_count"],
                           "skipped": s["skipped"], "skip_reasons": s["skip_reasons"],
                           "reparsable": s["id"] in with_raw} for s in rows]}
