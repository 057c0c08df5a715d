"""Registered live sources: name -> adapter (fetch, parse, auth env vars, endpoint).

Every adapter module defines NAME, ENDPOINT, `fetch(http, env) -> list[Raw]` and
`parse(raw, fetched_at) -> list[ParseResult]` (one result per store source; all but the SkyPilot
hosted catalog return one). API keys are read from the environment at fetch time only.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from types import ModuleType

from gpuquote.errors import BadInput
from gpuquote.sources.base import ParseResult
from gpuquote.sources.http import Http, Raw


@dataclass(frozen=True)
class Adapter:
    name: str
    module: str
    title: str
    auth_env: tuple[str, ...] = ()  # any one of these names holds the key (first set wins)
    auth_required: bool = False
    accepts: str = "JSON response (one file, or a folder of pages)"

    @property
    def mod(self) -> ModuleType:
        return importlib.import_module(f"gpuquote.sources.{self.module}")

    @property
    def endpoint(self) -> str:
        return self.mod.ENDPOINT

    def key_present(self, env: Mapping[str, str]) -> bool:
        return any(env.get(k) for k in self.auth_env)

    def missing_auth(self, env: Mapping[str, str]) -> bool:
        return self.auth_required and not self.key_present(env)

    def fetch(self, http: Http, env: Mapping[str, str]) -> list[Raw]:
        return self.mod.fetch(http, env)

    def parse(self, raw: list[Raw], fetched_at: datetime) -> list[ParseResult]:
        return self.mod.parse(raw, fetched_at)


ADAPTERS: dict[str, Adapter] = {a.name: a for a in (
    Adapter("azure", "azure", "Azure Retail Prices API"),
    Adapter("aws", "aws", "AWS Price List bulk offer files (EC2)",
            accepts="EC2 offer file: index.csv (or a pre-filtered part of it) or index.json"),
    Adapter("gcp", "gcp", "GCP Cloud Billing Catalog (Compute Engine SKUs)",
            auth_env=("GPUQUOTE_GCP_API_KEY", "GCP_API_KEY"), auth_required=True),
    Adapter("vast", "vast", "vast.ai offer search", auth_env=("VAST_API_KEY",)),
    Adapter("runpod", "runpod", "RunPod GraphQL gpuTypes", auth_env=("RUNPOD_API_KEY",)),
    Adapter("lambda", "lambda_cloud", "Lambda Cloud instance types",
            auth_env=("LAMBDA_API_KEY",), auth_required=True),
    Adapter("skypilot", "skypilot_hosted", "SkyPilot hosted catalog (vms.csv per cloud)",
            accepts="a vms.csv, or a folder of <cloud>/vms.csv"),
    Adapter("shadeform", "shadeform", "Shadeform marketplace instance types",
            auth_env=("SHADEFORM_API_KEY",), auth_required=True),
    Adapter("alicloud", "alicloud", "Alibaba Cloud ECS GPU prices (CDN price files; DescribePrice with keys)",
            auth_env=("ALIBABA_CLOUD_ACCESS_KEY_ID",),
            accepts="instancePrice.json + instanceTypeDefinition.js (a folder), or the community vms.csv"),
    Adapter("tencentcloud", "tencentcloud", "Tencent Cloud CVM GPU prices (console DescribeZoneInstanceConfigInfos; "
            "InquiryPriceRunInstances with keys)", auth_env=("TENCENTCLOUD_SECRET_ID",),
            accepts="DescribeZoneInstanceConfigInfos answers (a folder of pages), or the community vms.csv"),
)}


def names() -> list[str]:
    return list(ADAPTERS)


def get(name: str) -> Adapter:
    key = (name or "").strip().lower()
    if key not in ADAPTERS:
        accepted = ["quotes", *ADAPTERS]  # `quotes` is imported by the quotes service, not an adapter
        raise BadInput(f"source: unknown source '{name}'; accepted: {', '.join(accepted)}",
                       field="source", accepted=accepted)
    return ADAPTERS[key]
