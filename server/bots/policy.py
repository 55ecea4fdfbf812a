"""The bot interface the tables use: `Policy` and `make_policy`.

A policy is given its seat's view and the legal moves, nothing else, and returns one
of those moves. Policies that learn from what the seat sees between its turns (who
failed to follow which suit) also offer `observe`, fed with `events_for(events, seat)`.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

from pisyedili.protocol.shapes import BOT_LEVELS

from .easy import EasyPolicy
from .medium import MediumPolicy
from .search import DEFAULT_BUDGET_S, SearchPolicy
from .situation import Move, View

LEVELS = BOT_LEVELS
"""The levels `make_policy` knows: the protocol's, which the server offers by name."""


@runtime_checkable
class Policy(Protocol):
    level: str

    def choose(self, view: View, legal: list[Move], rng: random.Random) -> Move: ...


@runtime_checkable
class Observer(Protocol):
    def observe(self, events: Sequence[dict[str, Any]]) -> None: ...


class UnknownLevel(ValueError):
    code = "unknown_bot_level"


def make_policy(
    level: str,
    budget_s: float | None = None,
    seed: int | None = None,
    iterations: int | None = None,
) -> Policy:
    """A fresh policy for one seat (fresh per deal or kept: it resets on a new deal).

    `seed` gives the policy its own `random.Random`, used instead of the rng passed to
    `choose`; without it the passed rng is used. `budget_s` is the search time per
    decision of `hard` (default `DEFAULT_BUDGET_S`); `iterations` caps the search by
    count instead, which makes `hard` reproducible whatever the machine's speed.
    """
    rng = random.Random(seed) if seed is not None else None
    if level == "easy":
        return EasyPolicy(rng)
    if level == "medium":
        return MediumPolicy(rng)
    if level == "hard":
        if budget_s is not None and not budget_s > 0:
            raise ValueError(f"budget_s must be positive, not {budget_s!r}")
        if iterations is not None and iterations < 1:
            raise ValueError(f"iterations must be at least 1, not {iterations!r}")
        budget = DEFAULT_BUDGET_S if budget_s is None and iterations is None else budget_s
        return SearchPolicy(rng, budget_s=budget, iterations=iterations)
    raise UnknownLevel(f"unknown bot level {level!r} (expected one of {', '.join(LEVELS)})")
