"""cli/plain_table.py: the CLI's listing table fits the terminal by dropping minor columns first, never cuts a
number, measures Chinese text in terminal columns, and leaves piped output whole."""

from __future__ import annotations

from gpuquote.cli.plain_table import Column, cell_width, layout, render, shorten

COLS = [Column("GPU", max_width=22), Column("$/GPU-h", "right"), Column("Provider", max_width=14),
        Column("Region", rank=2), Column("SKU", max_width=22, rank=3), Column("Form", rank=7)]
ROWS = [["a100-80gb-sxm4", "1.234", "primeintellect", "us-east-1", "datacrunch__8xA100_80G_SXM", "purchase"],
        ["h100-80gb", "12,345.678", "aws", "ap-northeast-1", "p5.48xlarge", ""]]


def _lines(text: str) -> list[str]:
    return text.splitlines()


def test_a_wide_terminal_shows_every_column_and_caps_long_text():
    text, hidden = render("Offers", COLS, ROWS, width=200)
    assert hidden == []
    assert "datacrunch__8xA100_80…" in text and "12,345.678" in text and "a100-80gb-sxm4" in text
    widths = {cell_width(ln) for ln in _lines(text)[1:]}
    assert len(widths) == 1, "every box line has the same width"


def test_a_narrow_terminal_drops_the_highest_ranks_first_and_says_so():
    text, hidden = render("Offers", COLS, ROWS, width=72)
    assert hidden == ["SKU", "Form"], "named in column order"
    assert all(cell_width(ln) <= 72 for ln in _lines(text))
    assert "us-east-1" in text and "primeintellect" in text
    text, hidden = render("Offers", COLS, ROWS, width=30)
    assert hidden == ["Region", "SKU", "Form"]
    assert "12,345.678" in text and "1.234" in text, "numbers are never shortened"
    assert "…" in text, "text is shortened only when dropping is not enough"


def test_piped_output_is_not_cut():
    shown, widths = layout(COLS, ROWS, None)
    assert shown == list(range(len(COLS))) and widths[1] == len("12,345.678")


def test_chinese_text_takes_two_columns():
    assert cell_width("供应商") == 6 and cell_width("a100") == 4
    assert shorten("为适应终端宽度", 7) == "为适应…" and cell_width(shorten("为适应终端宽度", 7)) == 7
    cols = [Column("供应商"), Column("价格", "right")]
    text, _ = render(None, cols, [["阿里云", "9.5"], ["aws", "12"]], width=80)
    assert len({cell_width(ln) for ln in _lines(text)}) == 1, "boxes line up with wide characters"


def test_the_offers_command_hides_columns_on_a_narrow_terminal(cli):
    res = cli("offers", "--gpu", "a100-80gb", "--limit", "3", env={"COLUMNS": "70"})
    assert res.returncode == 0
    lines = res.stdout.splitlines()
    assert all(cell_width(ln) <= 70 for ln in lines if ln.startswith(("┏", "┃", "│", "└")))
    assert any(ln.startswith("Columns hidden to fit the terminal:") and "Form" in ln for ln in lines)
    zh = cli("offers", "--gpu", "a100-80gb", "--limit", "3", env={"COLUMNS": "70", "GPUQUOTE_LANG": "zh-CN"})
    assert "为适应终端宽度已隐藏的列" in zh.stdout
    wide = cli("offers", "--gpu", "a100-80gb", "--limit", "3", env={"COLUMNS": "250"})
    assert "Columns hidden" not in wide.stdout and "Freshness" in wide.stdout
