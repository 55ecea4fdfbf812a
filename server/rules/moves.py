"""Moves as small ints, and their wire and text forms.

``0..51``  play that card (a jack this way names no suit: only the classic opening, C2)
``52..67`` play a jack naming a suit: ``52 + jack_suit * 4 + named_suit`` (C5, K8)
``68``     draw, ``69`` pass, ``70 + p`` pick position ``p`` of the muamele spread (K14)

Everyone outside the engine goes through ``move_to_wire`` / ``move_from_wire`` /
``move_str``, so this encoding may change freely.
"""

from __future__ import annotations

from typing import Any, Final

from .cards import CARD_STR, JACK, SUITS, parse_card, parse_suit

Move = int

JACK_BASE: Final = 52
DRAW: Final = 68
PASS: Final = 69
PICK: Final = 70
MAX_PICK_POSITION: Final = 103

MOVE_CARD: Final[tuple[int, ...]] = tuple(range(52)) + tuple(
    (m - JACK_BASE) // 4 * 13 + JACK for m in range(JACK_BASE, DRAW)
)
"""The card a play move puts down, indexed by move (plays only)."""


def jack_move(jack_suit: int, named_suit: int) -> Move:
    return JACK_BASE + jack_suit * 4 + named_suit


def named_suit_of(move: Move) -> int:
    """The suit a jack move names, -1 for a move that names none."""
    return (move - JACK_BASE) % 4 if JACK_BASE <= move < DRAW else -1


def move_to_wire(move: object) -> dict[str, Any]:
    if type(move) is not int:
        raise ValueError(f"not a move: {move!r}")
    if 0 <= move < JACK_BASE:
        return {"kind": "play", "card": CARD_STR[move]}
    if move < DRAW and move >= 0:
        card = CARD_STR[MOVE_CARD[move]]
        return {"kind": "play", "card": card, "suit": SUITS[named_suit_of(move)]}
    if move == DRAW:
        return {"kind": "draw"}
    if move == PASS:
        return {"kind": "pass"}
    if PICK <= move <= PICK + MAX_PICK_POSITION:
        return {"kind": "pick", "position": move - PICK}
    raise ValueError(f"not a move: {move!r}")


def move_from_wire(data: object) -> Move:
    """Parse a wire move map; raises ``ValueError`` naming what is wrong."""
    if not isinstance(data, dict):
        raise ValueError("a move must be a map with a 'kind'")
    kind = data.get("kind")
    if kind == "play":
        text = data.get("card")
        if not isinstance(text, str):
            raise ValueError("a play needs a 'card' such as '7h'")
        card = parse_card(text)
        suit = data.get("suit")
        if suit is None:
            return card
        if card % 13 != JACK:
            raise ValueError("only a jack names a suit")
        return jack_move(card // 13, parse_suit(suit))
    if kind == "draw":
        return DRAW
    if kind == "pass":
        return PASS
    if kind == "pick":
        pos = data.get("position")
        if type(pos) is not int or not 0 <= pos <= MAX_PICK_POSITION:
            raise ValueError(f"pick position must be an integer 0-{MAX_PICK_POSITION}")
        return PICK + pos
    raise ValueError(f"unknown move kind {kind!r} (expected play, draw, pass or pick)")


def move_str(move: Move) -> str:
    """``7h``, ``Jh>s``, ``draw``, ``pass``, ``pick 3``."""
    wire = move_to_wire(move)
    kind = wire["kind"]
    if kind == "play":
        return str(wire["card"]) + (">" + str(wire["suit"]) if "suit" in wire else "")
    if kind == "pick":
        return f"pick {wire['position']}"
    return str(kind)
