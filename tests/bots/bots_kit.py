"""Helpers for the bot tests: drive deals with the engine, seat by seat; a bot client
that tells when it sat down (`Seated`)."""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Any

from sibling_kit import sibling
from twisted.internet.defer import Deferred

from pisyedili.client.bot import BotClient, BotConfig
from pisyedili.server.bots import Observer, Policy
from pisyedili.server.rules import Deal, Options, apply, events_for, legal_moves, new_deal, view

Hook = Callable[[Deal, int, dict[str, Any], list[int], int], None]


def play(
    deal: Deal,
    policies: Sequence[Policy],
    rng: random.Random,
    on_decision: Hook | None = None,
) -> Deal:
    """Play `deal` to its end; `on_decision(deal, seat, view, legal, move)` sees each choice."""
    while not deal.over:
        seat = deal.to_act
        assert seat is not None
        legal = legal_moves(deal, seat)
        v = view(deal, seat)
        move = policies[seat].choose(v, legal, rng)
        if on_decision is not None:
            on_decision(deal, seat, v, legal, move)
        events = apply(deal, move)
        for s, p in enumerate(policies):
            if isinstance(p, Observer):
                p.observe(events_for(events, s))
    return deal


def fresh(rules: str, players: int, seed: int, dealer: int = 0) -> Deal:
    return new_deal(Options.make(rules, players), dealer, random.Random(seed))


def rules_kit() -> Any:
    """The rules tests' hand-made deal builder."""
    return sibling("rules", "rules_kit")


class Seated(BotClient):
    """A bot that tells when its first table snapshot came (`seated`)."""

    def __init__(self, cfg: BotConfig) -> None:
        super().__init__(cfg)
        self.seated: Deferred[dict[str, Any]] = Deferred()

    def on_table(self, msg: dict[str, Any]) -> None:
        super().on_table(msg)
        if not self.seated.called:
            self.seated.callback(msg)
