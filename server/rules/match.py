"""A match: a series of deals with a rotating dealer, running totals, and an end."""

from __future__ import annotations

import random

from .deal import Deal, Event, apply, apply_for, deal_from_deck, new_deal
from .errors import RuleError
from .moves import Move
from .options import Options, parse_match_end
from .records import DealRecord
from .result import DealResult


class Match:
    """Deals until ``match_end`` (C16 ``deals:4``, K15 ``points:101``); lowest total wins.

    ``deck``: a stacked deck (a test server's tables, docs/protocol.md "Stacked decks"):
    every deal of the match is dealt from this order, and the first dealer is the last
    seat, so seat 0 gets the first card and opens the first deal. ``rng`` still seeds
    each deal's reshuffles and muamele spread.
    """

    def __init__(self, options: Options, rng: random.Random, dealer: int | None = None,
                 deck: tuple[int, ...] | None = None) -> None:
        self.options = options
        self.rng = rng
        self.deck = deck
        self.end_kind, self.end_limit = parse_match_end(options.match_end)
        n = options.players
        if dealer is None:
            dealer = n - 1 if deck is not None else rng.randrange(n)
        self.deal: Deal = self._new_deal(dealer)
        self.deal_no = 1
        self.totals = [0] * n
        self.results: list[DealResult] = []
        self.records: list[DealRecord] = []
        self.over = False
        self.winners: list[int] = []

    def apply(self, move: Move) -> list[Event]:
        events = apply(self.deal, move)
        if self.deal.over:
            self._settle(events)
        return events

    def apply_for(self, seat: int, move: Move) -> list[Event]:
        events = apply_for(self.deal, seat, move)
        if self.deal.over:
            self._settle(events)
        return events

    def _settle(self, events: list[Event]) -> None:
        result = self.deal.result
        assert result is not None
        self.results.append(result)
        self.records.append(self.deal.record)
        self.totals = [t + p for t, p in zip(self.totals, result.points, strict=True)]
        if self.end_kind == "deals":
            self.over = self.deal_no >= self.end_limit  # C16
        else:
            self.over = max(self.totals) >= self.end_limit  # K15
        if self.over:
            low = min(self.totals)
            self.winners = [s for s, t in enumerate(self.totals) if t == low]  # ties are ties
            events.append(
                {"event": "match_end", "totals": list(self.totals), "winners": list(self.winners)}
            )

    def next_deal(self) -> Deal:
        """Start the next deal, the dealer moving one seat to the left (C2)."""
        if self.over:
            raise RuleError("the match is over", code="match_over")
        if not self.deal.over:
            raise RuleError("the current deal is not over", code="deal_in_progress")
        self.deal = self._new_deal((self.deal.dealer + 1) % self.options.players)
        self.deal_no += 1
        return self.deal

    def _new_deal(self, dealer: int) -> Deal:
        if self.deck is None:
            return new_deal(self.options, dealer, self.rng)
        return deal_from_deck(self.options, dealer, list(self.deck), self.rng.getrandbits(64))
