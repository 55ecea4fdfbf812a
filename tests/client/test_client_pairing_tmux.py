"""Play now and invitations in the real terminal client (tmux), three players on a real
server: `/play` opens a quick table, `/invite` reaches another terminal, which
`/decline`s then `/accept`s, a third `/play` fills the last seat and the match starts
with no `/start`; a quick table's bots come after the host's wait."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest
from test_client_connect import server
from test_client_tmux import TMUX, Terminal, command

pytestmark = pytest.mark.skipif(TMUX is None, reason="tmux is not installed")

STARTED = "— deal 1 —"
"""The log's line once a match is dealt."""


def joined(port: int, name: str, stack: ExitStack) -> Terminal:
    """`pisyedili` as `name` in a terminal of its own, connected."""
    term = Terminal(f"pisyedili-test-{uuid.uuid4().hex[:8]}")
    stack.callback(term.tmux, "kill-server")
    term.start([*command(), f"127.0.0.1:{port}", "--name", name], 100, 30)
    term.wait_for(lambda s: f"as {name}" in s, f"{name} connected")
    return term


@pytest.fixture
def port(tmp_path: Path) -> Iterator[int]:
    with server(tmp_path) as (_, listening):
        yield listening


def test_an_invitation_declined_then_accepted_and_play_now_fills_the_table(
        port: int) -> None:
    with ExitStack() as stack:
        ayse, mehmet, zeynep = (joined(port, n, stack) for n in ("ayse", "mehmet", "zeynep"))
        ayse.type("/play classic 3 --bots 0")
        ayse.wait_for(lambda s: "A quick table: it starts once every seat is filled." in s,
                      "the quick table opened")
        ayse.type("/invite AYSE")
        ayse.wait_for(lambda s: "You cannot invite yourself" in s, "the refusal")

        ayse.type("/invite mehmet")
        mehmet.wait_for(lambda s: "ayse invites you to ayse's table" in s
                        and "/accept or /decline" in s, "the invitation")
        mehmet.type("/decline")
        ayse.wait_for(lambda s: "mehmet declined your invitation." in s, "the decline told")
        mehmet.type("/accept")
        mehmet.wait_for(lambda s: "You hold no invitation to answer." in s, "nothing left")

        ayse.type("/invite mehmet")
        mehmet.wait_for(lambda s: "ayse invites you" in s
                        and "#2" in s, "the second invitation")
        mehmet.type("/accept")
        mehmet.wait_for(lambda s: "seat 2: mehmet ready" in s, "mehmet seated, ready")
        ayse.wait_for(lambda s: "mehmet accepted your invitation." in s, "the accept told")

        zeynep.type("/play classic")
        for term in (ayse, mehmet, zeynep):  # full and ready: dealt with no /start
            term.wait_for(lambda s: STARTED in s, "the match dealt")
        for term in (ayse, mehmet, zeynep):
            term.type("/quit")
            term.wait_for(lambda s: "type /quit again" in s, "the question")
            term.type("/quit")
            assert term.exited() == "0"


def test_a_quick_tables_bots_come_after_the_hosts_wait(port: int) -> None:
    with ExitStack() as stack:
        ayse = joined(port, "ayse", stack)
        ayse.type("/play cardiva 2 --bots 1")
        ayse.wait_for(lambda s: STARTED in s, "the bot seated and the match dealt")
        history = ayse.history()
        told = history.index("bots take the seats still open in 1 second")
        assert told < history.index("bot 2 (medium) takes seat 2") < history.index(STARTED)
