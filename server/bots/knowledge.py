"""What a seat has learned from the events it saw: which suits each player lacks.

A player who draws instead of following had, at that moment, no card of the suit to
follow (C7, K5: a player may also draw by choice, so this is a strong hint, not a
proof; the sampler relaxes it when it cannot be met). Cards drawn afterwards may be of
any suit, so each later draw raises the cap again by the number of cards drawn.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..rules.cards import JACK, parse_card, parse_suit, rank_of, suit_of


class Knowledge:
    """Per seat, per suit: the most cards of that suit the seat can hold (absent = any)."""

    def __init__(self) -> None:
        self._caps: dict[int, dict[int, int]] = {}
        self._top = -1  # the pile's top and the suit a jack named, as the events told
        self._named = -1

    def reset(self) -> None:
        self._caps.clear()
        self._top = self._named = -1

    def caps(self, seat: int) -> dict[int, int]:
        return self._caps.get(seat, {})

    def void(self, seat: int, suit: int) -> bool:
        return self._caps.get(seat, {}).get(suit, 1) == 0

    def observe(self, events: Sequence[dict[str, Any]]) -> None:
        for ev in events:
            try:
                self._one(ev)
            except (KeyError, TypeError, ValueError):
                continue  # an event shape the bot does not know teaches it nothing

    def _one(self, ev: dict[str, Any]) -> None:
        kind = ev.get("event")
        if kind == "deal_end":
            self.reset()  # what follows belongs to the next deal
        elif kind == "play":
            self._top = parse_card(ev["card"])
            named = ev.get("suit")
            # C2: an opening jack of clubs names nothing; clubs stay asked, its own suit.
            self._named = parse_suit(named) if named is not None else -1
        elif kind == "draw":
            seat = int(ev["seat"])
            self._raise(seat, int(ev["count"]))
            # Only a draw by choice (not a 7 penalty, not an ace's gift, K10) tells
            # that the seat could not follow the suit asked.
            if ev.get("reason") == "draw" and self._top >= 0:
                jack = rank_of(self._top) == JACK and self._named >= 0
                follow = self._named if jack else suit_of(self._top)
                self._caps.setdefault(seat, {})[follow] = 0

    def _raise(self, seat: int, count: int) -> None:
        caps = self._caps.get(seat)
        if caps:
            for s in caps:
                caps[s] += count
