"""Spellings vendors and users write, in any order of tokens, resolve to one id (a table)."""

from __future__ import annotations

import pytest

from gpuquote.hardware import resolve, try_resolve

TABLE = [
    ("H200 SXM 141GB", "h200-141gb-sxm"),
    ("141GB H200 SXM", "h200-141gb-sxm"),
    ("SXM5 H100 80G", "h100-80gb-sxm5"),
    ("H100 SXM5 80GB", "h100-80gb-sxm5"),
    ("A100-80G-SXM4", "a100-80gb-sxm4"),
    ("SXM4-A100-80G", "a100-80gb-sxm4"),
    ("8*A100 80G", "a100-80gb"),  # memory known, form not: a family, never one SKU silently
    ("8 x A100 80GB SXM4", "a100-80gb-sxm4"),
    ("A100 80G PCIe x8", "a100-80gb-pcie"),
    ("A100 80GB (x8)", "a100-80gb"),
    ("PCIe A100 40GB", "a100-40gb-pcie"),
    ("A100 80 GB PCIe", "a100-80gb-pcie"),
    ("H100 80GB SXM5 x 8", "h100-80gb-sxm5"),
    ("2xRTX 4090", "rtx-4090"),
    ("RTX 6000 Ada 48GB", "rtx-6000-ada"),
]


@pytest.mark.parametrize(("name", "gpu_id"), TABLE)
def test_any_token_order_resolves(name, gpu_id):
    assert resolve(name).id == gpu_id


@pytest.mark.parametrize("name", ["A1000 80GB", "H300 SXM 141GB", "80GB SXM", "x8"])
def test_reordering_never_invents_a_gpu(name):
    assert try_resolve(name) is None


def test_a_quote_accepts_the_reordered_spelling():
    from gpuquote.offers.quotes import Quote, parse_quote

    q = parse_quote({"id": "v", "gpu": "H200 SXM 141GB", "gpu_count": 8,
                     "price": {"amount": 3.5, "currency": "USD", "per": "hour"}, "form": "gpu_hour"}, 1)
    assert isinstance(q, Quote) and q.gpu_id == "h200-141gb-sxm"


def test_every_new_message_is_in_english_and_chinese_with_the_same_placeholders():
    import re

    from gpuquote.i18n import catalog

    en, zh = catalog("en"), catalog("zh-CN")
    keys = [k for k in en if k.startswith("hostile.")]
    assert len(keys) >= 20
    for k in keys:
        assert k in zh and zh[k] != en[k], k
        assert set(re.findall(r"{(\w+)", en[k])) == set(re.findall(r"{(\w+)", zh[k])), k
