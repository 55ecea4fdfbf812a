"""The score sheet: a row per deal, derived from the deals' results as the engine scored
them (C13-C16, K12-K15), with each deal's multiplier and the running totals."""

from __future__ import annotations

from typing import Any

import pytest
from rules_kit import build, play

from pisyedili.protocol.shapes import SHEET_ROW, SHEET_ROWS
from pisyedili.server.rules import sheet_rows


def result_of(rules: str, hands: list[str], last: str, **kw: Any) -> dict[str, Any]:
    """The wire result of a deal whose seat 0 ends it with the move `last`."""
    d = build(rules, hands, pile="5h", turn=0, rest="pile", **kw)
    play(d, last)
    assert d.result is not None
    return d.result.to_wire()


@pytest.mark.rule("C13", "C14", "C15", "C16")
def test_a_classic_sheet_keeps_each_deals_points_multiplier_and_running_totals() -> None:
    results = [
        result_of("classic", ["Jh", "9c 4c"], "Jh>c"),  # out on a jack: 13 x 2 (C14)
        result_of("classic", ["7h", "Kc 2d"], "7h"),  # out on a 7: 12 x 3 (C14)
        result_of("classic", ["2c 9d", "Jd 3s"], "draw", stock=""),  # stock out (C15)
        result_of("classic", ["5d", "Ac Qd"], "5d"),  # plain: A 15 + Q 10 (C13)
    ]
    rows = sheet_rows(results)
    for row in rows:
        SHEET_ROW.check(row, "row")
    assert [(r["deal_no"], r["winner"], r["reason"], r["multiplier"]) for r in rows] == [
        (1, 0, "out", 2), (2, 0, "out", 3), (3, 0, "stock_out", 1), (4, 0, "out", 1)]
    assert [r["points"] for r in rows] == [[0, 26], [0, 36], [11, 28], [0, 25]]
    assert [r["totals"] for r in rows] == [[0, 26], [0, 62], [11, 90], [11, 115]]
    # The last row's totals are the match's: the lowest wins (C16).
    assert rows[-1]["totals"] == [sum(r["points"][s] for r in rows) for s in (0, 1)]


@pytest.mark.rule("K12", "K13")
def test_a_cardiva_sheet_doubles_for_a_jack_and_triples_for_a_seven() -> None:
    results = [result_of("cardiva", ["Jh", "Ac 4c", "2s"], "Jh>c"),
               result_of("cardiva", ["7h", "9c", "Ks"], "7h")]
    rows = sheet_rows(results)
    assert [r["multiplier"] for r in rows] == [2, 3]
    assert [r["points"] for r in rows] == [[0, 30, 4], [0, 27, 30]]  # A 11 (K12)
    assert rows[-1]["totals"] == [0, 57, 34]


def test_a_long_sheet_keeps_its_last_rows_whose_totals_count_every_deal() -> None:
    one = result_of("classic", ["5d", "2c"], "5d")
    rows = sheet_rows([one] * (SHEET_ROWS + 5), SHEET_ROWS)
    assert len(rows) == SHEET_ROWS
    assert rows[0]["deal_no"] == 6 and rows[-1]["deal_no"] == SHEET_ROWS + 5
    assert rows[-1]["totals"] == [0, 2 * (SHEET_ROWS + 5)]
    assert sheet_rows([]) == []
