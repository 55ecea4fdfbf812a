"""Ratings over loopback: a rated match updates the players' and the bot level's
OpenSkill ratings exactly as the library's own `rate()` computes them from the final
ranking (C16: the lowest total wins), and tells its seats and its watchers the change
on the scale players read; a casual match leaves them alone and tells nothing; the
ladder shows settled ratings unless asked for the provisional ones; a profile carries
each rating's history; guests do not sit at rated tables."""

from __future__ import annotations

import random
from dataclasses import replace
from typing import Any

import pytest
import pytest_twisted
from net_match import play_to_match_end
from openskill.models import PlackettLuce
from twisted.internet import reactor
from twisted.internet.defer import Deferred, gatherResults
from wireclient import Msg, Server, WireClient

from pisyedili.server.people import ratings
from pisyedili.server.people.accounts import CHEAP, AccountSettings
from pisyedili.server.people.rating_scale import PROVISIONAL_SIGMA, display
from pisyedili.server.store import MEMORY, Archive, open_store
from pisyedili.server.table.effects import MatchOver

PASSWORD = "correct horse battery"


async def start(db: str = MEMORY) -> Server:
    return await Server.start(archive=Archive(lambda: open_store(db), reactor),
                              accounts=AccountSettings(cost=CHEAP))


async def member(server: Server, name: str) -> WireClient:
    client = await server.connect(name)
    assert (await client.request("register", password=PASSWORD))["type"] == "account"
    return client


async def play_match(server: Server, host: WireClient, other: WireClient, *,
                     rated: bool, seed: int, watcher: WireClient | None = None) -> Msg:
    """Host, other and an easy bot play one deal of classic to its end (`watcher`
    watching it); `match_end`."""
    snap = await host.ok("create_table", rules="classic", seats=3, rated=rated,
                         options={"match_end": "deals:1"})
    joined = await other.ok("join_table", table=snap["table"]["id"])
    assert joined["you"]["seat"] == 1
    if watcher is not None:
        await watcher.ok("join_table", table=snap["table"]["id"], spectate=True)
    await host.ok("add_bot", seat=2, level="easy")
    await other.ok("ready", ready=True)
    await host.ok("start")
    rng = random.Random(seed)
    ends: list[Any] = await gatherResults([
        Deferred.fromCoroutine(play_to_match_end(c, rng)) for c in (host, other)])
    if watcher is not None:  # told as a member of the table: it stays till then
        if rated:
            await watcher.wait(lambda m: m["type"] == "rating_change", consume=False)
        await watcher.ok("leave_table")
    for client in (host, other):
        await client.ok("leave_table")
    assert server.archive is not None
    await server.archive.flush()  # the match and its ratings are kept
    result: Msg = ends[0]
    return result


def by_name(rows: list[Msg]) -> dict[str, Msg]:
    return {row["name"]: row for row in rows}


@pytest_twisted.ensureDeferred
async def test_a_rated_match_rates_players_and_the_bot_level_as_openskill_does(
        db: str) -> None:
    server = await start(db)
    try:
        ayse, mehmet = await member(server, "Ayşe"), await member(server, "Mehmet")
        end = await play_match(server, ayse, mehmet, rated=True, seed=3)
        model = PlackettLuce()
        expected = model.rate([[model.rating()] for _ in range(3)],
                              ranks=[float(t) for t in end["totals"]])
        # One rated match settles nobody: the ladder is empty unless asked for them.
        assert (await ayse.request("leaderboard", rules="classic"))["rows"] == []
        board = await ayse.request("leaderboard", rules="classic", provisional=True)
        assert board["type"] == "leaderboard", board
        rows = by_name(board["rows"])
        assert set(rows) == {"Ayşe", "Mehmet", "bot (easy)"}
        for seat, name in enumerate(("Ayşe", "Mehmet", "bot (easy)")):
            (new,) = expected[seat]
            row = rows[name]
            assert row["mu"] == pytest.approx(new.mu, abs=1e-3), name
            assert row["sigma"] == pytest.approx(new.sigma, abs=1e-3), name
            assert row["rating"] == pytest.approx(new.ordinal(), abs=1e-3), name
            assert row["display"] == display(new.mu) and row["provisional"] is True, name
            assert (row["matches"], row["wins"]) == (1, int(seat in end["winners"])), name
        assert rows["bot (easy)"]["kind"] == "bot" and rows["bot (easy)"]["level"] == "easy"
        assert [r["rank"] for r in board["rows"]] == [1, 2, 3]
        assert [r["mu"] for r in board["rows"]] == sorted(
            (r["mu"] for r in board["rows"]), reverse=True)

        # A casual match: the ratings stay; the profile counts the match all the same.
        casual_end = await play_match(server, ayse, mehmet, rated=False, seed=4)
        after = await ayse.request("leaderboard", rules="classic", provisional=True)
        assert after["rows"] == board["rows"]
        profile = await mehmet.request("profile", name="ayşe")
        assert profile["type"] == "profile" and profile["name"] == "Ayşe"
        assert profile["matches"] == 2
        assert profile["wins"] == int(0 in end["winners"]) + int(0 in casual_end["winners"])
        assert [m["rated"] for m in profile["recent"]] == [False, True]
        assert profile["recent"][1]["players"] == ["Ayşe", "Mehmet", "bot 3"]
        (rating,) = profile["ratings"]
        assert rating["mu"] == rows["Ayşe"]["mu"] and rating["rank"] == rows["Ayşe"]["rank"]
        assert (rating["display"], rating["provisional"]) == (rows["Ayşe"]["display"], True)
        assert [p["display"] for p in rating["history"]] == [rows["Ayşe"]["display"]]
        assert all(not c.invalid for c in (ayse, mehmet))
        empty = await ayse.request("leaderboard", rules="cardiva")
        assert empty["rows"] == []
    finally:
        await server.stop()


@pytest_twisted.ensureDeferred
async def test_every_seat_and_watcher_is_told_each_rated_matchs_change() -> None:
    server = await start()
    try:
        ayse, mehmet = await member(server, "Ayşe"), await member(server, "Mehmet")
        watcher = await server.connect("Zeynep")  # a guest may watch a rated table
        changes: list[list[Msg]] = []
        for seed in (3, 4):
            await play_match(server, ayse, mehmet, rated=True, seed=seed, watcher=watcher)
            told = [await c.wait_type("rating_change") for c in (ayse, mehmet, watcher)]
            assert told[0] == told[1] == told[2], told
            changes.append(told[0]["seats"])
        first, second = changes
        assert [(s["seat"], s["name"]) for s in first] == [
            (0, "Ayşe"), (1, "Mehmet"), (2, "bot 3")]
        assert all(s["before"] == 1500 and s["provisional"] for s in first)
        # The second match starts where the first left each seat.
        assert [s["before"] for s in second] == [s["after"] for s in first]
        board = await ayse.request("leaderboard", rules="classic", provisional=True)
        shown = {r["name"]: r["display"] for r in board["rows"]}
        # (A server bot is named by its seat at its table; its level's row by the level.)
        assert {s["name"].replace("bot 3", "bot (easy)"): s["after"] for s in second} == shown
        profile = await watcher.request("profile", name="Mehmet")
        (rating,) = profile["ratings"]
        assert [p["display"] for p in rating["history"]] == [first[1]["after"],
                                                             second[1]["after"]]
        assert rating["history"][0]["at"] <= rating["history"][1]["at"]

        # A casual match tells nothing: by a ping's answer, which the server sends
        # after anything the kept match could have caused, none came.
        await play_match(server, ayse, mehmet, rated=False, seed=5, watcher=watcher)
        for client in (ayse, mehmet, watcher):
            start_at = len(client.received)
            await client.ok("ping")
            assert "rating_change" not in [m["type"] for m in client.received[start_at:]]
        assert all(not c.invalid for c in (ayse, mehmet, watcher))
    finally:
        await server.stop()


@pytest_twisted.ensureDeferred
async def test_the_ladder_leaves_provisional_ratings_out_and_marks_bots(db: str) -> None:
    server = await start(db)
    try:
        ayse, robo = await member(server, "Ayşe"), await server.connect("Robo")
        assert (await robo.request("register", password=PASSWORD, bot=True))["bot"] is True
        await member(server, "Mehmet")
        assert server.archive is not None
        accounts = server.factory.accounts
        assert accounts is not None
        subject = {name: f"a:{accounts.find(name).id}"  # type: ignore[union-attr]
                   for name in ("Ayşe", "Robo", "Mehmet")}
        settled, unsure = PROVISIONAL_SIGMA - 1, PROVISIONAL_SIGMA + 1
        seeded = [(subject["Ayşe"], 26.0, settled), ("bot:hard", 31.0, settled),
                  (subject["Robo"], 24.0, settled), (subject["Mehmet"], 40.0, unsure)]

        def seed(store: Any) -> None:
            for who, mu, sigma in seeded:
                store.save_rating("classic", who, mu, sigma, mu - 3 * sigma, False, 1.0)

        await server.archive.use(seed)
        board = await ayse.request("leaderboard", rules="classic")
        assert [(r["rank"], r["name"], r["kind"], r.get("bot"), r["display"],
                 r["provisional"]) for r in board["rows"]] == [
            (1, "bot (hard)", "bot", None, display(31.0), False),
            (2, "Ayşe", "player", None, display(26.0), False),
            (3, "Robo", "player", True, display(24.0), False)]
        everyone = await ayse.request("leaderboard", rules="classic", provisional=True)
        assert [(r["name"], r["provisional"]) for r in everyone["rows"]][3:] == [
            ("Mehmet", True)]  # after every settled rating, however high
        profile = await ayse.request("profile", name="Mehmet")
        (rating,) = profile["ratings"]
        assert (rating["display"], rating["provisional"], rating["rank"]) == (
            display(40.0), True, 4)
        assert not ayse.invalid
    finally:
        await server.stop()


@pytest_twisted.ensureDeferred
async def test_guests_watch_rated_tables_and_cannot_open_them() -> None:
    server = await start()
    try:
        ayse = await member(server, "Ayşe")
        guest = await server.connect("Guest")
        refused = await guest.request("create_table", rules="classic", seats=2, rated=True)
        assert refused["code"] == "account_required"
        snap = await ayse.ok("create_table", rules="classic", seats=2, rated=True)
        assert snap["table"]["rated"] is True  # the table says so, not only the lobby
        casual = await member(server, "Mehmet")
        casual_snap = await casual.ok("create_table", rules="classic", seats=2)
        assert "rated" not in casual_snap["table"]
        lobby = await guest.request("lobby_subscribe")
        assert [t.get("rated", False) for t in lobby["tables"]] == [True, False]
        watching = await guest.ok("join_table", table=snap["table"]["id"])
        assert watching["you"]["seat"] is None and watching["table"]["rated"] is True
        sit = await guest.request("sit", seat=1)
        assert sit["code"] == "account_required"
        unknown = await guest.request("profile", name="Nobody")
        assert unknown["code"] == "no_such_player"
    finally:
        await server.stop()


@pytest_twisted.ensureDeferred
async def test_leaderboard_and_profile_replies_keep_the_order_of_requests() -> None:
    # Both are read on the store's thread: a ping sent right behind must not overtake.
    server = await start()
    try:
        ayse = await member(server, "Ayşe")
        for rid, request in ((101, {"type": "leaderboard", "rules": "classic"}),
                             (201, {"type": "profile", "name": "Ayşe"})):
            start_at = len(ayse.received)
            ayse.send({**request, "id": rid})
            ayse.send({"type": "ping", "id": rid + 1})
            await ayse.wait(lambda m, rid=rid: m.get("id") == rid, consume=False)  # type: ignore[misc]
            await ayse.wait(lambda m, rid=rid: m.get("id") == rid + 1, consume=False)  # type: ignore[misc]
            answers = [(m["type"], m["id"]) for m in ayse.received[start_at:] if "id" in m]
            assert answers == [(request["type"], rid), ("pong", rid + 1)]
    finally:
        await server.stop()


def test_leavers_rank_below_everyone_who_played_on_the_earliest_last() -> None:
    # Seats 1 and 3 were left (their server bots scored best); seat 3's player left first.
    players = [{"seat": 0, "name": "Ayşe", "kind": "human", "level": None},
               {"seat": 1, "name": "Mehmet", "kind": "human", "level": None,
                "left_at": 100.0, "forfeit": True},
               {"seat": 2, "name": "bot (easy)", "kind": "bot", "level": "easy"},
               {"seat": 3, "name": "Deniz", "kind": "human", "level": None,
                "left_at": 50.0, "forfeit": True}]
    match = MatchOver(table_id=1, rules="classic", options={}, players=players,
                      started_at=0.0, finished_at=200.0, totals=[50, 0, 10, 0],
                      winners=[1, 3], deals=[], rated=True)
    assert ratings.ranks(match) == [1.0, 2.0, 0.0, 3.0]
    # Equal totals among those who played on share a place, as before.
    assert ratings.ranks(replace(match, totals=[10, 0, 10, 0])) == [0.0, 1.0, 0.0, 2.0]
