"""`redeal`: the search's cheap determinization must equal a checked rebuild."""

from __future__ import annotations

import random

import pytest
from rules_kit import hidden_dealt

from pisyedili.server.rules import (
    Options,
    apply,
    deal_from_view,
    legal_moves,
    new_deal,
    redeal,
    view,
)


@pytest.mark.parametrize("rules", ["classic", "cardiva"])
@pytest.mark.parametrize("players", [2, 4])
def test_redeal_is_deal_from_view_with_other_hidden_cards(rules: str, players: int) -> None:
    rng = random.Random(f"{rules}{players}")
    options = Options.make(rules, players)
    checked = 0
    for _ in range(40):
        deal = new_deal(options, 0, rng)
        for _ in range(rng.randrange(30)):
            if deal.over:
                break
            apply(deal, rng.choice(legal_moves(deal, deal.to_act)))  # type: ignore[arg-type]
        if deal.over:
            continue
        seat = deal.to_act
        assert seat is not None
        v = view(deal, seat)

        template = deal_from_view(v, *hidden_dealt(v, seat, rng))
        before = view(template, None)
        hands, stock = hidden_dealt(v, seat, rng)
        fast = redeal(template, hands, stock)
        slow = deal_from_view(v, hands, stock)
        assert view(fast, None) == view(slow, None)
        assert fast.hands == slow.hands and fast.stock == slow.stock
        assert legal_moves(fast, seat) == legal_moves(slow, seat)
        while not fast.over:  # playing the copy leaves the template as it was
            apply(fast, rng.choice(legal_moves(fast, fast.to_act)))  # type: ignore[arg-type]
        assert view(template, None) == before
        checked += 1
    assert checked > 10
