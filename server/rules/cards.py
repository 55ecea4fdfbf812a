"""Cards as small ints (``suit * 13 + rank``) and their text notation.

Ints keep hands cheap to copy and compare, which the bots' search depends on.
"""

from __future__ import annotations

from typing import Final

SUITS: Final = "cdhs"
"""Suit letters in index order: clubs, diamonds, hearts, spades."""

RANKS: Final = ("2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A")
"""Rank names in index order (rank index 0 is the 2)."""

CLUBS: Final = 0
SEVEN: Final = 5
EIGHT: Final = 6
TEN: Final = 8
JACK: Final = 9
QUEEN: Final = 10
KING: Final = 11
ACE: Final = 12

DECK_SIZE: Final = 52

CARD_STR: Final[tuple[str, ...]] = tuple(RANKS[c % 13] + SUITS[c // 13] for c in range(DECK_SIZE))
"""Notation of every card, indexed by card int."""

_BY_NAME: dict[str, int] = {name.upper(): c for c, name in enumerate(CARD_STR)}
_BY_NAME.update({"T" + SUITS[c // 13].upper(): c for c in range(TEN, DECK_SIZE, 13)})


def suit_of(card: int) -> int:
    return card // 13


def rank_of(card: int) -> int:
    return card % 13


def card_str(card: object) -> str:
    """``7h``, ``10d``, ``Js``; raises ``ValueError`` for anything but a card int."""
    if type(card) is not int or not 0 <= card < DECK_SIZE:
        raise ValueError(f"not a card: {card!r}")
    return CARD_STR[card]


def parse_card(text: object) -> int:
    """Parse ``7h``, ``10D``, ``th``, ``Qs``... (case-insensitive, ``T`` = 10)."""
    if not isinstance(text, str):
        raise ValueError(f"not a card: {text!r}")
    card = _BY_NAME.get(text.strip().upper())
    if card is None:
        raise ValueError(f"not a card: {text!r} (expected rank 2-10/T/J/Q/K/A then suit c/d/h/s)")
    return card


def parse_suit(text: object) -> int:
    """Parse a suit letter ``c d h s`` (case-insensitive)."""
    if not isinstance(text, str) or len(text.strip()) != 1 or text.strip().lower() not in SUITS:
        raise ValueError(f"not a suit: {text!r} (expected one of c, d, h, s)")
    return SUITS.index(text.strip().lower())


def deck(decks: int = 1) -> list[int]:
    """A fresh, ordered pack: every card once per deck (twins with two decks, K1)."""
    return [c for _ in range(decks) for c in range(DECK_SIZE)]
