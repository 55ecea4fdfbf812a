"""Leaving a rated match is a forfeit (issue 37, fault 3), over real sockets.

A player who leaves a rated match must not be rated for what the server bot that
finishes the seat achieves (if the bot won, the leaver would gain and the player who
played on would lose). The leaver ranks below every seat that played on, whatever the
bot scores, the kept match says the seat was left, and a dropped connection that comes
back within the grace period is no forfeit. Two accounts seated from one address at a
rated match are allowed (a LAN party) but logged and flagged for operators.
"""

from __future__ import annotations

import random
from dataclasses import replace
from typing import Any

import pytest_twisted
from net_match import play, shedding
from openskill.models import PlackettLuce
from twisted.internet import reactor
from twisted.internet.defer import Deferred, gatherResults
from twisted.logger import globalLogPublisher
from wireclient import UNTIMED_NO_DELAYS, Msg, Server, WireClient

from pisyedili.server.people.accounts import CHEAP, AccountSettings
from pisyedili.server.store import MEMORY, Archive, open_store
from pisyedili.server.table.core import TableSettings

PASSWORD = "correct horse battery"
MODEL = PlackettLuce()


async def start(settings: TableSettings = UNTIMED_NO_DELAYS) -> Server:
    return await Server.start(archive=Archive(lambda: open_store(MEMORY), reactor),
                              accounts=AccountSettings(cost=CHEAP), settings=settings)


async def member(server: Server, name: str, source: str) -> WireClient:
    client = await server.connect(name, source=source)
    assert (await client.request("register", password=PASSWORD))["type"] == "account"
    return client


def weakest(moves: list[Msg]) -> Msg:
    """The move that helps least: pass, else draw, else the first offered. A seat
    played so loses its deal to the server bot that finishes the other seat."""
    for kind in ("pass", "draw"):
        for move in moves:
            if move["kind"] == kind:
                return move
    return moves[0]


async def rated_table(host: WireClient, other: WireClient, seats: int = 2) -> int:
    """`host` opens a rated classic table of one deal, `other` sits at seat 1, an easy
    bot fills any seat left; started."""
    snap = await host.ok("create_table", rules="classic", seats=seats, rated=True,
                         options={"match_end": "deals:1"})
    joined = await other.ok("join_table", table=snap["table"]["id"])
    assert joined["you"]["seat"] == 1
    for seat in range(2, seats):
        await host.ok("add_bot", seat=seat, level="easy")
    await other.ok("ready", ready=True)
    await host.ok("start")
    return int(snap["table"]["id"])


async def kept(server: Server) -> dict[str, Any]:
    """The latest kept match as the store holds it (what an operator's query reads)."""
    assert server.archive is not None
    await server.archive.flush()
    (row,) = await server.archive.query(lambda store: store.recent_matches(1))
    return row


async def ladder(client: WireClient) -> dict[str, Msg]:
    board = await client.request("leaderboard", rules="classic", provisional=True)
    assert board["type"] == "leaderboard", board
    return {row["name"]: row for row in board["rows"]}


async def history_seat(client: WireClient, seat: int) -> Msg:
    page = await client.request("history", of="mine")
    assert page["type"] == "history", page
    players: list[Msg] = page["matches"][0]["players"]
    return players[seat]


@pytest_twisted.ensureDeferred
async def test_leaving_a_rated_match_after_two_moves_is_a_forfeit_whatever_the_bot_does(
        ) -> None:
    server = await start()
    try:
        ayse = await member(server, "Ayşe", "127.0.0.2")
        mehmet = await member(server, "Mehmet", "127.0.0.3")
        await rated_table(ayse, mehmet)

        async def leave_after_two() -> None:
            assert await play(mehmet, shedding(random.Random(5)), moves=2) is None
            await mehmet.ok("leave_table")

        results: list[Any] = await gatherResults([
            Deferred.fromCoroutine(play(ayse, weakest)),
            Deferred.fromCoroutine(leave_after_two())])
        end = results[0]
        assert end is not None
        # The server bot that took Mehmet's seat won the deal: by the totals alone,
        # Mehmet would be first and Ayşe last.
        assert end["winners"] == [1], end

        record = await kept(server)
        left = record["players"][1]
        assert left["kind"] == "human" and left["name"] == "Mehmet"
        assert left["forfeit"] is True and left["left_at"] >= record["started_at"]
        assert "left_at" not in record["players"][0]
        assert all("shared_address" not in p for p in record["players"])  # two addresses

        # Ayşe played on, so she ranks first; Mehmet forfeited, so he ranks last.
        (ayse_new,), (mehmet_new,) = MODEL.rate([[MODEL.rating()], [MODEL.rating()]],
                                                ranks=[0.0, 1.0])
        rows = await ladder(ayse)
        assert abs(rows["Ayşe"]["mu"] - ayse_new.mu) < 1e-3
        assert abs(rows["Mehmet"]["mu"] - mehmet_new.mu) < 1e-3
        assert rows["Mehmet"]["mu"] < MODEL.rating().mu < rows["Ayşe"]["mu"]
        assert (rows["Ayşe"]["wins"], rows["Mehmet"]["wins"]) == (0, 0)  # the bot's win

        seen = await history_seat(ayse, 1)  # what a client is told of the seat
        assert seen["kind"] == "human" and seen["forfeit"] is True
        assert seen["left_at"] == left["left_at"]
        profile = await ayse.request("profile", name="Mehmet")
        assert profile["wins"] == 0 and profile["recent"][0]["won"] is False
    finally:
        await server.stop()


@pytest_twisted.ensureDeferred
async def test_a_connection_back_within_the_grace_period_is_no_forfeit() -> None:
    server = await start()
    try:
        ayse = await member(server, "Ayşe", "127.0.0.2")
        mehmet = await member(server, "Mehmet", "127.0.0.3")
        await rated_table(ayse, mehmet)
        token = mehmet.welcome["token"]
        rng = random.Random(6)
        ayse_plays = Deferred.fromCoroutine(play(ayse, shedding(rng)))
        assert await play(mehmet, shedding(rng), moves=2) is None
        await mehmet.close()
        await server.dropped(mehmet)
        await ayse.wait(lambda m: m["type"] == "table_update" and any(
            s.get("name") == "Mehmet" and s.get("connected") is False
            for s in m["table"]["seats"]), consume=False)
        back = await server.connect("Mehmet", token=token, source="127.0.0.3")
        assert back.welcome["resumed"] is True
        ends: list[Any] = await gatherResults([
            ayse_plays, Deferred.fromCoroutine(play(back, shedding(rng)))])
        end = ends[0]

        record = await kept(server)
        assert all("left_at" not in p and "forfeit" not in p for p in record["players"])
        # Rated by the totals, as any match played to its end.
        rated = MODEL.rate([[MODEL.rating()], [MODEL.rating()]],
                           ranks=[float(t) for t in end["totals"]])
        rows = await ladder(ayse)
        for name, (new,) in zip(("Ayşe", "Mehmet"), rated, strict=True):
            assert abs(rows[name]["mu"] - new.mu) < 1e-3, name
        assert "forfeit" not in await history_seat(ayse, 1)
    finally:
        await server.stop()


@pytest_twisted.ensureDeferred
async def test_a_connection_lost_past_the_grace_period_to_the_end_is_a_forfeit() -> None:
    server = await start(replace(UNTIMED_NO_DELAYS, grace_seconds=0))
    try:
        ayse = await member(server, "Ayşe", "127.0.0.2")
        mehmet = await member(server, "Mehmet", "127.0.0.3")
        await rated_table(ayse, mehmet)
        ayse_plays = Deferred.fromCoroutine(play(ayse, weakest))
        assert await play(mehmet, shedding(random.Random(7)), moves=2) is None
        await mehmet.close()
        end = await ayse_plays
        assert end is not None

        record = await kept(server)
        assert record["players"][1]["forfeit"] is True
        rows = await ladder(ayse)
        assert rows["Mehmet"]["mu"] < MODEL.rating().mu < rows["Ayşe"]["mu"]
    finally:
        await server.stop()


@pytest_twisted.ensureDeferred
async def test_two_accounts_from_one_address_at_a_rated_match_are_logged_and_flagged(
        ) -> None:
    warnings: list[dict[str, Any]] = []

    def observe(event: dict[str, Any]) -> None:
        if event.get("shared_address"):
            warnings.append(event)

    globalLogPublisher.addObserver(observe)  # type: ignore[arg-type]
    server = await start()
    try:
        ayse = await member(server, "Ayşe", "127.0.0.4")
        mehmet = await member(server, "Mehmet", "127.0.0.4")
        table = await rated_table(ayse, mehmet, seats=3)
        assert [(w["table"], w["accounts"], w["address"]) for w in warnings] == [
            (table, ["Ayşe", "Mehmet"], "127.0.0.4")]
        rng = random.Random(8)
        await gatherResults([Deferred.fromCoroutine(play(c, shedding(rng)))
                             for c in (ayse, mehmet)])

        record = await kept(server)
        assert [p.get("shared_address") for p in record["players"]] == [1, 1, None]
        assert all("shared_address" not in p  # an operator's flag, not the players'
                   for p in (await ayse.request("history", of="mine"))["matches"][0]
                   ["players"])
        rows = await ladder(ayse)
        assert set(rows) == {"Ayşe", "Mehmet", "bot (easy)"}  # rated all the same
    finally:
        globalLogPublisher.removeObserver(observe)  # type: ignore[arg-type]
        await server.stop()
