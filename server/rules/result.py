"""The outcome of a deal: points per seat, multiplier, winner, reason."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, fields
from typing import Any

from .cards import CARD_STR, JACK, SEVEN
from .rulesets import RuleSet

REASON_OUT = "out"
"""Someone got rid of all their cards (C13, K12)."""
REASON_STOCK_OUT = "stock_out"
"""A draw found the stock empty (C15, K6)."""


def hand_points(rs: RuleSet, hand: Iterable[int]) -> int:
    """Penalty points of a hand, before any multiplier (C13, K12)."""
    return sum(map(rs.card_values.__getitem__, hand))


def out_multiplier(card: int) -> int:
    """Going out on a 7 triples, on a jack doubles the others' penalties (C14, K13)."""
    rank = card % 13
    return 3 if rank == SEVEN else 2 if rank == JACK else 1


def by_constructor(record: Any) -> tuple[Any, ...]:
    """`__reduce__` of a dataclass a journal snapshot holds: a call of its constructor
    with every field, in order. Compiled by mypyc, a class makes an instance only
    through `__init__`, and a frozen one cannot be unpickled field by field (its
    `__setstate__` assigns, which frozen refuses)."""
    return (type(record), tuple(getattr(record, f.name) for f in fields(record)))


@dataclass(frozen=True)
class DealResult:
    reason: str
    winner: int | None
    multiplier: int
    points: tuple[int, ...]
    hands: tuple[tuple[int, ...], ...]

    def __reduce__(self) -> tuple[Any, ...]:
        return by_constructor(self)  # a snapshot holds the results of a match's deals

    def to_wire(self) -> dict[str, Any]:
        return {
            "reason": self.reason,
            "winner": self.winner,
            "multiplier": self.multiplier,
            "points": list(self.points),
            "hands": [[CARD_STR[c] for c in sorted(h)] for h in self.hands],
        }


def score(
    rs: RuleSet,
    hands: Sequence[Sequence[int]],
    reason: str,
    out_seat: int | None,
    multiplier: int,
) -> DealResult:
    """Score every hand; on a stock-out the lowest hand may win (C15) or nobody (K6)."""
    # hand_points, once per deal, as plain loops: on Python 3.11 they beat
    # sum(map(values.__getitem__, hand)) twice over, and every deal ends here.
    values = rs.card_values
    raw: list[int] = []
    for hand in hands:
        total = 0
        for card in hand:
            total += values[card]
        raw.append(total)
    winner = out_seat
    if reason == REASON_STOCK_OUT:
        multiplier = 1
        winner = None
        if rs.stock_out_has_winner:
            low = min(raw)
            if raw.count(low) == 1:  # a tie for lowest names no winner
                winner = raw.index(low)
    points = tuple([p * multiplier for p in raw])
    return DealResult(reason, winner, multiplier, points, tuple(map(tuple, hands)))
