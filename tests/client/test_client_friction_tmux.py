"""The friction a new player met in the real terminal (tmux), each case as they met it:
help for where they stand, the log after `play --continue`, the lobby's columns, a long
paste, a 10 between two players, offline history and a small terminal."""

from __future__ import annotations

import re
import uuid
from contextlib import ExitStack
from pathlib import Path

import pytest
from prompt_toolkit.utils import get_cwidth
from test_client_connect import client, server
from test_client_tmux import TMUX, Terminal, command, move_once, play, screen_app, terminal

__all__ = ["terminal"]  # the fixture, used by name
pytestmark = pytest.mark.skipif(TMUX is None, reason="tmux is not installed")


def logged(screen: str) -> list[str] | None:
    """The last `/log` page on screen: its lines between its head and the prompt; None
    while the page is not drawn whole (no prompt under it yet)."""
    if "deal 1, page 1 of 1" not in screen:
        return None
    page = screen[screen.rindex("deal 1, page 1 of 1"):].splitlines()[1:]
    end = next((i for i, line in enumerate(page) if re.match(r"(your move)?>( |$)", line)),
               None)
    return None if end is None else page[:end]


def log_page(term: Terminal) -> list[str]:
    """`/log` typed, and its page once drawn whole."""
    term.type("/log")
    page = logged(term.wait_for(lambda s: logged(s) is not None, "the log"))
    assert page is not None
    return page


def test_after_continue_the_log_holds_the_deal_so_far(tmp_path: Path) -> None:
    data = tmp_path / "data"
    first, later = (Terminal(f"pisyedili-test-{uuid.uuid4().hex[:8]}") for _ in range(2))
    try:
        first.start(play("--bots", "2", "--seed", "11", "--ascii"), 120, 40, data_home=data)
        move_once(first)
        move_once(first)
        first.wait_for(lambda s: "your move:" in s, "our turn again")
        told = log_page(first)
        assert told[0] == "-- deal 1 -- bot 3 dealt" and len(told) >= 5, told
        first.type("/quit")
        first.type("/quit")
        assert first.exited() == "0"

        later.start(play("--continue", "--ascii"), 120, 40, data_home=data)
        later.wait_for(lambda s: "your move:" in s, "the match, taken back")
        after = log_page(later)
        assert not any("Nothing has happened" in line for line in after)
        assert after[:len(told)] == told, "(the bots may have moved on since)"
    finally:
        first.tmux("kill-server")
        later.tmux("kill-server")


@pytest.mark.rule("C12a")
def test_with_two_players_a_ten_shows_no_change_of_direction(terminal: Terminal) -> None:
    terminal.start(screen_app("two"))
    screen = terminal.wait_for(lambda s: "your move:" in s, "our turn after the 10")
    assert "bot 2 played 10♥" in screen
    assert "10: with two players, play goes on as before (C12a)" in screen
    [head] = [row for row in screen.splitlines() if "top 10♥" in row]
    assert head == "classic · deal 1 of 4 · top 10♥ · stock 23", "no arrow: nothing changed"




def test_the_lobby_keeps_its_columns_for_long_and_wide_table_names(
        terminal: Terminal, tmp_path: Path) -> None:
    names = ["sixteen-chars-xy", "a table name forty characters long, full",
             "日本語の長いテーブル名です"]
    with server(tmp_path) as (_, port), ExitStack() as stack:
        hosts = []
        for n, name in enumerate([*names, ""]):  # each host keeps a table open
            host = stack.enter_context(client(tmp_path, f"127.0.0.1:{port}", "--name",
                                              f"host{n}"))
            hosts.append(host)
            host.out.wait_for(rf"connected to .* as host{n}\b")
            host.type(f"/create classic 4 --name '{name}'" if name else "/create cardiva 2")
            host.out.wait_for(r"table #\d+")
        terminal.start([*command(), f"127.0.0.1:{port}", "--name", "tester"], 80, 24,
                       env={"XDG_STATE_HOME": str(tmp_path / "tester")})
        screen = terminal.wait_for(lambda s: "host3's table" in s, "the lobby")
        rows = [row for row in screen.splitlines() if re.match(r"  #\d", row)]
        assert len(rows) == 4, screen
        starts = {get_cwidth(re.split(r"classic|cardiva", row)[0]) for row in rows}
        assert len(starts) == 1, f"the rule sets in one column:\n{screen}"
        assert re.search(r"#1 +sixteen-chars-xy +classic", screen)
        assert re.search(r"#2 +a table name forty… +classic", screen), "cut at 20 columns"
        terminal.type("/quit")
        assert terminal.exited() == "0"
        for host in hosts:  # each ends by itself before its pipes close
            host.type("/quit")
            assert host.exit_status() == 0


def test_help_alone_shows_what_can_be_done_where_the_player_stands(
        terminal: Terminal, tmp_path: Path) -> None:
    with server(tmp_path) as (_, port):
        terminal.start([*command(), f"127.0.0.1:{port}", "--name", "tester"], 80, 24,
                       env={"XDG_STATE_HOME": str(tmp_path / "state")})
        terminal.wait_for(lambda s: "lobby>" in s and "connected to" in s, "the lobby")
        terminal.type("/help")
        lobby = terminal.wait_for(lambda s: "In the lobby" in s, "the lobby's help")
        assert "/create RULES SEATS" in lobby and "/join TABLE|CODE" in lobby
        assert "On your turn" not in lobby and "/moves" not in lobby, lobby

        terminal.type("/create classic 2")
        terminal.wait_for(lambda s: "table #1" in s, "our table")
        terminal.keys("C-l")  # a clean screen: the next page is the only one on it
        terminal.type("/help")
        seated = terminal.wait_for(lambda s: "At a table" in s, "the table's help")
        assert "/bot SEAT [LEVEL]" in seated and "/start" in seated and "/leave" in seated
        assert "On your turn" not in seated and "/create" not in seated, seated
        terminal.type("/quit")
        assert terminal.exited() == "0"


def test_help_during_a_match_shows_the_moves(terminal: Terminal) -> None:
    terminal.start(play("--bots", "1", "--seed", "5", "--ascii"), 80, 24)
    terminal.wait_for(lambda s: "your move:" in s, "our turn")
    terminal.type("/help")
    shown = terminal.wait_for(lambda s: "On your turn" in s, "the match's help")
    assert "/moves" in shown and "/create" not in shown, shown


def test_a_paste_of_pages_is_cut_to_what_a_chat_line_holds(terminal: Terminal) -> None:
    terminal.start(play("--bots", "1", "--seed", "5", "--ascii"), 80, 24)
    terminal.wait_for(lambda s: "your move:" in s, "our turn")
    pasted = "/say " + "abcdefghi " * 600  # 6,005 characters, bracketed as a paste is
    terminal.tmux("set-buffer", "-b", "paste", pasted)
    terminal.tmux("paste-buffer", "-p", "-b", "paste", "-t", "play")
    terminal.wait_for(lambda s: "Only the first 305 characters were kept" in s, "the cut")
    terminal.keys("Enter")
    terminal.wait_for(lambda s: "tester: abcdefghi" in s, "the chat line, sent")
    said = terminal.history()
    assert "refused" not in said and "too long" not in said, said
    # The line typed and the line said, each at most 305 characters: 61 words in all.
    assert said.count("abcdefghi") <= 61, said


def test_at_40_by_12_the_others_moves_show_above_the_status(terminal: Terminal) -> None:
    terminal.start(play("--bots", "3", "--seed", "5", "--ascii"), 40, 12)
    move_once(terminal)
    screen = terminal.wait_for(lambda s: "your move:" in s and re.search(
        r"^bot \d (played|drew|passed)", s, re.M) is not None, "the bots' moves, seen")
    rows = screen.splitlines()
    prompt = max(i for i, row in enumerate(rows) if row.startswith("your move>"))
    assert len(rows) - prompt - 1 <= 7, f"the status leaves the log rows:\n{screen}"
    assert re.search(r"^hand ", screen, re.M) and "top " in screen, screen
    assert re.search(r"bot 4: \d+ cards?", screen), "every seat's cards, packed"


def test_offline_matches_are_listed_replayed_and_exported_later(
        terminal: Terminal, tmp_path: Path) -> None:
    from prompt_toolkit.input import create_pipe_input
    from test_client_offline_history import finished_match

    data = tmp_path / "data"  # the user's data folder, where `play` keeps its matches
    with create_pipe_input() as pipe:
        finished_match(pipe, data / "pisyedili" / "offline-matches.sqlite3",
                       data / "pisyedili" / "offline")
    saved = tmp_path / "kept.json"
    terminal.start(play("--bots", "1", "--seed", "5", "--ascii"), 100, 30, data_home=data)
    terminal.wait_for(lambda s: "your move:" in s, "a new match")
    terminal.type("/history")
    listed = terminal.wait_for(lambda s: "Your offline matches" in s, "the list")
    assert re.search(r"#1 .* classic +4 deals +tester \d+", listed), listed
    assert "keeps no match history" not in listed
    terminal.type("/replay 1")
    terminal.wait_for(lambda s: "Replay of match #1" in s and "deal 1 of 4" in s, "the replay")
    terminal.type("q")
    terminal.type(f"/export 1 {saved}")
    terminal.wait_for(lambda s: "saved match #1" in s, "the export")
    assert saved.is_file()
