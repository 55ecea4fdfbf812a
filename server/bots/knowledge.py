"""What a seat has learned from the events it saw: which suits each player lacks.

A player who draws instead of following had, at that moment, no card of the suit to
follow (C7, K5: a player may also draw by choice, so this is a strong hint, not a
proof; the sampler relaxes it when it cannot be met). Cards drawn afterwards may be of
any suit, so each later draw raises the cap again by the number of cards drawn.

The opening is different (C2, K3): there a draw is forced, allowed only to a player
holding no club it may open with, so it tells exactly that: no club that may open.
Under C2 that is every club; under K3 the J, 7, 10 and A of clubs may not be played in
the opening lap, so a player who draws there may still hold them. Such a draw caps
`OPENING`, the clubs that may open under the rule set (`opening_cards`), not the suit.
A draw is an opening draw when no card has been played yet this deal (C2 and K3), or
when the drawing seat has not played yet this deal and clubs are asked (K3's lap; under
C2 that is the seat after the opener, asked clubs, whose opening cards are all clubs,
so the cap means the same as a club void there).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..rules.cards import CLUBS, DECK_SIZE, JACK, parse_card, parse_suit, rank_of, suit_of

OPENING = 4
"""A cap key beside the suits 0..3: the clubs that may open (`opening_cards`)."""


def opening_cards(banned: frozenset[int]) -> frozenset[int]:
    """The cards an `OPENING` cap counts: the clubs whose rank ``banned`` does not bar
    from the opening (the rule set's ``opening_banned``: none under C2, J/7/10/A under K3)."""
    return frozenset(
        c for c in range(DECK_SIZE) if suit_of(c) == CLUBS and rank_of(c) not in banned
    )


class Knowledge:
    """Per seat, per suit (or `OPENING`): the most such cards the seat can hold
    (absent = any)."""

    def __init__(self) -> None:
        self._caps: dict[int, dict[int, int]] = {}
        self._top = -1  # the pile's top and the suit a jack named, as the events told
        self._named = -1
        self._played: set[int] = set()  # the seats seen playing this deal

    def reset(self) -> None:
        self._caps.clear()
        self._top = self._named = -1
        self._played.clear()

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
            self._played.add(int(ev["seat"]))
        elif kind == "draw":
            seat = int(ev["seat"])
            self._raise(seat, int(ev["count"]))
            # Only a draw by choice (not a 7 penalty, not an ace's gift, K10) tells
            # that the seat could not follow the suit asked.
            if ev.get("reason") != "draw":
                return
            if self._top < 0:
                # C2, K3: the first turn of the deal; nothing played, clubs asked.
                self._caps.setdefault(seat, {})[OPENING] = 0
                return
            jack = rank_of(self._top) == JACK and self._named >= 0
            follow = self._named if jack else suit_of(self._top)
            if follow == CLUBS and seat not in self._played:
                # K3: this seat's opening turn (C2: an ordinary draw on clubs, where
                # every club may be played, so the cap is a club void as before).
                self._caps.setdefault(seat, {})[OPENING] = 0
            else:
                self._caps.setdefault(seat, {})[follow] = 0

    def _raise(self, seat: int, count: int) -> None:
        caps = self._caps.get(seat)
        if caps:
            for s in caps:
                caps[s] += count
