"""A compact, replayable record of a deal: options, dealer, deck order, seed, moves."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .cards import CARD_STR, parse_card
from .moves import Move, move_from_wire, move_to_wire
from .options import Options


@dataclass(frozen=True)
class DealRecord:
    options: Options
    dealer: int
    deck: tuple[int, ...]
    """The deck in the order cards leave it: dealt round from the dealer's left, then
    the stock from its top."""
    seed: int
    """Seeds the reshuffles of the discards (``empty_stock: reshuffle``, K14 spreads)."""
    moves: tuple[Move, ...]

    def to_wire(self) -> dict[str, Any]:
        return {
            "options": self.options.to_wire(),
            "dealer": self.dealer,
            "deck": " ".join(CARD_STR[c] for c in self.deck),
            "seed": self.seed,
            "moves": [move_to_wire(m) for m in self.moves],
        }

    @classmethod
    def from_wire(cls, data: object) -> DealRecord:
        if not isinstance(data, dict):
            raise ValueError("a record must be a map")
        options = Options.from_wire(data.get("options"))
        dealer, seed, deck, moves = (data.get(k) for k in ("dealer", "seed", "deck", "moves"))
        if type(dealer) is not int or not 0 <= dealer < options.players:
            raise ValueError("record dealer must be a seat number")
        if type(seed) is not int:
            raise ValueError("record seed must be an integer")
        if not isinstance(deck, str) or not isinstance(moves, list):
            raise ValueError("record deck must be a string and moves a list")
        cards = tuple(parse_card(t) for t in deck.split())
        if sorted(cards) != sorted(list(range(52)) * options.decks):
            raise ValueError("record deck is not a full pack")
        return cls(options, dealer, cards, seed, tuple(move_from_wire(m) for m in moves))
