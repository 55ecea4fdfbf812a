"""Every level answers every decision of both rule sets with a legal move.

Random deals are driven with the engine until each phase the issue names has been met
by the bots: the opening (C2, K3), a 7 to answer (C11, K7), a jack naming a suit
(C5, K8), an ace follow-up (C12, K10), a pişti follow-up (K11) and muamele picks (K14).
"""

from __future__ import annotations

import random
from typing import Any

import pytest
from bots_kit import fresh, play

from pisyedili.server.bots import make_policy
from pisyedili.server.rules import Deal, move_to_wire


def phase_of(v: dict[str, Any], legal: list[int], move: int) -> str:
    wire = move_to_wire(move)
    if v["phase"] == "muamele":
        return "muamele"
    if v["first_round"]:
        return "opening"
    if v["penalty"]:
        return "answer_7"
    if v["must_follow"]:
        return f"follow_{v['must_follow']}"
    if wire.get("suit"):
        return "jack_suit"
    return "turn"


@pytest.mark.parametrize(
    ("rules", "players", "needed"),
    [
        ("classic", 2, {"opening", "answer_7", "follow_ace", "jack_suit", "turn"}),
        ("classic", 4, {"opening", "answer_7", "follow_ace", "jack_suit", "turn"}),
        ("cardiva", 2, {"opening", "answer_7", "follow_ace", "jack_suit", "muamele", "turn"}),
        (
            "cardiva",
            4,
            {"opening", "answer_7", "follow_ace", "follow_pisti", "jack_suit", "muamele"},
        ),
    ],
)
@pytest.mark.parametrize("level", ["easy", "medium", "hard"])
def test_every_phase_gets_a_legal_move(
    level: str, rules: str, players: int, needed: set[str]
) -> None:
    rng = random.Random(f"{level}{rules}{players}")
    seen: set[str] = set()

    def check(deal: Deal, seat: int, v: dict[str, Any], legal: list[int], move: int) -> None:
        assert move in legal, (level, v, legal, move)
        seen.add(phase_of(v, legal, move))

    # The level under test plays against easy bots, which reach odd corners fast.
    deals = 0
    while not needed <= seen and deals < 300:
        policies = [
            make_policy(level, iterations=12) if s == 0 else make_policy("easy")
            for s in range(players)
        ]
        deal = fresh(rules, players, rng.getrandbits(32), dealer=deals % players)

        def only_seat0(d: Deal, seat: int, v: dict[str, Any], lg: list[int], m: int) -> None:
            if seat == 0:
                check(d, seat, v, lg, m)

        play(deal, policies, rng, only_seat0)
        deals += 1
    assert needed <= seen, f"{level} {rules} {players}p never met {needed - seen}"
