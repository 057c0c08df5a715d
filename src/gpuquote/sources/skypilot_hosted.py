"""The SkyPilot hosted catalog (skypilot-org/skypilot-catalog, schema v8): one vms.csv per cloud.

Fetches each cloud's vms.csv (a cloud the catalog no longer carries answers 404 and is left out)
and parses it with sources.skypilot, one snapshot per cloud (`skypilot:<cloud>`), the same store
sources as `gpuquote import skypilot FOLDER`. The catalog itself is rebuilt upstream every few
hours and carries no timestamp: fetched_at is when we fetched it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from datetime import datetime
from pathlib import PurePosixPath

from gpuquote.errors import BadInput
from gpuquote.sources.base import ParseResult
from gpuquote.sources.http import FetchError, Http, Raw
from gpuquote.sources.skypilot import HOSTED_URL, parse_vms_csv

NAME = "skypilot"
ENDPOINT = HOSTED_URL
CLOUDS = ("aws", "gcp", "azure", "lambda", "runpod", "vast", "oci", "paperspace", "fluidstack", "cudo")


def fetch(http: Http, env: Mapping[str, str]) -> list[Raw]:
    out: list[Raw] = []
    for cloud in CLOUDS:
        try:
            resp = http.get(HOSTED_URL.format(cloud=cloud))
        except FetchError as e:
            if "HTTP 404" in str(e):
                continue  # this cloud is not in the hosted catalog (any more)
            raise
        out.append((f"{cloud}/vms.csv", "text/csv", resp.content))
    return out


def parse(raw: list[Raw], fetched_at: datetime) -> list[ParseResult]:
    results = []
    files = [r for r in raw if PurePosixPath(r[0]).name.startswith("vms") and r[0].endswith(".csv")]
    if not files:
        raise BadInput("skypilot: no vms*.csv among the files; expected <cloud>/vms.csv", field="PATH")
    for name, ctype, body in files:
        parts = PurePosixPath(name).parts
        if len(parts) < 2:
            raise BadInput(f"skypilot: cannot tell the cloud of '{name}'; lay files out as <cloud>/vms.csv",
                           field="PATH")
        cloud = parts[-2].lower()
        try:
            text = body.decode("utf-8-sig")
        except UnicodeDecodeError:
            raise BadInput(f"skypilot: {name} is not UTF-8 text", field="PATH") from None
        res = parse_vms_csv(text, cloud, fetched_at=fetched_at, source=f"skypilot:{name}")
        res.provenance = {"file": name, "cloud": cloud, "sha256": hashlib.sha256(body).hexdigest(), "bytes": len(body)}
        res.raw = [(name, ctype, body)]
        results.append(res)
    return results
