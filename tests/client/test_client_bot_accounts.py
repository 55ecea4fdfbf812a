"""The terminal client shows a bot account (a program registered with `register.bot`,
on a `kind: "human"` seat with `bot: true`) as a bot wherever it names it: the table's
seats, the log, the status area, finished matches and their replays, the ladder and
its profile."""

from __future__ import annotations

from client_kit import seat, table_info

from pisyedili.client import render
from pisyedili.client.render import plain
from pisyedili.client.render.lobby import match_row
from pisyedili.client.render.ratings import ladder_lines, profile_lines
from pisyedili.client.replay import MatchReplay
from pisyedili.protocol.shapes import LADDER_ROW, MATCH_SUMMARY


def test_a_bot_accounts_seat_is_marked_as_a_bot() -> None:
    before = table_info([seat(0, name="me"), seat(1, "open"), seat(2, name="ayse")],
                        phase="waiting")
    after = table_info([seat(0, name="me"), seat(1, name="Robo", bot=True),
                        seat(2, name="ayse")], phase="waiting")
    summary = [plain(f) for f in render.table_summary(after, 0)]
    assert "  seat 2: Robo (bot)" in summary
    assert "  seat 3: ayse" in summary  # a person's seat is not marked
    assert [plain(f) for f in render.seat_changes(before, after, 0)] == [
        "Robo (bot) sits at seat 2"]
    assert render.seat_names(after, 0) == {0: "you", 1: "Robo (bot)", 2: "ayse"}


def test_finished_matches_the_ladder_and_a_profile_mark_a_bot_account() -> None:
    match = {"id": 4, "rules": "classic", "options": {"rules": "classic", "players": 2},
             "players": [{"seat": 0, "name": "Ayşe", "kind": "human", "total": 12},
                         {"seat": 1, "name": "Robo", "kind": "human", "bot": True,
                          "total": 3}],
             "winners": [1], "deals": 1, "started_at": 1.0e9, "finished_at": 1.0e9 + 60,
             "private": False}
    MATCH_SUMMARY.check(match, "match")
    row = plain(match_row(match))
    assert "Ayşe 12, Robo (bot) 3" in row and "won: Robo (bot)" in row
    assert MatchReplay(match, ()).names() == {0: "Ayşe", 1: "Robo (bot)"}  # its replay

    rows = [{"rank": 1, "name": "Robo", "kind": "player", "bot": True, "display": 1620,
             "provisional": True, "rating": 3.5, "mu": 28.0, "sigma": 8.0, "matches": 4,
             "wins": 3},
            {"rank": 2, "name": "Ayşe", "kind": "player", "display": 1540,
             "provisional": True, "rating": 1.5, "mu": 26.0, "sigma": 8.0, "matches": 4,
             "wins": 1}]
    for r in rows:
        LADDER_ROW.check(r, "row")
    lines = [plain(f) for f in ladder_lines({"type": "leaderboard", "rules": "classic",
                                             "rows": rows})]
    assert lines[1].startswith("    1. Robo (bot) ") and lines[2].startswith("    2. Ayşe ")

    profile = {"type": "profile", "name": "Robo", "bot": True, "ratings": [], "matches": 4,
               "wins": 3, "recent": []}
    assert plain(profile_lines(profile)[0]) == "Robo (bot): 4 matches, 3 won"
