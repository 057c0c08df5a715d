"""The SkyPilot hosted catalog (skypilot-org/skypilot-catalog, schema v8): one vms.csv per cloud.

Fetches each cloud's vms.csv (a cloud the catalog no longer carries answers 404 and is left out)
and parses it with sources.skypilot, one snapshot per cloud (`skypilot:<cloud>`), the same store
sources as `gpuquote import skypilot FOLDER`. The catalog itself is rebuilt upstream every few
hours and carries no timestamp: fetched_at is when we fetched it.
"""

from __future__ import annotations

import hashlib
import re
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


# Every cloud directory of the hosted catalog (v8); a file's cloud is read from its folder, its name or its rows.
KNOWN_CLOUDS = CLOUDS + ("do", "ibm", "scp", "nebius", "verda", "shadeform", "hyperbolic", "hyperstack", "kubernetes",
                         "seeweb", "mithril", "primeintellect", "lium", "yotta", "spheron", "daytona", "jarvislabs",
                         "scaleway", "ovhcloud", "simplepod")
# InstanceType spellings that only one cloud's catalog uses (seen in the hosted v8 files)
_ROW_HINTS = (
    (re.compile(r"^(gpu|cpu)_\d+x_"), "lambda"),
    (re.compile(r"^\d+x_.+_(SECURE|COMMUNITY)$"), "runpod"),
    (re.compile(r"^\d+x-.+-\d+-\d+$"), "vast"),
    (re.compile(r"^Standard_"), "azure"),
    (re.compile(r"^[a-z][a-z0-9-]*\d[a-z]*\.(\d*x?large|metal|medium|small|micro|nano)"), "aws"),
    (re.compile(r"^[a-z]\d[a-z]?-(standard|highgpu|megagpu|ultragpu|highmem|highcpu)-"), "gcp"),
)


def _csv_name(name: str) -> str:
    return name[:-3] if name.endswith(".gz") else name


def guess_cloud(name: str, text: str) -> str | None:
    """The catalog cloud of one file: its folder (`<cloud>/vms.csv`), a cloud named in the file name
    (`lambda-vms.csv`), else the InstanceType spelling of its first rows."""
    parts = PurePosixPath(name).parts
    if len(parts) >= 2 and parts[-2].lower() in KNOWN_CLOUDS:
        return parts[-2].lower()
    tokens = re.split(r"[^a-z0-9]+", PurePosixPath(name).name.lower())
    named = [c for c in KNOWN_CLOUDS if c in tokens]
    if len(named) == 1:
        return named[0]
    votes: dict[str, int] = {}
    for line in text.splitlines()[1:200]:
        first = line.split(",", 1)[0].strip().strip('"')
        for pat, cloud in _ROW_HINTS:
            if first and pat.search(first):
                votes[cloud] = votes.get(cloud, 0) + 1
                break
    if votes:
        return max(votes, key=votes.get)
    return parts[-2].lower() if len(parts) >= 2 else None


def parse(raw: list[Raw], fetched_at: datetime) -> list[ParseResult]:
    results = []
    csvs = [r for r in raw if _csv_name(r[0]).lower().endswith(".csv")]
    # a folder laid out as <cloud>/vms.csv keeps to those files; a lone CSV of any name is read too
    files = [r for r in csvs if PurePosixPath(r[0]).name.startswith("vms")] or csvs
    if not files:
        raise BadInput("skypilot: no .csv among the files; expected a vms.csv or a folder of <cloud>/vms.csv",
                       field="PATH")
    for name, ctype, body in files:
        try:
            text = body.decode("utf-8-sig")
        except UnicodeDecodeError:
            raise BadInput(f"skypilot: {name} is not UTF-8 text", field="PATH") from None
        cloud = guess_cloud(name, text)
        if not cloud:
            raise BadInput(f"skypilot: cannot tell the cloud of '{name}'; lay files out as <cloud>/vms.csv "
                           f"(clouds: {', '.join(KNOWN_CLOUDS)})", field="PATH")
        res = parse_vms_csv(text, cloud, fetched_at=fetched_at, source=f"skypilot:{name}")
        res.provenance = {"file": name, "cloud": cloud, "sha256": hashlib.sha256(body).hexdigest(), "bytes": len(body)}
        res.raw = [(name, ctype, body)]
        results.append(res)
    return results
