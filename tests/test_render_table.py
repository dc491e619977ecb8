"""The one table renderer: display columns (CJK), cutting for a narrow terminal, empty tables,
numbers, and the model it draws."""

from __future__ import annotations

import pytest

from fabtui.model.table import Column, Table, left, right
from fabtui.render.table import cell_text, cut, display_width, render_table, render_tables


def test_display_width_counts_wide_as_two_and_combining_as_zero() -> None:
    assert display_width("mlx5_0") == 6
    assert display_width("交换机") == 6            # CJK ideographs: W
    assert display_width("ＡＢ") == 4              # full-width Latin: F
    assert display_width("e\u0301") == 1            # e + combining acute accent
    assert display_width("a\u200db") == 2           # zero-width joiner takes no column
    assert display_width("ｱｲ") == 2                 # half-width katakana: H, one column each


def test_chinese_cells_line_up() -> None:
    table = Table.build([left("name"), left("state", "状态"), right("count")],
                        [("交换机", "正常", 7), ("leaf01", "故障", 12)])
    lines = render_table(table).splitlines()
    # Written out by hand: each ideograph is two columns wide.
    assert lines == ["name    状态  count",
                     "交换机  正常      7",
                     "leaf01  故障     12"]
    assert [display_width(line) for line in lines] == [19, 19, 19]
    assert len(lines[1]) == 14  # so counting characters instead of columns would misalign
    # The second column starts at display column 8 on every line.
    starts = [display_width(line[:line.index(cell)])
              for line, cell in zip(lines, ("状态", "正常", "故障"), strict=True)]
    assert starts == [8, 8, 8]


def test_combining_marks_do_not_shift_columns() -> None:
    table = Table.build([left("host"), left("site")], [("cafe\u0301", "a"), ("node1", "b")])
    lines = render_table(table).splitlines()
    assert [display_width(line) for line in lines] == [11, 8, 8]
    assert [display_width(line[:-1]) for line in lines[1:]] == [7, 7]


def test_right_aligned_numbers_end_in_the_same_column() -> None:
    table = Table.build([left("port"), right("rx_err"), right("ber")],
                        [("Ethernet0", 0, 1e-12), ("Ethernet4", 123456, 0.5),
                         ("Ethernet8", None, 3.0)])
    lines = render_table(table).splitlines()
    assert lines == ["port       rx_err    ber",
                     "Ethernet0       0  1e-12",
                     "Ethernet4  123456    0.5",
                     "Ethernet8       -      3"]


def test_cell_values_read_as_a_user_expects() -> None:
    assert [cell_text(v) for v in (None, True, False, 42, 0.1, 2.0, 12345.678901)] == \
        ["-", "yes", "no", "42", "0.1", "2", "12345.678901"]
    # A tab or newline inside a cell would break the row; it reads as a space.
    assert cell_text("link\tdown\nnow") == "link down now"


def test_narrow_terminal_cuts_text_columns_with_an_ellipsis_and_keeps_numbers() -> None:
    message = "link status definitely down, disabling slave enp83s0f0np0"
    table = Table.build([left("device"), right("code"), left("message")],
                        [("mlx5_0", 1234567, message), ("交换机交换机交换机", 9, "short")])
    full = render_table(table)
    assert message in full and "…" not in full  # no width: nothing is cut
    lines = render_table(table, width=40).splitlines()
    assert all(display_width(line) <= 40 for line in lines), lines
    assert "1234567" in lines[1]  # a cut number would read as another number
    assert lines[1].endswith("…") and lines[1].startswith("mlx5_0")
    assert "…" in lines[2]        # the CJK device name was cut too, on a column boundary
    code_end = [display_width(line[:line.index(digits) + len(digits)])
                for line, digits in zip(lines[1:], ("1234567", "9"), strict=True)]
    assert code_end[0] == code_end[1]


def test_a_table_that_fits_is_not_cut() -> None:
    table = Table.build([left("a"), left("b")], [("x" * 10, "y" * 10)])
    assert render_table(table, width=22) == render_table(table)
    assert "…" in render_table(table, width=21)


def test_cut_respects_wide_characters() -> None:
    assert cut("交换机交换机", 5) == "交换…"
    assert cut("交换机交换机", 4) == "交…"  # a wide char does not fit in the one column left
    assert display_width(cut("交换机交换机", 4)) == 3
    assert cut("short", 5) == "short"
    assert cut("anything", 0) == ""


def test_empty_table_keeps_its_headings_and_says_so() -> None:
    table = Table.build([left("port"), right("value")], [], title=["sonic (counters)"],
                        notes=["0 ports"])
    assert render_table(table).splitlines() == ["sonic (counters)", "port  value", "(no rows)",
                                                "0 ports"]


def test_a_table_without_columns_is_its_title_and_notes() -> None:
    summary = Table.build([], title=["NCCL 2.21.5   ranks: 16"], notes=["done"])
    rows = Table.build([left("x")], [("1",)])
    assert render_tables([summary, rows]) == "NCCL 2.21.5   ranks: 16\ndone\n\nx\n1"


def test_column_headings_and_lookup() -> None:
    table = Table.build([Column("device", ""), left("port", "PORT")], [("GPU0", "1")])
    assert render_table(table).splitlines()[0] == "      PORT"
    assert table.column("port") == ["1"]
    with pytest.raises(KeyError):
        table.column("missing")


def test_a_row_of_the_wrong_length_is_refused() -> None:
    with pytest.raises(ValueError, match="row 1 has 1 cells for 2 columns"):
        Table.build([left("a"), left("b")], [("1", "2"), ("3",)])
