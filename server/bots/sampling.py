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
from .knowledge import OPENING, Knowledge, opening_cards
from .situation import Situation, View


@dataclass(slots=True)
class Sample:
    """One guess at the hidden cards: every seat's hand (own hand included) and the stock,
    next card to draw first (as `deal_from_view` takes them)."""

    hands: list[list[int]]
    stock: list[int]


class Sampler:
    """Samples for one decision: what the view and the knowledge say is read once here,
    since the search draws a sample on every one of its thousands of iterations."""

    __slots__ = ("_caps", "_counts", "_hand", "_opens", "_order", "_players", "_pool", "_seat")

    def __init__(self, view: View, sit: Situation, knowledge: Knowledge | None) -> None:
        self._pool = unseen_cards(view)
        others = [s for s in range(sit.players) if s != sit.seat]
        caps = {s: dict(knowledge.caps(s)) if knowledge is not None else {} for s in others}
        # Seats are served most-constrained first.
        self._order = sorted(others, key=lambda s: 0 if caps[s] else 1)
        self._caps = caps
        self._counts = list(sit.hand_counts)
        self._counts.append(sit.stock)
        self._hand = list(sit.hand)
        self._players = sit.players
        self._seat = sit.seat
        rs = RULESETS.get(sit.rules)
        self._opens = opening_cards(rs.opening_banned if rs is not None else frozenset())

    def draw(self, rng: random.Random) -> Sample:
        """Deal the unseen cards to the other seats and the stock at random.

        A seat takes, in shuffled order, the cards its caps (suits, `OPENING`) allow. If
        the caps cannot be met (an inference was wrong: a player may draw while holding
        a playable card, C7/K5), the seat is completed with any cards."""
        rand = rng.random
        # Sorting by independent random keys is a uniform shuffle, cheaper than
        # rng.shuffle's pure-Python loop (as the engine's new_deal shuffles).
        pool = sorted(self._pool, key=lambda _: rand())
        counts = self._counts
        hands: list[list[int]] = [[] for _ in range(self._players)]
        hands[self._seat] = self._hand[:]
        for s in self._order:
            want = counts[s]
            cap = self._caps[s]
            if cap:
                hands[s], pool = self._capped(pool, want, cap)
            else:
                hands[s] = pool[:want]
                pool = pool[want:]
        return Sample(hands=hands, stock=pool[: counts[-1]])

    def _capped(
        self, pool: list[int], want: int, cap: dict[int, int]
    ) -> tuple[list[int], list[int]]:
        room = dict(cap)
        opens = self._opens
        taken: list[int] = []
        rest: list[int] = []
        for c in pool:
            suit = c // 13
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
        return taken, rest


def sample(view: View, sit: Situation, knowledge: Knowledge | None, rng: random.Random) -> Sample:
    """One sample (see `Sampler.draw`); a search drawing many keeps a `Sampler`."""
    return Sampler(view, sit, knowledge).draw(rng)
