"""Helpers shared by the API and the pages: language choice, example files, job and quote inputs.

Nothing here trusts a client string as a path: jobs and quotes arrive as text or as the id of a
shipped example, and are parsed here (or passed to the service as text with an explicit format).
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path

from gpuquote.errors import BadInput
from gpuquote.i18n import LANGS, normalise_lang

MAX_TEXT_CHARS = 512 * 1024  # a quote file or job pasted into a form; the body limit bounds uploads too
LANG_COOKIE = "gpuquote_lang"


def pick_lang(query: str | None, cookie: str | None, accept: str | None) -> str:
    """?lang= wins, then the cookie set by the switch, then the browser's Accept-Language."""
    for raw in (query, cookie):
        if raw:
            return normalise_lang(raw)
    if accept:
        # the first supported language in preference order (q-values ignored beyond their order)
        for part in accept.split(","):
            tag = part.split(";")[0].strip().lower()
            if tag.startswith("zh"):
                return "zh-CN"
            if tag.startswith("en"):
                return "en"
    return "en"


def examples_dir() -> Path | None:
    """GPUQUOTE_EXAMPLES, else the examples shipped inside the package (any install has them)."""
    env = os.environ.get("GPUQUOTE_EXAMPLES")
    if env and Path(env).is_dir():
        return Path(env)
    return None


def _title(text: str, fallback: str) -> str:
    first = text.lstrip().splitlines()[0] if text.strip() else ""
    return first.lstrip("#").strip() if first.startswith("#") else fallback


JOB_SUFFIXES = (".yaml", ".yml", ".json")
QUOTE_SUFFIXES = (".yaml", ".yml", ".csv")


def _read_examples(base) -> dict[str, list[dict]]:
    """base: a Path or an importlib.resources Traversable with jobs/ and quotes/ inside."""
    out: dict[str, list[dict]] = {"jobs": [], "quotes": []}
    for kind, suffixes in (("jobs", JOB_SUFFIXES), ("quotes", QUOTE_SUFFIXES)):
        folder = base / kind
        if not folder.is_dir():
            continue
        files = sorted((p for p in folder.iterdir() if p.is_file() and p.name.endswith(suffixes)),
                       key=lambda p: p.name)
        for p in files:
            text = p.read_text(encoding="utf-8")
            stem = p.name.rsplit(".", 1)[0]
            out[kind].append({"id": stem if kind == "jobs" else p.name, "file": f"examples/{kind}/{p.name}",
                              "title": _title(text, stem), "text": text,
                              "format": "csv" if p.name.endswith(".csv") else "yaml"})
    return out


@lru_cache(maxsize=1)
def _packaged_examples() -> dict[str, list[dict]]:
    from importlib.resources import files

    return _read_examples(files("gpuquote") / "examples")


@lru_cache(maxsize=1)
def _examples_cached(root: str, stamp: float) -> dict[str, list[dict]]:
    return _read_examples(Path(root))


def examples() -> dict[str, list[dict]]:
    root = examples_dir()
    if root is None:
        return _packaged_examples()
    stamp = max((p.stat().st_mtime for p in root.rglob("*") if p.is_file()), default=0.0)
    return _examples_cached(str(root), stamp)


def example(kind: str, ex_id: str) -> dict:
    found = {e["id"]: e for e in examples()[kind]}
    if ex_id not in found:
        raise BadInput(f"example: '{ex_id}' is not a shipped {kind} example; accepted: {', '.join(found) or 'none'}",
                       field="example", accepted=list(found))
    return found[ex_id]


def parse_job(job: dict | None = None, job_yaml: str | None = None, ex_id: str | None = None) -> dict:
    """Exactly one of a job mapping, its YAML/JSON text, or a shipped example id -> a job mapping."""
    given = [n for n, v in (("job", job), ("job_yaml", job_yaml), ("example", ex_id)) if v not in (None, "")]
    if len(given) != 1:
        raise BadInput("job: give exactly one of job (a mapping), job_yaml (the file's text) or example (an id)",
                       field="job", accepted=["job", "job_yaml", "example"])
    if job is not None:
        return dict(job)
    if ex_id:
        job_yaml = example("jobs", ex_id)["text"]
    return parse_yaml_mapping(job_yaml or "", "job_yaml")


def parse_job_model(job: dict | None = None, job_yaml: str | None = None, ex_id: str | None = None):
    """parse_job, validated into a Job; a job text or example is parsed and validated once (a Job is frozen), so
    a server planning the same job under many filters pays for it once. A mapping is validated each time."""
    raw = parse_job(job, job_yaml, ex_id)  # the same "exactly one of" check and messages
    if job is not None:
        from gpuquote.estimate import load_job

        return load_job(raw)
    text = example("jobs", ex_id)["text"] if ex_id else job_yaml or ""
    if len(text) > CACHED_TEXT_CHARS:
        from gpuquote.estimate import load_job

        return load_job(raw)
    return _cached_job(text)


@lru_cache(maxsize=256)
def _cached_job(text: str):
    from gpuquote.estimate import load_job

    return load_job(_cached_mapping(text, "job_yaml"))


def parse_yaml_mapping(text: str, field: str) -> dict:
    if len(text) > MAX_TEXT_CHARS:
        raise BadInput(f"{field}: at most {MAX_TEXT_CHARS} characters", field=field)
    if len(text) > CACHED_TEXT_CHARS:
        return _load_mapping(text, field)
    import copy

    return copy.deepcopy(_cached_mapping(text, field))


#: Job texts up to this size keep their parse (256 of them: at most a few MB).
CACHED_TEXT_CHARS = 16_384


@lru_cache(maxsize=256)
def _cached_mapping(text: str, field: str) -> dict:
    """The parse of one job text, cached: the same examples and pasted jobs come back under many filters, and
    a YAML parse costs more than the plan answered from the caches (callers get a deep copy)."""
    return _load_mapping(text, field)


def _load_mapping(text: str, field: str) -> dict:
    from gpuquote.safeload import load_yaml

    data = load_yaml(text, field)
    if not isinstance(data, dict):
        raise BadInput(f"{field}: must be a mapping of job fields (kind, model, ...)", field=field)
    return data


def quote_format(text: str, fmt: str | None, name: str | None) -> str:
    """yaml | csv: stated, else from the upload's file name, else the first non-comment line."""
    if fmt:
        if fmt not in ("yaml", "csv"):
            raise BadInput(f"format: '{fmt}' is not one of yaml, csv", field="format", accepted=["yaml", "csv"])
        return fmt
    if name and name.lower().endswith(".csv"):
        return "csv"
    if name and name.lower().endswith((".yaml", ".yml", ".json")):
        return "yaml"
    first = next((ln for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith("#")), "")
    return "csv" if "," in first and ":" not in first else "yaml"


def validation_input_error(e: Exception, default_field: str = "") -> BadInput | None:
    """A pydantic ValidationError of a page's request model as the BadInput its first error names (the page
    shows it in place); None for any other exception."""
    from pydantic import ValidationError

    if not isinstance(e, ValidationError):
        return None
    first = e.errors()[0]
    field = ".".join(str(x) for x in first["loc"]) or default_field
    return BadInput(f"{field}: {first['msg']}", field=field)


def check_text(text: str | None, field: str) -> str:
    if text is None or not text.strip():
        raise BadInput(f"{field}: the quote file is empty; paste or upload a YAML or CSV quote file", field=field)
    if len(text) > MAX_TEXT_CHARS:
        raise BadInput(f"{field}: at most {MAX_TEXT_CHARS} characters", field=field)
    return text


def rate_overrides(rates: dict[str, float] | list[str] | str | None) -> dict[str, float]:
    """{"CNY": 0.14} or ["CNY=0.14"] or "CNY=0.14, EUR=1.08" -> {"CNY": 0.14}."""
    from gpuquote.offers.currency import parse_overrides

    if not rates:
        return {}
    if isinstance(rates, dict):
        out = {}
        for k, v in rates.items():
            if not isinstance(v, int | float) or isinstance(v, bool) or not v > 0 or v != v or v == float("inf"):
                raise BadInput(f"rates: {k} must be a positive number of USD per unit", field="rates")
            out[str(k).upper()] = float(v)
        return parse_overrides([f"{k}={v!r}" for k, v in out.items()])
    items = [x.strip() for x in (rates.split(",") if isinstance(rates, str) else rates) if x and x.strip()]
    return parse_overrides(items)


@contextmanager
def temp_quote_file(text: str, fmt: str) -> Iterator[Path]:
    """The plan service reads quote files by path: write pasted text to a private temporary file."""
    fd, name = tempfile.mkstemp(prefix="gpuquote-quotes-", suffix=".csv" if fmt == "csv" else ".yaml")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        yield Path(name)
    finally:
        Path(name).unlink(missing_ok=True)


class NotAvailable(Exception):
    """A service module that this build does not contain yet (HTTP 501)."""

    def __init__(self, what: str):
        self.what = what
        super().__init__(f"{what} is not available in this build of gpuquote")


def service(module: str, name: str):
    """Import a service function lazily; a missing module is 501, not a crash."""
    import importlib

    try:
        mod = importlib.import_module(f"gpuquote.service.{module}")
    except ModuleNotFoundError as e:
        if e.name and e.name.startswith("gpuquote.service"):
            raise NotAvailable(f"service.{module}") from None
        raise
    fn = getattr(mod, name, None)
    if fn is None:
        raise NotAvailable(f"service.{module}.{name}")
    return fn


__all__ = ["LANGS", "LANG_COOKIE", "MAX_TEXT_CHARS", "NotAvailable", "check_text", "example", "examples",
           "examples_dir", "parse_job", "parse_yaml_mapping", "pick_lang", "quote_format", "rate_overrides",
           "service", "temp_quote_file"]
