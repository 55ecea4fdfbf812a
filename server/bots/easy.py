"""Level `easy`: random among the legal moves, with mild preferences.

Each distinct choice is equally likely: every playable card once (a jack's four suit
choices count as one card), the draw, the pass. The mild preferences: a jack names the
suit the bot holds most of (C5, K8), and a muamele pick (K14) is any position. It
never plans, so a beginner meets an opponent that is beatable but plays by the rules.
"""

from __future__ import annotations

import random

from ..rules.cards import JACK, rank_of, suit_of
from .situation import Move, View, action_of, canonical, situation_of


class EasyPolicy:
    level = "easy"

    def __init__(self, rng: random.Random | None = None) -> None:
        self._rng = rng

    def choose(self, view: View, legal: list[Move], rng: random.Random) -> Move:
        r = self._rng or rng
        if len(legal) == 1:
            return legal[0]
        choices: dict[tuple[str, int, int], list[Move]] = {}
        for m in canonical(legal):
            a = action_of(m)
            choices.setdefault((a.kind, a.card, a.position), []).append(m)
        picked = r.choice(list(choices.values()))
        if len(picked) == 1:
            return picked[0]
        hand = situation_of(view).hand
        held = [0, 0, 0, 0]
        for c in hand:
            if rank_of(c) != JACK:
                held[suit_of(c)] += 1
        return max(picked, key=lambda m: held[action_of(m).suit])
