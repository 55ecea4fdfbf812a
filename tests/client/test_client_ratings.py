"""The terminal's ratings, from the server's messages: `/top` and `/top all`, a
profile's ratings and sparkline, and a rated match's change, in English and in Persian
(its own digits and question mark); every message used is valid by the schema."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pisyedili.client import i18n
from pisyedili.client.parse import Context, Invalid, Request, parse_input
from pisyedili.client.render import plain
from pisyedili.client.render.ratings import (
    SPARKS,
    ladder_lines,
    profile_lines,
    rating_change_lines,
    sparkline,
)
from pisyedili.client.render.text import Look
from pisyedili.client.state import ClientState
from pisyedili.protocol.schema import Direction, validate

pytestmark = pytest.mark.usefixtures("english")  # tests/conftest.py

Msg = dict[str, Any]


def row(rank: int, name: str, display: int, provisional: bool, **extra: Any) -> Msg:
    return {"rank": rank, "name": name, "kind": "player", "display": display,
            "provisional": provisional, "rating": 1.0, "mu": 25.0, "sigma": 5.0,
            "matches": 12, "wins": 5, **extra}


def checked(msg: Msg) -> Msg:
    validate(msg, Direction.TO_CLIENT)
    return msg


def lines(fragments: list[Any]) -> list[str]:
    return [plain(f) for f in fragments]


@pytest.mark.parametrize(("typed", "sent"), [
    ("/top all", {"type": "leaderboard", "rules": "classic", "provisional": True}),
    ("/top cardiva 5 all", {"type": "leaderboard", "rules": "cardiva", "limit": 5,
                            "provisional": True}),
    ("/top ALL classic", {"type": "leaderboard", "rules": "classic", "provisional": True}),
])
def test_top_all_asks_for_the_provisional_ratings_too(typed: str, sent: Msg) -> None:
    assert parse_input(typed, Context()) == Request(sent)


@pytest.mark.parametrize("typed", ["/top all all", "/top everyone"])
def test_top_takes_all_once(typed: str) -> None:
    assert isinstance(parse_input(typed, Context()), Invalid)


def test_the_ladder_marks_provisional_ratings_and_says_when_they_are_left_out() -> None:
    settled = checked({"type": "leaderboard", "rules": "classic", "rows": [
        {**row(1, "bot (hard)", 1584, False), "kind": "bot", "level": "hard"},
        row(2, "Robo", 1540, False, bot=True)]})
    shown = lines(ladder_lines(settled))
    assert shown[1].split()[:4] == ["1.", "bot", "(hard)", "1584"]
    assert shown[2].split()[:4] == ["2.", "Robo", "(bot)", "1540"]  # a bot account, marked
    assert "/top all lists them" in shown[-1]

    everyone = checked({"type": "leaderboard", "rules": "classic", "rows": [
        row(1, "Ayşe", 1540, False), row(2, "Mehmet", 1605, True)]})
    shown = lines(ladder_lines(everyone))
    assert "1605?" in shown[2] and "1540?" not in shown[1]
    assert not any("/top all" in line for line in shown)  # they are there already


def test_an_older_servers_ladder_shows_its_rating_as_it_was() -> None:
    old = {"type": "leaderboard", "rules": "classic", "rows": [
        {"rank": 1, "name": "Ayşe", "kind": "player", "rating": 3.44, "mu": 26.0,
         "sigma": 7.5, "matches": 2, "wins": 1}]}
    shown = lines(ladder_lines(old))
    assert "3.44" in shown[1] and not any("/top all" in line for line in shown)


def profile(provisional: bool, history: list[int], matches: int) -> Msg:
    return checked({"type": "profile", "name": "Ayşe", "matches": matches, "wins": 1,
                    "recent": [], "ratings": [{
                        "rules": "classic", "display": history[-1], "provisional": provisional,
                        "history": [{"at": 1e9 + i, "display": d} for i, d in enumerate(history)],
                        "rating": 0.0, "mu": 25.0, "sigma": 7.0, "matches": matches, "wins": 1,
                        "rank": 3}]})


def test_a_profile_shows_the_rating_its_place_once_settled_and_a_sparkline() -> None:
    shown = lines(profile_lines(profile(True, [1395, 1605], 2)))
    assert shown[1] == "  classic: rating 1605?, 2 rated"  # no place while provisional
    assert shown[2] == (f"    {SPARKS[4]}{SPARKS[0]}{SPARKS[7]}  "
                        "1500 → 1605, the last 2 rated matches")
    # Settled, and only its latest points kept: no start of 1500 in front of them.
    shown = lines(profile_lines(profile(False, [1600, 1620, 1610], 40)))
    assert shown[1] == "  classic: rating 1610, #3, 40 rated"
    assert shown[2] == (f"    {SPARKS[0]}{SPARKS[7]}{SPARKS[4]}  "
                        "1600 → 1610, the last 3 rated matches")


@given(st.lists(st.integers(0, 40_000), min_size=1, max_size=80))
def test_a_sparkline_has_a_column_a_point_lowest_to_highest(values: list[int]) -> None:
    line = sparkline(values)
    shown = values[-40:]
    assert len(line) == len(shown) and set(line) <= set(SPARKS)
    for a, b, ca, cb in zip(shown, shown[1:], line, line[1:], strict=False):
        if a < b:
            assert SPARKS.index(ca) <= SPARKS.index(cb)
    if min(shown) < max(shown):
        assert line[shown.index(min(shown))] == SPARKS[0]
        assert line[shown.index(max(shown))] == SPARKS[-1]


def test_in_ascii_the_profile_and_the_change_use_no_other_character() -> None:
    ascii_only = Look(unicode=False)
    shown = lines(profile_lines(profile(True, [1395, 1605], 2), ascii_only))
    assert shown[2] == "    =_#  1500 -> 1605, the last 2 rated matches"
    shown = lines(rating_change_lines(CHANGE, {}, None, look=ascii_only))
    assert shown[2:] == ["  bot (easy): 1612 -> 1601, -11", "  Mehmet: 1550 -> 1550, +-0"]
    assert all(line.isascii() for line in shown[2:])  # the names aside (Ayşe)


CHANGE = {"type": "rating_change", "table": 3, "match": 88, "rules": "classic", "seats": [
    {"seat": 0, "name": "Ayşe", "before": 1500, "after": 1605, "provisional": True},
    {"seat": 1, "name": "bot (easy)", "before": 1612, "after": 1601, "provisional": False},
    {"seat": 2, "name": "Mehmet", "before": 1550, "after": 1550, "provisional": False}]}


def test_a_rated_matchs_change_names_the_seats_as_the_log_does() -> None:
    state = ClientState()
    state.handle({"type": "table", "table": {
        "id": 3, "name": "t", "rules": "classic", "options": {}, "host": 1,
        "phase": "over", "seats": [
            {"seat": 0, "kind": "human", "name": "Ayşe", "player": 1},
            {"seat": 1, "kind": "bot", "name": "bot (easy)", "level": "easy"},
            {"seat": 2, "kind": "human", "name": "Mehmet", "player": 2}],
        "spectators": []}, "you": {"seat": 0, "spectator": False, "host": True},
        "view": None, "match": None}, 0.0)
    out = state.handle(checked(dict(CHANGE)), 0.0)
    assert lines(out) == ["Ratings after the match (classic):", "  you: 1500? → 1605?, +105",
                          "  bot 2: 1612 → 1601, −11", "  Mehmet: 1550 → 1550, ±0"]
    assert out[1][0][0] == "class:me" and out[2][0][0] == ""


def test_away_from_the_table_the_change_names_the_servers_names() -> None:
    out = rating_change_lines(CHANGE, {}, None, "Mehmet")
    assert lines(out)[1:] == ["  Ayşe: 1500? → 1605?, +105", "  bot (easy): 1612 → 1601, −11",
                              "  Mehmet: 1550 → 1550, ±0"]
    assert out[3][0][0] == "class:me"


def test_in_persian_the_change_and_the_ladder_use_its_digits_and_question_mark() -> None:
    i18n.set_language("fa")
    shown = lines(rating_change_lines(CHANGE, {}, None))
    assert "۱۵۰۰؟" in shown[1] and "۱۶۰۵؟" in shown[1] and "+۱۰۵" in shown[1]
    assert not any(ch.isascii() and ch.isdigit() for ch in "".join(shown))
    ladder = lines(ladder_lines({"type": "leaderboard", "rules": "classic",
                                 "rows": [row(1, "Ayşe", 1605, True)]}))
    assert "۱۶۰۵؟" in ladder[1]
