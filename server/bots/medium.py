"""Level `medium`: a heuristic player built from the tips players give each other.

Each legal move gets a score; the best one is played (ties broken by the rng). The
terms follow the advice players give and common play: shed high cards,
jacks above all, before someone goes out (C13, K12); keep a 7 to answer a 7 (C11, K7);
use 8, 10 and ace tempo (C9, C10, C12, K9, K10); hold the jack or 7 for a multiplied
finish when the others are far from going out (C14, K13); leave a top card the next
player cannot follow, and name the suit the bot holds most of (C5, K8).
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from ..rules import RULESETS
from ..rules.cards import ACE, EIGHT, JACK, SEVEN, TEN, rank_of, suit_of
from .knowledge import Knowledge
from .situation import Action, Move, Situation, View, action_of, canonical, situation_of

DRAW_SCORE = -1.0  # a draw costs a card in hand; plays beat it unless they throw value away
PASS_SCORE = -0.5  # after a draw (C7, K5): keeping the hand as it is


def playable_on(card: int, top: int, named: int, sit: Situation) -> bool:
    """Whether `card` could follow `top` in an ordinary turn (C4-C6, K4, K8)."""
    if top < 0:
        return True
    if rank_of(card) == JACK:
        return sit.rules == "cardiva" or rank_of(top) != JACK
    if rank_of(top) == JACK and named >= 0:
        return suit_of(card) == named
    return suit_of(card) == suit_of(top) or rank_of(card) == rank_of(top)


def score_play(a: Action, sit: Situation, knowledge: Knowledge | None, opening: bool) -> float:
    """How much the bot likes playing `a.card` now (higher is better)."""
    card, rules = a.card, sit.rules
    r = rank_of(card)
    rest = list(sit.hand)
    rest.remove(card)
    opponents = sit.opponents()
    fewest = min(sit.hand_counts[s] for s in opponents) if opponents else 7
    next_count = sit.hand_counts[sit.next_seat]
    two = sit.players == 2
    # Shedding points matters more as someone nears going out (C13, K12).
    danger = 1.0 if fewest >= 4 else (2.0 if fewest >= 2 else 4.0)
    score = 0.04 * danger * RULESETS[rules].values[r]
    if not rest:
        # Going out wins the deal; a jack or 7 multiplies the others' points (C14, K13).
        return 100.0 + (10.0 if r in (JACK, SEVEN) else 0.0)
    new_suit = a.suit if r == JACK and a.suit >= 0 else suit_of(card)
    follow = sum(1 for c in rest if playable_on(c, card, new_suit, sit))
    score += 0.6 * min(follow, 3)
    if knowledge is not None and knowledge.void(sit.next_seat, new_suit):
        score += 1.2 * (2.0 if next_count <= 2 else 1.0)
    if opening:
        # C2/K3: no effects in the opening lap, so specials would be wasted.
        if r in (JACK, SEVEN, EIGHT, TEN, ACE):
            score -= 2.0
        return score
    sevens_left = sum(1 for c in rest if rank_of(c) == SEVEN)
    if r == JACK:
        # A jack is the one card that always fits: spend it when it does real work.
        score -= 1.5 if fewest >= 3 else 0.0
        if len(rest) == 1 and fewest >= 3 and playable_on(rest[0], sit.top, sit.named_suit, sit):
            score -= 2.0  # could finish on the jack next turn instead (C14, K13)
    elif r == SEVEN:
        score += 1.5 + (2.0 if next_count <= 2 else 0.0)
        if sevens_left == 0 and fewest >= 4:
            score -= 1.8  # keep the last 7 to answer a 7 (C11, K7)
    elif r == EIGHT and rules == "classic":
        score += (1.5 if follow else 0.3) if two else (1.0 + (1.0 if next_count <= 2 else 0.0))
    elif r == TEN and not two:
        score += 0.5 if next_count <= 2 else 0.0
    elif r == ACE:
        if rules == "cardiva":
            score += 1.0 + (1.0 if follow else -1.0)  # K10: the others draw; we must follow
        else:
            score += 1.0 if follow else 0.0  # C12: an optional extra card
    # Hold a jack or 7 as the last card for a multiplied finish (C14, K13).
    if len(rest) == 1 and rank_of(rest[0]) in (JACK, SEVEN) and fewest >= 3:
        finisher = rest[0]
        if rank_of(finisher) == JACK or suit_of(finisher) == new_suit or r == SEVEN:
            score += 2.0
    return score


def best_move(
    view: View,
    legal: Sequence[Move],
    rng: random.Random,
    knowledge: Knowledge | None = None,
) -> Move:
    """The medium choice (also what `hard` plays should its search not have run)."""
    if len(legal) == 1:
        return legal[0]
    actions = [action_of(m) for m in legal]
    if actions[0].kind == "pick":
        return rng.choice(list(legal))  # K14: the spread is face down, positions are alike
    sit = situation_of(view)
    opening = sit.first_round
    best: list[Move] = []
    best_score = float("-inf")
    for move, a in zip(legal, actions, strict=True):
        if a.kind == "play":
            s = score_play(a, sit, knowledge, opening)
            if sit.penalty and rank_of(a.card) == SEVEN:
                s += 50.0  # answer a 7 with a 7 whenever possible (C11, K7)
        elif a.kind == "draw":
            s = DRAW_SCORE
        else:
            s = PASS_SCORE
        if s > best_score + 1e-9:
            best, best_score = [move], s
        elif abs(s - best_score) <= 1e-9:
            best.append(move)
    return best[0] if len(best) == 1 else rng.choice(best)


class MediumPolicy:
    level = "medium"

    def __init__(self, rng: random.Random | None = None) -> None:
        self._rng = rng
        self.knowledge = Knowledge()

    def observe(self, events: Sequence[dict[str, object]]) -> None:
        self.knowledge.observe(events)

    def choose(self, view: View, legal: list[Move], rng: random.Random) -> Move:
        return best_move(view, canonical(legal), self._rng or rng, self.knowledge)
