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


_LOCAL_SUITS: dict[str, str] = {
    # Turkish
    "sinek": "c", "karo": "d", "kupa": "h", "maça": "s", "maca": "s",
    # Russian (the names and their "of" forms: туз пик, семёрка червей)
    "трефы": "c", "трефа": "c", "треф": "c", "крести": "c", "бубны": "d", "бубна": "d",
    "бубен": "d", "буби": "d", "червы": "h", "черви": "h", "червей": "h", "черва": "h",
    "пики": "s", "пика": "s", "пик": "s",
    # Ukrainian
    "трефи": "c", "хрести": "c", "бубни": "d", "бубон": "d", "чирви": "h", "чирва": "h",
    "червів": "h", "чирв": "h", "піки": "s", "піка": "s", "пік": "s", "вино": "s",
    # Persian
    "خاج": "c", "گشنیز": "c", "خشت": "d", "دل": "h", "پیک": "s",
    # Thai
    "ดอกจิก": "c", "จิก": "c", "ข้าวหลามตัด": "d", "หลามตัด": "d", "โพแดง": "h",
    "โพดำ": "s", "โพธิ์แดง": "h", "โพธิ์ดำ": "s",  # as players write them, and the standard spelling
}
"""Suit names in the client's languages, as a player there types them."""

_LOCAL_RANKS: dict[str, str] = {
    # Turkish (bacak, the older name of the jack, too)
    "as": "A", "papaz": "K", "kız": "Q", "kiz": "Q", "vale": "J", "bacak": "J",
    # Russian
    "туз": "A", "король": "K", "дама": "Q", "валет": "J", "десятка": "10",
    "девятка": "9", "восьмёрка": "8", "восьмерка": "8", "семёрка": "7", "семерка": "7",
    "шестёрка": "6", "шестерка": "6", "пятёрка": "5", "пятерка": "5", "четвёрка": "4",
    "четверка": "4", "тройка": "3", "двойка": "2",
    # Ukrainian
    "дев'ятка": "9", "вісімка": "8", "сімка": "7", "шістка": "6", "п'ятірка": "5",
    "четвірка": "4", "трійка": "3", "двійка": "2",
    # Persian
    "آس": "A", "شاه": "K", "بی‌بی": "Q", "بیبی": "Q", "سرباز": "J",
    # Thai
    "เอซ": "A", "เอช": "A", "คิง": "K", "ควีน": "Q", "แจ็ค": "J", "แจ๊ค": "J",
}
"""Rank names in the client's languages (ranks 2-10 are typed as numbers anywhere)."""


def parse_suit(text: str) -> str | None:
    """A suit letter from `h`, `hearts`, `♥`, `kupa`, `черви`...; None if not a suit."""
    t = text.strip().lower()
    return _SUIT_ALIASES.get(t) or _LOCAL_SUITS.get(t)


def parse_rank(text: str) -> str | None:
    """A rank (`2`..`10`, `J`, `Q`, `K`, `A`) from `t`, `jack`, `q`, `vale`, `туз`...;
    None otherwise."""
    t = text.strip().lower()
    return _RANK_ALIASES.get(t) or _LOCAL_RANKS.get(t)


def parse_named_card(text: str) -> str | None:
    """A card named in words of the player's language, rank and suit in either order:
    `kupa 7`, `maça vale`, `туз пик`, `7 червей`. Both are words of a language or a
    number (not letters or English names): `6 h` stays hand card 6 naming hearts, and
    `j kupa` a jack naming hearts, as `j h` is."""
    words = text.strip().lower().split()
    if len(words) != 2:
        return None
    for rank_word, suit_word in (words, words[::-1]):
        suit = _LOCAL_SUITS.get(suit_word)
        rank = _LOCAL_RANKS.get(rank_word) or (rank_word if rank_word in RANKS[:9] else None)
        if suit is not None and rank is not None:
            return rank + suit
    return None


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
