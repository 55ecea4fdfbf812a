"""A quiet deal (`Deal.quiet`, what a search simulates) plays the same rules, silently."""

from __future__ import annotations

import random

import pytest

from pisyedili.server.rules import (
    DRAW,
    PASS,
    Options,
    RuleError,
    apply,
    legal_moves,
    new_deal,
    view,
)


@pytest.mark.parametrize("rules", ["classic", "cardiva"])
@pytest.mark.parametrize("players", [2, 3, 4])
def test_a_quiet_deal_plays_like_a_loud_one_and_says_nothing(rules: str, players: int) -> None:
    rng = random.Random(f"quiet:{rules}:{players}")
    options = Options.make(rules, players)
    kinds: set[str] = set()
    for _ in range(60):
        loud = new_deal(options, rng.randrange(players), rng)
        quiet = loud.copy()
        quiet.quiet = True
        while not loud.over:
            seat = loud.to_act
            assert seat is not None and quiet.to_act == seat
            legal = legal_moves(loud, seat)
            assert legal_moves(quiet, seat) == legal
            wrong = rng.choice([DRAW, PASS, *range(52)])
            if wrong not in legal:  # a refusal is the same refusal, and leaves no trace
                errors = []
                for d in (loud, quiet):
                    with pytest.raises(RuleError) as info:
                        apply(d, wrong)
                    errors.append((type(info.value), str(info.value)))
                assert errors[0] == errors[1]
            move = rng.choice(legal)
            events = apply(loud, move)
            assert events
            kinds.update(ev["event"] for ev in events)
            assert apply(quiet, move) == []
            assert view(quiet, None) == view(loud, None)
            assert quiet.hands == loud.hands and quiet.stock == loud.stock
        assert quiet.over and quiet.result == loud.result
    assert {"play", "draw", "deal_end"} <= kinds
