"""How a finished deal counts for each seat: for the search's rewards and the tournament.

A deal's winner takes the credit. When nobody wins (K6, or a tie for lowest hand under
C15) the lowest hands share it, so "beating" the other seat still means fewer points.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

POINTS_WEIGHT = 0.15  # the search also prefers smaller losses and multiplied wins (C14, K13)
POINTS_SCALE = 60.0


def credits(winner: int | None, points: Sequence[int]) -> list[float]:
    """Win credit per seat, summing to 1."""
    n = len(points)
    if winner is not None:
        return [1.0 if s == winner else 0.0 for s in range(n)]
    low = min(points)
    ties = [s for s in range(n) if points[s] == low]
    return [1.0 / len(ties) if s in ties else 0.0 for s in range(n)]


def rewards(deal: Any) -> list[float]:
    """Search reward per seat of a finished deal: win credit plus a small points margin."""
    result = deal.result
    points = list(result.points)
    credit = credits(result.winner, points)
    n = len(points)
    out = []
    for s in range(n):
        others = (sum(points) - points[s]) / (n - 1)
        out.append(credit[s] + POINTS_WEIGHT * math.tanh((others - points[s]) / POINTS_SCALE))
    return out
