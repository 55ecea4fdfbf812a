"""The rule sets as plain data: each flag names the rule it encodes.

The deal state machine reads only these flags, so a third house rule set is a new
``RuleSet`` value, not a copy of the engine.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from .cards import ACE, DECK_SIZE, JACK, SEVEN, TEN


@dataclass(frozen=True)
class RuleSet:
    name: str
    min_players: int
    max_players: int
    values: tuple[int, ...]
    """Penalty points per rank index, 2..A (C13, K12)."""
    two_decks_from: int
    """Default ``decks`` is 2 from this many players on (K1); 0 = always one deck."""
    default_ten: str
    """``reverse`` (C10) or ``bounce`` (K9)."""
    default_match_end: str
    """``deals:4`` (C16) or ``points:101`` (K15)."""
    opening_lap: bool
    """Every player's first turn is an opening turn (K3), not only the first player's (C2)."""
    opening_banned: frozenset[int]
    """Ranks that may not open (K3: J, 7, 10, A)."""
    jack_on_jack: bool
    """A jack may be played on a jack (K8) or not (C6)."""
    eight_skips: bool
    """An 8 skips the next player (C9)."""
    penalty_ends_turn: bool
    """Taking the 7 penalty ends the turn (C11) or the taker plays on (K7)."""
    draw_limit: int
    """Draws allowed per turn: 0 = as many as wanted (C7), 1 = one (K5)."""
    ace_follow_mandatory: bool
    """The ace's follow-up card is compulsory (K10) or optional (C12)."""
    ace_others_draw: bool
    """Every other player draws 1 when an ace is played (K10)."""
    ace_not_last: bool
    """An ace may not be the last card (K10)."""
    pisti: bool
    """Playing an ordinary card on its twin forces another card (K11)."""
    muamele: bool
    """Sevens left in hand cost picks of face-down cards (K14)."""
    stock_out_has_winner: bool
    """When the stock runs out the lowest hand wins (C15) or nobody does (K6)."""
    cites: Mapping[str, str] = field(compare=False, default_factory=dict)
    """Rule number per topic, for refusals: ``opening``, ``match``, ``jack``, ``jack_top``,
    ``draw``, ``penalty``, ``ace``, ``pisti``, ``muamele``, ``turn``."""
    card_values: tuple[int, ...] = field(init=False, repr=False, compare=False)
    """``values`` per card int, so scoring a hand is one lookup per card."""

    def __post_init__(self) -> None:
        values = tuple(self.values[c % 13] for c in range(DECK_SIZE))
        object.__setattr__(self, "card_values", values)  # frozen: set once, derived

    def cite(self, topic: str) -> str | None:
        return self.cites.get(topic)

    def default_decks(self, players: int) -> int:
        return 2 if self.two_decks_from and players >= self.two_decks_from else 1


# C13: J 25, 7 20, A 15, K 10, Q 10, 2-10 face value.
_CLASSIC_VALUES = (2, 3, 4, 5, 6, 20, 8, 9, 10, 25, 10, 10, 15)
# K12: 2-10 face value, Q and K 10, A 11, J 25.
_CARDIVA_VALUES = (2, 3, 4, 5, 6, 7, 8, 9, 10, 25, 10, 10, 11)

CLASSIC = RuleSet(
    name="classic",
    min_players=2,
    max_players=6,
    values=_CLASSIC_VALUES,
    two_decks_from=0,
    default_ten="reverse",
    default_match_end="deals:4",
    opening_lap=False,
    opening_banned=frozenset(),
    jack_on_jack=False,
    eight_skips=True,
    penalty_ends_turn=True,
    draw_limit=0,
    ace_follow_mandatory=False,
    ace_others_draw=False,
    ace_not_last=False,
    pisti=False,
    muamele=False,
    stock_out_has_winner=True,
    cites={
        "turn": "C3",
        "opening": "C2",
        "match": "C4",
        "jack": "C5",
        "jack_top": "C6",
        "draw": "C7",
        "penalty": "C11",
        "ace": "C12",
    },
)

CARDIVA = RuleSet(
    name="cardiva",
    min_players=2,
    max_players=4,
    values=_CARDIVA_VALUES,
    two_decks_from=3,
    default_ten="bounce",
    default_match_end="points:101",
    opening_lap=True,
    opening_banned=frozenset({JACK, SEVEN, TEN, ACE}),
    jack_on_jack=True,
    eight_skips=False,
    penalty_ends_turn=False,
    draw_limit=1,
    ace_follow_mandatory=True,
    ace_others_draw=True,
    ace_not_last=True,
    pisti=True,
    muamele=True,
    stock_out_has_winner=False,
    cites={
        "opening": "K3",
        "match": "K4",
        "jack": "K8",
        "jack_top": "K8",
        "draw": "K5",
        "penalty": "K7",
        "ace": "K10",
        "pisti": "K11",
        "muamele": "K14",
    },
)

RULESETS: dict[str, RuleSet] = {rs.name: rs for rs in (CLASSIC, CARDIVA)}
