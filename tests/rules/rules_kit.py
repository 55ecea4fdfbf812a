"""Helpers for the rules tests: hand-made deals, move shorthand, state snapshots."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence
from typing import Any

from pisyedili.server.rules import (
    DEAL_FIELDS,
    Deal,
    Options,
    apply,
    card_str,
    deal_from_view,
    deck,
    legal_moves,
    move_from_wire,
    move_str,
    new_deal,
    parse_card,
    unseen_cards,
    view,
)


def cards(text: str) -> list[int]:
    """``"7h 8h Jc"`` -> card ints."""
    return [parse_card(t) for t in text.split()]


def mv(text: str) -> int:
    """A move from its short text: ``7h``, ``Jh>s``, ``Jc`` (no suit), ``draw``, ``pass``,
    ``pick 3``."""
    if text in ("draw", "pass"):
        return move_from_wire({"kind": text})
    if text.startswith("pick "):
        return move_from_wire({"kind": "pick", "position": int(text[5:])})
    card, _, suit = text.partition(">")
    wire: dict[str, Any] = {"kind": "play", "card": card}
    if suit:
        wire["suit"] = suit
    return move_from_wire(wire)


def legal(d: Deal) -> set[str]:
    assert d.to_act is not None
    return {move_str(m) for m in legal_moves(d, d.to_act)}


def build(
    rules: str = "classic",
    hands: Sequence[str] = ("", ""),
    *,
    pile: str = "",
    stock: str | None = None,
    rest: str = "stock",
    turn: int = 0,
    dealer: int | None = None,
    named: str | None = None,
    penalty: int = 0,
    first_round: int = 0,
    follow: str | None = None,
    drew: bool = False,
    direction: int = 1,
    **options: Any,
) -> Deal:
    """A deal in a hand-made state, mid-deal by default (the opening over).

    ``pile`` is bottom to top; ``stock`` lists the next cards drawn, first first. The
    cards not placed go under the pile (``rest="pile"``, so the stock is exactly
    ``stock``) or to the bottom of the stock (``rest="stock"``).
    """
    players = len(hands)
    opts = Options.make(rules, players, **options)
    hand_cards = [cards(h) for h in hands]
    pile_cards = cards(pile)
    stock_cards = cards(stock or "")
    left = Counter(deck(opts.decks))
    left.subtract(Counter(c for h in hand_cards for c in h))
    left.subtract(Counter(pile_cards + stock_cards))
    assert all(v >= 0 for v in left.values()), "a card is used more often than the pack holds"
    rest_cards = sorted(left.elements())
    if rest == "pile":
        pile_cards = rest_cards + pile_cards
    else:
        stock_cards = stock_cards + rest_cards
    v = {
        "options": opts.to_wire(),
        "seat": None,
        "dealer": (turn - 1) % players if dealer is None else dealer,
        "phase": "play",
        "turn": turn,
        "direction": direction,
        "hand": None,
        "hand_counts": [len(h) for h in hand_cards],
        "pile": [card_str(c) for c in pile_cards],
        "stock": len(stock_cards),
        "named_suit": named,
        "penalty": penalty,
        "first_round": first_round,
        "must_follow": follow,
        "drew": drew,
    }
    return deal_from_view(v, hand_cards, stock_cards)


def play(d: Deal, *moves: str) -> list[dict[str, Any]]:
    """Apply moves given as short text; return all their events."""
    events: list[dict[str, Any]] = []
    for text in moves:
        events += apply(d, mv(text))
    return events


def hand(d: Deal, seat: int) -> list[str]:
    v = view(d, seat)
    hand_strs: list[str] = v["hand"]
    return hand_strs


def snapshot(d: Deal) -> tuple[Any, ...]:
    """Every part of a deal's state, to check that a refused move changes nothing."""
    parts = [getattr(d, name) for name in DEAL_FIELDS if name != "hands"]
    parts = [p[:] if isinstance(p, list) else p for p in parts]
    return (*parts, tuple(tuple(h) for h in d.hands))


def random_deal(rules: str, players: int, seed: int, **options: Any) -> Deal:
    return new_deal(Options.make(rules, players, **options), seed % players, random.Random(seed))


def conserved(d: Deal) -> bool:
    """Hands + stock + pile are exactly the pack (muamele picks come from stock or pile)."""
    held = Counter(c for h in d.hands for c in h)
    held.update(d.stock)
    held.update(d.pile)
    return held == Counter(deck(d.options.decks))


def hidden_dealt(v: dict[str, Any], seat: int | None, rng: random.Random
                 ) -> tuple[list[list[int] | None], list[int]]:
    """The cards the view `v` of `seat` hides, dealt again at random: the other hands
    (the seat's own None) and the stock, as `deal_from_view` takes them."""
    pool = unseen_cards(v)
    rng.shuffle(pool)
    hands: list[list[int] | None] = []
    for s, count in enumerate(v["hand_counts"]):
        if s == seat:
            hands.append(None)
        else:
            hands.append(pool[:count])
            pool = pool[count:]
    return hands, pool
