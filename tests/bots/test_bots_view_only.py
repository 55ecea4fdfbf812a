"""A bot decides from its seat's view only, and the same seed gives the same decisions."""

from __future__ import annotations

import random

import pytest
from bots_kit import fresh, play, rules_kit

from pisyedili.server.bots import make_policy
from pisyedili.server.rules import (
    Deal,
    apply,
    deal_from_view,
    legal_moves,
    view,
)


def advance(deal: Deal, plies: int, seed: int) -> Deal:
    rng = random.Random(seed)
    for _ in range(plies):
        if deal.over:
            break
        seat = deal.to_act
        assert seat is not None
        moves = legal_moves(deal, seat)
        apply(deal, rng.choice(moves))
    return deal


def reshuffled_twin(deal: Deal, seat: int, seed: int) -> Deal:
    """The same public state and the same hand for `seat`, other hidden cards moved."""
    v = view(deal, seat)
    return deal_from_view(v, *rules_kit().hidden_dealt(v, seat, random.Random(seed)))


@pytest.mark.parametrize("rules", ["classic", "cardiva"])
@pytest.mark.parametrize("level", ["easy", "medium", "hard"])
def test_hidden_cards_do_not_change_the_decision(level: str, rules: str) -> None:
    checked = 0
    for k in range(40):
        deal = advance(fresh(rules, 2, 100 + k), plies=6 + k % 7, seed=k)
        if deal.over:
            continue
        seat = deal.to_act
        assert seat is not None
        twin = reshuffled_twin(deal, seat, seed=k)
        assert twin.hands != deal.hands or twin.stock != deal.stock or not twin.stock
        assert view(twin, seat) == view(deal, seat)
        moves = [
            make_policy(level, seed=7, iterations=40).choose(
                view(d, seat), legal_moves(d, seat), random.Random(1)
            )
            for d in (deal, twin)
        ]
        assert moves[0] == moves[1]
        checked += 1
    assert checked >= 30


@pytest.mark.parametrize("rules", ["classic", "cardiva"])
def test_same_seed_same_game_with_an_iteration_budget(rules: str) -> None:
    def game() -> list[int]:
        moves: list[int] = []
        policies = [make_policy("hard", seed=3, iterations=30), make_policy("medium", seed=4)]
        play(
            fresh(rules, 2, 55), policies, random.Random(0), lambda d, s, v, lg, m: moves.append(m)
        )
        return moves

    first = game()
    assert len(first) > 10
    assert game() == first


def test_the_seed_changes_the_search() -> None:
    """The seed is really used: different seeds explore differently somewhere."""
    deal = fresh("classic", 2, 9)
    for ply in range(40):
        if deal.to_act is not None and len(legal_moves(deal, deal.to_act)) >= 3:
            break
        deal = advance(deal, plies=1, seed=ply)
    seat = deal.to_act
    assert seat is not None
    v, legal = view(deal, seat), legal_moves(deal, seat)
    picks = {make_policy("easy", seed=s).choose(v, legal, random.Random(0)) for s in range(30)}
    assert len(picks) > 1
