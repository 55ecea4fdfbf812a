"""The terminal client's score sheet, from recorded messages: kept from the snapshot and
each deal's end as docs/protocol.md says ("The score sheet"), drawn to the width."""

from __future__ import annotations

import re

import pytest
from client_kit import seat, table, table_info, update, view
from prompt_toolkit.utils import get_cwidth

from pisyedili.client import render
from pisyedili.client.parse import Local, parse_input
from pisyedili.client.render import Look, columns, plain
from pisyedili.client.state import ClientState
from pisyedili.server.rules import sheet_rows

RESULT_1 = {"reason": "out", "winner": 1, "multiplier": 2, "points": [24, 0, 50],
            "hands": [["Qd", "2c"], [], ["Js"]]}
RESULT_2 = {"reason": "stock_out", "winner": 2, "multiplier": 1, "points": [17, 30, 4],
            "hands": [["Qd", "7h"], ["Kd", "Kc", "Kh"], ["4s"]]}


def over(deal_no: int, result: dict[str, object], scores: list[int]) -> dict[str, object]:
    return view(phase="over", turn=None, deal_no=deal_no, scores=scores, result=result)


@pytest.mark.rule("C14", "C15")
def test_the_sheet_comes_from_the_snapshot_then_a_row_at_each_deals_end() -> None:
    state = ClientState(look=Look(unicode=False))
    first = sheet_rows([RESULT_1])
    state.handle(table(view_=view(deal_no=2, scores=[24, 0, 50]),
                       match={"deal_no": 2, "totals": [24, 0, 50], "sheet": first}), 0.0)
    assert state.sheet == first
    lines = state.handle(update([{"event": "deal_end", "result": RESULT_2}],
                                over(2, RESULT_2, [41, 30, 54])), 1.0)
    assert state.sheet == sheet_rows([RESULT_1, RESULT_2])
    shown = [plain(line) for line in lines]
    at = shown.index("score sheet (/score; * the deal's winner)")
    assert shown[at + 1].split() == ["deal", "you", "ayse", "bot", "3"]
    assert shown[at + 2].split() == ["1", "24", "0*", "50", "x2"]  # out on a jack (C14)
    assert shown[at + 3].split() == ["2", "17", "30", "4*", "stock", "out"]  # C15
    assert shown[at + 4].split() == ["total", "41", "30", "54"]
    assert [plain(line) for line in state.sheet_lines()] == shown[at:]
    # A rematch's first deal starts a new sheet; leaving the table forgets it.
    state.handle(update([{"event": "deal_start", "deal_no": 1, "dealer": 0}],
                        view(deal_no=1, scores=[0, 0, 0])), 2.0)
    assert state.sheet == []
    assert plain(state.sheet_lines()[0]) == "No deal of this match has ended yet."
    state.left_table()
    assert "no table" in plain(state.sheet_lines()[0])


def test_an_older_server_without_sheets_keeps_what_the_client_saw() -> None:
    state = ClientState()
    state.handle(table(view_=view(deal_no=1, scores=[0, 0, 0]),
                       match={"deal_no": 1, "totals": [0, 0, 0]}), 0.0)
    state.handle(update([{"event": "deal_end", "result": RESULT_1}],
                        over(1, RESULT_1, [24, 0, 50])), 1.0)
    state.handle(table(view_=over(1, RESULT_1, [24, 0, 50]),
                       match={"deal_no": 1, "totals": [24, 0, 50]}), 2.0)  # a resync
    assert state.sheet == sheet_rows([RESULT_1])


@pytest.mark.parametrize("width", [60, 80])
def test_six_long_names_fit_the_width_and_the_numbers_line_up(width: int) -> None:
    names = {s: f"Bartholomew-{s}" for s in range(6)}
    rows = sheet_rows([{**RESULT_1, "multiplier": 1, "points": [12345, 0, 7, 99, 100, 3]}] * 3)
    lines = render.score_sheet(rows, names, Look(), width)
    assert all(columns(line) <= width for line in lines[1:]), [plain(x) for x in lines]
    ends = {len(plain(line)) for line in lines[1:]}  # no note: every row as wide
    assert len(ends) == 1, [plain(x) for x in lines]


@pytest.mark.parametrize("width", [40, 60])
@pytest.mark.parametrize("name", ["王小明麗華張", "مریم‌السادات", "สมศักดิ์"])
def test_wide_and_right_to_left_names_keep_the_columns(width: int, name: str) -> None:
    """Double-width, right-to-left and combining letters are measured as the terminal
    shows them: every line within `width`, each seat's numbers ending in one column."""
    names = {0: name, 1: "bot 2", 2: name[::-1], 3: "bot 4"}
    rows = sheet_rows([{**RESULT_2, "points": [17, 130, 4, 88]},
                       {**RESULT_1, "winner": 2, "points": [24, 0, 50, 9]}])
    lines = [plain(line) for line in render.score_sheet(rows, names, Look(), width)]
    assert all(get_cwidth(line) <= width for line in lines), lines
    body = lines[-4:]  # the header, the two deals (a note on a line of its own or not), total
    if body[0].split()[:1] != ["deal"]:
        body = [lines[-6], lines[-5], lines[-3], lines[-1]]
    # Where each seat's number ends: after a deal's number, or after the word `total`.
    ends = [[get_cwidth(line[:m.end()]) for m in re.finditer(r"\d+", line)][skip:skip + 4]
            for line, skip in zip(body[1:], (1, 1, 0), strict=True)]
    assert len(ends[0]) == 4 and ends[0] == ends[1] == ends[2], lines


def test_a_deals_end_draws_the_sheet_for_the_terminals_width() -> None:
    state = ClientState(look=Look(unicode=False), width=40)
    state.handle(table(table_info([seat(s, name=f"Bartholomew-{s}") for s in range(4)]),
                       view_=view(deal_no=1, scores=[0, 0, 0, 0])), 0.0)
    result = {**RESULT_2, "points": [17, 130, 4, 88]}
    lines = state.handle(update([{"event": "deal_end", "result": result}],
                                over(1, result, [17, 130, 4, 88])), 1.0)
    at = [plain(line) for line in lines].index("score sheet (/score; * the deal's")
    assert all(columns(line) <= 40 for line in lines[at:]), [plain(x) for x in lines]
    state.width = 80  # `/log` draws it again for the width it finds then
    logged = [plain(line) for line in state.deal_log]
    assert "score sheet (/score; * the deal's winner)" in logged


def test_score_is_a_local_command_with_its_aliases() -> None:
    state = ClientState()
    state.handle(table(table_info([seat(0, name="me"), seat(1, name="ayse"), seat(2, "bot")]),
                       view_=view()), 0.0)
    for typed in ("/score", "/scores", "/sheet"):
        assert parse_input(typed, state.context()) == Local("score", "")
