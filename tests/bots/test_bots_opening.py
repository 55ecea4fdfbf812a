"""The opening's draws (C2, K3) are read as the engine allows them, no more."""

from __future__ import annotations

import random

from bots_kit import fresh

from pisyedili.server.bots.knowledge import OPENING, Knowledge
from pisyedili.server.bots.sampling import sample
from pisyedili.server.bots.situation import situation_of
from pisyedili.server.rules import (
    CARDIVA,
    DRAW,
    Deal,
    apply,
    events_for,
    legal_moves,
    parse_card,
    view,
)
from pisyedili.server.rules.cards import CLUBS, rank_of, suit_of


def _banned_club(c: int) -> bool:
    """K3: the J, 7, 10 and A of clubs may not be played in the opening lap."""
    return suit_of(c) == CLUBS and rank_of(c) in CARDIVA.opening_banned


def _opening_draw_holding(card: str, players: int = 2) -> tuple[Deal, int, list[Knowledge]]:
    """A cardiva deal played through its opening lap (plays when it can, else draws)
    where some seat draws while holding ``card``; that seat and every seat's knowledge."""
    c = parse_card(card)
    for seed in range(5000):
        deal = fresh("cardiva", players, seed)
        know = [Knowledge() for _ in range(players)]
        drawer = -1
        while deal.first_left and not deal.over:
            seat = deal.to_act
            assert seat is not None
            legal = legal_moves(deal, seat)
            if legal == [DRAW] and c in deal.hands[seat] and drawer < 0:
                drawer = seat
            move = min(legal)  # a club if one may open, else the draw
            events = apply(deal, move)
            for s in range(players):
                know[s].observe(events_for(events, s))
        # The drawer still holds the card (it may not open with it), and another seat looks.
        if drawer >= 0 and not deal.over and c in deal.hands[drawer]:
            return deal, drawer, know
    raise AssertionError("no such deal found")


def test_an_opening_draw_in_cardiva_leaves_the_banned_clubs_possible() -> None:
    deal, drawer, know = _opening_draw_holding("7c")
    seat = (drawer + 1) % 2
    k = know[seat]
    assert not k.void(drawer, CLUBS)  # not "no club": the J/7/10/A of clubs may be held
    assert CLUBS not in k.caps(drawer) and OPENING in k.caps(drawer)
    v = view(deal, seat)  # the other seat's view, as its search would sample from
    sit = situation_of(v)
    rng = random.Random(1)
    seen = [c for _ in range(300) for c in sample(v, sit, k, rng).hands[drawer]]
    assert parse_card("7c") in seen  # the seat may still hold the 7 of clubs
    assert any(_banned_club(c) for c in seen)


def test_samples_give_an_opening_drawer_banned_clubs_only() -> None:
    """K3: an opening draw caps the clubs that may open, not the J/7/10/A of clubs."""
    for seed in range(20):
        deal = fresh("cardiva", 2, seed)
        v = view(deal, 0)
        k = Knowledge()
        # Seat 1 draws in its opening turn (top: the opener's club), then plays a club.
        k.observe(
            [
                {"event": "play", "seat": 0, "card": "5c"},
                {"event": "draw", "seat": 1, "count": 1, "reason": "draw"},
            ]
        )
        assert k.caps(1) == {OPENING: 0}
        rng = random.Random(seed)
        seen: list[int] = []
        for _ in range(50):
            hand = sample(v, situation_of(v), k, rng).hands[1]
            seen += hand
            assert all(_banned_club(c) for c in hand if suit_of(c) == CLUBS)
        if any(_banned_club(c) and c not in deal.hands[0] for c in range(52)):
            assert any(_banned_club(c) for c in seen)


def test_the_first_draw_of_a_deal_is_an_opening_draw() -> None:
    # C2, K3: nothing played yet, clubs asked.
    k = Knowledge()
    k.observe([{"event": "draw", "seat": 1, "count": 1, "reason": "draw"}])
    assert k.caps(1) == {OPENING: 0}


def test_classic_opening_draw_means_no_club_at_all() -> None:
    """C2: every club may open, so an OPENING cap keeps every club out of the sample."""
    for seed in range(10):
        deal = fresh("classic", 2, seed)
        v = view(deal, 0)
        k = Knowledge()
        k.observe([{"event": "draw", "seat": 1, "count": 1, "reason": "draw"}])
        rng = random.Random(seed)
        for _ in range(20):
            assert all(suit_of(c) != CLUBS for c in sample(v, situation_of(v), k, rng).hands[1])


def test_a_later_draw_still_marks_the_suit_asked_missing() -> None:
    k = Knowledge()
    k.observe(
        [
            {"event": "play", "seat": 0, "card": "5c"},
            {"event": "play", "seat": 1, "card": "9c"},  # the opening lap is over (2 seats)
            {"event": "play", "seat": 0, "card": "9h"},
            {"event": "draw", "seat": 1, "count": 1, "reason": "draw"},  # K5: no heart
        ]
    )
    assert k.void(1, 2) and k.caps(1) == {2: 0}
    k.observe(
        [
            {"event": "play", "seat": 1, "card": "Qh"},
            {"event": "play", "seat": 0, "card": "Qc"},
            {"event": "draw", "seat": 1, "count": 1, "reason": "draw"},  # later: no club
        ]
    )
    assert k.void(1, CLUBS)


def test_an_engine_opening_then_a_later_draw() -> None:
    """Through the engine: after the lap, a draw by choice is a void in the suit asked."""
    deal, drawer, know = _opening_draw_holding("7c")
    seat = (drawer + 1) % 2
    rng = random.Random(0)
    while not deal.over:
        s = deal.to_act
        assert s is not None
        legal = legal_moves(deal, s)
        top, named = deal.pile[-1], deal.named
        move = DRAW if s == drawer and DRAW in legal else rng.choice(legal)
        events = apply(deal, move)
        for o in range(2):
            know[o].observe(events_for(events, o))
        if s == drawer and move == DRAW and events[0].get("reason") == "draw" and not deal.penalty:
            asked = named if named >= 0 else suit_of(top)
            assert know[seat].void(drawer, asked)
            return
    raise AssertionError("the drawer never drew by choice after the lap")
