"""Card notation as the client reads and shows it.

The client keeps no rules of its own (the server sends the legal moves), but it must
read what a person types and order a hand the same way on screen and in the parser,
so hand indices typed by the player mean the cards they see.  Wire notation is the
one of docs/architecture.md: rank then suit letter (`7h`, `10d`, `Js`).
"""

from __future__ import annotations

SUITS = "cdhs"
"""Wire suit letters in card-int order: clubs, diamonds, hearts, spades."""

RANKS = ("2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A")

SUIT_NAMES = {"c": "clubs", "d": "diamonds", "h": "hearts", "s": "spades"}
SUIT_SYMBOLS = {"c": "♣", "d": "♦", "h": "♥", "s": "♠"}
RED_SUITS = frozenset("dh")

# Display order alternates colours (♣ ♥ ♠ ♦) so neighbouring suits never blur together.
_DISPLAY_SUIT_ORDER = {"c": 0, "h": 1, "s": 2, "d": 3}

_SUIT_ALIASES: dict[str, str] = {
    **{s: s for s in SUITS},
    **{name: s for s, name in SUIT_NAMES.items()},
    **{name[:-1]: s for s, name in SUIT_NAMES.items()},  # "club", "heart"...
    **{sym: s for s, sym in SUIT_SYMBOLS.items()},
    "♧": "c",
    "♢": "d",
    "♡": "h",
    "♤": "s",
}

_RANK_ALIASES: dict[str, str] = {
    **{r.lower(): r for r in RANKS},
    "t": "10",
    "jack": "J",
    "queen": "Q",
    "king": "K",
    "ace": "A",
}


def parse_suit(text: str) -> str | None:
    """A suit letter from `h`, `hearts`, `♥`...; None if it is not a suit."""
    return _SUIT_ALIASES.get(text.strip().lower())


def parse_rank(text: str) -> str | None:
    """A rank (`2`..`10`, `J`, `Q`, `K`, `A`) from `t`, `jack`, `q`...; None otherwise."""
    return _RANK_ALIASES.get(text.strip().lower())


def parse_card(text: str) -> str | None:
    """Canonical wire notation (`10s`, `Jh`) from forgiving text (`10S`, `ts`, `j♥`)."""
    t = text.strip().lower()
    if any(ch.isspace() for ch in t):
        return None  # "6 h" is hand card 6 naming hearts, not the six of hearts
    for split in (len(t) - 1, len(t) - 2):
        if split < 1:
            continue
        rank, suit = parse_rank(t[:split]), parse_suit(t[split:])
        if rank is not None and suit is not None:
            return rank + suit
    return None


def normalise(card: object) -> str:
    """Wire notation of a card sent as text or as the engine's int (`suit * 13 + rank`)."""
    if isinstance(card, int) and not isinstance(card, bool) and 0 <= card < 52:
        return RANKS[card % 13] + SUITS[card // 13]
    if isinstance(card, str):
        parsed = parse_card(card)
        if parsed is not None:
            return parsed
    return str(card)


def rank_of(card: str) -> str:
    return card[:-1]


def suit_of(card: str) -> str:
    return card[-1]


HAND_ORDERS = ("suit", "rank")
"""How a hand may be ordered on screen (`/sort`, `--sort`)."""


def display_key(card: str) -> tuple[int, int]:
    """Sort key for showing a hand: by suit (alternating colours), then by rank."""
    suit = _DISPLAY_SUIT_ORDER.get(suit_of(card), 9)
    rank = RANKS.index(rank_of(card)) if rank_of(card) in RANKS else 99
    return (suit, rank)


def rank_key(card: str) -> tuple[int, int]:
    """Sort key by rank, then by suit: pairs and sevens sit together."""
    suit, rank = display_key(card)
    return (rank, suit)


def sort_hand(cards: list[object], order: str = "suit") -> list[str]:
    """The hand in display order; index i (1-based on screen) is what the player types.

    The order depends only on the cards held, never on when they came, so a card keeps
    its place relative to the others from one turn to the next."""
    key = rank_key if order == "rank" else display_key
    return sorted((normalise(c) for c in cards), key=key)
