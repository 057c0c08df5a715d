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


# ------------------------------------------------------------------ messages computed by the lower layers
#
# The planner, the checklist, the estimator and the probe compute sentences ("spot: ~2.8 interruptions
# expected ..."). They must stay plain strings for the JSON contract, for logs and for tests, yet be shown
# in the reader's language. `Msg` is such a string: it reads as its English text and remembers its catalog key
# and parameters, so an interface (cli/, web/) turns it into the reader's language with `localize` at the
# last moment. Results can be cached and pickled without fixing a language.


def _render(key: str, lang: str, params: dict[str, object]) -> str:
    template = catalog(lang).get(key) or catalog("en").get(key)
    if template is None:
        raise KeyError(f"message {key!r} is not in data/i18n/en.json")
    return template.format(**params) if params else template


class Msg(str):
    """A catalog sentence: `str(m)` is the English text; `m.localized(lang)` the same sentence in `lang`."""

    key: str
    params: dict[str, object]

    def __new__(cls, key: str, /, **params: object) -> Msg:
        self = super().__new__(cls, _render(key, "en", params))
        self.key, self.params = key, params
        return self

    def localized(self, lang: str) -> str:
        if lang == "en":
            return str.__str__(self)
        return _render(self.key, lang, {k: localize(v, lang) for k, v in self.params.items()})

    def __reduce__(self):  # pickle by key and parameters, not by the English text
        return (_rebuild_msg, (self.key, self.params))

    def __add__(self, other: object) -> Text:  # type: ignore[override]
        return Text(self, other)

    def __radd__(self, other: object) -> Text:
        return Text(other, self)


def _rebuild_msg(key: str, params: dict[str, object]) -> Msg:
    return Msg(key, **params)


class Text(str):
    """Catalog sentences and plain strings joined (`msg + "; " + other`, `join("; ", msgs)`), localised part by part."""

    parts: tuple[object, ...]

    def __new__(cls, *parts: object) -> Text:
        flat: list[object] = []
        for p in parts:
            flat.extend(p.parts if isinstance(p, Text) else (p,))
        self = super().__new__(cls, "".join(str(p) for p in flat))
        self.parts = tuple(flat)
        return self

    def localized(self, lang: str) -> str:
        return "".join(str(localize(p, lang)) for p in self.parts)

    def __reduce__(self):
        return (Text, self.parts)

    def __add__(self, other: object) -> Text:  # type: ignore[override]
        return Text(self, other)

    def __radd__(self, other: object) -> Text:
        return Text(other, self)


def join(sep: str, items: list) -> Text:
    """`sep.join(items)` that keeps each catalog sentence translatable."""
    parts: list[object] = []
    for i, item in enumerate(items):
        if i:
            parts.append(sep)
        parts.append(item)
    return Text(*parts)


def localize(obj: object, lang: str | None = None) -> object:
    """The same value with every `Msg`/`Text` inside (dicts, lists, tuples) in `lang`; other values untouched."""
    lang = lang or current_lang()
    if isinstance(obj, Msg | Text):
        return obj.localized(lang)
    if isinstance(obj, dict):
        return {k: localize(v, lang) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [localize(v, lang) for v in obj]
    return obj


def install_click_catalog(lang: str | None = None) -> None:
    """Show click's own words (Usage:, Options, Error: ...) in `lang`: click asks gettext for them."""
    lang = lang or current_lang()
    if lang == "en":
        return
    path = DATA_DIR / "i18n" / f"click-{lang}.json"
    if not path.exists():
        return
    table: dict[str, str] = json.loads(path.read_text(encoding="utf-8"))

    def gettext(msg: str) -> str:
        return table.get(msg, msg)

    def ngettext(singular: str, plural: str, n: int) -> str:
        return table.get(singular if n == 1 else plural, singular if n == 1 else plural)

    import gettext as _gettext
    import sys

    for name, mod in list(sys.modules.items()):
        if not name.startswith(("click.", "typer.")) or mod is None:
            continue
        if getattr(mod, "_", None) is _gettext.gettext:
            mod._ = gettext
        if getattr(mod, "ngettext", None) is _gettext.ngettext:
            mod.ngettext = ngettext
    # typer vendors click without gettext: its two fixed words are set here
    fmt, core = sys.modules.get("typer._click.formatting"), sys.modules.get("typer._click.core")
    if fmt is not None and not getattr(fmt.HelpFormatter.write_usage, "_gq", False):
        orig_usage = fmt.HelpFormatter.write_usage

        def write_usage(self, prog: str, args: str = "", prefix: str | None = None) -> None:
            orig_usage(self, prog, args, gettext("Usage:") + " " if prefix is None else prefix)

        write_usage._gq = True  # type: ignore[attr-defined]
        fmt.HelpFormatter.write_usage = write_usage
    if core is not None and not getattr(core.Command.get_help_option, "_gq", False):
        orig_help = core.Command.get_help_option

        def get_help_option(self, ctx):  # type: ignore[no-untyped-def]
            opt = orig_help(self, ctx)
            if opt is not None:
                opt.help = gettext("Show this message and exit.")
            return opt

        get_help_option._gq = True  # type: ignore[attr-defined]
        core.Command.get_help_option = get_help_option


def click_message(message: str, lang: str | None = None) -> str:
    """A usage error from click in `lang`: its known openings ('No such option: ...') are translated."""
    lang = lang or current_lang()
    if lang == "en":
        return message
    path = DATA_DIR / "i18n" / f"click-{lang}.json"
    table: dict[str, str] = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    for k, v in table.items():
        if k.startswith("prefix:") and message.startswith(k[7:]):
            return v + message[len(k) - 7:]
    return message
