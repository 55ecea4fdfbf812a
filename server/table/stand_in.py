"""A bot as a table seats it: a policy, its level, and a guard against its failures.

The table hands a bot only its seat's view and legal moves (architecture.md,
"Bots"). A policy that raises or answers a move outside `legal` must not stall or
crash a table with people at it, so the guard logs and falls back to the timeout
rule (`default_move`).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any, Protocol

from twisted.logger import Logger

from pisyedili.server.bots import make_policy
from pisyedili.server.rules import move_to_wire
from pisyedili.server.table.default_move import default_move

log = Logger()


class Policy(Protocol):
    def choose(self, view: dict[str, Any], legal: list[Any], rng: random.Random) -> Any: ...


class BotPlayer:
    """One seat's bot: chooses from its own view only."""

    def __init__(self, level: str, policy: Policy, rng: random.Random) -> None:
        self.level = level
        self._policy = policy
        self._rng = rng

    def choose(self, view: dict[str, Any], legal: Sequence[Any]) -> Any:
        options = list(legal)
        try:
            move = self._policy.choose(view, options, self._rng)
        except Exception:
            log.failure("bot policy {bot_level} failed; playing the default move",
                        bot_level=self.level)
            return default_move(options, move_to_wire)
        if move not in options:
            log.warn("bot policy {bot_level} chose an illegal move; playing the default move",
                     bot_level=self.level)
            return default_move(options, move_to_wire)
        return move

    def observe(self, events: list[dict[str, Any]]) -> None:
        """Pass the seat's share of public events to policies that track history."""
        observe = getattr(self._policy, "observe", None)
        if callable(observe):
            try:
                observe(events)
            except Exception:
                log.failure("bot policy {bot_level} failed to observe", bot_level=self.level)


def make_bot(level: str, rng: random.Random, budget_s: float | None = None) -> BotPlayer:
    """A seat's bot; `budget_s` bounds a `hard` search per decision."""
    return BotPlayer(level, make_policy(level, budget_s=budget_s), rng)
