"""The move the server plays for a seat whose turn timer expired.

The rule, documented for players in docs/protocol.md:

1. `pass` if it is legal (the seat already drew this turn, C7/K5, or may end its
   turn after an ace, C12) — the cheapest move: no card is drawn or given away;
2. otherwise `draw` if legal (an ordinary turn, or taking a 7's penalty, C11/K7);
3. otherwise the first muamele `pick` position offered (K14);
4. otherwise the first legal move in the engine's order (only when neither pass nor
   draw is allowed, e.g. a forced follow-up with a playable card).

Bots that fail (raise or answer an illegal move) fall back to the same rule, so a
broken policy cannot stall a table.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

M = TypeVar("M")


def default_move(legal: Sequence[M], to_wire: Callable[[M], dict[str, Any]]) -> M:
    """Pick the timeout move from `legal` (non-empty) by the rule above."""
    if not legal:
        raise ValueError("no legal move to default to")
    wires = [to_wire(m) for m in legal]
    for kind in ("pass", "draw"):
        for move, wire in zip(legal, wires, strict=True):
            if wire.get("kind") == kind:
                return move
    picks = [
        (int(wire.get("position", 0)), i)
        for i, wire in enumerate(wires)
        if wire.get("kind") == "pick"
    ]
    if picks:
        return legal[min(picks)[1]]
    return legal[0]
