"""A server stopped mid-deal and started again on the same file: the tables, seats and
sessions are back, every player's view is what it last received, and the match plays
on to its end. Real sockets and a real SQLite file, in this process (a `SIGKILL`ed
server process is `test_restart_process.py`)."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
import pytest_twisted
from net_match import open_table, pending_turn, play_to_match_end
from twisted.internet.defer import Deferred, gatherResults
from wireclient import Msg, Server, WireClient, event_of

from pisyedili.server.store.journal import StoreJournal
from pisyedili.server.table.core import TableSettings

SETTINGS = TableSettings(turn_seconds=0, grace_seconds=60, bot_delay=0, deal_pause=0)


def last_seen(client: WireClient) -> Msg:
    return next(m for m in reversed(client.received) if m["type"] in ("update", "table"))


async def crash(server: Server) -> None:
    """Stop as a killed process would: what is committed stays, nothing more is written
    (not the disconnections), no goodbye is sent."""
    journal = server.factory.journal
    assert isinstance(journal, StoreJournal)
    journal.close()
    for table in server.factory.lobby.tables():
        table.stop()
    await server.stop()


async def start(path: Path) -> Server:
    from twisted.internet import reactor
    return await Server.start(settings=SETTINGS, journal=StoreJournal.open(path, reactor))


@pytest_twisted.ensureDeferred
async def test_a_restarted_server_gives_every_seat_back(tmp_path: Path) -> None:
    path = tmp_path / "server.sqlite3"
    first = await start(path)
    rng = random.Random(5)
    try:
        (ayse, mehmet), table_id = await open_table(
            first, ["Ayşe", "Mehmet"], "cardiva", 3, bots=1, options={"match_end": "deals:2"})
        for _ in range(6):  # a few moves into the deal
            mover, turn = await pending_turn([ayse, mehmet])
            await mover.ok("move", move=rng.choice(turn["moves"]))
        await pending_turn([ayse, mehmet])
        before = {c.welcome["name"]: (c.welcome["token"], c.welcome["player"], last_seen(c))
                  for c in (ayse, mehmet)}
    finally:
        await crash(first)

    second = await start(path)
    try:
        lobby = await (await second.connect("Zeynep")).request("lobby_subscribe")
        assert [t["id"] for t in lobby["tables"]] == [table_id]
        imposter = await second.connect("Ayşe")
        assert imposter.welcome["name"] != "Ayşe"  # the name is still held
        back: list[WireClient] = []
        for name, (token, player, seen) in before.items():
            client = await second.connect(name, token=token)
            assert client.welcome["resumed"] is True
            assert (client.welcome["player"], client.welcome["name"]) == (player, name)
            snap = await client.wait(lambda m: m["type"] == "table", consume=False)
            assert snap["table"]["id"] == table_id
            assert snap["view"] == seen["view"], name
            assert snap.get("moves") == seen.get("moves"), name
            back.append(client)
        results: list[Any] = await gatherResults([
            Deferred.fromCoroutine(play_to_match_end(c, rng)) for c in back])
        assert results[0] == results[1]
        newcomer = await second.connect("Deniz")
        created = await newcomer.ok("create_table", rules="classic", seats=2)
        assert created["table"]["id"] > table_id  # ids are never handed out twice
    finally:
        await second.stop()


@pytest_twisted.ensureDeferred
async def test_a_player_who_stays_away_gets_the_stand_in_after_a_restart(
        tmp_path: Path) -> None:
    from twisted.internet import reactor
    from twisted.internet.task import Clock

    path = tmp_path / "away.sqlite3"
    first = await start(path)
    try:
        (ayse, mehmet), _ = await open_table(first, ["Ayşe", "Mehmet"], "classic", 2)
        await pending_turn([ayse, mehmet])
        token = mehmet.welcome["token"]
    finally:
        await crash(first)

    clock = Clock()
    clock.advance(reactor.seconds())  # type: ignore[misc]  # the stored times are the reactor's
    # The table's timers on the test's clock; the journal commits on reactor turns.
    second = await Server.start(clock=clock, settings=SETTINGS,
                                journal=StoreJournal.open(path, reactor))
    try:
        back = await second.connect("Mehmet", token=token)
        snap = await back.wait(lambda m: m["type"] == "table", consume=False)
        seats = snap["table"]["seats"]
        ayse_seat = 1 - snap["you"]["seat"]
        assert seats[ayse_seat]["connected"] is False and "held_by_bot" not in seats[ayse_seat]
        clock.advance(SETTINGS.grace_seconds + 1)  # Ayşe never comes back
        update = await back.wait(lambda m: m["type"] == "table_update"
                                 and "held_by_bot" in m["table"]["seats"][ayse_seat])
        assert update["table"]["seats"][ayse_seat]["held_by_bot"] == "disconnected"
    finally:
        await second.stop()


TIMED = TableSettings(turn_seconds=60, grace_seconds=60, bot_delay=0, deal_pause=0)


@pytest_twisted.ensureDeferred
async def test_a_turn_keeps_its_time_over_a_restart(tmp_path: Path) -> None:
    """The player's clock stands still while the server is down: a turn with 58 s left
    at its last command has 58 s after a 20 s outage, and runs out 58 s later."""
    from twisted.internet import reactor
    from twisted.internet.task import Clock

    path = tmp_path / "clock.sqlite3"
    clock = Clock()
    clock.advance(1_000_000.0)
    # The table's times on the test's clock, in both runs; the journal commits on
    # reactor turns.
    first = await Server.start(clock=clock, settings=TIMED,
                               journal=StoreJournal.open(path, reactor))
    try:
        players, _ = await open_table(first, ["Ayşe", "Mehmet"], "classic", 2)
        mover, turn = await pending_turn(players)
        assert turn["deadline"] == TIMED.turn_seconds
        clock.advance(2)
        seen = await mover.request("resync")  # the table's last command: 58 s left
        assert seen["deadline"] == pytest.approx(58, abs=0.01)
        tokens = {c.welcome["name"]: c.welcome["token"] for c in players}
        name = mover.welcome["name"]
    finally:
        await crash(first)

    clock.advance(20)  # the outage
    second = await Server.start(clock=clock, settings=TIMED,
                                journal=StoreJournal.open(path, reactor))
    try:
        back = {n: await second.connect(n, token=t) for n, t in tokens.items()}
        snap = await back[name].wait(lambda m: m["type"] == "table", consume=False)
        assert "moves" in snap
        assert snap["deadline"] == pytest.approx(58, abs=0.01)
        clock.advance(57.5)
        await back[name].request("ping")  # all the server sent by now has arrived
        assert back[name].events("timeout") == []
        clock.advance(1)
        timeout = event_of(await back[name].wait_event("timeout"), "timeout")
        assert timeout["seat"] == snap["you"]["seat"]
    finally:
        await second.stop()
