"""The rules engine: I/O-free, deterministic under a seeded random.Random.

Everything other parts use is re-exported here; see docs/architecture.md ("Engine API")
and docs/rules.md for the rules themselves.
"""

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
from .events import events_for
from .match import Match
from .moves import DRAW, PASS, PICK, Move, jack_move, move_from_wire, move_str, move_to_wire
from .options import Options
from .records import DealRecord
from .result import DealResult, hand_points
from .rulesets import CARDIVA, CLASSIC, RULESETS, RuleSet
from .view import deal_from_view, redeal, unseen_cards, view

__all__ = [
    "CARDIVA",
    "CARD_STR",
    "CLASSIC",
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
    "card_str",
    "deal_from_deck",
    "deal_from_view",
    "deck",
    "events_for",
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
    "unseen_cards",
    "view",
]
