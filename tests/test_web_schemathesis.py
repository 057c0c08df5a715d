"""Property-based API testing from /openapi.json: no 5xx on generated input, and every 4xx names the field."""

from __future__ import annotations

import pytest

schemathesis = pytest.importorskip("schemathesis", reason="schemathesis is not installed (the test extra)")
from hypothesis import HealthCheck, settings  # noqa: E402

from gpuquote.web.app import create_app  # noqa: E402

schema = schemathesis.openapi.from_asgi("/openapi.json", create_app())


def _missing(module: str) -> bool:
    import importlib

    try:
        importlib.import_module(f"gpuquote.service.{module}")
    except ModuleNotFoundError:
        return True
    return False


# 501 only where a service module is not in this build yet (the plan service, until it is merged)
MISSING = {"/api/plan": _missing("plan"), "/api/quote-check": _missing("quotes"),
           "/api/quote-check/upload": _missing("quotes"), "/api/tco": _missing("quotes")}


@schema.parametrize()
@settings(max_examples=15, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
def test_no_5xx_and_every_4xx_names_the_field(case):
    response = case.call()
    if response.status_code == 501 and MISSING.get(case.path):
        return
    assert response.status_code < 500, f"{case.method} {case.formatted_path}: {response.status_code} {response.text}"
    if 400 <= response.status_code < 500:
        body = response.json()
        assert body.get("error"), response.text
        assert body.get("field"), f"a {response.status_code} must name the bad field: {response.text}"
        assert "Traceback" not in response.text
