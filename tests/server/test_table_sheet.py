"""The score sheet at a table: in every member's snapshot (players and spectators),
derived from the match's deal results, so that a table rebuilt from its commands or from
its journal's pickle shows the same sheet; and the rule docs/protocol.md gives clients
("The score sheet"): each `deal_end` adds a row from its result and the update's view,
a rematch's first deal starts a new sheet."""

from __future__ import annotations

import pickle
from typing import Any

import pytest
from test_table_core import SETTINGS, Loop

from pisyedili.protocol.schema import Direction, validate
from pisyedili.server.rules import Options, sheet_rows
from pisyedili.server.table import commands as cmd
from pisyedili.server.table.core import TableCore, TablePhase

PLAYERS = ("1", "2")
WATCHER = "3"


def started(rules: str, match_end: str, seed: int) -> Loop:
    """Two people and a bot at a table, a spectator watching, the match started."""
    core = TableCore(1, "t", Options.make(rules, 3, match_end=match_end), private=False,
                     host="1", settings=SETTINGS)
    loop = Loop(core)
    loop.do(cmd.Join("1", "Ayşe"))
    loop.do(cmd.Join("2", "Mehmet"))
    loop.do(cmd.AddBot("1", 2, "easy", seed))
    loop.do(cmd.Ready("2", True))
    loop.do(cmd.Join(WATCHER, "Zeynep", spectate=True))
    loop.do(cmd.Start("1", seed))
    return loop


def play_until(loop: Loop, deals: int) -> None:
    """Play (each person its last legal move) until `deals` deals are over, or the
    match is."""
    core = loop.core
    for _ in range(20_000):
        match = core.match
        assert match is not None
        if core.phase != TablePhase.PLAYING or (len(match.results) >= deals
                                                and match.deal.over):
            return
        to_act = match.deal.to_act
        who = next((p for p in PLAYERS if core.seat_of(p) == to_act), None)
        moves = loop.offered(who) if who is not None else None
        if who is None or not moves or match.deal.over:
            assert loop.fire_next(), "nothing to do and no timer armed"
        else:
            loop.do(cmd.Play(who, moves[-1]))
    raise AssertionError("the deals did not end")


def sheet_of(loop: Loop, member: str) -> list[dict[str, Any]]:
    snap = loop.core.snapshot(member)
    validate(snap, Direction.TO_CLIENT)
    sheet: list[dict[str, Any]] = snap["match"]["sheet"]
    return sheet


def kept_from_updates(inbox: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The sheet a client keeps by the documented rule, from its updates alone."""
    sheet: list[dict[str, Any]] = []
    for msg in inbox:
        if msg["type"] != "update":
            continue
        for e in msg["events"]:
            if e["event"] == "deal_start" and e["deal_no"] == 1:
                sheet = []
            elif e["event"] == "deal_end":
                r, view = e["result"], msg["view"]
                sheet.append({"deal_no": view["deal_no"], "reason": r["reason"],
                              "winner": r["winner"], "multiplier": r["multiplier"],
                              "points": r["points"], "totals": view["scores"]})
    return sheet


@pytest.mark.rule("C13", "C14", "C16")
def test_every_member_sees_every_finished_deal_with_its_multiplier_and_totals() -> None:
    loop = started("classic", "deals:4", seed=11)
    assert sheet_of(loop, "1") == []  # the first deal is under way: nothing scored yet
    play_until(loop, 2)
    match = loop.core.match
    assert match is not None and not match.over
    sheet = sheet_of(loop, "1")
    assert [row["deal_no"] for row in sheet] == [1, 2]
    for row, result in zip(sheet, match.results, strict=True):
        assert (row["points"], row["multiplier"], row["winner"]) == (
            list(result.points), result.multiplier, result.winner)
    assert sheet[-1]["totals"] == list(match.totals) == loop.core.snapshot("1")["view"]["scores"]
    for member in (*PLAYERS, WATCHER):  # the spectator too
        assert sheet_of(loop, member) == sheet
        assert kept_from_updates(loop.inbox[member]) == sheet


@pytest.mark.rule("K12", "K15")
def test_a_table_rebuilt_from_its_commands_or_its_pickle_has_the_same_sheet() -> None:
    loop = started("cardiva", "points:500", seed=5)
    play_until(loop, 2)
    live = loop.core.sheet()
    assert len(live) >= 2
    rebuilt = TableCore(1, "t", Options.make("cardiva", 3, match_end="points:500"),
                        private=False, host="1", settings=SETTINGS)
    for command, now in loop.log:
        rebuilt.handle(command, now)
    assert rebuilt.sheet() == live
    assert pickle.loads(pickle.dumps(loop.core)).sheet() == live
    for member in (*PLAYERS, WATCHER):
        assert sheet_of(loop, member) == rebuilt.snapshot(member)["match"]["sheet"] == live
    assert live == sheet_rows(r.to_wire() for r in loop.core.match.results)  # type: ignore[union-attr]


@pytest.mark.rule("C16")
def test_the_sheet_stays_after_the_match_and_a_rematch_starts_a_new_one() -> None:
    loop = started("classic", "deals:2", seed=3)
    play_until(loop, 99)
    assert loop.core.phase == TablePhase.OVER
    over = sheet_of(loop, WATCHER)
    assert [row["deal_no"] for row in over] == [1, 2]
    assert over[-1]["totals"] == loop.core.snapshot("1")["match"]["totals"]
    loop.do(cmd.Rematch("1", True, 8))
    loop.do(cmd.Rematch("2", True, 8))
    assert loop.core.phase is not TablePhase.OVER  # the rematch started
    assert sheet_of(loop, "1") == []
    assert kept_from_updates(loop.inbox["2"]) == []
    play_until(loop, 1)
    assert kept_from_updates(loop.inbox["2"]) == sheet_of(loop, "2") != []
