"""Whole matches at a table: bots and fake humans, fan-out, refusals."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import pytest
from table_kit import (
    TIMED_NO_DELAYS,
    Fake,
    Rig,
    drain_then_seven,
    make_table,
    play_out,
    run_clock,
    seated,
    two_humans,
)
from twisted.internet.defer import Deferred

from pisyedili.server.rules import view
from pisyedili.server.table import runner as table_module
from pisyedili.server.table.core import TableError


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
    rig = make_table(rules, len(kinds), **options)  # type: ignore[arg-type]
    seated(rig, list(kinds), level="easy")
    rig.table.start(rig.host)
    run_clock(rig.clock)
    assert rig.table.phase == "over"
    host = rig.host
    (end,) = host.events("match_end")
    assert end["totals"] == rig.table.match.totals
    low = min(end["totals"])
    assert end["winners"] == [s for s, t in enumerate(end["totals"]) if t == low]
    deal_ends = host.updates("deal_end")
    assert [d["view"]["deal_no"] for d in deal_ends] == \
        list(range(1, rig.table.match.deal_no + 1))
    assert deal_ends[-1]["view"]["scores"] == end["totals"], "scores include the last deal"
    assert host.updates("match_end") == [deal_ends[-1]], "the match ends with its last deal"
    # The spectating host saw every move as public events, never a hand, never moves.
    updates = host.of_type("update")
    assert len(updates) > len(deal_ends)
    assert all(m["view"]["hand"] is None and "moves" not in m for m in updates)
    assert host.last("table_update")["table"]["phase"] == "over"
    assert rig.changes[-1]["phase"] == "over"


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
    rig = make_table(rules, len(kinds), **options)  # type: ignore[arg-type]
    humans = seated(rig, list(kinds), level="medium")
    rig.table.start(rig.host)
    made = play_out(rig, humans, random.Random(5))
    assert made > 0
    assert rig.table.phase == "over"
    for h in humans:
        seat = rig.table.seat_of(h)
        ends = h.events("match_end")
        assert len(ends) == 1 and ends[0]["totals"] == rig.table.match.totals
        # Each seat's views carry its own hand, and moves come only for its own decisions.
        updates = h.of_type("update")
        assert all(m["view"]["seat"] == seat for m in updates)
        prompts = [m for m in updates if "moves" in m]
        assert prompts and all(m["view"]["turn"] == seat for m in prompts)
        assert all(m["deadline"] == 30.0 for m in prompts)
        assert not [m for m in updates if "moves" not in m and m["view"]["turn"] == seat
                    and m["view"]["phase"] != "over"], "every decision of its own has moves"


def first_move(p: Fake) -> dict[str, Any]:
    prompt = p.prompt()
    assert prompt is not None, f"{p.name} was offered no moves"
    move: dict[str, Any] = prompt["moves"][0]
    return move


def state(rig: Rig) -> object:
    t = rig.table
    return (view(t.match, 0), view(t.match, 1), t.match.deal_no)


def test_illegal_and_out_of_turn_moves_change_nothing() -> None:
    rig, a, b = two_humans()
    t = rig.table
    deal = t.match.deal
    actor, other = (a, b) if deal.to_act == t.seat_of(a) else (b, a)
    watcher = Fake("W")
    t.join(watcher, spectate=True)
    before = state(rig)
    counts = (len(a.inbox), len(b.inbox))

    with pytest.raises(TableError) as info:
        t.move(other, {"kind": "draw"})
    assert info.value.code == "not_your_turn"

    prompt = actor.prompt()
    assert prompt is not None
    legal = {str(m) for m in prompt["moves"]}
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
    t = rig.table
    watcher = Fake("W")
    t.join(watcher, spectate=True)
    for _ in range(200):  # play the first moves until someone may draw (C7)
        actor = a if t.match.deal.to_act == t.seat_of(a) else b
        prompt = actor.prompt()
        assert prompt is not None
        if {"kind": "draw"} in prompt["moves"]:
            break
        t.move(actor, prompt["moves"][0])
        run_clock(rig.clock)
    other = b if actor is a else a
    counts = (len(actor.inbox), len(other.inbox), len(watcher.inbox))
    t.move(actor, {"kind": "draw"})
    assert (len(actor.inbox), len(other.inbox), len(watcher.inbox)) == \
        tuple(n + 1 for n in counts), "one update each for the step"
    mine, theirs, watched = (p.inbox[-1] for p in (actor, other, watcher))
    assert mine["type"] == theirs["type"] == watched["type"] == "update"
    (my_draw,), (their_draw,), (watched_draw,) = (
        [e for e in m["events"] if e["event"] == "draw"] for m in (mine, theirs, watched))
    assert my_draw["cards"][0] in mine["view"]["hand"]
    assert "cards" not in their_draw and "cards" not in watched_draw
    assert their_draw["count"] == watched_draw["count"] == 1
    assert theirs["view"]["hand"] != mine["view"]["hand"]
    assert watched["view"]["hand"] is None


def test_snapshot_while_playing_holds_view_match_and_pending_turn() -> None:
    rig, a, b = two_humans()
    t = rig.table
    actor = a if t.match.deal.to_act == t.seat_of(a) else b
    other = b if actor is a else a
    snap = t.resync(actor)
    assert snap["type"] == "table"
    assert snap["view"] == view(t.match, t.seat_of(actor))
    assert snap["match"] == {"deal_no": 1, "totals": [0, 0], "sheet": []}  # nothing scored yet
    prompt = actor.prompt()
    assert prompt is not None and snap["moves"] == prompt["moves"]
    assert snap["deadline"] == prompt["deadline"] == 30.0
    waiting = t.resync(other)
    assert "moves" not in waiting and waiting["deadline"] == 30.0
    watcher = Fake("W")
    t.join(watcher)  # a match is running: joins as a spectator
    snap = watcher.last("table")
    assert snap["you"]["spectator"] and snap["view"]["hand"] is None and "moves" not in snap


def test_hard_bots_think_in_a_thread_and_late_answers_are_dropped(
        monkeypatch: pytest.MonkeyPatch) -> None:
    thinking: list[tuple[Deferred[Any], Callable[..., Any], tuple[Any, ...]]] = []

    def defer_to_thread(f: Callable[..., Any], *args: Any) -> Deferred[Any]:
        d: Deferred[Any] = Deferred()
        thinking.append((d, f, args))
        return d

    monkeypatch.setattr(table_module, "deferToThread", defer_to_thread)
    settings = replace(TIMED_NO_DELAYS, bot_thread=True, hard_budget_s=0.005)
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
            t.move(human, first_move(human))
    assert bot_moves
    # A failing search still moves the seat (the timeout rule); a late one after
    # the table closed changes nothing.
    for _ in range(30):
        run_clock(rig.clock)
        if t.match.deal.to_act == 1:
            break
        t.move(human, first_move(human))
    d, f, args = thinking.pop()
    before = len(human.inbox)
    d.errback(RuntimeError("search crashed"))
    assert [e for m in human.inbox[before:] if m["type"] == "update" for e in m["events"]
            if e.get("seat") == 1 and e["event"] in ("play", "draw", "pass")], \
        "the failed search's seat still moved"
    for _ in range(30):
        run_clock(rig.clock)
        if t.match.deal.to_act == 1:
            break
        t.move(human, first_move(human))
    d, f, args = thinking.pop()
    assert not thinking
    t.leave(human)
    assert t.closed
    count = len(human.inbox)
    d.callback(f(*args))
    assert len(human.inbox) == count


def test_last_person_leaving_mid_match_closes_the_table_and_stops_its_bots() -> None:
    rig = make_table("classic", 3, settings=replace(TIMED_NO_DELAYS, bot_delay=1.0))
    seated(rig, ["b", "b", "b"])
    t = rig.table
    t.start(rig.host)
    rig.clock.advance(1.0)
    assert t.phase == "playing" and rig.clock.getDelayedCalls()
    t.leave(rig.host)
    assert t.closed and rig.closed == [t.id]
    assert not [c for c in rig.clock.getDelayedCalls() if c.active()], "no timer survives"  # type: ignore[misc]


def test_a_penalty_drawn_across_a_reshuffle_is_one_update_per_member() -> None:
    """C11 with C15's reshuffle: the draws either side of the reshuffle are one step."""
    rig = make_table("classic", 2, empty_stock="reshuffle", match_end="deals:5")
    a, b = seated(rig, ["h", "h"])
    watcher = Fake("W")
    t = rig.table
    t.join(watcher, spectate=True)
    t.start(a)
    people = (a, b, watcher)
    for _ in range(3000):
        run_clock(rig.clock)
        actor = a if t.match.deal.to_act == t.seat_of(a) else b
        prompt = actor.prompt()
        assert prompt is not None
        before = prompt["view"]
        counts = [len(p.inbox) for p in people]
        t.move(actor, drain_then_seven(prompt))
        steps = [p.inbox[n:] for p, n in zip(people, counts, strict=True)]
        if [e["event"] for e in steps[0][0]["events"]] == ["draw", "reshuffle", "draw"]:
            break
    else:
        raise AssertionError("no penalty was drawn across a reshuffle")
    assert before["penalty"] and all(len(s) == 1 for s in steps), "one update each"
    for p, (step,) in zip(people, steps, strict=True):
        first, reshuffle, second = step["events"]
        assert first["reason"] == second["reason"] == "penalty"
        assert first["count"] + second["count"] == before["penalty"]
        assert ("cards" in first) == ("cards" in second) == (p is actor)
        assert step["view"] == view(t.match, t.seat_of(p)), "the view after all of them"
        assert step["view"]["stock"] == reshuffle["count"] - second["count"]
    mine = steps[people.index(actor)][0]
    drawn = mine["events"][0]["cards"] + mine["events"][2]["cards"]
    assert sorted(mine["view"]["hand"]) == sorted(before["hand"] + drawn)



def test_a_move_between_deals_is_deal_over_and_after_the_match_no_game() -> None:
    """The codes docs/protocol.md names under `move` for a move with no deal to take it."""
    rig = make_table("classic", 2, settings=replace(TIMED_NO_DELAYS, deal_pause=5.0),
                     match_end="deals:2")
    a, b = seated(rig, ["h", "h"])
    t = rig.table
    t.start(a)
    rng = random.Random(3)
    by_seat = {t.seat_of(a): a, t.seat_of(b): b}
    while not t.match.deal.over:
        run_clock(rig.clock)
        human = by_seat[t.match.deal.to_act]
        prompt = human.prompt()
        assert prompt is not None
        t.move(human, rng.choice(prompt["moves"]))
    with pytest.raises(TableError) as info:
        t.move(a, {"kind": "draw"})
    assert info.value.code == "deal_over"  # the pause before deal 2
    play_out(rig, [a, b], rng)
    assert t.phase == "over"
    with pytest.raises(TableError) as info:
        t.move(b, {"kind": "draw"})
    assert info.value.code == "no_game"  # the match's last deal is over
