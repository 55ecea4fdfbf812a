"""Card arithmetic the bots need, on the documented card ints (docs/architecture.md).

Views and events carry cards in wire notation (`7h`, `10d`, `Jh`) or as ints; the
bots normalise both to ints once, so the hot search loops touch ints only.
"""

from __future__ import annotations

SUIT_LETTERS = "cdhs"
RANK_TEXT = ("2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A")

CLUBS = 0
SEVEN = 5
EIGHT = 6
TEN = 8
JACK = 9
ACE = 12


def rank_of(card: int) -> int:
    return card % 13


def suit_of(card: int) -> int:
    return card // 13


def parse_suit(value: object) -> int | None:
    """A suit from its wire letter or int; None for None."""
    if value is None:
        return None
    if isinstance(value, int):
        if 0 <= value < 4:
            return value
        raise ValueError(f"bad suit {value!r}")
    if isinstance(value, str) and len(value) == 1 and value.lower() in SUIT_LETTERS:
        return SUIT_LETTERS.index(value.lower())
    raise ValueError(f"bad suit {value!r}")


def parse_card(value: object) -> int:
    """A card int from an int or wire notation (`7h`, `10d`, `Th`, `jh`)."""
    if isinstance(value, int) and not isinstance(value, bool):
        if 0 <= value < 52:
            return value
        raise ValueError(f"bad card {value!r}")
    if not isinstance(value, str) or len(value) < 2:
        raise ValueError(f"bad card {value!r}")
    text = value.upper()
    rank_part, suit_part = text[:-1], text[-1].lower()
    if rank_part == "T":
        rank_part = "10"
    if rank_part not in RANK_TEXT or suit_part not in SUIT_LETTERS:
        raise ValueError(f"bad card {value!r}")
    return SUIT_LETTERS.index(suit_part) * 13 + RANK_TEXT.index(rank_part)


def card_text(card: int) -> str:
    return RANK_TEXT[rank_of(card)] + SUIT_LETTERS[suit_of(card)]


def penalty_points(card: int, rules: str) -> int:
    """Hand points of one card: C13 (classic) or K12 (cardiva)."""
    r = rank_of(card)
    if r == JACK:
        return 25
    if r == ACE:
        return 15 if rules == "classic" else 11
    if r == SEVEN and rules == "classic":
        return 20
    if r >= JACK:  # Q, K
        return 10
    return r + 2
