"""Issue 4 at the table: turn timer, stand-in bots, reconnection, chat, rematch."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest
from test_table_kit import FAST, Fake, Rig, make_table, play_out, run_clock, seated

from pisyedili.server.default_move import default_move
from pisyedili.server.participant import TableError
from pisyedili.server.rules import legal_moves, move_to_wire, view

MOVE_EVENTS = ("play", "draw", "pass", "pick")


def two_humans(rules: str = "classic", **settings: object) -> tuple[Rig, Fake, Fake]:
    rig = make_table(rules, 2, settings=replace(FAST, **settings))  # type: ignore[arg-type]
    a, b = seated(rig, ["h", "h"])
    rig.table.start(a)
    run_clock(rig.clock)
    return rig, a, b


def actor_of(rig: Rig, *people: Fake) -> Fake:
    seat = rig.table.match.deal.to_act
    return next(p for p in people if rig.table.seat_of(p) == seat)


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
    assert actor.last("turn")["deadline"] == 30.0
    rig.clock.advance(12)
    assert rig.table.snapshot_for(actor)["turn"]["deadline"] == 18.0


def test_the_others_get_a_clock_for_the_same_turn_and_the_actor_does_not() -> None:
    rig, a, b = two_humans()
    actor = actor_of(rig, a, b)
    other = b if actor is a else a
    seat = rig.table.seat_of(actor)
    assert other.last("clock") == {"type": "clock", "table": rig.table.id, "seat": seat,
                                   "deadline": 30.0}
    assert not actor.of_type("clock"), "the seat to act has its deadline in `turn`"


def test_an_untimed_table_sends_no_clock() -> None:
    _rig, a, b = two_humans(turn_seconds=0)
    assert not a.of_type("clock") and not b.of_type("clock")


def test_expiry_plays_default_then_bot_sits_in_then_player_reclaims() -> None:
    rig, a, b = two_humans(max_timeouts_before_bot=2)
    t = rig.table
    idle = actor_of(rig, a, b)
    other = b if idle is a else a
    seat = t.seat_of(idle)
    timeouts = 0
    for _ in range(200):  # the idle player never answers; the other plays its prompts
        run_clock(rig.clock)
        if t.match.deal.to_act == seat and not seat_info(other, seat).get("held_by_bot"):
            expected = move_to_wire(default_move(legal_moves(t.match.deal, seat),
                                                 move_to_wire))
            rig.clock.advance(30)
            timeouts += 1
            note = other.last("timeout")
            assert (note["seat"], note["count"]) == (seat, timeouts)
            after = next(m for m in other.inbox[other.inbox.index(note):]
                         if m["type"] == "event")
            assert after["event"]["seat"] == seat
            played = {"kind": after["event"]["event"]}
            if played["kind"] == "play":
                played["card"] = after["event"]["card"]
                if "suit" in expected:
                    played["suit"] = after["event"]["suit"]
            assert played == expected, "the default move was played"
            assert idle.last("timeout") == note, "everyone is told"
            if timeouts == 2:
                break
        else:
            t.move(other, other.last("turn")["moves"][0])
    assert timeouts == 2
    assert other.last("timeout")["bot"] is True
    assert seat_info(other, seat)["held_by_bot"] == "idle"

    # The stand-in plays the idle seat's turns at once: no timer runs out.
    seen = len(other.of_type("event"))
    waited = rig.clock.seconds()
    for _ in range(40):
        run_clock(rig.clock)
        assert t.match.deal.to_act != seat
        t.move(other, other.last("turn")["moves"][0])
    run_clock(rig.clock)
    played = [m["event"] for m in other.of_type("event")[seen:]
              if m["event"].get("seat") == seat and m["event"]["event"] in MOVE_EVENTS]
    assert played, "the stand-in moved for the idle seat"
    assert rig.clock.seconds() == waited

    # Any sign of life hands the seat back: the next decision is the player's again.
    t.present(idle)
    assert "held_by_bot" not in seat_info(other, seat)
    for _ in range(200):
        run_clock(rig.clock)
        if t.match.deal.to_act == seat:
            break
        t.move(other, other.last("turn")["moves"][0])
    prompt = idle.last("turn")
    assert prompt["seat"] == seat
    assert t.snapshot_for(idle)["turn"]["moves"] == prompt["moves"]
    t.move(idle, prompt["moves"][0])  # accepted: the seat is the player's again


def test_untimed_table_waits_for_people() -> None:
    rig, a, b = two_humans(turn_seconds=0.0)
    actor = actor_of(rig, a, b)
    assert "deadline" not in actor.last("turn")
    before = view(rig.table.match, rig.table.seat_of(actor))
    rig.clock.advance(3600)
    assert view(rig.table.match, rig.table.seat_of(actor)) == before
    assert not actor.of_type("timeout")


# -- disconnection, grace, reconnection -----------------------------------------------

def test_disconnect_grace_bot_then_reconnect_snapshot_matches_the_others() -> None:
    rig, a, b = two_humans(turn_seconds=0.0, grace_seconds=60.0)
    t = rig.table
    gone, stay = a, b
    seat = t.seat_of(gone)
    gone.connected = False
    t.disconnected(gone)
    assert seat_info(stay, seat)["connected"] is False
    # Within the grace period nothing is played for the absent seat.
    for _ in range(200):
        run_clock(rig.clock)
        if t.match.deal.to_act == seat:
            break
        t.move(stay, stay.last("turn")["moves"][0])
    rig.clock.advance(59)
    assert t.match.deal.to_act == seat
    rig.clock.advance(1)
    assert seat_info(stay, seat)["held_by_bot"] == "disconnected"
    run_clock(rig.clock)
    assert t.match.deal.to_act != seat or t.phase != "playing", "the stand-in moved"
    for _ in range(30):  # a few more moves while away
        if t.phase != "playing" or t.match.deal.over:
            break
        if t.match.deal.to_act != seat:
            t.move(stay, stay.last("turn")["moves"][0])
        run_clock(rig.clock)

    gone.connected = True
    t.reconnected(gone)
    snap = gone.last("table")
    seen = stay.last("event")["view"]
    mine = view(t.match, seat)
    assert snap["view"] == mine
    for key in ("hand_counts", "turn", "pile", "stock", "scores", "deal_no", "top"):
        assert snap["view"][key] == seen[key], key
    assert snap["match"]["totals"] == stay.last("event")["view"]["scores"]
    assert "held_by_bot" not in snap["table"]["seats"][seat]
    assert snap["table"]["seats"][seat]["connected"] is True
    if t.phase == "playing" and t.match.deal.to_act == seat:
        assert gone.last("turn")["moves"] == snap["turn"]["moves"]


def test_disconnected_seat_is_played_by_the_timer_before_grace_ends() -> None:
    rig, a, b = two_humans(turn_seconds=10.0, grace_seconds=300.0)
    t = rig.table
    gone = actor_of(rig, a, b)
    gone.connected = False
    t.disconnected(gone)
    rig.clock.advance(10)
    other = b if gone is a else a
    assert other.last("timeout")["seat"] == t.seat_of(gone)


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
    rig.clock.advance(FAST.grace_seconds)
    assert seat_info(rig.host, 1)["kind"] == "open"
    assert rig.host.last("table_update")["table"]["spectators"] == ["A"]


def test_leaving_mid_match_hands_the_seat_to_a_bot_for_good() -> None:
    rig = make_table("classic", 3, match_end="deals:1")
    humans = seated(rig, ["h", "h", "b"])
    t = rig.table
    t.start(rig.host)
    run_clock(rig.clock)
    quitter = humans[1]
    t.leave(quitter)
    assert seat_info(rig.host, 1)["kind"] == "bot"
    play_out(rig, [rig.host], random.Random(2))
    assert t.phase == "over"
    assert not quitter.of_type("match_end")


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
        t.chat(w, "x" * (FAST.chat_max_chars + 1))
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
    assert len(a.of_type("match_end")) == 2


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


def test_reconnecting_seat_to_act_gets_snapshot_then_its_turn() -> None:
    rig, a, b = two_humans(turn_seconds=30.0, grace_seconds=10.0, max_timeouts_before_bot=5)
    t = rig.table
    gone = actor_of(rig, a, b)
    gone.connected = False
    t.disconnected(gone)
    rig.clock.advance(4)
    gone.connected = True
    t.reconnected(gone)  # within grace: the clock kept running
    snap, turn = gone.inbox[-2:]
    assert (snap["type"], turn["type"]) == ("table", "turn")
    assert turn["deadline"] == snap["turn"]["deadline"] == 26.0



def test_reclaiming_from_a_stand_in_gives_a_fresh_deadline() -> None:
    rig, a, b = two_humans(turn_seconds=30.0, grace_seconds=10.0, bot_delay=5.0)
    t = rig.table
    gone = actor_of(rig, a, b)
    seat = t.seat_of(gone)
    gone.connected = False
    t.disconnected(gone)
    rig.clock.advance(10)  # grace over: the stand-in will move after its delay
    assert seat_info(b if gone is a else a, seat)["held_by_bot"] == "disconnected"
    rig.clock.advance(2)
    assert t.match.deal.to_act == seat
    gone.connected = True
    t.reconnected(gone)
    snap, turn = gone.inbox[-2:]
    assert (snap["type"], turn["type"]) == ("table", "turn")
    assert turn["deadline"] == snap["turn"]["deadline"] == 30.0
    assert "held_by_bot" not in snap["table"]["seats"][seat]
    rig.clock.advance(29)  # the stand-in's pending move was called off
    assert t.match.deal.to_act == seat
    t.move(gone, turn["moves"][0])
