"""Level `easy`: random among the legal moves, with mild preferences.

It plays a card rather than draw most of the time, so a beginner meets an opponent
that gets rid of cards, but it never plans: suits, 7s and jacks go out at random.
"""

from __future__ import annotations

import random

from .situation import Move, View, action_of, canonical

PLAY_RATHER_THAN_DRAW = 0.85


class EasyPolicy:
    level = "easy"

    def __init__(self, rng: random.Random | None = None) -> None:
        self._rng = rng

    def choose(self, view: View, legal: list[Move], rng: random.Random) -> Move:
        r = self._rng or rng
        if len(legal) == 1:
            return legal[0]
        legal = canonical(legal)
        plays = [m for m in legal if action_of(m).kind == "play"]
        if plays and r.random() < PLAY_RATHER_THAN_DRAW:
            return r.choice(plays)
        return r.choice(legal)
