"""Message catalogs for the CLI and the web page: English and Simplified Chinese.

Strings live in data/i18n/<lang>.json, keyed by a stable id; a missing key falls back to English,
then to the key itself, so a half-translated catalog never breaks output.
"""

from __future__ import annotations

import json
import os
from functools import lru_cache

from gpuquote.config import DATA_DIR

LANGS = ("en", "zh-CN")


def normalise_lang(raw: str | None) -> str:
    """Map 'zh', 'zh_CN.UTF-8', 'zh-Hans', 'zh-CN,zh;q=0.9,en;q=0.8' to a supported language."""
    if not raw:
        return "en"
    first = raw.split(",")[0].split(";")[0].strip().lower().replace("_", "-")
    return "zh-CN" if first.startswith("zh") else "en"


def current_lang() -> str:
    return normalise_lang(os.environ.get("GPUQUOTE_LANG") or os.environ.get("LC_ALL") or os.environ.get("LANG"))


@lru_cache(maxsize=4)
def catalog(lang: str) -> dict[str, str]:
    path = DATA_DIR / "i18n" / f"{lang}.json"
    if not path.exists():
        return {}
    return json.loads(path.read_text(encoding="utf-8"))


def t(key: str, lang: str | None = None, **kw: object) -> str:
    lang = lang or current_lang()
    text = catalog(lang).get(key) or catalog("en").get(key) or key
    return text.format(**kw) if kw else text
