"""Offline matches kept in a history of their own: a match `pisyedili play` finishes is
listed by `/history`, replayed by `/replay` and saved by `/export` in every later `play`
(each one a session of its own), as a server's history would be. The whole client
against the embedded server, in this process (test_client_app.py's way)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from prompt_toolkit.input import PipeInput
from prompt_toolkit.output import DummyOutput
from test_client_app import autoplay, in_log, pipe, quit_, run, start, until

from pisyedili.client import replay
from pisyedili.client.app import ClientApp
from pisyedili.client.offline import OfflineOptions
from pisyedili.client.render import Look

__all__ = ["pipe"]  # the fixture, used by name


def finished_match(pipe: PipeInput, history: Path, journals: Path) -> ClientApp:
    """A whole offline match (one easy bot, fast), played into `history`."""
    app = ClientApp(Look(unicode=False, color=False), "tester", input=pipe,
                    output=DummyOutput())
    opts = OfflineOptions(rules="classic", bots=1, seed=3, bot_delay=0.0, deal_pause=0.0,
                          level="easy", journals=journals, history=history)

    async def scenario(reactor: Any) -> None:
        task = start(app, reactor, opts)
        assert await autoplay(app, pipe, lambda: in_log(app, "match over")) > 0
        pipe.send_text("/history\r")
        await until(app, lambda: in_log(app, "Your offline matches"), "this match listed")
        pipe.send_text("/quit\r")
        await task

    run(scenario)
    return app


def test_a_finished_offline_match_is_kept_for_every_later_play(
        pipe: PipeInput, tmp_path: Path) -> None:
    history, journals = tmp_path / "offline-matches.sqlite3", tmp_path / "offline"
    first = finished_match(pipe, history, journals)
    assert not in_log(first, "keeps no match history")
    assert any(line.startswith("  #1 ") and "tester" in line for line in first.log)

    later = ClientApp(Look(unicode=False, color=False), "tester", input=pipe,
                      output=DummyOutput())
    saved = tmp_path / "match.json"
    opts = OfflineOptions(rules="classic", bots=2, seed=5, bot_delay=0.0,
                          journals=journals, history=history)

    async def scenario(reactor: Any) -> None:
        task = start(later, reactor, opts)
        await until(later, lambda: later.state.my_turn, "the new match's first turn")
        pipe.send_text("/history\r")
        await until(later, lambda: in_log(later, "Your offline matches (1-1 of 1"),
                    "the earlier match, listed")
        pipe.send_text("/replay 1\r")
        await until(later, lambda: later.replay is not None, "its replay")
        pipe.send_text("q\r")
        pipe.send_text(f"/export 1 {saved}\r")
        await until(later, lambda: in_log(later, "saved match #1"), "the export")
        quit_(pipe)
        await task

    run(scenario)
    match = replay.load(saved)
    assert match.summary["players"][0]["name"] == "tester"
    assert len(match.deals) == 4, "a classic match is 4 deals (C16), every one kept"
