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

_PLAY, _JACK, _DRAW, _PASS, _PICK = range(5)

_Info = tuple[int, int, int]
_INFO: dict[Move, _Info] = {}
"""Per move: its kind, the suit of its card and the suit a jack names (-1 if none),
decoded once: a rollout looks at every legal move of every step."""


def _info(move: Move) -> _Info:
    a = action_of(move)
    if a.kind == "play":
        kind = _JACK if a.card % 13 == JACK else _PLAY
        info = (kind, a.card // 13, a.suit)
    else:
        info = ({"draw": _DRAW, "pass": _PASS}.get(a.kind, _PICK), -1, -1)
    try:
        _INFO[move] = info
    except TypeError:  # an unhashable move encoding: decode every time
        pass
    return info


def rollout_move(deal: Deal, seat: int, moves: Sequence[Move], rng: random.Random) -> Move:
    if len(moves) == 1:
        return moves[0]  # often: a draw with nothing to play, or a forced pass
    counts = [0, 0, 0, 0]
    for c in deal.hands[seat]:
        counts[c // 13] += 1
    rand = rng.random
    get = _INFO.get
    best: Move | None = None
    best_score = -1e9
    draw = pas = None
    for m in moves:
        kind, suit, named = get(m) or _info(m)
        if kind == _PLAY:
            score = counts[suit] + rand() * 2.0
        elif kind == _JACK:
            score = counts[named] - (suit == named) - 20.0 + rand()
        elif kind == _DRAW:
            draw = m
            continue
        elif kind == _PASS:
            pas = m
            continue
        else:
            return moves[int(rand() * len(moves))]  # K14: face-down picks
        if score > best_score:
            best, best_score = m, score
    if best is not None:
        return best
    if pas is not None:
        return pas
    return draw if draw is not None else moves[0]
