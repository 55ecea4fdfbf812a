"""Level `hard`: information-set Monte Carlo tree search (single-observer ISMCTS).

Each iteration samples a determinization consistent with what the seat has seen
(`sampling`), rebuilds it as an engine deal (`deal_from_view`), walks the shared tree
choosing moves legal in that sample by UCB (counting a child's availability, not the
parent's visits, as ISMCTS does), expands one move, and finishes the deal with a fast
rollout policy. The move visited most at the root is played. The engine plays every
rule, so the search covers both rule sets and every phase the engine has.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Sequence
from typing import Any

from ..rules import Deal, apply, deal_from_view, legal_moves, redeal
from .knowledge import Knowledge
from .medium import best_move
from .outcome import rewards
from .rollout import rollout_move
from .sampling import Sampler
from .situation import Move, View, action_of, canonical, situation_of

DEFAULT_BUDGET_S = 0.3
EXPLORATION = 0.7
MIN_ITERATIONS = 8  # even on a starved machine, a decision rests on a few samples


class Node:
    """A tree node: statistics of the move that led here, from its mover's side."""

    __slots__ = ("avail", "children", "reward", "visits")

    def __init__(self) -> None:
        self.children: dict[Move, Node] = {}
        self.visits = 0
        self.avail = 0
        self.reward = 0.0


class SearchPolicy:
    level = "hard"

    def __init__(
        self,
        rng: random.Random | None = None,
        budget_s: float | None = DEFAULT_BUDGET_S,
        iterations: int | None = None,
    ) -> None:
        self._rng = rng
        self.budget_s = budget_s
        self.iterations = iterations
        self.knowledge = Knowledge()
        self.last_iterations = 0

    def observe(self, events: Sequence[dict[str, Any]]) -> None:
        self.knowledge.observe(events)

    def choose(self, view: View, legal: list[Move], rng: random.Random) -> Move:
        r = self._rng or rng
        self.last_iterations = 0
        if len(legal) == 1:
            return legal[0]
        if action_of(legal[0]).kind == "pick":
            return r.choice(legal)  # K14: a face-down spread has nothing to search
        legal = canonical(legal)
        sit = situation_of(view)
        root = Node()
        allowed = set(legal)
        clock = time.perf_counter
        deadline = clock() + self.budget_s if self.budget_s is not None else math.inf
        n = 0
        # The view is read and checked once; each iteration deals a new guess of the
        # hidden cards into a copy of the deal rebuilt from the first one.
        sampler = Sampler(view, sit, self.knowledge)
        own = sit.seat if view.get("seat") == sit.seat else None
        template: Deal | None = None
        while True:
            if self.iterations is not None and n >= self.iterations:
                break
            if n >= MIN_ITERATIONS and clock() >= deadline:
                break
            guess = sampler.draw(r)
            hands: list[list[int] | None] = list(guess.hands)
            if own is not None:
                hands[own] = None  # the view's own hand, the card drawn last (K10, K11)
            if template is None:
                template = deal_from_view(view, hands, guess.stock)
            deal = redeal(template, hands, guess.stock)
            self._iterate(root, deal, allowed, r)
            n += 1
        self.last_iterations = n
        best = max(
            legal,
            key=lambda m: (
                (root.children[m].visits, root.children[m].reward)
                if m in root.children
                else (-1, 0.0)
            ),
        )
        if best not in root.children:
            return best_move(view, legal, r, self.knowledge)
        return best

    def _iterate(self, root: Node, deal: Deal, allowed: set[Move], rng: random.Random) -> None:
        node = root
        path: list[tuple[Node, int]] = []
        expanded = False
        while not deal.over and not expanded:
            seat = deal.to_act
            assert seat is not None
            moves = legal_moves(deal, seat)
            if node is root:
                moves = [m for m in moves if m in allowed] or moves
            children = node.children
            untried = [m for m in moves if m not in children]
            for m in moves:
                child = children.get(m)
                if child is not None:
                    child.avail += 1
            if untried:
                move = rng.choice(untried)
                child = Node()
                child.avail = 1
                children[move] = child
                expanded = True
            else:
                move = _ucb(children, moves)
                child = children[move]
            apply(deal, move)
            path.append((child, seat))
            node = child
        while not deal.over:
            seat = deal.to_act
            assert seat is not None
            apply(deal, rollout_move(deal, seat, legal_moves(deal, seat), rng))
        value = rewards(deal)
        for child, seat in path:
            child.visits += 1
            child.reward += value[seat]


def _ucb(children: dict[Move, Node], moves: Sequence[Move]) -> Move:
    best = moves[0]
    best_value = -math.inf
    for m in moves:
        c = children[m]
        v = c.reward / c.visits + EXPLORATION * math.sqrt(math.log(c.avail) / c.visits)
        if v > best_value:
            best, best_value = m, v
    return best
