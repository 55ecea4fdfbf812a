"""The engine's fast representations agree with the rules they stand for.

The hot path deals by slices, shuffles by sorting on random keys, lists plays as a set
intersection and keeps ``to_act``/``over`` as plain attributes; each is checked here
against a plain statement of what it replaces.
"""

from __future__ import annotations

import random
from collections import Counter

import pytest
from rules_kit import random_deal

from pisyedili.server.rules import (
    DRAW,
    Deal,
    Options,
    apply,
    deal_from_deck,
    deck,
    legal_moves,
    new_deal,
    parse_card,
)
from pisyedili.server.rules.cards import ACE
from pisyedili.server.rules.deal import OVER
from pisyedili.server.rules.tables import CTX_NAMED, CTX_OPENING, CTX_PENALTY, play_table

COMBOS = [("classic", p) for p in range(2, 7)] + [("cardiva", p) for p in range(2, 5)]


@pytest.mark.rule("C1")
@pytest.mark.rule("K2")
@pytest.mark.parametrize(("rules", "players"), COMBOS)
def test_cards_are_dealt_one_at_a_time_from_the_dealers_left(rules: str, players: int) -> None:
    opts = Options.make(rules, players)
    order = deck(opts.decks)
    random.Random(players).shuffle(order)
    for dealer in range(players):
        d = deal_from_deck(opts, dealer, order)
        expected: list[list[int]] = [[] for _ in range(players)]
        for i in range(7 * players):
            expected[(dealer + 1 + i) % players].append(order[i])
        assert d.hands == expected
        assert d.stock[-1] == order[7 * players]  # the next card drawn
        assert d.stock[::-1] == order[7 * players :]


def test_new_deal_shuffles_uniformly_and_reproducibly() -> None:
    opts = Options.make("cardiva", 4)  # two decks: 104 cards
    rng = random.Random(5)
    deals = 2_600
    first_cards: Counter[int] = Counter()
    for i in range(deals):
        d = new_deal(opts, i % 4, rng)
        assert sorted(d.deck) == sorted(deck(2))
        first_cards[d.deck[0]] += 1
    # Each of the 52 faces opens the pack with odds 2/104: 50 times expected. A chi-square
    # over 51 degrees of freedom stays under 90 unless the shuffle is biased (p < 0.001).
    expected = deals / 52
    chi2 = sum((first_cards[c] - expected) ** 2 / expected for c in range(52))
    assert chi2 < 90
    again = [new_deal(opts, 0, random.Random(9)).deck for _ in range(2)]
    assert again[0] == again[1]


def _context(d: Deal) -> int:
    if d.penalty:
        return CTX_PENALTY
    if d.first_left:
        return CTX_OPENING
    if d.named >= 0:
        return CTX_NAMED + d.named
    return d.pile[-1]


@pytest.mark.rule("K10")
@pytest.mark.rule("K11")
@pytest.mark.parametrize(("rules", "players"), COMBOS)
def test_legal_plays_are_the_tables_plays_of_the_hand(rules: str, players: int) -> None:
    """Plays come from the move table, once each (twins, K1), never an ace as last card,
    and only the card drawn after a follow-up draw (K10, K11)."""
    table = play_table(Options.make(rules, players).ruleset)
    for seed in range(40):
        rng = random.Random(seed)
        d = random_deal(rules, players, seed)
        drawn: int | None = None
        while not d.over:
            seat = d.turn
            legal = legal_moves(d, seat)
            if not d.phase:
                hand = d.hands[seat] if drawn is None else [drawn]
                plays = {m for c in hand for m in table[_context(d)][c]}
                if rules == "cardiva" and len(d.hands[seat]) == 1 and hand[0] % 13 == ACE:
                    plays = set()
                assert sorted(m for m in legal if m < DRAW) == sorted(plays)
            move = rng.choice(legal)
            owed = d.follow
            events = apply(d, move)
            drawn = None
            if owed and move == DRAW and d.turn == seat:
                drawn = parse_card(events[-1]["cards"][-1])


@pytest.mark.parametrize(("rules", "players"), COMBOS)
def test_to_act_and_over_follow_turn_and_phase(rules: str, players: int) -> None:
    for seed in range(20):
        rng = random.Random(seed)
        d = random_deal(rules, players, seed)
        while True:
            for state in (d, d.copy()):
                assert state.over == (state.phase == OVER)
                assert state.to_act == (None if state.over else state.turn)
            if d.over:
                break
            apply(d, rng.choice(legal_moves(d, d.turn)))
        assert [legal_moves(d, s) for s in range(-1, players)] == [[]] * (players + 1)
