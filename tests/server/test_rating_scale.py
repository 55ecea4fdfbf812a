"""The rating players read (server/people/rating_scale.py), by its properties: never
negative, exactly 1500 for a new player, in the order of mu, provisional while sigma is
large; a rated match's `rating_change` agrees with what the store keeps and with the
places played; and docs/protocol.md states the formula the code uses."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from pisyedili.server.people import ratings
from pisyedili.server.people.rating_scale import (
    MU_START,
    PROVISIONAL_SIGMA,
    SCALE,
    START,
    display,
    provisional,
)
from pisyedili.server.store import MEMORY, open_store
from pisyedili.server.table.effects import MatchOver

PROTOCOL_DOC = Path(__file__).resolve().parents[2] / "docs" / "protocol.md"

mus = st.floats(min_value=-1e6, max_value=1e6, allow_nan=False)


@given(mus)
def test_a_rating_never_reads_negative(mu: float) -> None:
    assert display(mu) >= 0


def test_a_new_player_reads_exactly_the_round_number_and_is_provisional() -> None:
    new = ratings.MODEL.rating()
    assert display(new.mu) == START == 1500
    assert provisional(new.sigma)


@given(mus, mus)
def test_a_higher_mu_never_reads_lower(a: float, b: float) -> None:
    low, high = sorted((a, b))
    assert display(low) <= display(high)


@given(st.floats(min_value=-20, max_value=80))
def test_it_is_the_documented_line_wherever_that_is_not_negative(mu: float) -> None:
    exact = START + SCALE * (mu - MU_START)
    assert abs(display(mu) - exact) <= 0.5 or (exact < 0 and display(mu) == 0)


@given(st.floats(min_value=0, max_value=1000))
def test_provisional_is_sigma_above_the_threshold(sigma: float) -> None:
    assert provisional(sigma) == (sigma > PROVISIONAL_SIGMA)


def test_the_protocol_doc_states_the_formula_the_code_uses() -> None:
    text = " ".join(PROTOCOL_DOC.read_text(encoding="utf-8").split())
    assert f"max(0, round({START} + {SCALE} (mu − {MU_START:g})))" in text
    assert f"while sigma > {PROVISIONAL_SIGMA:g}" in text


def a_match(totals: list[int], bot_seats: int) -> MatchOver:
    """A rated match of accounts 1.. and (the last `bot_seats` seats) the easy level."""
    players: list[dict[str, Any]] = []
    for seat in range(len(totals)):
        if seat >= len(totals) - bot_seats:
            players.append({"seat": seat, "name": "bot (easy)", "kind": "bot",
                            "level": "easy"})
        else:
            players.append({"seat": seat, "name": f"P{seat}", "kind": "human",
                            "level": None, "player": seat + 1})
    best = min(totals)
    return MatchOver(table_id=3, rules="classic", options={}, players=players,
                     started_at=1.0, finished_at=2.0, totals=totals,
                     winners=[s for s, t in enumerate(totals) if t == best], deals=[],
                     rated=True)


@given(st.lists(st.integers(0, 150), min_size=2, max_size=6), st.integers(0, 2),
       st.integers(0, 3))
def test_a_rated_matchs_change_is_what_is_kept_and_follows_the_places(
        totals: list[int], bot_seats: int, earlier: int) -> None:
    bot_seats = min(bot_seats, len(totals) - 1)
    store = open_store(MEMORY)
    try:
        accounts = {f"P{seat}": seat + 1 for seat in range(len(totals))}
        for _ in range(earlier):  # ratings that are not new any more
            ratings.record(store, a_match(list(reversed(totals)), bot_seats), accounts, True)
        match = a_match(totals, bot_seats)
        match_id, told = ratings.record(store, match, accounts, True)
        assert told is not None and told["match"] == match_id and told["table"] == 3
        seats = told["seats"]
        assert [s["seat"] for s in seats] == list(range(len(totals)))
        kept = store.ratings("classic", [ratings.subject_of(p, accounts) or ""
                                         for p in match.players])
        for seat, player in zip(seats, match.players, strict=True):
            mu, sigma = kept[ratings.subject_of(player, accounts) or ""]
            assert seat["after"] == display(mu) and seat["provisional"] == provisional(sigma)
            assert seat["name"] == player["name"]
            if earlier == 0:
                assert seat["before"] == START
        humans = [s for s, p in zip(seats, match.players, strict=True) if p["kind"] == "human"]
        best, worst = min(totals), max(totals)
        for seat in humans:  # (a bot level's seats share one mean change)
            alone_first = totals.count(best) == 1 and totals[seat["seat"]] == best
            alone_last = totals.count(worst) == 1 and totals[seat["seat"]] == worst
            if alone_first and best != worst:
                assert seat["after"] >= seat["before"], (totals, seat)
            if alone_last and best != worst:
                assert seat["after"] <= seat["before"], (totals, seat)
    finally:
        store.close()


def test_casual_matches_tell_nothing() -> None:
    store = open_store(MEMORY)
    try:
        match = a_match([10, 20], 1)
        _, told = ratings.record(store, match, {"P0": 1}, False)
        assert told is None and store.ratings("classic", ["a:1"]) == {}
    finally:
        store.close()


def test_the_ladder_shows_settled_ratings_only_unless_asked() -> None:
    store = open_store(MEMORY)
    try:
        settled = PROVISIONAL_SIGMA - 0.5
        store.save_rating("classic", "bot:hard", 30.0, settled, 30 - 3 * settled, True, 1.0)
        store.save_rating("classic", "bot:easy", 20.0, settled, 20 - 3 * settled, True, 1.0)
        store.save_rating("classic", "bot:medium", 40.0, 8.0, 16.0, True, 1.0)
        default = ratings.leaderboard(store, "classic", 10)
        assert [(r["name"], r["display"], r["provisional"]) for r in default] == [
            ("bot (hard)", display(30.0), False), ("bot (easy)", display(20.0), False)]
        everyone = ratings.leaderboard(store, "classic", 10, everyone=True)
        assert [(r["rank"], r["name"], r["provisional"]) for r in everyone] == [
            (1, "bot (hard)", False), (2, "bot (easy)", False), (3, "bot (medium)", True)]
        assert all(math.isclose(r["rating"], r["mu"] - 3 * r["sigma"], abs_tol=2e-3)
                   for r in everyone)
    finally:
        store.close()
