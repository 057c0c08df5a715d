"""One HTTP path for every adapter: timeouts, retries with backoff on 429/5xx, clear offline errors.

Adapters get an `Http` wrapping an injected `httpx.Client` (tests inject `httpx.MockTransport`).
Error messages name the host, never the query string: API keys passed as `?key=` (GCP) must
not reach a log, an error line or the raw archive.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from urllib.parse import urlsplit

import httpx

from gpuquote.errors import BadInput

TIMEOUT_S = 30.0  # read/write/pool timeout per request
CONNECT_TIMEOUT_S = 10.0
RETRIES = 4  # extra attempts after the first on 429 / 5xx / timeouts
BACKOFF_S = 1.0  # first wait; doubles per attempt (1, 2, 4, 8 s)
MAX_RETRY_AFTER_S = 60.0  # cap on a server's Retry-After
RETRY_STATUS = frozenset({429, 500, 502, 503, 504})
USER_AGENT = "gpuquote (+https://github.com/gpuquote/gpuquote)"

Raw = tuple[str, str, bytes]  # (name, content type, body) of one recorded response


class FetchError(BadInput):
    """A source could not be fetched (offline, refused, rate limited): one line, exit 2."""


def make_client(transport: httpx.BaseTransport | None = None, timeout: float = TIMEOUT_S) -> httpx.Client:
    return httpx.Client(timeout=httpx.Timeout(timeout, connect=CONNECT_TIMEOUT_S), transport=transport,
                        headers={"User-Agent": USER_AGENT, "Accept-Encoding": "gzip"}, follow_redirects=True)


def safe_url(url: str | httpx.URL) -> str:
    """scheme://host/path without the query string (which may hold an API key)."""
    p = urlsplit(str(url))
    return f"{p.scheme}://{p.netloc}{p.path}"


@dataclass
class Http:
    """Requests on behalf of one source, with retries; `on_request` reports progress (one call per response)."""

    client: httpx.Client
    source: str
    sleep: Callable[[float], None] = time.sleep
    retries: int = RETRIES
    on_request: Callable[[str], None] | None = None
    urls: list[str] = field(default_factory=list)  # what was fetched (safe form), for provenance
    dates: list[str] = field(default_factory=list)  # each response's HTTP Date header, stored with the snapshot

    def get(self, url: str, **kw) -> httpx.Response:
        return self.request("GET", url, **kw)

    def post(self, url: str, **kw) -> httpx.Response:
        return self.request("POST", url, **kw)

    def get_lines(self, url: str, keep: Callable[[str], bool], head: int = 0, **kw) -> bytes:
        """Stream a large text body, keeping the first `head` lines and those `keep` accepts.

        Retries cover the request up to the status line; a body cut off midway raises FetchError.
        """
        host = urlsplit(url).netloc or url
        for attempt in range(self.retries + 1):
            try:
                with self.client.stream("GET", url, **kw) as resp:
                    if resp.status_code in RETRY_STATUS and attempt < self.retries:
                        self.sleep(min(_retry_after(resp) or BACKOFF_S * 2 ** attempt, MAX_RETRY_AFTER_S))
                        continue
                    if resp.status_code >= 400:
                        raise FetchError(f"{self.source}: {host} answered HTTP {resp.status_code} for "
                                         f"{safe_url(url)}", field="source")
                    out: list[str] = []
                    for i, line in enumerate(resp.iter_lines()):
                        if i < head or keep(line):
                            out.append(line)
                    self.urls.append(safe_url(url))
                    if resp.headers.get("date"):
                        self.dates.append(resp.headers["date"])
                    if self.on_request:
                        self.on_request(safe_url(url))
                    return ("\n".join(out) + "\n").encode("utf-8")
            except httpx.ConnectError as e:
                if attempt >= 1:
                    raise FetchError(f"{self.source}: cannot reach {host} (offline, DNS failure or firewall?): "
                                     f"{_reason(e)}", field="source") from None
            except (httpx.TimeoutException, httpx.TransportError) as e:
                if attempt >= self.retries:
                    raise FetchError(f"{self.source}: reading {safe_url(url)} failed: {_reason(e)}",
                                     field="source") from None
            self.sleep(min(BACKOFF_S * 2 ** attempt, MAX_RETRY_AFTER_S))
        raise FetchError(f"{self.source}: {host} kept failing (after {self.retries + 1} attempts)", field="source")

    def request(self, method: str, url: str, *, auth_hint: str | None = None, **kw) -> httpx.Response:
        host = urlsplit(url).netloc or url
        last = ""
        for attempt in range(self.retries + 1):
            wait = BACKOFF_S * 2 ** attempt
            try:
                resp = self.client.request(method, url, **kw)
            except httpx.ConnectError as e:
                # Offline / DNS failure: retry once (a flaky link), then say so plainly.
                last = f"cannot reach {host} (offline, DNS failure or firewall?): {_reason(e)}"
                if attempt >= 1:
                    break
            except httpx.TimeoutException as e:
                last = f"{host} timed out ({type(e).__name__})"
            except httpx.TransportError as e:
                last = f"connection to {host} failed: {_reason(e)}"
            else:
                if resp.status_code < 400:
                    self.urls.append(safe_url(resp.request.url if resp.request else url))
                    if resp.headers.get("date"):
                        self.dates.append(resp.headers["date"])
                    if self.on_request:
                        self.on_request(safe_url(url))
                    return resp
                if resp.status_code not in RETRY_STATUS:
                    hint = f"; check {auth_hint}" if auth_hint and resp.status_code in (401, 403) else ""
                    raise FetchError(f"{self.source}: {host} answered HTTP {resp.status_code} for "
                                     f"{safe_url(url)}{hint}", field="source")
                last = f"{host} answered HTTP {resp.status_code}" + (" (rate limited)" if resp.status_code == 429
                                                                     else "")
                ra = _retry_after(resp)
                if ra is not None:
                    wait = ra
            if attempt < self.retries:
                self.sleep(min(wait, MAX_RETRY_AFTER_S))
        raise FetchError(f"{self.source}: {last} (after {attempt + 1} attempt(s))", field="source")


def _retry_after(resp: httpx.Response) -> float | None:
    v = resp.headers.get("Retry-After")
    try:
        return max(0.0, float(v)) if v is not None else None
    except ValueError:
        return None  # an HTTP date: fall back to our own backoff


def _reason(e: Exception) -> str:
    msg = str(e).splitlines()[0] if str(e) else type(e).__name__
    # httpx messages can quote the URL; drop anything after '?' to keep keys out.
    return msg.split("?")[0][:200]
