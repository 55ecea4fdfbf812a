"""A table's life: turn timer, stand-in bots, reconnection, chat, rematch."""

from __future__ import annotations

import random
from typing import Any, cast

import pytest
from table_kit import (
    TIMED_NO_DELAYS,
    Fake,
    Rig,
    make_table,
    play_out,
    run_clock,
    seated,
    two_humans,
)
from twisted.internet.base import DelayedCall

from pisyedili.server.rules import legal_moves, move_to_wire, view
from pisyedili.server.table.core import TableError
from pisyedili.server.table.default_move import default_move

MOVE_EVENTS = ("play", "draw", "pass", "pick")


def actor_of(rig: Rig, *people: Fake) -> Fake:
    seat = rig.table.match.deal.to_act
    return next(p for p in people if rig.table.seat_of(p) == seat)


def moves_of(p: Fake) -> list[dict[str, Any]]:
    """The moves `p` was offered for the decision it owes now."""
    prompt = p.prompt()
    assert prompt is not None, f"{p.name} was offered no moves"
    moves: list[dict[str, Any]] = prompt["moves"]
    return moves


def seat_info(p: Fake, seat: int) -> dict[str, object]:
    info: dict[str, object] = p.last("table_update")["table"]["seats"][seat]
    return info


# -- the default move -----------------------------------------------------------------

def wire(m: str) -> dict[str, object]:
    kind, _, arg = m.partition(" ")
    if kind == "pick":
        return {"kind": "pick", "position": int(arg)}
    if kind in ("draw", "pass"):
        return {"kind": kind}
    return {"kind": "play", "card": kind}


@pytest.mark.parametrize(
    ("legal", "expected"),
    [
        (["7h", "draw"], "draw"),  # a 7's penalty: take it (C11, K7)
        (["5h", "pass"], "pass"),  # after a draw (C7, K5)
        (["Kd", "pass", "draw"], "pass"),  # after an ace: end the turn (C12)
        (["pick 4", "pick 0", "pick 9"], "pick 0"),  # muamele: the first position (K14)
        (["3c", "9c"], "3c"),  # a forced club opening: the engine's first legal (C2)
    ],
)
def test_default_move_rule(legal: list[str], expected: str) -> None:
    assert default_move(legal, wire) == expected


def test_default_move_needs_a_legal_move() -> None:
    with pytest.raises(ValueError):
        default_move([], wire)


# -- the turn timer -------------------------------------------------------------------

def test_prompt_carries_deadline_that_counts_down() -> None:
    rig, a, b = two_humans()
    actor = actor_of(rig, a, b)
    prompt = actor.prompt()
    assert prompt is not None and prompt["deadline"] == 30.0
    rig.clock.advance(12)
    snap = rig.table.resync(actor)
    assert snap["deadline"] == 18.0 and snap["moves"] == prompt["moves"]


def test_everyone_gets_the_deadline_and_only_the_actor_its_moves() -> None:
    rig, a, b = two_humans()
    actor = actor_of(rig, a, b)
    other = b if actor is a else a
    watcher = Fake("W")
    rig.table.join(watcher, spectate=True)
    seat = rig.table.seat_of(actor)
    mine, theirs = actor.last("update"), other.last("update")
    assert mine["events"] == theirs["events"] == [
        {"event": "deal_start", "deal_no": 1, "dealer": rig.table.match.deal.dealer}]
    assert mine["deadline"] == theirs["deadline"] == 30.0
    assert mine["view"]["turn"] == theirs["view"]["turn"] == seat
    assert "moves" in mine and "moves" not in theirs
    watched = watcher.last("table")
    assert watched["deadline"] == 30.0 and "moves" not in watched


def test_each_move_moves_the_turn_timer_on_and_it_fires_once_at_the_last_deadline() -> None:
    """The runner moves the timer's one call (Twisted's `reset`), not a new call a move;
    the turn still times out 30 s after the last move, not the first."""
    rig, a, b = two_humans()
    (call,) = cast(list[DelayedCall], rig.clock.getDelayedCalls())
    for _ in range(3):
        rig.clock.advance(20)
        actor = actor_of(rig, a, b)
        rig.table.move(actor, moves_of(actor)[0])
        run_clock(rig.clock)
        assert rig.table.match.deal.to_act is not None  # (the seed's deal goes on)
        assert rig.clock.getDelayedCalls() == [call], "one call, moved on"
        assert call.getTime() == rig.clock.seconds() + 30
    actor = actor_of(rig, a, b)
    served = len(actor.of_type("update"))
    rig.clock.advance(29.9)
    assert len(actor.of_type("update")) == served, "30 s from the last move, not the first"
    rig.clock.advance(0.1)
    assert len(actor.of_type("update")) > served, "the default move was played for it"


def test_an_untimed_table_sends_no_deadline() -> None:
    rig, a, b = two_humans(turn_seconds=0)
    assert a.of_type("update") and b.of_type("update")
    assert a.prompt() or b.prompt()
    assert not [m for m in a.inbox + b.inbox if "deadline" in m]
    assert "deadline" not in rig.table.resync(a)


def test_expiry_plays_default_then_bot_sits_in_then_player_reclaims() -> None:
    rig, a, b = two_humans(max_timeouts_before_bot=2)
    t = rig.table
    idle = actor_of(rig, a, b)
    other = b if idle is a else a
    seat = t.seat_of(idle)
    timeouts = 0
    for _ in range(200):  # the idle player never answers; the other plays its prompts
        run_clock(rig.clock)
        if t.match.deal.to_act == seat and not seat_info(other, seat).get("held_by_bot"):  # type: ignore[arg-type]
            expected = move_to_wire(default_move(legal_moves(t.match.deal, seat),  # type: ignore[arg-type]
                                                 move_to_wire))
            rig.clock.advance(30)
            timeouts += 1
            # One update tells the timeout, then the move the server made for the seat.
            step = other.updates("timeout")[-1]
            assert len(other.updates("timeout")) == timeouts
            note, after = step["events"][:2]
            assert note == {"event": "timeout", "seat": seat, "count": timeouts,
                            "bot": timeouts == 2}
            assert after["seat"] == seat
            played = {"kind": after["event"]}
            if played["kind"] == "play":
                played["card"] = after["card"]
                if "suit" in expected:
                    played["suit"] = after["suit"]
            assert played == expected, "the default move was played"
            assert idle.updates("timeout")[-1]["events"][0] == note, "everyone is told"
            if timeouts == 2:
                break
        else:
            t.move(other, moves_of(other)[0])
    assert timeouts == 2
    assert seat_info(other, seat)["held_by_bot"] == "idle"  # type: ignore[arg-type]

    # The stand-in plays the idle seat's turns at once: no timer runs out, and the idle
    # player is offered nothing.
    seen, offered = len(other.events()), len(idle.inbox)
    waited = rig.clock.seconds()
    for _ in range(40):
        run_clock(rig.clock)
        assert t.match.deal.to_act != seat
        t.move(other, moves_of(other)[0])
    run_clock(rig.clock)
    played = [e for e in other.events()[seen:]  # type: ignore[assignment]
              if e.get("seat") == seat and e["event"] in MOVE_EVENTS]
    assert played, "the stand-in moved for the idle seat"
    assert rig.clock.seconds() == waited
    assert not [m for m in idle.inbox[offered:] if "moves" in m]

    # Any sign of life hands the seat back: the next decision is the player's again.
    t.present(idle)
    assert "held_by_bot" not in seat_info(other, seat)  # type: ignore[arg-type]
    for _ in range(200):
        run_clock(rig.clock)
        if t.match.deal.to_act == seat:
            break
        t.move(other, moves_of(other)[0])
    prompt = idle.prompt()
    assert prompt is not None and prompt["view"]["turn"] == seat
    assert t.resync(idle)["moves"] == prompt["moves"]
    t.move(idle, prompt["moves"][0])  # accepted: the seat is the player's again


@pytest.mark.parametrize("request_", ["start", "add_bot", "remove_bot", "sit", "chat",
                                      "move", "resync", "seen"])
def test_a_refused_request_shows_presence_too(request_: str) -> None:
    rig, a, b = two_humans(max_timeouts_before_bot=1, bot_delay=5.0)
    t = rig.table
    host, idle = (a, b) if t.host is a else (b, a)
    for _ in range(200):  # the host plays until the other must decide, then it idles
        run_clock(rig.clock)
        if t.match.deal.to_act == t.seat_of(idle):
            break
        t.move(host, moves_of(host)[0])
    seat = t.seat_of(idle)
    rig.clock.advance(30)
    assert seat_info(host, seat)["held_by_bot"] == "idle"  # type: ignore[arg-type]
    asks = {
        "start": lambda: t.start(idle), "add_bot": lambda: t.add_bot(idle, 0),
        "remove_bot": lambda: t.remove_bot(idle, 0), "sit": lambda: t.sit(idle, 0),
        "chat": lambda: t.chat(idle, "\x07"), "move": lambda: t.move(idle, {"kind": "fly"}),
        "resync": lambda: t.resync(idle), "seen": lambda: t.present(idle),
    }
    refused = request_ not in ("resync", "seen")
    try:
        asks[request_]()  # type: ignore[no-untyped-call]
    except TableError:
        assert refused
    else:
        assert not refused
    # A resync is only a read; every other request (refused or not) shows life.
    assert ("held_by_bot" in seat_info(host, seat)) == (request_ == "resync")  # type: ignore[arg-type]


def test_untimed_table_waits_for_people() -> None:
    rig, a, b = two_humans(turn_seconds=0.0)
    actor = actor_of(rig, a, b)
    prompt = actor.prompt()
    assert prompt is not None and "deadline" not in prompt
    before = view(rig.table.match, rig.table.seat_of(actor))
    assert not rig.clock.getDelayedCalls(), "no timer runs"
    rig.clock.advance(3600)
    assert view(rig.table.match, rig.table.seat_of(actor)) == before
    assert actor.inbox[-1] is prompt and not actor.events("timeout")


# -- disconnection, grace, reconnection -----------------------------------------------

def test_disconnect_grace_bot_then_reconnect_snapshot_matches_the_others() -> None:
    rig, a, b = two_humans(turn_seconds=0.0, grace_seconds=60.0)
    t = rig.table
    gone, stay = a, b
    seat = t.seat_of(gone)
    gone.connected = False
    t.disconnected(gone)
    assert seat_info(stay, seat)["connected"] is False  # type: ignore[arg-type]
    # Within the grace period nothing is played for the absent seat.
    for _ in range(200):
        run_clock(rig.clock)
        if t.match.deal.to_act == seat:
            break
        t.move(stay, moves_of(stay)[0])
    rig.clock.advance(59)
    assert t.match.deal.to_act == seat
    rig.clock.advance(1)
    assert seat_info(stay, seat)["held_by_bot"] == "disconnected"  # type: ignore[arg-type]
    run_clock(rig.clock)
    assert t.match.deal.to_act != seat or t.phase != "playing", "the stand-in moved"
    for _ in range(30):  # a few more moves while away
        if t.phase != "playing" or t.match.deal.over:
            break
        if t.match.deal.to_act != seat:
            t.move(stay, moves_of(stay)[0])
        run_clock(rig.clock)

    heard = len(gone.inbox)
    t.reconnected(gone)
    (snap,) = gone.inbox[heard:]
    assert snap["type"] == "table"
    seen = stay.last("update")["view"]
    mine = view(t.match, seat)
    assert snap["view"] == mine
    for key in ("hand_counts", "turn", "pile", "stock", "scores", "deal_no", "top"):
        assert snap["view"][key] == seen[key], key
    assert snap["match"]["totals"] == seen["scores"]
    assert "held_by_bot" not in snap["table"]["seats"][seat]
    assert snap["table"]["seats"][seat]["connected"] is True
    # The decision owed now, if it is the seat's, comes in the snapshot.
    acting = t.phase == "playing" and t.match.deal.to_act == seat
    assert ("moves" in snap) == acting


def test_disconnected_seat_is_played_by_the_timer_before_grace_ends() -> None:
    rig, a, b = two_humans(turn_seconds=10.0, grace_seconds=300.0)
    t = rig.table
    gone = actor_of(rig, a, b)
    gone.connected = False
    t.disconnected(gone)
    rig.clock.advance(9)
    other = b if gone is a else a
    assert not other.events("timeout")
    rig.clock.advance(1)
    (note,) = other.events("timeout")
    assert (note["seat"], note["bot"]) == (t.seat_of(gone), False)


def test_waiting_table_frees_the_seat_of_a_player_gone_past_grace() -> None:
    rig = make_table("classic", 3)
    t = rig.table
    t.join(rig.host)
    a = Fake("A")
    t.join(a)
    t.set_ready(a, True)
    a.connected = False
    t.disconnected(a)
    assert seat_info(rig.host, 1)["ready"] is False
    rig.clock.advance(TIMED_NO_DELAYS.grace_seconds - 1)
    assert seat_info(rig.host, 1)["kind"] == "human"
    rig.clock.advance(1)
    assert seat_info(rig.host, 1)["kind"] == "open"
    # No match holds the player: they leave the table (and their session may expire).
    assert rig.host.last("table_update")["table"]["spectators"] == []
    assert a not in t.members() and rig.left == [a.player_id]


def test_leaving_mid_match_hands_the_seat_to_a_bot_for_good() -> None:
    rig = make_table("classic", 3, match_end="deals:1")
    humans = seated(rig, ["h", "h", "b"])
    t = rig.table
    t.start(rig.host)
    run_clock(rig.clock)
    quitter = humans[1]
    t.leave(quitter)
    heard = len(quitter.inbox)
    assert seat_info(rig.host, 1)["kind"] == "bot"
    play_out(rig, [rig.host], random.Random(2))
    assert t.phase == "over"
    assert len(rig.host.events("match_end")) == 1
    assert len(quitter.inbox) == heard, "a player who left hears no more"


# -- spectators and chat --------------------------------------------------------------

def test_chat_marks_players_and_spectators_and_limits_length() -> None:
    rig = make_table("classic", 2)
    t = rig.table
    t.join(rig.host)
    w = Fake("W")
    t.join(w, spectate=True)
    t.chat(rig.host, "  good luck ")
    t.chat(w, "watching")
    said = [(m["name"], m["seat"], m["spectator"], m["text"]) for m in w.of_type("chat")]
    assert said == [("Host", 0, False, "good luck"), ("W", None, True, "watching")]
    assert rig.host.of_type("chat") == w.of_type("chat")
    with pytest.raises(TableError) as info:
        t.chat(w, "x" * (TIMED_NO_DELAYS.chat_max_chars + 1))
    assert info.value.code == "bad_field"
    for bad in ("   ", "bell\x07", "two\nlines", "\u202eevil"):
        with pytest.raises(TableError) as info:
            t.chat(w, bad)
        assert info.value.code == "bad_field"
    assert len(w.of_type("chat")) == 2, "refused lines reach no one"


# -- rematch --------------------------------------------------------------------------

def test_rematch_starts_when_every_human_agrees() -> None:
    rig = make_table("classic", 3, match_end="deals:1")
    humans = seated(rig, ["h", "h", "b"])
    a, b = humans
    t = rig.table
    t.start(a)
    play_out(rig, humans, random.Random(3))
    assert t.phase == "over"
    first = t.match
    t.rematch(a, True)
    assert b.last("rematch")["agreed"] == [0, 2], "bots always agree"
    t.rematch(b, False)
    assert a.last("rematch")["declined"] == [1]
    assert t.phase == "over"
    t.rematch(b, True)
    assert t.phase == "playing" and t.match is not first
    assert t.match.totals == [0, 0, 0] and t.match.deal_no == 1
    assert [s["kind"] for s in a.last("table_update")["table"]["seats"]] == \
        ["human", "human", "bot"]
    play_out(rig, humans, random.Random(4))
    assert len(a.events("match_end")) == 2


def test_rematch_refused_to_spectators_and_before_the_end() -> None:
    rig = make_table("classic", 2)
    t = rig.table
    t.join(rig.host)
    w = Fake("W")
    t.join(w, spectate=True)
    with pytest.raises(TableError) as info:
        t.rematch(rig.host, True)
    assert info.value.code == "match_not_over"
    with pytest.raises(TableError) as info:
        t.rematch(w, True)
    assert info.value.code == "not_seated"


def test_rematch_after_a_player_left_waits_for_the_seat_to_be_filled() -> None:
    rig = make_table("classic", 2, match_end="deals:1")
    a, b = seated(rig, ["h", "h"])
    t = rig.table
    t.start(a)
    play_out(rig, [a, b], random.Random(6))
    t.rematch(a, True)
    t.leave(b)
    assert t.phase == "over", "an open seat: no rematch yet"
    t.add_bot(a, 1, "easy")
    assert t.phase == "playing", "the bot agrees, so everyone has"
    assert a.last("table_update")["table"]["seats"][1]["kind"] == "bot"


def test_reconnecting_seat_to_act_gets_its_decision_in_the_snapshot() -> None:
    rig, a, b = two_humans(turn_seconds=30.0, grace_seconds=10.0, max_timeouts_before_bot=5)
    t = rig.table
    gone = actor_of(rig, a, b)
    gone.connected = False
    t.disconnected(gone)
    rig.clock.advance(4)
    heard = len(gone.inbox)
    t.reconnected(gone)  # within grace: the clock kept running
    (snap,) = gone.inbox[heard:]
    assert snap["type"] == "table", "the decision comes in the snapshot, once"
    assert snap["deadline"] == 26.0
    assert snap["moves"] == [move_to_wire(m)
                             for m in legal_moves(t.match.deal, t.seat_of(gone))]  # type: ignore[arg-type]


def test_reclaiming_from_a_stand_in_gives_a_fresh_deadline() -> None:
    rig, a, b = two_humans(turn_seconds=30.0, grace_seconds=10.0, bot_delay=5.0)
    t = rig.table
    gone = actor_of(rig, a, b)
    seat = t.seat_of(gone)
    gone.connected = False
    t.disconnected(gone)
    rig.clock.advance(10)  # grace over: the stand-in will move after its delay
    assert seat_info(b if gone is a else a, seat)["held_by_bot"] == "disconnected"  # type: ignore[arg-type]
    rig.clock.advance(2)
    assert t.match.deal.to_act == seat
    heard = len(gone.inbox)
    t.reconnected(gone)
    (snap,) = gone.inbox[heard:]
    assert snap["type"] == "table", "the decision comes in the snapshot, once"
    assert snap["deadline"] == 30.0 and snap["moves"]
    assert "held_by_bot" not in snap["table"]["seats"][seat]
    other = b if gone is a else a
    handed = other.inbox[-1]  # the others see who decides now, with its fresh deadline
    assert (handed["type"], handed["events"], handed["deadline"]) == ("update", [], 30.0)
    assert "moves" not in handed
    rig.clock.advance(29)  # the stand-in's pending move was called off
    assert t.match.deal.to_act == seat
    t.move(gone, snap["moves"][0])
