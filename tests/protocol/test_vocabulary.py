"""The words server, client and engine share are defined once, in the protocol.

The engine is stdlib-only and may not import the protocol, so where it has names of
its own (its rule sets, the seats each allows) this checks they agree with the
protocol's single definition; everything else imports that definition.
"""

from __future__ import annotations

import pytest

from pisyedili.protocol.shapes import BOT_LEVELS, MAX_SEATS, RULE_SETS, SEAT_RANGE
from pisyedili.server.bots import make_policy
from pisyedili.server.rules import RULESETS, Options


def test_the_engine_knows_exactly_the_protocols_rule_sets() -> None:
    assert set(RULESETS) == set(RULE_SETS)


@pytest.mark.parametrize("rules", RULE_SETS)
def test_the_engine_seats_exactly_the_protocols_range(rules: str) -> None:
    low, high = SEAT_RANGE[rules]
    for players in range(0, MAX_SEATS + 2):
        if low <= players <= high:
            assert Options.make(rules, players).players == players
        else:
            with pytest.raises(ValueError):
                Options.make(rules, players)


@pytest.mark.parametrize("level", BOT_LEVELS)
def test_every_bot_level_has_a_policy(level: str) -> None:
    assert make_policy(level, iterations=1).level == level
