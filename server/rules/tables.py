"""Precomputed play tables: for each situation, the play moves each card allows.

``table[ctx][card]`` is a tuple of moves (empty when the card may not be played), so
that listing legal plays is one lookup per card in hand, with no rule logic on the hot
path.
"""

from __future__ import annotations

from functools import cache
from typing import Final

from .cards import CLUBS, DECK_SIZE, JACK, SEVEN
from .moves import Move, jack_move
from .rulesets import RuleSet

CTX_NAMED: Final = 52
"""``52 + suit``: a jack is on top and named that suit (C6, K8)."""
CTX_OPENING: Final = 56
"""An opening turn: a club must be played (C2, K3)."""
CTX_PENALTY: Final = 57
"""A 7 penalty is pending: only a 7 answers (C11, K7)."""
N_CTX: Final = 58

Table = tuple[tuple[tuple[Move, ...], ...], ...]


def _jack_moves(card: int) -> tuple[Move, ...]:
    return tuple(jack_move(card // 13, s) for s in range(4))


def _plays(rs: RuleSet, ctx: int, card: int) -> tuple[Move, ...]:
    suit, rank = divmod(card, 13)
    if ctx == CTX_PENALTY:
        return (card,) if rank == SEVEN else ()  # C11, K7: a jack may not answer
    if ctx == CTX_OPENING:
        # C2: any club, its effect ignored (a jack of clubs names no suit);
        # K3: a club other than J, 7, 10, A.
        if suit != CLUBS or rank in rs.opening_banned:
            return ()
        return (card,)
    if ctx >= CTX_NAMED:
        if rank == JACK:
            return _jack_moves(card) if rs.jack_on_jack else ()  # K8 / C6
        return (card,) if suit == ctx - CTX_NAMED else ()  # C6, K8
    top_suit, top_rank = divmod(ctx, 13)
    if top_rank == JACK:
        # C2: an opening jack of clubs names no suit; its own suit is followed, and (C6)
        # no jack goes on it, as on a jack that named clubs.
        return _plays(rs, CTX_NAMED + top_suit, card)
    if rank == JACK:
        return _jack_moves(card)  # C5, K8: a jack goes on any non-jack card
    return (card,) if suit == top_suit or rank == top_rank else ()  # C4, K4


@cache
def play_table(rs: RuleSet) -> Table:
    return tuple(tuple(_plays(rs, ctx, card) for card in range(DECK_SIZE)) for ctx in range(N_CTX))
