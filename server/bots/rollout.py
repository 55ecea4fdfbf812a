"""The search's rollout policy: a quick, sensible player for finishing sampled deals.

It reads the sampled deal's hands directly (the sample is the search's own guess, so
nothing hidden is used) and costs a few microseconds a move: answer a 7 with a 7
(C11, K7), else play the card that leaves the most cards of its suit in hand, jacks
last, naming the suit held most (C5, K8); draw only when nothing fits; pass after a
draw that brought nothing (C7, K5).
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from ..rules import Deal
from ..rules.cards import JACK
from .situation import Move, action_of


def rollout_move(deal: Deal, seat: int, moves: Sequence[Move], rng: random.Random) -> Move:
    hand = deal.hands[seat]
    counts = [0, 0, 0, 0]
    for c in hand:
        counts[c // 13] += 1
    best: Move | None = None
    best_score = -1e9
    draw = pas = None
    for m in moves:
        a = action_of(m)
        kind = a.kind
        if kind == "play":
            card = a.card
            if card % 13 == JACK:
                held = counts[a.suit] - (1 if a.suit == card // 13 else 0)
                score = held - 20.0 + rng.random()
            else:
                score = counts[card // 13] + rng.random() * 2.0
            if score > best_score:
                best, best_score = m, score
        elif kind == "draw":
            draw = m
        elif kind == "pass":
            pas = m
        else:
            return moves[int(rng.random() * len(moves))]  # K14: face-down picks
    if best is not None:
        return best
    if pas is not None:
        return pas
    return draw if draw is not None else moves[0]
