"""The estimator's constants from data/calibration.yaml, with a scoped override for fitting."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from functools import lru_cache
from typing import Any

from gpuquote.config import DATA_DIR

_OVERRIDES: dict[str, Any] = {}


@lru_cache(maxsize=1)
def calibration_table() -> dict[str, dict]:
    """The whole calibration file: value, kind (stated|fitted), meaning, cases, source."""
    import yaml

    return yaml.safe_load((DATA_DIR / "calibration.yaml").read_text(encoding="utf-8"))


class _K:
    """Attribute access to constant values: K.goodput, K.net_efficiency['ib']."""

    def __getattr__(self, name: str) -> Any:
        if name in _OVERRIDES:
            return _OVERRIDES[name]
        try:
            return calibration_table()[name]["value"]
        except KeyError:
            raise AttributeError(name) from None


K = _K()


@contextlib.contextmanager
def override(**values: Any) -> Iterator[None]:
    """Temporarily replace constants (used by the fitter and leave-one-out); clears result caches."""
    from gpuquote.estimate import api

    old = dict(_OVERRIDES)
    _OVERRIDES.update(values)
    api.clear_caches()
    try:
        yield
    finally:
        _OVERRIDES.clear()
        _OVERRIDES.update(old)
        api.clear_caches()
