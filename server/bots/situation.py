"""What a seat's view says, parsed once per decision into plain ints.

A bot is given its seat's view and the legal moves, nothing else (docs/architecture.md,
"Bots"). Moves are opaque engine values; `Action` is their meaning, read through the
engine's own `move_to_wire`, so the bots never depend on the move encoding.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..rules import move_to_wire
from ..rules.cards import parse_card, parse_suit

Move = Any
View = dict[str, Any]


@dataclass(frozen=True, slots=True)
class Action:
    """The meaning of one legal move: `kind` is play, draw, pass or pick."""

    kind: str
    card: int = -1
    suit: int = -1  # the suit a jack names (C5, K8); -1 otherwise
    position: int = -1  # a muamele pick (K14)


_ACTIONS: dict[Any, Action] = {}


def action_of(move: Move) -> Action:
    """Decode a move once; cached, since the search decodes the same few moves often."""
    try:
        return _ACTIONS[move]
    except (KeyError, TypeError):
        pass
    wire = move_to_wire(move)
    kind = str(wire["kind"])
    action = Action(
        kind=kind,
        card=parse_card(wire["card"]) if "card" in wire else -1,
        suit=parse_suit(wire["suit"]) if "suit" in wire else -1,
        position=int(wire.get("position", -1)),
    )
    try:
        _ACTIONS[move] = action
    except TypeError:  # an unhashable move encoding: decode every time
        pass
    return action


def canonical(legal: list[Move]) -> list[Move]:
    """The legal moves in an order of their meaning, not of the engine's listing, which
    follows the hand's order: a decision then depends on the view alone."""
    return sorted(
        legal, key=lambda m: (a := action_of(m)).kind + f"{a.card:03}{a.suit:02}{a.position:04}"
    )


@dataclass(slots=True)
class Situation:
    """The decision-relevant parts of a view (keys in docs/architecture.md), cards as ints."""

    rules: str
    players: int
    seat: int
    hand: list[int]
    hand_counts: list[int]
    top: int  # -1 when the pile is empty
    named_suit: int  # -1 unless a jack named one (C6, K8)
    penalty: int  # cards to draw unless a 7 answers (C11, K7)
    first_round: bool  # an opening turn (C2, K3)
    direction: int  # +1 or -1 (C3, C10)
    stock: int

    @property
    def next_seat(self) -> int:
        return (self.seat + self.direction) % self.players

    def opponents(self) -> list[int]:
        return [s for s in range(self.players) if s != self.seat]


def situation_of(view: View) -> Situation:
    """Parse a seat's view; a spectator's view (no seat) is read as the seat to act's."""
    seat = view["seat"] if view.get("seat") is not None else view["turn"]
    top = view["top"]
    named = view["named_suit"]
    return Situation(
        rules=str(view["rules"]),
        players=int(view["players"]),
        seat=int(seat),
        hand=[parse_card(c) for c in view["hand"] or []],
        hand_counts=[int(n) for n in view["hand_counts"]],
        top=-1 if top is None else parse_card(top),
        named_suit=-1 if named is None else parse_suit(named),
        penalty=int(view["penalty"]),
        first_round=bool(view["first_round"]),
        direction=int(view["direction"]),
        stock=int(view["stock"]),
    )
