"""A box table for the CLI's everyday listings (`gpuquote offers`, `offers --summary`), without Rich.

Why: on a cold start Rich's import and its cell measuring cost more than the query itself (~0.16 s of ~0.3 s
for 50 offers), and `gpuquote offers` is the command people run most. Rich also squeezed every column at
once on a narrow terminal, down to empty columns and ids cut to "a100-…", and cropped the right-hand ones.
Here a too-wide table first drops its least important columns (each column has a rank), says which, and only
then shortens text with "…"; numbers are never shortened. It draws the same boxes as Rich's default table.

Width: COLUMNS if set, else the terminal's; output to a pipe or a file is not limited (every value whole).
"""

from __future__ import annotations

import os
import sys
import unicodedata
from dataclasses import dataclass

ELLIPSIS = "…"


@dataclass(frozen=True)
class Column:
    header: str
    justify: str = "left"  # left | right (numbers: right, never shortened)
    max_width: int | None = None  # longer text is shortened with "…"
    rank: int = 0  # 0 = always shown; a too-wide table drops the highest rank first


def cell_width(s: str) -> int:
    """Terminal columns of s: CJK and other wide characters take two, combining marks none."""
    if s.isascii():
        return len(s)
    return sum(0 if unicodedata.combining(ch) else 2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in s)


def shorten(s: str, width: int) -> str:
    """s cut to `width` terminal columns, ending in "…" when cut."""
    if cell_width(s) <= width:
        return s
    out, used = [], 0
    for ch in s:
        w = cell_width(ch)
        if used + w > width - 1:
            break
        out.append(ch)
        used += w
    return "".join(out) + ELLIPSIS


def _pad(s: str, width: int, justify: str) -> str:
    gap = " " * max(0, width - cell_width(s))
    return gap + s if justify == "right" else s + gap


def available_width() -> int | None:
    """COLUMNS, else the terminal's width; None when stdout is not a terminal (nothing is cut)."""
    env = os.environ.get("COLUMNS", "")
    if env.isdigit() and int(env) > 0:
        return int(env)
    try:
        if sys.stdout.isatty():
            return os.get_terminal_size(sys.stdout.fileno()).columns
    except (OSError, ValueError, AttributeError):
        pass
    return None


def _styled() -> bool:
    try:
        return sys.stdout.isatty() and not os.environ.get("NO_COLOR") and os.environ.get("TERM") != "dumb"
    except (ValueError, AttributeError):
        return False


def layout(columns: list[Column], rows: list[list[str]], width: int | None) -> tuple[list[int], list[int]]:
    """(indices of the columns shown, their widths) for a table that fits `width` (None: no limit)."""
    natural = []
    for i, c in enumerate(columns):
        w = max([cell_width(c.header), *(cell_width(r[i]) for r in rows)])
        natural.append(min(w, max(c.max_width, 1)) if c.max_width and c.justify != "right" else w)
    shown = list(range(len(columns)))

    def total(idx: list[int], widths: list[int]) -> int:
        return sum(widths[i] for i in idx) + 3 * len(idx) + 1

    if width is None:
        return shown, [natural[i] for i in shown]
    while total(shown, natural) > width:
        droppable = [i for i in shown if columns[i].rank > 0]
        if not droppable:
            break
        shown.remove(max(droppable, key=lambda i: (columns[i].rank, i)))
    widths = list(natural)
    over = total(shown, widths) - width
    # still too wide: shorten text columns, widest first, down to 6 columns each (numbers stay whole)
    while over > 0:
        text = [i for i in shown if columns[i].justify != "right" and widths[i] > 6]
        if not text:
            break
        i = max(text, key=lambda j: widths[j])
        widths[i] -= 1
        over -= 1
    return shown, [widths[i] for i in shown]


def render(title: str | None, columns: list[Column], rows: list[list[str]], width: int | None = None,
           *, fit: bool = True) -> tuple[str, list[str]]:
    """(the table's text, the headers of the columns left out to fit). width=None: available_width()."""
    if fit and width is None:
        width = available_width()
    shown, widths = layout(columns, rows, width if fit else None)
    styled = _styled()
    bold, italic, reset = ("\x1b[1m", "\x1b[3m", "\x1b[0m") if styled else ("", "", "")

    def line(left: str, fill: str, mid: str, right: str) -> str:
        return left + mid.join(fill * (w + 2) for w in widths) + right

    out = []
    inner = sum(widths) + 3 * len(widths) + 1
    if title:
        t = shorten(title, inner)
        pad = max(0, inner - cell_width(t))
        out.append(" " * (pad // 2) + italic + t + reset + " " * (pad - pad // 2))
    out.append(line("┏", "━", "┳", "┓"))
    heads = [bold + _pad(shorten(columns[i].header, w), w, columns[i].justify) + reset for i, w in zip(shown, widths,
                                                                                                        strict=True)]
    out.append("┃ " + " ┃ ".join(heads) + " ┃")
    out.append(line("┡", "━", "╇", "┩"))
    for r in rows:
        cells = [_pad(shorten(r[i], w) if columns[i].justify != "right" else r[i], w, columns[i].justify)
                 for i, w in zip(shown, widths, strict=True)]
        out.append("│ " + " │ ".join(cells) + " │")
    out.append(line("└", "─", "┴", "┘"))
    hidden = [columns[i].header for i in range(len(columns)) if i not in shown]
    return "\n".join(out), hidden


__all__ = ["Column", "available_width", "cell_width", "layout", "render", "shorten"]
