"""Determinizations agree with everything the seat has seen, and knowledge is read right."""

from __future__ import annotations

import random
from collections import Counter

import pytest
from bots_kit import fresh
from hypothesis import given, settings
from hypothesis import strategies as st

from pisyedili.server.bots.knowledge import Knowledge
from pisyedili.server.bots.sampling import sample
from pisyedili.server.bots.situation import situation_of
from pisyedili.server.rules import (
    apply,
    deal_from_view,
    deck,
    events_for,
    legal_moves,
    parse_card,
    view,
)


@settings(max_examples=60, deadline=None)
@given(
    rules=st.sampled_from(["classic", "cardiva"]),
    players=st.integers(2, 4),
    seed=st.integers(0, 2**32),
    plies=st.integers(0, 80),
)
def test_samples_are_consistent_with_the_view(
    rules: str, players: int, seed: int, plies: int
) -> None:
    deal = fresh(rules, players, seed)
    rng = random.Random(seed)
    knowledge = [Knowledge() for _ in range(players)]
    for _ in range(plies):
        if deal.over or deal.phase:  # play phase only: muamele has no search
            break
        seat = deal.to_act
        assert seat is not None
        events = apply(deal, rng.choice(legal_moves(deal, seat)))
        for s in range(players):
            knowledge[s].observe(events_for(events, s))
    if deal.over:
        return
    seat = deal.to_act
    assert seat is not None
    v = view(deal, seat)
    sit = situation_of(v)
    guess = sample(v, sit, knowledge[seat], rng)
    assert guess.hands[seat] == sit.hand  # its own hand, as it is
    assert [len(h) for h in guess.hands] == v["hand_counts"]
    assert len(guess.stock) == v["stock"]
    pile = [parse_card(c) for c in v["pile"]]
    everything = Counter(c for h in guess.hands for c in h) + Counter(guess.stock) + Counter(pile)
    assert everything == Counter(deck(v["options"]["decks"]))  # every card exactly once
    # No card seen played (beyond its copies in the pack) sits in a sampled hand.
    copies = v["options"]["decks"]
    for s, h in enumerate(guess.hands):
        for c, k in Counter(h).items():
            assert k + pile.count(c) + (sit.hand.count(c) if s != seat else 0) <= copies
    # The sample is a playable deal with the same public face.
    rebuilt = deal_from_view(
        v, [None if s == seat else h for s, h in enumerate(guess.hands)], guess.stock
    )
    assert view(rebuilt, seat) == v


def test_a_draw_by_choice_marks_the_suit_missing() -> None:
    k = Knowledge()
    k.observe([{"event": "play", "seat": 0, "card": "9h"}])
    k.observe([{"event": "draw", "seat": 1, "count": 1, "reason": "draw"}])  # C7, K5
    assert k.void(1, 2)  # hearts
    assert not k.void(1, 0) and not k.void(0, 2)
    k.observe([{"event": "draw", "seat": 1, "count": 3, "reason": "penalty"}])  # C11
    assert k.caps(1)[2] == 3  # the penalty cards may be hearts
    assert not k.void(1, 2)


def test_a_jack_asks_for_its_named_suit() -> None:
    k = Knowledge()
    k.observe([{"event": "play", "seat": 0, "card": "Jh", "suit": "s"}])  # C6, K8
    k.observe([{"event": "draw", "seat": 1, "count": 1, "reason": "draw"}])
    assert k.void(1, 3) and not k.void(1, 2)


def test_forced_draws_teach_nothing_and_a_new_deal_forgets() -> None:
    k = Knowledge()
    k.observe([{"event": "play", "seat": 0, "card": "7c"}])
    k.observe([{"event": "draw", "seat": 1, "count": 3, "reason": "penalty"}])  # C11, K7
    k.observe([{"event": "draw", "seat": 1, "count": 1, "reason": "ace"}])  # K10
    assert k.caps(1) == {}
    k.observe(
        [
            {"event": "play", "seat": 0, "card": "5d"},
            {"event": "draw", "seat": 1, "count": 1, "reason": "draw"},
        ]
    )
    assert k.void(1, 1)
    k.observe([{"event": "deal_end", "result": {}}])
    assert k.caps(1) == {}


def test_malformed_events_are_ignored() -> None:
    k = Knowledge()
    k.observe([{"event": "play", "card": "zz"}, {"event": "draw", "seat": "x"}, {}])
    assert k.caps(0) == {}


@pytest.mark.parametrize("seed", range(20))
def test_samples_honour_a_known_void(seed: int) -> None:
    deal = fresh("classic", 2, seed)
    v = view(deal, 0)
    k = Knowledge()
    k.observe(
        [
            {"event": "play", "seat": 0, "card": "9h"},
            {"event": "draw", "seat": 1, "count": 1, "reason": "draw"},
        ]
    )
    guess = sample(v, situation_of(v), k, random.Random(seed))
    assert all(c // 13 != 2 for c in guess.hands[1])  # 13 hearts minus ours: plenty left
