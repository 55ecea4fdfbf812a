"""Policies on wire forms: what a remote bot client needs, with no engine in sight.

A client that speaks only the protocol has views (plain maps) and legal moves in their
wire form (the `moves` of an `update` or a `table` snapshot); this converts at the edge
so such a client can use the same policies as the server's bot seats.
"""

from __future__ import annotations

import random
from typing import Any

from ..rules import move_from_wire, move_to_wire
from .policy import Observer, Policy


def choose_wire(
    policy: Policy, view: dict[str, Any], moves: list[dict[str, Any]], rng: random.Random
) -> dict[str, Any]:
    """One of `moves` (wire maps), chosen by `policy` from `view`; ValueError on a bad move."""
    legal = [move_from_wire(m) for m in moves]
    return move_to_wire(policy.choose(view, legal, rng))


def observe_wire(policy: Policy, events: list[dict[str, Any]]) -> None:
    """Feed events (already masked for this seat by the server) to a policy that learns."""
    if isinstance(policy, Observer):
        policy.observe(events)
