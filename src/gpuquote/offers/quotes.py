"""Quote files (YAML, or CSV with the same column names): parsing whole files into Quotes.

The format is DESIGN.md section 3, documented in docs/quotes.md. Parsing is per quote: a bad field
makes that one quote an error (one line naming the quote id, the field and the accepted values) and
the other quotes are still parsed; a file that is not YAML/CSV at all is one BadInput. One quote is
read by offers.quote_reader and checked against offers.quote_schema; the types are in offers.quote_model.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gpuquote.errors import BadInput
from gpuquote.offers.quote_model import KNOWN_KEYS, Quote, QuoteError  # noqa: F401  (re-exported)
from gpuquote.offers.quote_reader import parse_quote

__all__ = ["KNOWN_KEYS", "ParsedQuotes", "Quote", "QuoteError", "parse_quote", "parse_quotes_text",
           "read_quote_file"]



@dataclass
class ParsedQuotes:
    quotes: list[Quote]
    errors: list[QuoteError]
    fmt: str  # yaml | csv


def _yaml_lines(text: str) -> list[int | None]:
    import yaml

    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError:
        return []
    seq = None
    if isinstance(node, yaml.SequenceNode):
        seq = node
    elif isinstance(node, yaml.MappingNode):
        for k, v in node.value:
            if getattr(k, "value", None) == "quotes" and isinstance(v, yaml.SequenceNode):
                seq = v
    return [item.start_mark.line + 1 for item in seq.value] if seq else []


def _unflatten(row: dict[str, str]) -> dict:
    out: dict = {}
    for key, val in row.items():
        if key is None or val is None or not str(val).strip():
            continue
        parts = key.strip().split(".")
        d = out
        for p in parts[:-1]:
            d = d.setdefault(p, {})
            if not isinstance(d, dict):
                break
        else:
            d[parts[-1]] = val.strip()
    return out


def parse_quotes_text(text: str, fmt: str = "yaml", name: str = "<quotes>",
                      overrides: dict[str, float] | None = None) -> ParsedQuotes:
    """Parse a whole quote file; only a file-level problem (syntax, no quotes) raises BadInput."""
    raws: list[tuple[dict | Any, int | None]] = []
    if fmt == "csv":
        all_lines = text.splitlines(keepends=True)
        skip = 0
        while skip < len(all_lines) and (not all_lines[skip].strip() or all_lines[skip].lstrip().startswith("#")):
            skip += 1
        reader = csv.DictReader(io.StringIO("".join(all_lines[skip:])))
        if not reader.fieldnames:
            raise BadInput(f"{name}: empty CSV; accepted: a header row with the quote columns (see docs/quotes.md)",
                           field="file")
        if "gpu" not in {(f or "").strip().lower() for f in reader.fieldnames}:
            from gpuquote.i18n import t

            raise BadInput(t("hostile.csv_no_gpu", name=name), field="gpu", accepted=["a gpu column"])
        rows = iter(reader)
        while True:
            try:
                row = next(rows)
            except StopIteration:
                break
            except csv.Error as e:  # a cell over the csv module's limit, a NUL byte: that row is bad
                raws.append(({"__bad__": f"not readable as CSV ({e})"}, reader.line_num + skip))
                continue
            cells = [v for v in row.values() if isinstance(v, str)]
            if not any(v.strip() for v in cells) or (cells and cells[0].lstrip().startswith("#")):
                continue
            line = reader.line_num + skip
            if None in row:
                raws.append(({"__bad__": f"{len(row[None])} more cells than header columns"}, line))
                continue
            raws.append((_unflatten(row), line))
    else:
        import yaml

        from gpuquote.safeload import check_text, yaml_bounds

        try:
            check_text(text, name)
            yaml_bounds(text, name)
            data = yaml.safe_load(text)
        except yaml.YAMLError as e:
            from gpuquote.i18n import Msg
            from gpuquote.safeload import yaml_error_text

            raise BadInput(Msg("quote.yaml_syntax", name=name, problem=yaml_error_text(e)), field="file",
                           accepted=["a YAML file with a `quotes:` list (see docs/quotes.md)"]) from None
        if isinstance(data, dict) and "quotes" in data:
            items = data["quotes"]
        elif isinstance(data, list):
            items = data
        else:
            raise BadInput(f"{name}: no `quotes:` list found; accepted: a YAML mapping with `quotes:` (a list of "
                           "quotes) or a YAML list of quotes", field="quotes")
        if not isinstance(items, list):
            raise BadInput(f"{name}: `quotes` is not a list; accepted: a YAML list of quote mappings", field="quotes")
        lines = _yaml_lines(text)
        for i, item in enumerate(items):
            raws.append((item, lines[i] if i < len(lines) else None))
    if not raws:
        raise BadInput(f"{name}: no quotes in the file; accepted: at least one quote (see docs/quotes.md)",
                       field="quotes")
    quotes: list[Quote] = []
    errors: list[QuoteError] = []
    seen: set[str] = set()
    for i, (raw, line) in enumerate(raws, start=1):
        if not isinstance(raw, dict):
            errors.append(QuoteError(f"q{i}", line, [("quote", "expected a mapping of fields", ["id: ..., gpu: ..."])]))
            continue
        if "__bad__" in raw:
            errors.append(QuoteError(f"q{i}", line, [("row", raw["__bad__"], None)]))
            continue
        q = parse_quote(raw, i, overrides, line)
        if isinstance(q, Quote):
            if q.id in seen:
                errors.append(QuoteError(q.id, line, [("id", f"duplicate id '{q.id}'", ["ids unique in the file"])]))
                continue
            seen.add(q.id)
            quotes.append(q)
        else:
            seen.add(q.quote_id)
            errors.append(q)
    return ParsedQuotes(quotes, errors, fmt)


def read_quote_file(path: str | Path, overrides: dict[str, float] | None = None) -> ParsedQuotes:
    """Read a .yaml/.yml/.csv quote file (the format follows the extension; anything else is read as YAML)."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise BadInput(f"FILE: '{path}' does not exist; accepted: a readable .yaml or .csv quote file",
                       field="file") from None
    except (IsADirectoryError, PermissionError, UnicodeDecodeError) as e:
        raise BadInput(f"FILE: '{path}' cannot be read ({type(e).__name__}); accepted: a readable UTF-8 .yaml or "
                       ".csv quote file", field="file") from None
    fmt = "csv" if p.suffix.lower() == ".csv" else "yaml"
    return parse_quotes_text(text, fmt, str(path), overrides)
