"""Cards, hands and moves as drawn on screen: suits as symbols or letters, the hand
numbered as the player types it, the legal moves in the words that play them."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from .. import cards
from ..i18n import N_, _, number
from ..parse import is_pick_phase, move_input
from .text import Dict, Fragments, Look, flow, one_line

SUIT_NAMES = {"c": N_("clubs"), "d": N_("diamonds"), "h": N_("hearts"), "s": N_("spades")}
"""A suit's name, where a terminal without Unicode cannot draw its symbol."""
MOVE_WORDS = {"draw": N_("draw"), "pass": N_("pass")}
"""A move without a card, as the screen says it (the player may type it so, too)."""


def suit_name(suit: str) -> str:
    """A suit's name in the current language (`h` -> "hearts")."""
    return _(SUIT_NAMES[suit]) if suit in SUIT_NAMES else suit


def card_text(card: object, look: Look) -> str:
    c = cards.normalise(card)
    if look.unicode and c[-1:] in cards.SUIT_SYMBOLS:
        return c[:-1] + cards.SUIT_SYMBOLS[c[-1]]
    return c


def suit_text(suit: object, look: Look) -> str:
    s = str(suit)
    if look.unicode:
        return cards.SUIT_SYMBOLS.get(s, s)
    return suit_name(s)


def _suit_class(suit_letter: str) -> str:
    return "class:suit-red" if suit_letter in cards.RED_SUITS else "class:suit-black"


def card(card: object, look: Look) -> Fragments:
    c = cards.normalise(card)
    return [(_suit_class(c[-1:]), card_text(c, look))]


def suit(s: object, look: Look) -> Fragments:
    return [(_suit_class(str(s)), suit_text(s, look))]


def card_list(items: Iterable[object], look: Look, sep: str = " ") -> Fragments:
    out: Fragments = []
    for i, c in enumerate(items):
        if i:
            out.append(("", sep))
        out += card(c, look)
    return out


def hand_items(hand_cards: Sequence[str], look: Look,
               legal: Sequence[Dict] = ()) -> list[Fragments]:
    """Each card of the hand beside the number the player types for it; legal ones lit."""
    playable = {cards.normalise(m.get("card")) for m in legal if m.get("kind") == "play"}
    items: list[Fragments] = []
    for i, c in enumerate(hand_cards, 1):
        frag = card(c, look)
        if c in playable:
            frag = [(style + " underline", text) for style, text in frag]
        items.append([("class:dim", f"{number(i)}:"), *frag])
    return items


def hand(hand_cards: Sequence[str], look: Look, legal: Sequence[Dict] = ()) -> Fragments:
    """The hand in display order on one line, numbered from 1 as the player types it."""
    return one_line(hand_items(hand_cards, look, legal)) or [("class:dim", _("(no cards)"))]


def hand_lines(hand_cards: Sequence[str], look: Look, legal: Sequence[Dict],
               width: int) -> list[Fragments]:
    """The hand on as many rows as `width` needs: every card held is on screen."""
    items = hand_items(hand_cards, look, legal)
    if not items:
        return [[("", _("hand ")), ("class:dim", _("(no cards)"))]]
    return flow([("", _("hand "))], items, width)


def move(m: Dict, look: Look) -> Fragments:
    """A wire move as a person reads it: `J♠→♥`, `draw`, `pick 3`."""
    kind = m.get("kind")
    if kind == "play":
        out = card(m.get("card"), look)
        if m.get("suit"):
            out += [("", "→" if look.unicode else ">"), *suit(m["suit"], look)]
        return out
    if kind == "pick":
        return [("", _("pick {position}", position=int(m.get("position", 0)) + 1))]
    return [("", _(MOVE_WORDS[kind]) if kind in MOVE_WORDS else str(kind))]


def legal_items(legal: Sequence[Dict], look: Look,
                hand_cards: Sequence[str] = ()) -> list[Fragments]:
    """The moves the server allows, in the words the player would type them: cards in
    hand order, each with its hand number, then draw or pass."""
    if is_pick_phase(legal):
        first = min(int(m.get("position", 0)) for m in legal) + 1
        last = max(int(m.get("position", 0)) for m in legal) + 1
        return [[("", _("pick a face-down card: type a number {first}-{last}", first=first,
                         last=last))]]
    plays: list[tuple[int, Fragments]] = []
    others: list[Fragments] = []
    seen: set[str] = set()
    for m in legal:
        # A jack offered once per suit reads better as one "J♠+suit" entry.
        key = move_input({**m, "suit": None}) if m.get("kind") == "play" else move_input(m)
        if key in seen:
            continue
        seen.add(key)
        if m.get("kind") != "play":
            others.append(move(m, look))
            continue
        c = cards.normalise(m.get("card"))
        item = card(c, look)
        if m.get("suit"):
            item.append(("class:dim", _("+suit")))
        place = hand_cards.index(c) if c in hand_cards else len(hand_cards)
        if c in hand_cards:
            item = [("class:dim", f"{number(place + 1)}:"), *item]
        plays.append((place, item))
    return [item for _, item in sorted(plays, key=lambda p: p[0])] + others


def legal_hint(legal: Sequence[Dict], look: Look, hand_cards: Sequence[str] = ()) -> Fragments:
    """`legal_items` on one line."""
    return one_line(legal_items(legal, look, hand_cards))
