"""Whole matches at a table: bots and fake humans, fan-out, refusals (issue 3)."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import pytest
from test_table_kit import FAST, Fake, make_table, play_out, run_clock, seated
from twisted.internet.defer import Deferred

from pisyedili.server import table as table_module
from pisyedili.server.participant import TableError
from pisyedili.server.rules import view


@pytest.mark.parametrize(
    ("rules", "kinds", "options"),
    [
        ("classic", "bb", {"match_end": "deals:2"}),
        ("classic", "bbbbbb", {"match_end": "deals:1"}),
        ("cardiva", "bbb", {"match_end": "points:60"}),
        ("cardiva", "bbbb", {"match_end": "points:40"}),
    ],
)
def test_bots_play_a_whole_match_watched_by_the_host(rules: str, kinds: str,
                                                     options: dict[str, str]) -> None:
    rig = make_table(rules, len(kinds), **options)
    seated(rig, list(kinds), level="easy")
    rig.table.start(rig.host)
    run_clock(rig.clock)
    assert rig.table.phase == "over"
    host = rig.host
    end = host.last("match_end")
    assert end["totals"] == rig.table.match.totals
    low = min(end["totals"])
    assert end["winners"] == [s for s, t in enumerate(end["totals"]) if t == low]
    deal_ends = host.of_type("deal_end")
    assert [d["deal_no"] for d in deal_ends] == list(range(1, rig.table.match.deal_no + 1))
    assert deal_ends[-1]["totals"] == end["totals"]
    # The spectating host saw every move as a public event, and never a hand.
    assert host.of_type("event")
    assert all(m["view"]["hand"] is None for m in host.of_type("event"))
    assert host.last("table_update")["table"]["phase"] == "over"
    assert rig.changes[-1].summary()["phase"] == "over"


@pytest.mark.parametrize(
    ("rules", "kinds", "options"),
    [
        ("classic", "hb", {"match_end": "deals:2"}),
        ("classic", "hhbh", {"match_end": "deals:1"}),
        ("cardiva", "hh", {"match_end": "points:60"}),
        ("cardiva", "hbhb", {"match_end": "points:40"}),
    ],
)
def test_humans_play_from_their_turn_prompts(rules: str, kinds: str,
                                             options: dict[str, str]) -> None:
    rig = make_table(rules, len(kinds), **options)
    humans = seated(rig, list(kinds), level="medium")
    rig.table.start(rig.host)
    made = play_out(rig, humans, random.Random(5))
    assert made > 0
    assert rig.table.phase == "over"
    for h in humans:
        seat = rig.table.seat_of(h)
        ends = h.of_type("match_end")
        assert len(ends) == 1 and ends[0]["totals"] == rig.table.match.totals
        # Each seat's views carry its own hand, and its prompts only its own seat.
        assert all(m["view"]["seat"] == seat for m in h.of_type("event"))
        assert all(p["seat"] == seat for p in h.of_type("turn"))
        assert all(p["deadline"] == 30.0 for p in h.of_type("turn"))


def two_humans(rules: str = "classic") -> tuple[object, Fake, Fake]:
    rig = make_table(rules, 2)
    a, b = seated(rig, ["h", "h"])
    rig.table.start(a)
    run_clock(rig.clock)
    return rig, a, b


def state(rig: object) -> object:
    t = rig.table  # type: ignore[attr-defined]
    return (view(t.match, 0), view(t.match, 1), t.match.deal_no)


def test_illegal_and_out_of_turn_moves_change_nothing() -> None:
    rig, a, b = two_humans()
    t = rig.table  # type: ignore[attr-defined]
    deal = t.match.deal
    actor, other = (a, b) if deal.to_act == t.seat_of(a) else (b, a)
    watcher = Fake("W")
    t.join(watcher, spectate=True)
    before = state(rig)
    counts = (len(a.inbox), len(b.inbox))

    with pytest.raises(TableError) as info:
        t.move(other, {"kind": "draw"})
    assert info.value.code == "not_your_turn"

    legal = {str(m) for m in actor.last("turn")["moves"]}
    hand = view(t.match, t.seat_of(actor))["hand"]
    bad = next(({"kind": "play", "card": c} for c in hand
                if str({"kind": "play", "card": c}) not in legal), None)
    if bad is None:  # every card playable: playing a card not held is illegal too
        bad = {"kind": "play", "card": next(c for c in ("2c", "3c", "4c", "5c")
                                            if c not in hand)}
    with pytest.raises(TableError) as info:
        t.move(actor, bad)
    assert info.value.code in ("illegal_card", "illegal_move")
    assert info.value.extra["rule"], "an illegal move names the rule it breaks"

    for garbage in ({"kind": "fly"}, {"kind": "play", "card": "1x"}, {"kind": "pick"}):
        with pytest.raises(TableError) as info:
            t.move(actor, garbage)
        assert info.value.code in ("bad_field", "illegal_move")

    with pytest.raises(TableError) as info:
        t.move(watcher, {"kind": "draw"})
    assert info.value.code == "not_seated"

    assert state(rig) == before
    assert (len(a.inbox), len(b.inbox)) == counts, "a refused move sends nothing"


def test_move_fans_out_private_part_only_to_its_seat() -> None:
    rig, a, b = two_humans()
    t = rig.table  # type: ignore[attr-defined]
    watcher = Fake("W")
    t.join(watcher, spectate=True)
    for _ in range(200):  # play the first moves until someone may draw (C7)
        actor = a if t.match.deal.to_act == t.seat_of(a) else b
        moves = actor.last("turn")["moves"]
        if {"kind": "draw"} in moves:
            break
        t.move(actor, moves[0])
        run_clock(rig.clock)
    other = b if actor is a else a
    t.move(actor, {"kind": "draw"})
    mine = actor.of_type("event")[-1]
    theirs = other.of_type("event")[-1]
    watched = watcher.of_type("event")[-1]
    assert mine["event"]["event"] == theirs["event"]["event"] == "draw"
    assert mine["event"]["cards"][0] in mine["view"]["hand"]
    assert "cards" not in theirs["event"] and "cards" not in watched["event"]
    assert theirs["event"]["count"] == watched["event"]["count"] == 1
    assert theirs["view"]["hand"] != mine["view"]["hand"]


def test_snapshot_while_playing_holds_view_match_and_pending_turn() -> None:
    rig, a, b = two_humans()
    t = rig.table  # type: ignore[attr-defined]
    actor = a if t.match.deal.to_act == t.seat_of(a) else b
    snap = t.snapshot_for(actor)
    assert snap["view"]["hand"] == view(t.match, t.seat_of(actor))["hand"]
    assert snap["match"] == {"deal_no": 1, "totals": [0, 0]}
    assert snap["turn"]["moves"] == actor.last("turn")["moves"]
    watcher = Fake("W")
    t.join(watcher)  # a match is running: joins as a spectator
    snap = watcher.last("table")
    assert snap["you"]["spectator"] and snap["view"]["hand"] is None and "turn" not in snap


def test_hard_bots_think_in_a_thread_and_late_answers_are_dropped(
        monkeypatch: pytest.MonkeyPatch) -> None:
    thinking: list[tuple[Deferred[Any], Callable[..., Any], tuple[Any, ...]]] = []

    def defer_to_thread(f: Callable[..., Any], *args: Any) -> Deferred[Any]:
        d: Deferred[Any] = Deferred()
        thinking.append((d, f, args))
        return d

    monkeypatch.setattr(table_module, "deferToThread", defer_to_thread)
    settings = replace(FAST, bot_thread=True, hard_budget_s=0.005)
    rig = make_table("classic", 2, settings=settings)
    (human,) = seated(rig, ["h", "b"], level="hard")
    t = rig.table
    t.start(human)
    bot_moves = 0
    for _ in range(12):
        run_clock(rig.clock)
        if t.phase != "playing":
            break
        if t.match.deal.to_act == 1:
            assert len(thinking) == 1, "the search runs off the reactor"
            d, f, args = thinking.pop()
            before = len(human.inbox)
            d.callback(f(*args))
            assert len(human.inbox) > before
            bot_moves += 1
        else:
            assert not thinking
            t.move(human, human.last("turn")["moves"][0])
    assert bot_moves
    # A failing search still moves the seat (the timeout rule); a late one after
    # the table closed changes nothing.
    for _ in range(30):
        run_clock(rig.clock)
        if t.match.deal.to_act == 1:
            break
        t.move(human, human.last("turn")["moves"][0])
    d, f, args = thinking.pop()
    before = len(human.inbox)
    d.errback(RuntimeError("search crashed"))
    assert any(m["type"] == "event" and m["event"].get("seat") == 1
               for m in human.inbox[before:]), "the failed search's seat still moved"
    for _ in range(30):
        run_clock(rig.clock)
        if t.match.deal.to_act == 1:
            break
        t.move(human, human.last("turn")["moves"][0])
    d, f, args = thinking.pop()
    assert not thinking
    t.leave(human)
    assert t.closed
    count = len(human.inbox)
    d.callback(f(*args))
    assert len(human.inbox) == count


def test_last_person_leaving_mid_match_closes_the_table_and_stops_its_bots() -> None:
    rig = make_table("classic", 3, settings=replace(FAST, bot_delay=1.0))
    seated(rig, ["b", "b", "b"])
    t = rig.table
    t.start(rig.host)
    rig.clock.advance(1.0)
    assert t.phase == "playing" and rig.clock.getDelayedCalls()
    t.leave(rig.host)
    assert t.closed and rig.closed == [t]
    assert not [c for c in rig.clock.getDelayedCalls() if c.active()], "no timer survives"
