"""Determinizations: complete deals sampled consistently with one seat's knowledge.

What the seat knows: its own hand, every card played (the pile, visible to all), the
others' hand sizes, the stock's size, and the suits each other seat could not follow
(`Knowledge`), or the clubs it could not open with (C2, K3). Every other card is
somewhere in the others' hands or the stock; a sample deals those unseen cards out,
honouring the caps where it can.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from ..rules import RULESETS, unseen_cards
from ..rules.cards import suit_of
from .knowledge import OPENING, Knowledge, opening_cards
from .situation import Situation, View


@dataclass(slots=True)
class Sample:
    """One guess at the hidden cards: every seat's hand (own hand included) and the stock,
    next card to draw first (as `deal_from_view` takes them)."""

    hands: list[list[int]]
    stock: list[int]


def sample(view: View, sit: Situation, knowledge: Knowledge | None, rng: random.Random) -> Sample:
    """Deal the unseen cards to the other seats and the stock at random.

    Seats are served most-constrained first; a seat takes, in shuffled order, the cards
    its caps (suits, `OPENING`) allow. If the caps cannot be met (an inference was wrong:
    a player may draw while holding a playable card, C7/K5), the seat is completed with any cards.
    """
    pool = unseen_cards(view)
    rng.shuffle(pool)
    others = [s for s in range(sit.players) if s != sit.seat]
    caps = {s: knowledge.caps(s) if knowledge is not None else None for s in others}
    order = sorted(others, key=lambda s: 0 if caps[s] else 1)
    hands: list[list[int]] = [[] for _ in range(sit.players)]
    hands[sit.seat] = list(sit.hand)
    rs = RULESETS.get(sit.rules)
    opens = opening_cards(rs.opening_banned if rs is not None else frozenset())
    for s in order:
        want = sit.hand_counts[s]
        cap = caps[s]
        if cap:
            room = dict(cap)
            taken: list[int] = []
            rest: list[int] = []
            for c in pool:
                suit = suit_of(c)
                # An OPENING cap counts only the clubs that may open (C2: all; K3: not
                # J/7/10/A); with the rule set unknown, every club, as a club cap would.
                opening = OPENING in room and c in opens
                if (
                    len(taken) < want
                    and room.get(suit, want) > 0
                    and (not opening or room[OPENING] > 0)
                ):
                    taken.append(c)
                    if suit in room:
                        room[suit] -= 1
                    if opening:
                        room[OPENING] -= 1
                else:
                    rest.append(c)
            if len(taken) < want:
                short = want - len(taken)
                taken += rest[:short]
                rest = rest[short:]
            hands[s] = taken
            pool = rest
        else:
            hands[s] = pool[:want]
            pool = pool[want:]
    return Sample(hands=hands, stock=pool[: sit.stock])
