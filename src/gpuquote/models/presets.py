"""Model presets (data/models.yaml) and the resolver from a job's `model:` id."""

from __future__ import annotations

import difflib
from functools import lru_cache

from gpuquote.config import DATA_DIR
from gpuquote.errors import BadInput
from gpuquote.i18n import Msg
from gpuquote.models.architecture import Architecture, architecture_from_dict


def _norm(name: str) -> str:
    return str(name).strip().lower().replace("_", "-").replace(" ", "-")


@lru_cache(maxsize=1)
def _load() -> tuple[dict[str, Architecture], dict[str, str]]:
    import yaml

    raw = yaml.safe_load((DATA_DIR / "models.yaml").read_text(encoding="utf-8"))
    presets: dict[str, Architecture] = {}
    aliases: dict[str, str] = {}
    for mid, entry in raw.items():
        presets[mid] = architecture_from_dict(entry["arch"], name=mid, source=entry.get("source", ""))
        aliases[_norm(mid)] = mid
        for a in entry.get("aliases", []) or []:
            aliases[_norm(a)] = mid
    return presets, aliases


def list_models() -> dict[str, Architecture]:
    """Every preset by id."""
    return dict(_load()[0])


def get_model(name: str) -> Architecture:
    """A preset by id or alias (case-insensitive); BadInput naming the closest ids otherwise."""
    presets, aliases = _load()
    key = _norm(name)
    if key in aliases:
        return presets[aliases[key]]
    close = difflib.get_close_matches(key, list(aliases), n=4, cutoff=0.5)
    hint = Msg("err.model.closest", names=", ".join(close)) if close else \
        Msg("err.model.accepted", names=", ".join(presets))
    raise BadInput(
        Msg("err.model.unknown", name=name, hint=hint),
        field="model",
        accepted=close or list(presets),
    )
