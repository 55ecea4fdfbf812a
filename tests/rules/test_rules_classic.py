"""Rule set ``classic``: one test (or more) per rule C1-C16 and C12a, on hand-made deals."""

from __future__ import annotations

import random

import pytest
from rules_kit import build, cards, hand, legal, mv, play

from pisyedili.server.rules import (
    DealOver,
    IllegalCard,
    IllegalMove,
    Match,
    NotYourTurn,
    Options,
    apply,
    apply_for,
    card_str,
    deal_from_view,
    legal_moves,
    move_str,
    new_deal,
    view,
)


@pytest.mark.rule("C1")
def test_c1_seven_cards_each_rest_is_stock_no_card_up() -> None:
    for players in range(2, 7):
        d = new_deal(Options.make("classic", players), 0, random.Random(players))
        assert [len(h) for h in d.hands] == [7] * players
        assert len(d.stock) == 52 - 7 * players
        assert d.pile == []
        assert view(d, None)["top"] is None
    for bad in (1, 7):
        with pytest.raises(ValueError, match="2-6"):
            Options.make("classic", bad)


@pytest.mark.rule("C2")
def test_c2_first_player_must_open_with_a_club() -> None:
    d = build("classic", ["5h 9c Kd", "2h 3h"], first_round=1, dealer=1, turn=0)
    assert legal(d) == {"9c"}  # no draw, no pass while holding a club
    with pytest.raises(IllegalCard) as err:
        apply(d, mv("5h"))
    assert err.value.rule == "C2" and err.value.code == "illegal_card"
    with pytest.raises(IllegalMove) as err2:
        apply(d, mv("draw"))
    assert err2.value.rule == "C2"


@pytest.mark.rule("C2")
def test_c2_without_a_club_draw_until_one_comes() -> None:
    d = build("classic", ["5h Kd", "2h 3h"], first_round=1, stock="4d 6s 8c", turn=0)
    assert legal(d) == {"draw"}
    play(d, "draw")
    assert legal(d) == {"draw"}  # no pass during the opening
    with pytest.raises(IllegalMove):
        apply(d, mv("pass"))
    play(d, "draw", "draw")
    assert legal(d) == {"8c"}
    play(d, "8c")
    assert d.turn == 1 and d.first_left == 0


@pytest.mark.rule("C2")
@pytest.mark.parametrize("opening", ["7c", "8c", "10c", "Ac"])
def test_c2_opening_card_has_no_effect(opening: str) -> None:
    d = build("classic", [f"{opening} 2h", "5c 6d", "9c 9d"], first_round=1, turn=0)
    play(d, opening)
    assert d.turn == 1 and d.direction == 1 and d.penalty == 0 and not d.follow
    assert legal(d) >= {"5c", "draw"}  # then normal play: a club matches


@pytest.mark.rule("C2")
def test_c2_opening_jack_of_clubs_names_no_suit_and_clubs_follow() -> None:
    # Decision: a jack of clubs may open (it is a club); its effect does not apply, so
    # it names no suit and clubs stay asked for; C6 still forbids a jack on it.
    d = build("classic", ["Jc 2h", "5c Jd 6d 2c"], first_round=1, turn=0)
    assert legal(d) == {"Jc"}
    with pytest.raises(IllegalCard) as err:
        apply(d, mv("Jc>h"))
    assert err.value.rule == "C2"
    play(d, "Jc")
    seen = view(d, 1)
    assert seen["named_suit"] is None and seen["top"] == "Jc"  # C2: it names no suit
    assert legal(d) == {"5c", "2c", "draw"}  # its own suit is followed, and no jack (C6)
    for move, rule in (("Jd>d", "C6"), ("6d", "C6")):
        with pytest.raises(IllegalCard) as err:
            apply(d, mv(move))
        assert err.value.rule == rule
    rebuilt = deal_from_view(seen, [list(d.hands[0]), None], list(d.stock))
    assert sorted(move_str(m) for m in legal_moves(rebuilt, 1)) == ["2c", "5c", "draw"]


@pytest.mark.rule("C2")
def test_c2_only_the_first_player_has_the_opening_obligation() -> None:
    d = build("classic", ["5c 2h", "5d 9h", "2s"], first_round=1, turn=0)
    play(d, "5c")
    assert "5d" in legal(d)  # seat 1 plays by rank, no club needed


@pytest.mark.rule("C3")
def test_c3_play_goes_clockwise_and_only_the_seat_to_act_moves() -> None:
    d = build("classic", ["5h 2c", "6h 2d", "7d 3s"], pile="4h", turn=0)
    play(d, "5h")
    assert d.to_act == 1
    with pytest.raises(NotYourTurn) as err:
        apply_for(d, 2, mv("draw"))
    assert err.value.code == "not_your_turn"
    assert legal_moves(d, 2) == []
    play(d, "6h")
    assert d.to_act == 2


@pytest.mark.rule("C4")
def test_c4_match_rank_or_suit() -> None:
    d = build("classic", ["6h 9s 2d Kc", "3c"], pile="9h", turn=0)
    assert legal(d) == {"6h", "9s", "draw"}
    with pytest.raises(IllegalCard) as err:
        apply(d, mv("2d"))
    assert err.value.rule == "C4"


@pytest.mark.rule("C5")
def test_c5_jack_on_any_card_naming_a_suit() -> None:
    d = build("classic", ["Jd 2c", "3c"], pile="9h", turn=0)
    assert legal(d) == {"Jd>c", "Jd>d", "Jd>h", "Jd>s", "draw"}
    with pytest.raises(IllegalCard) as err:
        apply(d, mv("Jd"))  # a jack must name a suit
    assert err.value.rule == "C5"
    events = play(d, "Jd>s")
    assert events[0] == {"event": "play", "seat": 0, "card": "Jd", "suit": "s"}


@pytest.mark.rule("C6")
def test_c6_named_suit_and_no_jack_on_jack() -> None:
    d = build("classic", ["Jh 2s 5d 9h", "3c"], pile="9c Jd", named="s", turn=0)
    assert legal(d) == {"2s", "draw"}
    with pytest.raises(IllegalCard) as err:
        apply(d, mv("Jh>c"))
    assert err.value.rule == "C6"
    with pytest.raises(IllegalCard) as err:
        apply(d, mv("5d"))  # the jack's own suit does not count
    assert err.value.rule == "C6"


@pytest.mark.rule("C7")
def test_c7_draw_one_at_a_time_play_draw_again_or_pass() -> None:
    d = build("classic", ["2c 5h", "3c"], pile="9h", stock="4d 9d 3s", turn=0)
    with pytest.raises(IllegalMove) as err:
        apply(d, mv("pass"))  # pass only after a draw
    assert err.value.rule == "C7"
    assert "draw" in legal(d)  # may draw although 5h is playable
    play(d, "draw")
    assert legal(d) == {"5h", "draw", "pass"}
    play(d, "draw")
    assert legal(d) == {"5h", "9d", "draw", "pass"}
    play(d, "9d")
    assert d.turn == 1 and hand(d, 0) == ["2c", "4d", "5h"]


@pytest.mark.rule("C7")
def test_c7_pass_after_drawing_ends_the_turn() -> None:
    d = build("classic", ["2c", "3c"], pile="9h", stock="4d", turn=0)
    events = play(d, "draw", "pass")
    assert events[-1] == {"event": "pass", "seat": 0}
    assert d.turn == 1 and not d.drew


@pytest.mark.rule("C8")
def test_c8_jack_changes_the_suit() -> None:
    d = build("classic", ["Jc 2d", "3d 5h"], pile="5s", turn=0)
    play(d, "Jc>d")
    assert view(d, 1)["named_suit"] == "d"
    assert legal(d) == {"3d", "draw"}  # 5h matched the old top, not the named suit


@pytest.mark.rule("C9")
def test_c9_eight_skips_the_next_player() -> None:
    d = build("classic", ["8h 2c", "3c", "4c"], pile="5h", turn=0)
    events = play(d, "8h")
    assert {"event": "skip", "seat": 1} in events
    assert d.turn == 2


@pytest.mark.rule("C10")
def test_c10_ten_reverses_the_direction() -> None:
    d = build("classic", ["10h 2c", "3c", "4h 5c"], pile="5h", turn=0)
    events = play(d, "10h")
    assert {"event": "reverse", "direction": -1} in events
    assert d.turn == 2 and d.direction == -1
    play(d, "4h")
    assert d.turn == 1


@pytest.mark.rule("C11")
def test_c11_seven_next_draws_three_or_answers_with_a_seven() -> None:
    d = build("classic", ["7h 2c", "7s Jh 3c", "4c 5c"], pile="5h", stock="2d 3d 4d", turn=0)
    events = play(d, "7h")
    assert {"event": "penalty", "seat": 1, "count": 3} in events
    assert legal(d) == {"7s", "draw"}
    with pytest.raises(IllegalCard) as err:
        apply(d, mv("Jh>c"))  # a jack may not answer
    assert err.value.rule == "C11"
    with pytest.raises(IllegalMove) as err2:
        apply(d, mv("pass"))
    assert err2.value.rule == "C11"
    play(d, "7s")
    assert d.turn == 2 and view(d, 2)["penalty"] == 6  # sevens stack


@pytest.mark.rule("C11")
def test_c11_drawing_the_penalty_ends_the_turn_then_the_seven_is_ordinary() -> None:
    d = build("classic", ["7h 2c", "9d Kh", "4h 5c"], pile="5h", stock="2d 3d 4d", turn=0)
    play(d, "7h")
    events = play(d, "draw")
    assert events[0]["reason"] == "penalty" and events[0]["count"] == 3
    assert hand(d, 1) == ["2d", "3d", "4d", "9d", "Kh"]
    assert d.turn == 2 and d.penalty == 0
    assert legal(d) == {"4h", "draw"}  # the 7 of hearts now matches as any heart


@pytest.mark.rule("C12")
def test_c12_ace_may_be_followed_by_a_matching_card_or_jack_or_end_the_turn() -> None:
    d = build("classic", ["Ah Kh As Jd 2c 3s", "3c"], pile="5h", turn=0)
    play(d, "Ah")
    assert d.turn == 0
    assert legal(d) == {"Kh", "As", "Jd>c", "Jd>d", "Jd>h", "Jd>s", "pass"}  # no draw
    with pytest.raises(IllegalMove) as err:
        apply(d, mv("draw"))
    assert err.value.rule == "C12"
    play(d, "As")  # another ace repeats the follow-up
    assert d.turn == 0 and "3s" in legal(d)
    play(d, "pass")
    assert d.turn == 1


@pytest.mark.rule("C12")
def test_c12_the_follow_up_card_keeps_its_own_effect() -> None:
    d = build("classic", ["Ah 8h 2c", "3c", "4c"], pile="5h", turn=0)
    play(d, "Ah", "8h")
    assert d.turn == 2  # the 8 skips seat 1


@pytest.mark.rule("C12a")
def test_c12a_two_players_eight_replays_ten_changes_nothing_visible() -> None:
    d = build("classic", ["8h 10h 2c", "3c 4d"], pile="5h", turn=0)
    play(d, "8h")
    assert d.turn == 0
    play(d, "10h")
    assert d.turn == 1


@pytest.mark.rule("C13")
def test_c13_first_out_wins_others_score_their_hands() -> None:
    d = build("classic", ["5h", "Jc 7c Ac Kc Qc 2d 10d", "8s 9s"], pile="5d", turn=0, rest="pile")
    events = play(d, "5h")
    assert d.over and d.to_act is None
    assert d.result is not None
    assert d.result.winner == 0 and d.result.reason == "out" and d.result.multiplier == 1
    assert d.result.points == (0, 25 + 20 + 15 + 10 + 10 + 2 + 10, 17)
    assert events[-1]["event"] == "deal_end"
    assert events[-1]["result"]["hands"][2] == ["8s", "9s"]
    with pytest.raises(DealOver):
        apply(d, mv("draw"))
    assert legal_moves(d, 1) == []


@pytest.mark.rule("C14")
@pytest.mark.parametrize(("last", "mult"), [("7h", 3), ("Jh>c", 2), ("Ah", 1)])
def test_c14_going_out_on_seven_or_jack_multiplies(last: str, mult: int) -> None:
    d = build("classic", [last[:2], "9c 4c"], pile="5h", turn=0, rest="pile")
    play(d, last)
    assert d.result is not None
    assert d.result.multiplier == mult and d.result.points == (0, 13 * mult)
    assert d.penalty == 0 and d.hands[1] == cards("9c 4c")  # no penalty draw after going out


@pytest.mark.rule("C15")
def test_c15_stock_runs_out_lowest_hand_wins_without_multiplier() -> None:
    d = build("classic", ["2c 9d", "Jd 3s", "4s 5s"], pile="5h", stock="", rest="pile", turn=0)
    assert d.stock == []
    events = play(d, "draw")
    assert [e["event"] for e in events] == ["stock_out", "deal_end"]
    assert d.result is not None
    assert d.result.reason == "stock_out" and d.result.multiplier == 1
    assert d.result.points == (11, 28, 9) and d.result.winner == 2


@pytest.mark.rule("C15")
def test_c15_a_deal_that_ran_out_after_a_draw_shows_no_draw_pending() -> None:
    # C7: a seat that drew may draw again; the stock is empty, so the deal ends (C15).
    # The final view is of a deal over: nobody "drew this turn" there.
    d = build("classic", ["2c 9d", "Jd 3s"], pile="5h", stock="4s", rest="pile", turn=0)
    play(d, "draw")
    assert view(d, 0)["drew"] is True
    events = play(d, "draw")
    assert [e["event"] for e in events] == ["stock_out", "deal_end"]
    assert d.result is not None and d.result.reason == "stock_out"
    for seat in (0, 1, None):
        final = view(d, seat)
        assert final["phase"] == "over" and final["drew"] is False


@pytest.mark.rule("C15")
def test_c15_tie_for_lowest_hand_names_no_winner() -> None:
    d = build("classic", ["2c 9d", "4s 7c"], pile="5h", stock="", rest="pile", turn=0)
    play(d, "draw")
    assert d.result is not None and d.result.points == (11, 24) and d.result.winner == 0
    d = build("classic", ["2c 9d", "5s 6s"], pile="5h", stock="", rest="pile", turn=0)
    play(d, "draw")
    assert d.result is not None and d.result.points == (11, 11) and d.result.winner is None


@pytest.mark.rule("C15")
def test_c15_penalty_larger_than_the_stock_ends_the_deal() -> None:
    d = build("classic", ["7h 2c", "9d"], pile="5h", stock="2d", rest="pile", turn=0)
    play(d, "7h")
    events = play(d, "draw")
    assert [e["event"] for e in events] == ["draw", "stock_out", "deal_end"]
    assert events[0]["cards"] == ["2d"] and d.result is not None
    assert d.result.reason == "stock_out"


@pytest.mark.rule("C15")
def test_c15_reshuffle_option_turns_the_discards_into_a_new_stock() -> None:
    d = build(
        "classic", ["2c 9d", "4s"], pile="5h", stock="", rest="pile", turn=0,
        empty_stock="reshuffle",
    )  # fmt: skip
    under = len(d.pile) - 1
    events = play(d, "draw")
    assert events[0] == {"event": "reshuffle", "count": under}
    assert events[1]["event"] == "draw" and not d.over
    assert d.pile == cards("5h") and len(d.stock) == under - 1


@pytest.mark.rule("C15")
def test_c15_a_reshuffled_stock_is_drawn_as_the_protocol_says() -> None:
    # docs/protocol.md, "Replaying a deal": the pile bottom to top without its top card,
    # shuffled by random.Random(seed * 131 + n), drawn from the list's end.
    d = build(
        "classic", ["2c 9d", "4s"], pile="3h 8h Kh 5h", stock="", rest="pile", turn=0,
        empty_stock="reshuffle",
    )  # fmt: skip
    discards = list(d.pile[:-1])
    random.Random(d.seed * 131 + 0).shuffle(discards)
    events = play(d, "draw")
    assert events[1]["cards"] == [card_str(discards[-1])]
    assert d.stock == discards[:-1]


@pytest.mark.rule("C16")
def test_c16_match_is_four_deals_lowest_total_wins_dealer_rotates() -> None:
    opts = Options.make("classic", 3)
    m = Match(opts, random.Random(7), dealer=2)
    rng = random.Random(1)
    dealers = []
    while True:
        dealers.append(m.deal.dealer)
        assert m.deal.to_act == (m.deal.dealer + 1) % 3  # the dealer's left opens
        while not m.deal.over:
            events = m.apply(rng.choice(legal_moves(m.deal, m.deal.turn)))
        if m.over:
            break
        assert m.winners == []
        m.next_deal()
    assert m.deal_no == 4 and dealers == [2, 0, 1, 2]
    assert m.totals == [sum(r.points[s] for r in m.results) for s in range(3)]
    assert m.winners == [s for s in range(3) if m.totals[s] == min(m.totals)]
    assert events[-1] == {"event": "match_end", "totals": m.totals, "winners": m.winners}
    assert view(m, 0)["scores"] == m.totals and view(m, 0)["deal_no"] == 4


@pytest.mark.rule("C15")
def test_c15_reshuffle_in_the_middle_of_a_penalty() -> None:
    d = build(
        "classic", ["7h 2c", "9d"], pile="5h", stock="2d", rest="pile", turn=0,
        empty_stock="reshuffle",
    )  # fmt: skip
    play(d, "7h")
    under = len(d.pile) - 1
    events = play(d, "draw")
    assert [(e["event"], e.get("count")) for e in events] == [
        ("draw", 1),
        ("reshuffle", under),
        ("draw", 2),
    ]
    assert len(d.hands[1]) == 4 and d.turn == 0 and d.pile == cards("7h")


@pytest.mark.rule("C15")
def test_c15_reshuffle_with_nothing_under_the_top_card_ends_the_deal() -> None:
    everything_else = " ".join(card_str(c) for c in range(52) if c not in cards("2c 5h"))
    d = build("classic", ["2c", everything_else], pile="5h", stock="", turn=0,
              empty_stock="reshuffle")  # fmt: skip
    events = play(d, "draw")
    assert [e["event"] for e in events] == ["stock_out", "deal_end"]
    assert d.result is not None and d.result.winner == 0


@pytest.mark.rule("C6")
def test_c6_two_decks_no_jack_on_its_twin_and_no_pisti_in_classic() -> None:
    d = build("classic", ["Jd 5h 5h", "3c 4c"], pile="Jd", named="h", turn=0, decks=2)
    assert legal(d) == {"5h", "draw"}
    d = build("classic", ["5h 6h 2c", "3c 4c"], pile="5h", turn=0, decks=2)
    play(d, "5h")
    assert d.turn == 1 and not d.follow
