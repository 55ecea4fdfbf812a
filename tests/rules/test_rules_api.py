"""The engine's public surface: options, notation, wire forms, errors, views, records."""

from __future__ import annotations

import pickle
import random
from typing import Any

import pytest
from rules_kit import build, cards, mv, play

from pisyedili.server.rules import (
    DRAW,
    PASS,
    PICK,
    DealOver,
    DealRecord,
    IllegalMove,
    Match,
    Options,
    RuleError,
    apply,
    card_str,
    deal_from_view,
    events_for,
    legal_moves,
    move_from_wire,
    move_str,
    move_to_wire,
    new_deal,
    parse_card,
    replay,
    unseen_cards,
    view,
)


def test_card_notation_round_trips_and_is_lenient_on_case_and_t() -> None:
    assert [card_str(c) for c in (0, 8, 9, 12, 13, 51)] == ["2c", "10c", "Jc", "Ac", "2d", "As"]
    assert all(parse_card(card_str(c)) == c for c in range(52))
    assert parse_card(" th ") == parse_card("10H") == parse_card("10h")
    for bad in ("", "1h", "11c", "Jx", "h7", "7", None, 7):
        with pytest.raises(ValueError):
            parse_card(bad)
    with pytest.raises(ValueError):
        card_str(52)


def test_options_defaults_follow_the_rules_and_round_trip() -> None:
    classic = Options.make("classic", 4)
    assert (classic.ten, classic.empty_stock, classic.match_end, classic.decks) == (
        "reverse",
        "end_deal",
        "deals:4",
        1,
    )
    cardiva = Options.make("cardiva", 3)
    assert (cardiva.ten, cardiva.match_end, cardiva.decks) == ("bounce", "points:101", 2)
    custom = Options.make(
        "classic", 2, ten="bounce", empty_stock="reshuffle", match_end="points:50"
    )
    assert Options.from_wire(custom.to_wire()) == custom
    assert Options.from_wire({"rules": "cardiva", "players": 2, "future": 1}).decks == 1
    assert Options.make("classic", 2, match_end="deals:04").match_end == "deals:4"


@pytest.mark.parametrize(
    ("data", "fragment"),
    [
        ({"rules": "uno", "players": 2}, "unknown rules"),
        ({"rules": "classic", "players": "4"}, "2-6"),
        ({"rules": "classic", "players": True}, "2-6"),
        ({"rules": "classic", "players": 4, "ten": "skip"}, "ten"),
        ({"rules": "classic", "players": 4, "empty_stock": "x"}, "empty_stock"),
        ({"rules": "classic", "players": 4, "match_end": "deals:0"}, "match_end"),
        ({"rules": "classic", "players": 4, "match_end": "forever"}, "match_end"),
        ({"rules": "classic", "players": 4, "decks": 3}, "decks"),
        ({"rules": "classic"}, "players"),
        ("classic", "map"),
    ],
)
def test_bad_options_are_refused_with_a_clear_message(data: Any, fragment: str) -> None:
    with pytest.raises(ValueError, match=fragment):
        Options.from_wire(data)


def test_options_make_refuses_unknown_keys() -> None:
    with pytest.raises(ValueError, match="unknown option"):
        Options.make("classic", 4, jokers=2)


def test_every_move_round_trips_through_wire_and_text() -> None:
    examples = {
        mv("7h"): ({"kind": "play", "card": "7h"}, "7h"),
        mv("Jh>s"): ({"kind": "play", "card": "Jh", "suit": "s"}, "Jh>s"),
        mv("Jc"): ({"kind": "play", "card": "Jc"}, "Jc"),
        DRAW: ({"kind": "draw"}, "draw"),
        PASS: ({"kind": "pass"}, "pass"),
        PICK + 3: ({"kind": "pick", "position": 3}, "pick 3"),
    }
    for move, (wire, text) in examples.items():
        assert move_to_wire(move) == wire and move_str(move) == text
        assert move_from_wire(wire) == move
    for move in range(PICK + 104):
        assert move_from_wire(move_to_wire(move)) == move


@pytest.mark.parametrize(
    "wire",
    [
        None,
        {},
        {"kind": "jump"},
        {"kind": "play"},
        {"kind": "play", "card": 7},
        {"kind": "play", "card": "7h", "suit": "s"},
        {"kind": "play", "card": "Jh", "suit": "x"},
        {"kind": "pick", "position": -1},
        {"kind": "pick", "position": "2"},
        {"kind": "pick", "position": 10**6},
    ],
)
def test_malformed_wire_moves_raise_value_error(wire: Any) -> None:
    with pytest.raises(ValueError):
        move_from_wire(wire)


def test_refusals_carry_code_rule_and_message() -> None:
    d = build("classic", ["5h 2c", "3c"], pile="9s", turn=0)
    with pytest.raises(RuleError) as err:
        apply(d, mv("5h"))
    assert err.value.to_wire() == {
        "code": "illegal_card",
        "message": "5h matches neither the suit nor the rank of 9s",
        "rule": "C4",
    }
    with pytest.raises(IllegalMove) as err2:
        apply(d, mv("Ks"))
    assert err2.value.code == "card_not_in_hand"
    for junk in (-5, 999, PICK, "draw", None):
        with pytest.raises(IllegalMove):
            apply(d, junk)


def test_events_for_masks_a_drawn_card_from_everyone_but_the_drawer() -> None:
    d = build("classic", ["2c", "3c", "4c"], pile="9h", stock="Kd", turn=0)
    events = play(d, "draw")
    assert events == [{"event": "draw", "seat": 0, "count": 1, "reason": "draw", "cards": ["Kd"]}]
    assert events_for(events, 0) == events
    public = {"event": "draw", "seat": 0, "count": 1, "reason": "draw"}
    assert events_for(events, 1) == [public]
    assert events_for(events, None) == [public]
    assert events[0]["cards"] == ["Kd"]  # the original is not modified


def test_view_shows_own_hand_counts_and_public_state_only() -> None:
    d = build("classic", ["Jc 2d", "3d 5h 9s"], pile="4h 5s", turn=0)
    play(d, "Jc>d")
    v = view(d, 1)
    assert v["hand"] == ["3d", "5h", "9s"] and v["hand_counts"] == [1, 3]
    assert v["top"] == "Jc" and v["named_suit"] == "d" and v["turn"] == 1
    assert v["pile"][-3:] == ["4h", "5s", "Jc"] and v["phase"] == "play"
    assert v["stock"] == len(d.stock) and v["result"] is None
    spectator = view(d, None)
    assert spectator["hand"] is None and spectator["seat"] is None
    assert {k: x for k, x in spectator.items() if k not in ("hand", "seat")} == {
        k: x for k, x in v.items() if k not in ("hand", "seat")
    }
    for bad in (2, -1, "0"):
        with pytest.raises(ValueError):
            view(d, bad)


def test_unseen_cards_and_deal_from_view_refuse_cards_that_do_not_add_up() -> None:
    d = build("classic", ["2c 3c", "4c 5c"], pile="9h", turn=0)
    v = view(d, 0)
    hidden = unseen_cards(v)
    assert len(hidden) == 52 - 2 - len(d.pile)
    with pytest.raises(ValueError, match="holds 2 cards"):
        deal_from_view(v, [None, hidden[:3]], hidden[3:])
    with pytest.raises(ValueError, match="pack"):
        deal_from_view(v, [None, cards("2c 3c")], hidden[2:])
    with pytest.raises(ValueError, match="hidden"):
        deal_from_view(v, [None, None], hidden)
    for broken in ({**v, "pile": None}, {k: x for k, x in v.items() if k != "penalty"}):
        with pytest.raises(ValueError, match="malformed view"):
            deal_from_view(broken, [None, hidden[:2]], hidden[2:])
    rebuilt = deal_from_view(v, [None, hidden[:2]], hidden[2:])
    assert rebuilt.to_act == 0 and sorted(legal_moves(rebuilt, 0)) == sorted(legal_moves(d, 0))


def test_copy_is_independent() -> None:
    d = new_deal(Options.make("cardiva", 4), 0, random.Random(5))
    c = d.copy()
    apply(c, legal_moves(c, c.turn)[0])
    assert (c.moves != d.moves and c.hands != d.hands) or c.stock != d.stock
    assert d.moves == [] and sum(map(len, d.hands)) == 28


def test_a_match_pickles_with_its_finished_deals() -> None:
    """The journal pickles a table's core at each deal's start, with the match's results
    so far: the deal and its result must come back equal, compiled (mypyc) or not."""
    m = Match(Options.make("cardiva", 3, match_end="deals:3"), random.Random(4), dealer=1)
    rng = random.Random(9)
    while not m.deal.over:
        m.apply(rng.choice(legal_moves(m.deal, m.deal.turn)))
    again = pickle.loads(pickle.dumps(m, pickle.HIGHEST_PROTOCOL))
    assert again.deal.result == m.deal.result and again.deal.result is not None
    assert view(again, 0) == view(m, 0) and again.totals == m.totals
    again.next_deal()
    m.next_deal()
    assert view(again, 2) == view(m, 2)


def test_records_round_trip_and_replay_the_same_states() -> None:
    rng = random.Random(11)
    d = new_deal(Options.make("cardiva", 3, empty_stock="reshuffle"), 2, random.Random(3))
    states = []
    while not d.over:
        apply(d, rng.choice(legal_moves(d, d.turn)))
        states.append(view(d, None))
    wire = d.record.to_wire()
    again = DealRecord.from_wire(wire)
    assert again == d.record
    r = replay(again)
    assert r.result == d.result and view(r, None) == states[-1]
    with pytest.raises(ValueError):
        DealRecord.from_wire({**wire, "deck": "2c 3c"})
    with pytest.raises(ValueError):
        DealRecord.from_wire({**wire, "dealer": 7})


def test_finished_deal_refuses_moves_and_match_refuses_early_next_deal() -> None:
    m = Match(Options.make("classic", 2, match_end="deals:1"), random.Random(2), dealer=0)
    with pytest.raises(RuleError) as err:
        m.next_deal()
    assert err.value.code == "deal_in_progress"
    rng = random.Random(0)
    while not m.deal.over:
        m.apply(rng.choice(legal_moves(m.deal, m.deal.turn)))
    assert m.over and m.winners
    with pytest.raises(DealOver):
        m.apply(DRAW)
    with pytest.raises(RuleError) as err:
        m.next_deal()
    assert err.value.code == "match_over"
