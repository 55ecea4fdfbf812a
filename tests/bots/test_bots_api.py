"""`make_policy`: the levels the tables offer, and clear refusals."""

from __future__ import annotations

import random

import pytest
from bots_kit import fresh

from pisyedili.server.bots import LEVELS, Observer, Policy, UnknownLevel, make_policy
from pisyedili.server.bots.wire import choose_wire
from pisyedili.server.rules import legal_moves, move_to_wire, view


@pytest.mark.parametrize("level", LEVELS)
def test_every_level_is_a_policy(level: str) -> None:
    policy = make_policy(level, iterations=5)
    assert isinstance(policy, Policy) and policy.level == level
    # medium and hard learn from events_for(events, seat), which the tables feed them
    assert isinstance(policy, Observer) == (level != "easy")


def test_unknown_level_is_refused_with_a_stable_code() -> None:
    with pytest.raises(UnknownLevel) as err:
        make_policy("grandmaster")
    assert err.value.code == "unknown_bot_level"
    assert "easy, medium, hard" in str(err.value)


@pytest.mark.parametrize(("budget", "iterations"), [(0.0, None), (-1.0, None), (None, 0)])
def test_bad_budgets_are_refused(budget: float | None, iterations: int | None) -> None:
    with pytest.raises(ValueError):
        make_policy("hard", budget_s=budget, iterations=iterations)


def test_a_time_budget_bounds_the_decision(monkeypatch: pytest.MonkeyPatch) -> None:
    """The hard bot's decision takes about its budget (and at least a few iterations).

    On a clock of the test's own, a tick a reading, so a busy machine's pauses cannot
    stretch the decision past a bound: it must end at the first reading past its budget."""
    import time

    from pisyedili.server.bots.search import MIN_ITERATIONS

    readings: list[float] = []

    def clock() -> float:
        readings.append(len(readings) * 0.01)
        return readings[-1]

    deal = fresh("classic", 2, 1)
    seat = deal.to_act
    assert seat is not None
    policy = make_policy("hard", budget_s=0.05)
    monkeypatch.setattr(time, "perf_counter", clock)
    policy.choose(view(deal, seat), legal_moves(deal, seat), random.Random(0))
    monkeypatch.undo()
    assert readings, "the search reads the clock"
    spent = readings[-1] - readings[0]
    assert 0.05 <= spent < 0.05 + 0.01 + 1e-9, readings
    assert policy.last_iterations >= MIN_ITERATIONS  # type: ignore[attr-defined]


def test_wire_moves_in_and_out() -> None:
    """A remote client hands wire moves and gets one of them back (client/bot.py)."""
    deal = fresh("cardiva", 2, 3)
    seat = deal.to_act
    assert seat is not None
    wire = [move_to_wire(m) for m in legal_moves(deal, seat)]
    chosen = choose_wire(make_policy("medium"), view(deal, seat), wire, random.Random(1))
    assert chosen in wire
    with pytest.raises(ValueError):
        choose_wire(make_policy("easy"), view(deal, seat), [{"kind": "fly"}], random.Random(1))
