"""What each level does in hand-made spots: the tips medium follows, the tactics hard finds."""

from __future__ import annotations

import random
from typing import Any

import pytest
from bots_kit import rules_kit

from pisyedili.server.bots import make_policy
from pisyedili.server.bots.medium import MediumPolicy
from pisyedili.server.rules import Deal, legal_moves, move_str, view

kit = rules_kit()


def choice(level: str, deal: Deal, seat: int = 0, policy: Any = None) -> str:
    p = policy or make_policy(level, seed=1, iterations=300)
    return move_str(p.choose(view(deal, seat), legal_moves(deal, seat), random.Random(0)))


@pytest.mark.rule("C11")
@pytest.mark.parametrize("rules", ["classic", "cardiva"])
def test_medium_answers_a_seven_with_a_seven(rules: str) -> None:
    deal = kit.build(rules, ["7h 2s Kd Qc", "4c 5c 6c"], pile="9s 7s", penalty=3)
    assert choice("medium", deal) == "7h"


@pytest.mark.rule("C5")
def test_a_jack_names_the_suit_held_most() -> None:
    deal = kit.build("classic", ["Jc 2h 5h 9h 3s", "4c 5c 6c"], pile="Kd")
    assert choice("medium", deal) == "Jc>h"
    assert choice("easy", deal) in ("Jc>h", "draw")


@pytest.mark.rule("C14")
def test_medium_keeps_the_jack_for_a_doubled_finish() -> None:
    deal = kit.build("classic", ["Jc 5h", "4c 5c 6c 7d 8d 9d"], pile="9h")
    assert choice("medium", deal) == "5h"


@pytest.mark.rule("C13")
def test_medium_sheds_high_cards_when_the_opponent_is_nearly_out() -> None:
    deal = kit.build("classic", ["Kh 3h 4s 6d", "4c"], pile="9h")
    assert choice("medium", deal) == "Kh"


@pytest.mark.rule("C2")
def test_the_opening_club_is_an_ordinary_one() -> None:
    deal = kit.build("classic", ["Jc 7c 9c 2d", "4d 5d"], first_round=1)
    assert choice("medium", deal) == "9c"


@pytest.mark.parametrize(("lacking", "played"), [("9s", "5s"), ("9h", "5h")])
def test_medium_leaves_a_suit_the_next_player_lacks(lacking: str, played: str) -> None:
    deal = kit.build("classic", ["5s 5h 2d Qd", "4c 6c 2c 3c"], pile="5c")
    policy = MediumPolicy()
    policy.observe(
        [
            {"event": "play", "seat": 0, "card": lacking},
            {"event": "draw", "seat": 1, "count": 1, "reason": "draw"},  # C7: could not follow
        ]
    )
    assert choice("medium", deal, policy=policy) == played


@pytest.mark.rule("C9")
def test_hard_uses_the_eight_for_a_second_turn_and_goes_out() -> None:
    deal = kit.build("classic", ["3h 8h", "4c 5c 6c 2c Kd"], pile="9h")
    assert choice("hard", deal) == "8h"  # C12a: with two players the 8 gives another turn


@pytest.mark.rule("K10")
def test_hard_uses_the_ace_follow_up_to_go_out() -> None:
    deal = kit.build("cardiva", ["3h Ah", "4c 5c 6c 2c Kd"], pile="9h")
    assert choice("hard", deal) == "Ah"


@pytest.mark.rule("K14")
def test_muamele_picks_are_legal_at_every_level() -> None:
    for level in ("easy", "medium", "hard"):
        deal = kit.build("cardiva", ["2h", "7c 7d 3s"], pile="9h", stock="4d 5d 6d 8d 9d Kd")
        kit.play(deal, "2h")  # seat 0 goes out; seat 1 holds two 7s: 6 picks
        assert deal.phase == 1 and deal.to_act == 1
        assert choice(level, deal, seat=1).startswith("pick ")
