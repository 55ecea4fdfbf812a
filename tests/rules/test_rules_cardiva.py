"""Rule set ``cardiva``: one test (or more) per rule K1-K15, on hand-made deals."""

from __future__ import annotations

import random

import pytest
from rules_kit import build, cards, conserved, hand, legal, mv, play, snapshot

from pisyedili.server.rules import (
    Deal,
    IllegalCard,
    IllegalMove,
    Match,
    Options,
    apply,
    card_str,
    deal_from_view,
    legal_moves,
    new_deal,
    unseen_cards,
    view,
)


@pytest.mark.rule("K1")
def test_k1_one_deck_for_two_two_decks_for_three_or_four() -> None:
    assert Options.make("cardiva", 2).decks == 1
    assert Options.make("cardiva", 3).decks == 2
    assert Options.make("cardiva", 4).decks == 2
    assert Options.make("cardiva", 4, decks=1).decks == 1  # a table may choose
    with pytest.raises(ValueError, match="2-4"):
        Options.make("cardiva", 5)
    d = new_deal(Options.make("cardiva", 4), 0, random.Random(1))
    assert len(d.stock) == 104 - 28 and conserved(d)


@pytest.mark.rule("K2")
def test_k2_seven_cards_each_no_card_turned_up() -> None:
    for players in (2, 3, 4):
        d = new_deal(Options.make("cardiva", players), 1, random.Random(players))
        assert [len(h) for h in d.hands] == [7] * players and d.pile == []
        assert d.to_act == 2 % players


@pytest.mark.rule("K3")
def test_k3_first_round_each_player_opens_with_a_plain_club() -> None:
    d = build("cardiva", ["Jc 7c 10c Ac 5c 9h", "2c 9c Qd", "Kd 3h"], first_round=3, turn=0)
    assert legal(d) == {"5c"}
    for banned in ("Jc", "7c", "10c", "Ac"):
        with pytest.raises(IllegalCard) as err:
            apply(d, mv(banned if banned != "Jc" else "Jc>h"))
        assert err.value.rule == "K3"
    play(d, "5c")
    assert legal(d) == {"2c", "9c"}  # any plain club, whatever club is on top
    play(d, "9c")
    assert legal(d) == {"draw"}  # no club: draw until one comes, no pass
    with pytest.raises(IllegalMove) as err2:
        apply(d, mv("pass"))
    assert err2.value.rule == "K3"


@pytest.mark.rule("K3")
def test_k3_draw_until_a_plain_club_comes() -> None:
    d = build("cardiva", ["Kd 3h", "2d"], first_round=2, stock="Jc 4h 6c", turn=0)
    play(d, "draw", "draw")
    assert legal(d) == {"draw"}  # a jack of clubs is no suitable club
    play(d, "draw", "6c")
    assert d.turn == 1 and d.first_left == 1


@pytest.mark.rule("K3")
def test_k3_no_pisti_in_the_first_round_then_normal_play() -> None:
    d = build("cardiva", ["5c 2h", "5c 9d", "3c 5d"], first_round=3, turn=0)
    play(d, "5c")
    play(d, "5c")  # its exact twin: no pişti in the first round
    assert d.turn == 2 and not d.follow
    play(d, "3c")
    assert d.first_left == 0 and d.turn == 0
    assert legal(d) == {"draw"}  # now 2h must match the 3c: it does not


@pytest.mark.rule("K4")
def test_k4_same_suit_or_same_rank() -> None:
    d = build("cardiva", ["6h 9s 2d", "3c"], pile="9h", turn=0)
    assert legal(d) == {"6h", "9s", "draw"}
    with pytest.raises(IllegalCard) as err:
        apply(d, mv("2d"))
    assert err.value.rule == "K4"


@pytest.mark.rule("K5")
def test_k5_draw_one_then_play_or_pass() -> None:
    d = build("cardiva", ["2c 5h", "3c"], pile="9h", stock="9d 4s", turn=0)
    with pytest.raises(IllegalMove) as err:
        apply(d, mv("pass"))
    assert err.value.rule == "K5"
    play(d, "draw")
    assert legal(d) == {"5h", "9d", "pass"}
    with pytest.raises(IllegalMove) as err:
        apply(d, mv("draw"))
    assert err.value.rule == "K5"
    play(d, "pass")
    assert d.turn == 1 and hand(d, 0) == ["2c", "9d", "5h"]


@pytest.mark.rule("K6")
def test_k6_stock_out_ends_the_deal_with_no_winner_and_no_muamele() -> None:
    d = build("cardiva", ["2c 9d", "7d 3s"], pile="5h", stock="", rest="pile", turn=0)
    events = play(d, "draw")
    assert [e["event"] for e in events] == ["stock_out", "deal_end"]
    assert d.result is not None and d.over
    assert d.result.winner is None and d.result.reason == "stock_out"
    assert d.result.points == (11, 10) and d.result.multiplier == 1


@pytest.mark.rule("K7")
def test_k7_seven_penalty_stacks_and_no_jack_answers() -> None:
    d = build("cardiva", ["7h 2c", "7s Jh 3c", "4c 5c"], pile="5h", turn=0)
    events = play(d, "7h")
    assert {"event": "penalty", "seat": 1, "count": 3} in events
    assert legal(d) == {"7s", "draw"}
    with pytest.raises(IllegalCard) as err:
        apply(d, mv("Jh>c"))
    assert err.value.rule == "K7"
    play(d, "7s")
    assert d.turn == 2 and d.penalty == 6


@pytest.mark.rule("K7")
def test_k7_the_taker_then_plays_their_own_turn() -> None:
    d = build("cardiva", ["7h 2c", "9d Kh", "4h"], pile="5h", stock="2d 3d 4d 6c", turn=0)
    play(d, "7h")
    events = play(d, "draw")
    assert events == [
        {"event": "draw", "seat": 1, "count": 3, "reason": "penalty", "cards": ["2d", "3d", "4d"]}
    ]
    assert d.turn == 1 and d.penalty == 0 and not d.drew
    assert legal(d) == {"Kh", "draw"}  # the 7 is now ordinary; no pass before drawing
    play(d, "draw")
    assert legal(d) == {"Kh", "pass"}


@pytest.mark.rule("K8")
def test_k8_jack_on_anything_even_a_jack_names_a_suit() -> None:
    d = build("cardiva", ["Jh 2s 5d", "Js 3c"], pile="9c Jd", named="s", turn=0)
    assert legal(d) == {"2s", "Jh>c", "Jh>d", "Jh>h", "Jh>s", "draw"}
    with pytest.raises(IllegalCard) as err:
        apply(d, mv("5d"))
    assert err.value.rule == "K8"
    play(d, "Jh>c")
    assert view(d, 1)["named_suit"] == "c"
    assert legal(d) == {"3c", "Js>c", "Js>d", "Js>h", "Js>s", "draw"}


@pytest.mark.rule("K9")
def test_k9_ten_bounces_one_seat_back_direction_unchanged() -> None:
    d = build("cardiva", ["2c 3h", "10h 4c", "5c", "6c"], pile="9h", turn=1, decks=1)
    events = play(d, "10h")
    assert {"event": "bounce", "seat": 0} in events
    assert d.turn == 0 and d.direction == 1
    play(d, "3h")
    assert d.turn == 1  # play runs on through the one who played the 10


@pytest.mark.rule("K9")
def test_k9_ten_on_ten_bounces_further_back() -> None:
    d = build("cardiva", ["10s 3h", "10h 4c", "5c", "6s 2h"], pile="9h", turn=1, decks=1)
    play(d, "10h", "10s")
    assert d.turn == 3 and d.direction == 1
    play(d, "6s")
    assert d.turn == 0


@pytest.mark.rule("K9")
def test_k9_two_players_and_the_reverse_option() -> None:
    d = build("cardiva", ["10h 3c", "4c"], pile="9h", turn=0)
    play(d, "10h")
    assert d.turn == 1  # with two players a 10 changes nothing
    d = build("cardiva", ["2c 3h", "10h 4c", "5c"], pile="9h", turn=1, decks=1, ten="reverse")
    play(d, "10h")
    assert d.turn == 0 and d.direction == -1


@pytest.mark.rule("K10")
def test_k10_ace_others_draw_one_and_its_player_must_follow() -> None:
    d = build("cardiva", ["Ah Kh 2c", "3c", "4c"], pile="5h", stock="2d 3d", turn=0, decks=1)
    events = play(d, "Ah")
    draws = [e for e in events if e["event"] == "draw"]
    assert [(e["seat"], e["cards"], e["reason"]) for e in draws] == [
        (1, ["2d"], "ace"),
        (2, ["3d"], "ace"),
    ]
    assert d.turn == 0 and legal(d) == {"Kh"}  # compulsory: no pass, no draw
    with pytest.raises(IllegalMove) as err:
        apply(d, mv("pass"))
    assert err.value.rule == "K10"
    play(d, "Kh")
    assert d.turn == 1


@pytest.mark.rule("K10")
def test_k10_cannot_follow_draw_one_then_play_or_pass() -> None:
    d = build("cardiva", ["Ah 2c 3d", "4c", "5c"], pile="5h", stock="9s 6d 9h", turn=0, decks=1)
    play(d, "Ah")
    assert legal(d) == {"draw"}
    play(d, "draw")
    assert hand(d, 0) == ["2c", "3d", "9h"]
    assert legal(d) == {"9h", "pass"}
    play(d, "pass")
    assert d.turn == 1


@pytest.mark.rule("K10")
@pytest.mark.parametrize(
    ("drawn", "after"),
    [
        ("2c", {"pass"}),
        ("3h", {"3h", "pass"}),
        ("Jd", {"Jd>c", "Jd>d", "Jd>h", "Jd>s", "pass"}),
    ],
)
def test_k10_after_the_follow_up_draw_only_the_drawn_card_may_be_played(
    drawn: str, after: set[str]
) -> None:
    # The As held is barred as the last card; the draw must not make it playable.
    d = build("cardiva", ["Ah As", "4c"], pile="5h", stock=f"2d {drawn}", turn=0)
    play(d, "Ah")
    assert d.turn == 0 and legal(d) == {"draw"}
    with pytest.raises(IllegalCard) as err:
        apply(d, mv("As"))
    assert err.value.rule == "K10"
    play(d, "draw")
    assert set(hand(d, 0)) == {drawn, "As"}
    assert legal(d) == after
    before = snapshot(d)
    with pytest.raises(IllegalCard) as err:
        apply(d, mv("As"))
    assert err.value.rule == "K10" and snapshot(d) == before
    move = min(after)  # the drawn card if it is legal, else pass
    play(d, move)
    assert d.turn == 1 and set(hand(d, 0)) == ({"As", drawn} if move == "pass" else {"As"})


@pytest.mark.rule("K10")
def test_k10_no_going_out_on_an_ace() -> None:
    d = build("cardiva", ["Ah", "4c"], pile="5h", stock="9s", turn=0)
    assert legal(d) == {"draw"}
    with pytest.raises(IllegalCard) as err:
        apply(d, mv("Ah"))
    assert err.value.rule == "K10"


@pytest.mark.rule("K11")
def test_k11_pisti_forces_another_card() -> None:
    d = build("cardiva", ["8h 2h 3s", "4c", "5c"], pile="8h", turn=0)
    events = play(d, "8h")
    assert {"event": "pisti", "seat": 0} in events
    assert d.turn == 0 and legal(d) == {"2h"}
    play(d, "2h")
    assert d.turn == 1


@pytest.mark.rule("K11")
def test_k11_pisti_without_a_matching_card_draws() -> None:
    d = build("cardiva", ["Kh 2s 3s", "4c", "5c"], pile="Kh", stock="4s 6d", turn=0)
    play(d, "Kh")
    assert legal(d) == {"draw"}
    play(d, "draw")
    assert legal(d) == {"pass"}  # 4s does not match: the turn ends
    play(d, "pass")
    assert d.turn == 1


@pytest.mark.rule("K11")
@pytest.mark.parametrize(("drawn", "after"), [("2c", {"pass"}), ("3s", {"3s", "pass"})])
def test_k11_after_the_pisti_draw_only_the_drawn_card_may_be_played(
    drawn: str, after: set[str]
) -> None:
    # 5s on its twin leaves As, which matches but is barred as the last card (K10).
    d = build("cardiva", ["5s As", "4c", "6c"], pile="5s", stock=drawn, turn=0)
    assert {"event": "pisti", "seat": 0} in play(d, "5s")
    assert d.turn == 0 and legal(d) == {"draw"}
    play(d, "draw")
    assert legal(d) == after
    before = snapshot(d)
    with pytest.raises(IllegalCard) as err:
        apply(d, mv("As"))
    assert err.value.rule == "K11" and snapshot(d) == before
    move = min(after)
    play(d, move)
    assert d.turn == 1 and set(hand(d, 0)) == ({"As", drawn} if move == "pass" else {"As"})


def _after_the_ace_draw(held: str, drawn: str) -> Deal:
    """Seat 0 plays Ah keeping ``held``, cannot follow, and draws ``drawn`` (K10)."""
    d = build("cardiva", [f"Ah {held}", "4c"], pile="5h", stock=f"9d {drawn}", turn=0)
    play(d, "Ah", "draw")
    return d


@pytest.mark.rule("K10")
def test_k10_the_own_view_names_the_card_the_follow_up_draw_brought() -> None:
    # The same sorted hand, 2c As: held As (barred as the last card) and drew 2c, or held
    # 2c and drew As. Only the drawer's view tells them apart, and it rebuilds exactly.
    barred = _after_the_ace_draw("As", "2c")
    drew_ace = _after_the_ace_draw("2c", "As")
    assert legal(barred) == {"pass"} and legal(drew_ace) == {"As", "pass"}
    mine = view(barred, 0), view(drew_ace, 0)
    assert mine[0]["hand"] == mine[1]["hand"] == ["2c", "As"]
    assert (mine[0]["drawn"], mine[1]["drawn"]) == ("2c", "As")
    for seat in (None, 1):  # nothing of it for anyone else
        assert view(barred, seat) == view(drew_ace, seat)
        assert "drawn" not in view(barred, seat)
    for live, v in zip((barred, drew_ace), mine, strict=True):
        hidden = unseen_cards(v)
        rebuilt = deal_from_view(v, [None, hidden[:2]], hidden[2:])
        assert legal(rebuilt) == legal(live)
        assert view(rebuilt, 0) == v
    for v in mine:  # a view that does not say which card was drawn cannot be rebuilt
        hidden = unseen_cards(v)
        with pytest.raises(ValueError, match="follow-up draw"):
            deal_from_view({**v, "drawn": None}, [None, hidden[:2]], hidden[2:])
    # Once the turn is over, nobody's view names it.
    play(drew_ace, "pass")
    assert all("drawn" not in view(drew_ace, s) for s in (None, 0, 1))


@pytest.mark.rule("K11")
@pytest.mark.parametrize("twin", ["7h", "10h", "Ah"])
def test_k11_special_cards_make_no_pisti(twin: str) -> None:
    d = build("cardiva", [f"{twin} 2h 3s", "4c 7c", "5c"], pile=twin, turn=0)
    events = play(d, twin)
    assert not any(e["event"] == "pisti" for e in events)
    assert d.follow != 2


@pytest.mark.rule("K11")
def test_k11_going_out_on_a_pisti_card_ends_the_deal() -> None:
    d = build("cardiva", ["Qd", "4c", "5c"], pile="Qd", turn=0, rest="pile")
    play(d, "Qd")
    assert d.over and d.result is not None and d.result.winner == 0


@pytest.mark.rule("K12")
def test_k12_hand_values() -> None:
    d = build("cardiva", ["5h", "2c 10d Qd Kd Ad Jd 9d"], pile="5d", turn=0, rest="pile")
    play(d, "5h")
    assert d.result is not None and d.result.points == (0, 2 + 10 + 10 + 10 + 11 + 25 + 9)


@pytest.mark.rule("K13")
@pytest.mark.parametrize(("last", "mult"), [("7h", 3), ("Jh>c", 2), ("Kh", 1)])
def test_k13_going_out_on_jack_doubles_on_seven_triples(last: str, mult: int) -> None:
    d = build("cardiva", [last[:2], "9c 4c"], pile="5h", turn=0, rest="pile")
    play(d, last)
    assert d.result is not None and d.result.points == (0, 13 * mult)


@pytest.mark.rule("K14")
def test_k14_muamele_three_picks_per_seven_picked_sevens_add_three() -> None:
    d = build(
        "cardiva", ["5h", "7c 2d", "3s"], pile="9h", stock="7d 4c 4d 5s 6s 8s 9s 2s",
        rest="pile", turn=0,
    )  # fmt: skip
    events = play(d, "5h")
    assert events[-1] == {"event": "muamele", "seat": 1, "picks": 3, "spread": 8}
    assert not d.over and d.to_act == 1 and view(d, 2)["phase"] == "muamele"
    assert view(d, 2)["muamele"]["picks"] == 3
    assert legal_moves(d, 1) == [mv(f"pick {p}") for p in range(8)]
    with pytest.raises(IllegalMove) as err:
        apply(d, mv("draw"))
    assert err.value.rule == "K14"
    ev = play(d, "pick 0")
    assert ev == [{"event": "pick", "seat": 1, "position": 0, "card": "7d", "picks": 5}]
    for _ in range(5):
        play(d, "pick 0")
    assert d.over and d.result is not None
    assert sorted(d.result.hands[1]) == sorted(cards("7c 2d 7d 4c 4d 5s 6s 8s"))
    assert d.result.points == (0, 7 + 2 + 7 + 4 + 4 + 5 + 6 + 8, 3)


@pytest.mark.rule("K14")
def test_k14_a_pick_beyond_the_spread_is_refused_in_the_wires_terms() -> None:
    # The wire's `position` counts from 0: the refusal says so, gives the range in
    # those terms and names the field.
    d = build("cardiva", ["Jh", "7c", "3s"], pile="9h", stock="2s 3d 4d 5d", rest="pile", turn=0)
    play(d, "Jh>c")
    with pytest.raises(IllegalMove) as err:
        apply(d, mv("pick 4"))
    assert err.value.to_wire() == {
        "code": "illegal_move", "rule": "K14", "field": "move.position",
        "message": "muamele: position counts from 0; pick 0-3, one of the 4 face-down cards",
    }
    play(d, "pick 3")  # the last position is taken


@pytest.mark.rule("K14")
@pytest.mark.parametrize(("move", "kind"), [("7c", "play"), ("draw", "draw"),
                                            ("pass", "pass")])
def test_k14_a_play_draw_or_pass_in_muamele_is_told_to_send_a_pick(move: str,
                                                                   kind: str) -> None:
    # Not a pick at all: the refusal names the move kind expected, not only positions.
    d = build("cardiva", ["Jh", "7c", "3s"], pile="9h", stock="2s 3d 4d 5d", rest="pile", turn=0)
    play(d, "Jh>c")
    with pytest.raises(IllegalMove) as err:
        apply(d, mv(move))
    assert err.value.to_wire() == {
        "code": "illegal_move", "rule": "K14", "field": "move.kind",
        "message": f"muamele: no {kind} until it ends; send a pick, kind \"pick\" with a "
                   "position 0-3, one of the 4 face-down cards",
    }
    play(d, "pick 0")  # nothing changed: the pick is still owed


@pytest.mark.rule("K14")
def test_k14_player_chooses_the_position_and_the_multiplier_applies() -> None:
    d = build("cardiva", ["Jh", "7c", "3s"], pile="9h", stock="2s 3d 4d 5d", rest="pile", turn=0)
    play(d, "Jh>c")
    play(d, "pick 2", "pick 2", "pick 0")
    assert d.result is not None
    assert sorted(d.result.hands[1]) == sorted(cards("7c 4d 5d 2s"))
    assert d.result.points == (0, 2 * (7 + 4 + 5 + 2), 2 * 3)


@pytest.mark.rule("K14")
def test_k14_picks_come_from_the_discards_when_the_stock_is_empty() -> None:
    d = build("cardiva", ["5h", "7c", "7s"], pile="9h", stock="4c", rest="pile", turn=0)
    under = len(d.pile)
    events = play(d, "5h", "pick 0")
    assert {"event": "reshuffle", "count": under} in events
    assert d.pile == cards("5h") and d.to_act == 1
    assert conserved(d)
    while not d.over:
        play(d, "pick 0")
    assert d.result is not None and len(d.result.hands[1]) >= 4 and len(d.result.hands[2]) >= 4


@pytest.mark.rule("K15")
def test_k15_match_ends_when_someone_reaches_101_lowest_wins() -> None:
    opts = Options.make("cardiva", 3)
    assert opts.match_end == "points:101"
    m = Match(opts, random.Random(3))
    rng = random.Random(4)
    while True:
        assert max(m.totals) < 101
        while not m.deal.over:
            m.apply(rng.choice(legal_moves(m.deal, m.deal.turn)))
        if m.over:
            break
        m.next_deal()
    assert max(m.totals) >= 101
    assert m.winners == [s for s in range(3) if m.totals[s] == min(m.totals)]


@pytest.mark.rule("K10")
def test_k10_stock_running_out_during_the_ace_draws_ends_the_deal() -> None:
    d = build("cardiva", ["Ah Kh", "3c", "4c"], pile="5h", stock="2d", rest="pile", turn=0, decks=1)
    events = play(d, "Ah")
    assert [e["event"] for e in events] == ["play", "draw", "stock_out", "deal_end"]
    assert d.over and d.result is not None and d.result.reason == "stock_out"
    assert hand(d, 1) == ["3c", "2d"]


@pytest.mark.rule("K14")
def test_k14_nothing_left_to_pick_ends_the_penalty_round() -> None:
    # Seat 2 holds every card not shown: after 5h only 9h is left to pick.
    shown = cards("5h 7c 7d 7h 2c 9h")
    others = " ".join(card_str(c) for c in range(52) if c not in shown)
    d = build("cardiva", ["5h", "7c 7d 7h 2c", others], pile="9h", stock="", turn=0, decks=1)
    events = play(d, "5h")
    assert [e["event"] for e in events] == ["play", "reshuffle", "muamele"]
    assert events[-1]["picks"] == 9 and events[-1]["spread"] == 1
    events = play(d, "pick 0")
    assert [e["event"] for e in events] == ["pick", "deal_end"]
    assert d.result is not None and d.result.points[1] == 7 * 3 + 2 + 9


@pytest.mark.rule("K11")
def test_k11_pisti_with_two_players_and_the_two_deck_option() -> None:
    d = build("cardiva", ["9s 9s 2s", "3c"], pile="4s", turn=0, decks=2)
    play(d, "9s")
    assert d.turn == 1  # 9s on 4s: no twin, no pişti
    d = build("cardiva", ["9s 2s", "3c"], pile="9s", turn=0, decks=2)
    play(d, "9s")
    assert d.turn == 0 and legal(d) == {"2s"}
