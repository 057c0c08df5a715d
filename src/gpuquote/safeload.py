"""Bounded parsing of YAML and JSON from outside (job and quote files, API bodies, provider responses).

`yaml.safe_load` is safe from code execution, not from size: a 1 KB file of nested aliases (an
"alias bomb") expands to billions of values in whatever walks the result, and deep nesting ends in
RecursionError. So every YAML/JSON text from a user or a provider is read here, with limits checked
*before* the document is built: the size in bytes, the nesting depth, the number of aliases, and
the number of values the aliases expand to (one streaming pass over the parser's events, no
recursion). Each refusal is one BadInput line naming the field and the limit (exit 2, HTTP 400).
"""

from __future__ import annotations

import json
import re
from typing import Any

from gpuquote.errors import BadInput
from gpuquote.i18n import Msg, t

#: Limits (documented in docs/sources.md and docs/deploy.md).
MAX_YAML_BYTES = 4 * 2**20  # job and quote files are kilobytes
MAX_JSON_BYTES = 256 * 2**20  # a provider's whole price list (AWS regions are tens of MB)
MAX_DEPTH = 50
MAX_ALIASES = 100
MAX_EXPANDED = 200_000  # values after expanding aliases (a big quote file has a few thousand)


def _size_check(n: int, limit: int, field: str) -> None:
    if n > limit:
        raise BadInput(t("hostile.too_big", field=field, size=n, limit=limit), field=field,
                       accepted=[f"<= {limit} bytes"])


def check_text(text: str, field: str, max_bytes: int = MAX_YAML_BYTES) -> None:
    """Size and NUL-byte checks on decoded text, before any parser sees it."""
    _size_check(len(text), max_bytes, field)
    if "\x00" in text:
        raise BadInput(t("hostile.nul", field=field, line=text.count("\n", 0, text.index("\x00")) + 1),
                       field=field, accepted=["text without NUL bytes"])


def yaml_bounds(text: str, field: str) -> None:
    """Raise BadInput when the YAML text nests deeper than MAX_DEPTH or its aliases expand too far."""
    import yaml

    depth = 0
    aliases = 0
    count = 0
    sizes: dict[str, int] = {}
    stack: list[tuple[str | None, int]] = []
    for ev in yaml.parse(text, Loader=yaml.SafeLoader):
        if isinstance(ev, yaml.AliasEvent):
            aliases += 1
            if aliases > MAX_ALIASES:
                raise BadInput(t("hostile.aliases", field=field, limit=MAX_ALIASES), field=field,
                               accepted=[f"<= {MAX_ALIASES} aliases"])
            count += sizes.get(ev.anchor, 1)
        elif isinstance(ev, yaml.ScalarEvent):
            count += 1
            if ev.anchor:
                sizes[ev.anchor] = 1
        elif isinstance(ev, yaml.CollectionStartEvent):
            depth += 1
            if depth > MAX_DEPTH:
                line = ev.start_mark.line + 1 if ev.start_mark else "?"
                raise BadInput(t("hostile.depth", field=field, limit=MAX_DEPTH, line=line), field=field,
                               accepted=[f"<= {MAX_DEPTH} levels"])
            stack.append((ev.anchor, count))
        elif isinstance(ev, yaml.CollectionEndEvent):
            depth -= 1
            anchor, before = stack.pop()
            count += 1
            if anchor:
                sizes[anchor] = count - before
        if count > MAX_EXPANDED:
            raise BadInput(t("hostile.expanded", field=field, limit=MAX_EXPANDED), field=field,
                           accepted=[f"<= {MAX_EXPANDED} values"])


#: PyYAML's problems, in words a reader can act on (en and zh-CN in the catalog); others are shown as PyYAML says
_YAML_PROBLEMS = (
    (re.compile(r"mapping values are not allowed here"), "yaml.p.mapping_here"),
    (re.compile(r"found character '(?P<char>.+)' that cannot start any token"), "yaml.p.bad_char"),
    (re.compile(r"expected ',' or '(?P<close>[\]}])', but got"), "yaml.p.unclosed"),
    (re.compile(r"found unexpected end of stream"), "yaml.p.end_of_text"),
    (re.compile(r"expected <block end>, but found"), "yaml.p.indent"),
    (re.compile(r"could not find expected ':'"), "yaml.p.no_colon"),
    (re.compile(r"found undefined alias '(?P<name>.+)'"), "yaml.p.alias"),
    (re.compile(r"^second occurrence$"), "yaml.p.duplicate_anchor"),
    (re.compile(r"but found another document"), "yaml.p.two_documents"),
    (re.compile(r"found unknown escape character '(?P<char>.+)'"), "yaml.p.escape"),
)


def yaml_error_text(e: Exception) -> str:
    """A YAML error as one line: what and where ("a tab character ... at line 3, column 1"), a catalog sentence
    (localised at the interface) where PyYAML's problem is a known one."""
    mark = getattr(e, "problem_mark", None)
    problem = getattr(e, "problem", None) or " ".join(str(e).split())[:160]
    ctx, cmark = getattr(e, "context", None), getattr(e, "context_mark", None)
    for rx, key in _YAML_PROBLEMS:
        m = rx.search(problem)
        if m:
            params = {k: ("\\t" if v == "\t" else v) for k, v in m.groupdict().items()}
            out: object = Msg(key, **params)
            if mark:
                out = out + Msg("yaml.where", line=mark.line + 1, column=mark.column + 1)
            if cmark and (not mark or cmark.line != mark.line):
                out = out + Msg("yaml.started", line=cmark.line + 1)
            return out  # type: ignore[return-value]
    where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
    if ctx and cmark and (not mark or cmark.line != mark.line):
        problem += f" ({ctx} at line {cmark.line + 1})"
    return f"{problem}{where}"


def load_yaml(text: str | bytes, field: str, *, max_bytes: int = MAX_YAML_BYTES) -> Any:
    """YAML (or JSON, a subset) from outside, within the limits; BadInput naming `field` otherwise."""
    import yaml

    if isinstance(text, bytes):
        _size_check(len(text), max_bytes, field)
        try:
            text = text.decode("utf-8-sig")
        except UnicodeDecodeError as e:
            raise BadInput(t("hostile.not_utf8", field=field, pos=e.start), field=field,
                           accepted=["UTF-8 text"]) from None
    check_text(text, field, max_bytes)
    try:
        yaml_bounds(text, field)
        return yaml.safe_load(text)
    except yaml.YAMLError as e:
        raise BadInput(Msg("hostile.yaml_syntax", field=field, problem=yaml_error_text(e)), field=field,
                       accepted=["YAML or JSON text"]) from None
    except RecursionError:  # pragma: no cover - yaml_bounds stops depth first
        raise BadInput(t("hostile.depth_json", field=field, limit=MAX_DEPTH), field=field) from None


def json_depth(data: Any) -> int:
    """Nesting depth of parsed JSON, iteratively (a deep document must not recurse here either)."""
    deepest = 0
    stack = [(data, 1)]
    while stack:
        v, d = stack.pop()
        if isinstance(v, dict):
            deepest = max(deepest, d)
            stack.extend((x, d + 1) for x in v.values())
        elif isinstance(v, list):
            deepest = max(deepest, d)
            stack.extend((x, d + 1) for x in v)
    return deepest


def load_json(text: str | bytes, field: str, *, max_bytes: int = MAX_JSON_BYTES,
              max_depth: int | None = MAX_DEPTH) -> Any:
    """JSON from outside: size limit first, then parse (NaN/Infinity refused), then a depth limit.

    max_depth None skips the depth walk and lets NaN through (a provider's megabytes of rows, where one
    NaN price is one skipped row, not a refused file; the C parser's own recursion limit still turns a
    pathological nesting into this BadInput).
    """
    _size_check(len(text), max_bytes, field)
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8-sig")
        except UnicodeDecodeError as e:
            raise BadInput(t("hostile.not_utf8", field=field, pos=e.start), field=field,
                           accepted=["UTF-8 text"]) from None

    def no_constant(name: str) -> Any:
        raise ValueError(f"{name} is not a JSON number")

    try:
        data = json.loads(text, parse_constant=no_constant) if max_depth is not None else json.loads(text)
    except RecursionError:
        raise BadInput(t("hostile.depth_json", field=field, limit=max_depth or MAX_DEPTH), field=field,
                       accepted=[f"<= {max_depth or MAX_DEPTH} levels"]) from None
    except ValueError as e:
        raise BadInput(t("hostile.json_syntax", field=field, problem=" ".join(str(e).split())[:160]),
                       field=field, accepted=["JSON text"]) from None
    if max_depth is not None and json_depth(data) > max_depth:
        raise BadInput(t("hostile.depth_json", field=field, limit=max_depth), field=field,
                       accepted=[f"<= {max_depth} levels"])
    return data
