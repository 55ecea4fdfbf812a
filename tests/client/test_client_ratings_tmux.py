"""Ratings in the real `pisyedili` client, in a real terminal (tmux), against a real
server process with a store: a registered player's rated match against a bot ends with
each seat's change ("you: 1500? → 1395?, −105"), `/top` leaves provisional ratings out
and says how to see them, `/top all` lists them marked "?", bots marked as bots, and
`/profile` shows the rating and a sparkline of its history. The player times out twice,
so a stand-in bot finishes the seat (the match counts as played: docs/operating.md)."""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from process_output import server_process
from test_client_tmux import TMUX, Terminal, command

pytestmark = pytest.mark.skipif(TMUX is None, reason="tmux is not installed")

PASSWORD = "correct horse battery"
FAST = ("--bot-delay", "0.05", "--deal-pause", "0.2", "--grace-seconds", "30")


@pytest.fixture
def served(tmp_path: Path) -> Iterator[int]:
    with server_process("--listen", "tcp:0:interface=127.0.0.1", "--db",
                        str(tmp_path / "store.sqlite3"), "--no-announce", *FAST) as (_, port):
        yield port


@pytest.fixture
def terminal() -> Iterator[Terminal]:
    term = Terminal(f"pisyedili-ratings-{uuid.uuid4().hex[:8]}")
    try:
        yield term
    finally:
        term.tmux("kill-server")


def rated_match(term: Terminal) -> str:
    """A rated one-deal match against an easy bot, to its rating change; the screen."""
    term.type("/create classic 2 --rated --turn 1 --match-end deals:1")
    term.wait_for(lambda s: "rated" in s, "the table")
    term.type("/bot 2 easy")
    term.wait_for(lambda s: "bot 2" in s, "the bot")
    term.type("/start")
    return term.wait_for(lambda s: "Ratings after the match (classic):" in s,
                         "the match's rating change", timeout=120)


def test_a_rated_match_its_change_the_ladder_and_a_profile_in_a_terminal(
        terminal: Terminal, served: int, tmp_path: Path) -> None:
    terminal.start([*command(), f"127.0.0.1:{served}", "--name", "Ayse"],
                   100, 40, data_home=tmp_path / "data",
                   env={"XDG_STATE_HOME": str(tmp_path / "state")})
    terminal.wait_for(lambda s: "connected to" in s, "the welcome")
    terminal.type("/register")
    terminal.wait_for(lambda s: "New password:" in s, "the password prompt")
    terminal.type(PASSWORD)
    terminal.wait_for(lambda s: "Again:" in s, "the second prompt")
    terminal.type(PASSWORD)
    terminal.wait_for(lambda s: "logged in as Ayse" in s, "the account")

    screen = rated_match(terminal)
    mine = re.search(r"you: 1500\? → (\d+)\?, ([+−±]\d+)", screen)
    assert mine, screen
    after, change = mine.groups()
    assert int(after) - 1500 == int(change.replace("−", "-").replace("±", "")), screen
    assert re.search(r"bot 2: 1500\? → \d+\?, [+−±]\d+", screen), screen

    terminal.type("/top")
    screen = terminal.wait_for(lambda s: "/top all lists them" in s, "the ladder's hint")
    assert "nobody has a settled rating of it yet" in screen

    terminal.type("/top all")
    screen = terminal.wait_for(lambda s: re.search(r"2\. .*\d+\?", s) is not None,
                               "the provisional ratings")
    rows = dict(re.findall(r"^\s+\d\. (Ayse|bot \(easy\))\s+(\d+\?)", screen, re.M))
    assert rows.get("Ayse") == f"{after}?", screen
    assert "bot (easy)" in rows, screen  # a bot level, named as one

    terminal.type("/profile Ayse")
    screen = terminal.wait_for(lambda s: "the last 1 rated match" in s, "the profile")
    assert f"classic: rating {after}?, 1 rated" in screen, screen
    spark = re.search(r"^\s+(\S{2})\s+1500 → (\d+), the last 1 rated match", screen, re.M)
    assert spark and spark.group(2) == after, screen
    assert set(spark.group(1)) <= set("▁▂▃▄▅▆▇█") and spark.group(1)[0] != spark.group(1)[1]
