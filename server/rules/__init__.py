"""The rules engine: I/O-free, deterministic under a seeded random.Random.

Everything other parts use is re-exported here; see docs/architecture.md ("Engine API")
and docs/rules.md for the rules themselves.
"""

import sys as _sys
from importlib.machinery import EXTENSION_SUFFIXES as _EXTENSION_SUFFIXES

from .cards import CARD_STR, RANKS, SUITS, card_str, deck, parse_card, parse_suit
from .deal import (
    DEAL_FIELDS,
    Deal,
    Event,
    apply,
    apply_for,
    deal_from_deck,
    legal_moves,
    new_deal,
    replay,
)
from .errors import DealOver, IllegalCard, IllegalMove, NotYourTurn, RuleError
from .events import events_for, events_for_seats
from .match import Match
from .moves import DRAW, PASS, PICK, Move, jack_move, move_from_wire, move_str, move_to_wire
from .options import Options
from .records import DealRecord
from .result import DealResult, by_constructor, hand_points
from .rulesets import CARDIVA, CLASSIC, RULESETS, RuleSet
from .sheet import sheet_rows
from .view import deal_from_view, redeal, unseen_cards, view, views

COMPILED: bool = any(
    (getattr(module, "__file__", None) or "").endswith(tuple(_EXTENSION_SUFFIXES))
    for name, module in list(_sys.modules.items())
    if name.startswith(__name__ + ".")
)
"""Whether the engine runs compiled by mypyc (any of its modules, all imported by now, an
extension module), as a wheel built with PISYEDILI_MYPYC has it (docs/operating.md); the
bench and the server's start-up log say which they measured."""

__all__ = [
    "CARDIVA",
    "CARD_STR",
    "CLASSIC",
    "COMPILED",
    "DEAL_FIELDS",
    "DRAW",
    "PASS",
    "PICK",
    "RANKS",
    "RULESETS",
    "SUITS",
    "Deal",
    "DealOver",
    "DealRecord",
    "DealResult",
    "Event",
    "IllegalCard",
    "IllegalMove",
    "Match",
    "Move",
    "NotYourTurn",
    "Options",
    "RuleError",
    "RuleSet",
    "apply",
    "apply_for",
    "by_constructor",
    "card_str",
    "deal_from_deck",
    "deal_from_view",
    "deck",
    "events_for",
    "events_for_seats",
    "hand_points",
    "jack_move",
    "legal_moves",
    "move_from_wire",
    "move_str",
    "move_to_wire",
    "new_deal",
    "parse_card",
    "parse_suit",
    "redeal",
    "replay",
    "sheet_rows",
    "unseen_cards",
    "view",
    "views",
]
