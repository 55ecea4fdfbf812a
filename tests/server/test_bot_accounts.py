"""Bot accounts over loopback: a program registers as a bot (`register.bot`), and
everyone sees its seat as a bot's (the table, the lobby's row, the ladder, history and
replays, its profile); it plays rated matches and is rated beside the server's levels;
a host may refuse bot accounts (`create_table.bot_accounts: false`). A real server,
real sockets, a real SQLite store; argon2 at its cheapest cost."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest_twisted
from net_match import play_to_match_end
from twisted.internet import reactor
from twisted.internet.defer import Deferred, gatherResults
from wireclient import Msg, Server, WireClient

from pisyedili.server.people.accounts import CHEAP, AccountSettings
from pisyedili.server.store import MEMORY, Archive, open_store

PASSWORD = "correct horse battery"


async def start(db: str = MEMORY) -> Server:
    return await Server.start(archive=Archive(lambda: open_store(db), reactor),
                              accounts=AccountSettings(cost=CHEAP))


async def member(server: Server, name: str, bot: bool = False) -> WireClient:
    """A client logged in to a newly registered account (a bot's, with `bot`)."""
    client = await server.connect(name)
    fields: dict[str, Any] = {"bot": True} if bot else {}
    account = await client.request("register", password=PASSWORD, **fields)
    assert account["type"] == "account", account
    return client


def seat(msg: Msg, index: int) -> Msg:
    found: Msg = msg["table"]["seats"][index]
    return found


@pytest_twisted.ensureDeferred
async def test_a_bot_registers_as_one_and_its_seat_shows_it_to_everyone(tmp_path: Path) -> None:
    db = str(tmp_path / "bots.sqlite")
    server = await start(db)
    try:
        robo = await server.connect("Robo")
        account = await robo.request("register", password=PASSWORD, bot=True)
        assert account["type"] == "account" and account["bot"] is True
        ayse = await server.connect("Ayşe")
        person = await ayse.request("register", password=PASSWORD)
        assert "bot" not in person  # a person's account says nothing of bots
        # An account is a person's or a bot's from its registration on.
        again = await ayse.request("register", password=PASSWORD, bot=True)
        assert again["code"] == "logged_in"

        watcher = await server.connect("Watcher")
        await watcher.ok("lobby_subscribe")
        snap = await ayse.ok("create_table", rules="classic", seats=3)
        table_id = snap["table"]["id"]
        joined = await robo.ok("join_table", table=table_id)
        assert joined["you"]["seat"] == 1
        shown = await ayse.wait(lambda m: m["type"] == "table_update"
                                and seat(m, 1)["kind"] != "open")
        # An old client reads a person at the seat (kind `human`, with its player id);
        # `bot` says it is a program.
        assert seat(shown, 1)["kind"] == "human" and seat(shown, 1)["bot"] is True
        assert seat(shown, 1)["name"] == "Robo"
        assert "bot" not in seat(shown, 0)
        await ayse.ok("add_bot", seat=2, level="easy")
        row = await watcher.wait(lambda m: m["type"] == "lobby_update"
                                 and m.get("summary", {}).get("taken") == 3)
        assert row["summary"]["bots"] == 2  # the server's bot and the bot account
        await robo.ok("leave_table")
        await ayse.ok("leave_table")

        # Kept with the account: a login later, through another connection, is a bot's.
        await robo.ok("logout")
        await robo.close()
        await server.dropped(robo)
        back = await server.connect("Robo 2")
        relogged = await back.request("login", name="Robo", password=PASSWORD)
        assert relogged["type"] == "account" and relogged["bot"] is True
    finally:
        await server.stop()
    store = open_store(db)  # and in the store, where a restarted server reads it
    try:
        rows, _ = store.load_accounts()
        assert {r.name: r.bot for r in rows} == {"Robo": True, "Ayşe": False}
    finally:
        store.close()


@pytest_twisted.ensureDeferred
async def test_a_host_may_refuse_bot_accounts_who_then_may_only_watch() -> None:
    server = await start()
    try:
        ayse = await member(server, "Ayşe")
        robo = await member(server, "Robo", bot=True)
        guest = await server.connect("Guest")
        await guest.ok("lobby_subscribe")
        snap = await ayse.ok("create_table", rules="classic", seats=3, bot_accounts=False)
        assert snap["table"]["bot_accounts"] is False
        table_id = snap["table"]["id"]
        listed = await guest.wait(lambda m: m["type"] == "lobby_update"
                                  and m["table"] == table_id)
        assert listed["summary"]["bot_accounts"] is False

        refused = await robo.request("join_table", table=table_id)
        assert refused["type"] == "error" and refused["code"] == "bot_account_refused"
        watching = await robo.ok("join_table", table=table_id, spectate=True)
        assert watching["you"]["seat"] is None
        sit = await robo.request("sit", seat=1)
        assert sit["type"] == "error" and sit["code"] == "bot_account_refused"
        seated = await guest.ok("join_table", table=table_id)  # people sit as ever
        assert seated["you"]["seat"] == 1
        await robo.ok("leave_table")
        own = await robo.request("create_table", rules="classic", seats=2,
                                 bot_accounts=False)
        assert own["type"] == "error" and own["code"] == "bot_account_refused"
        elsewhere = await robo.ok("create_table", rules="classic", seats=2)
        assert "bot_accounts" not in elsewhere["table"]  # absent: bot accounts may sit
        assert elsewhere["you"]["seat"] == 0
    finally:
        await server.stop()


@pytest_twisted.ensureDeferred
async def test_a_rated_match_rates_a_bot_account_and_the_ladder_and_history_say_bot() -> None:
    server = await start()
    try:
        ayse = await member(server, "Ayşe")
        robo = await member(server, "Robo", bot=True)
        snap = await ayse.ok("create_table", rules="classic", seats=3, rated=True,
                             options={"match_end": "deals:1"})
        joined = await robo.ok("join_table", table=snap["table"]["id"])
        assert joined["you"]["seat"] == 1  # a bot account is registered: it sits rated
        await ayse.ok("add_bot", seat=2, level="easy")
        await robo.ok("ready", ready=True)
        await ayse.ok("start")
        rng = random.Random(5)
        await gatherResults([Deferred.fromCoroutine(play_to_match_end(c, rng))
                             for c in (ayse, robo)])
        for client in (ayse, robo):
            await client.ok("leave_table")
        assert server.archive is not None
        await server.archive.flush()

        board = await ayse.request("leaderboard", rules="classic", provisional=True)
        rows = {row["name"]: row for row in board["rows"]}
        assert set(rows) == {"Ayşe", "Robo", "bot (easy)"}
        assert rows["Robo"]["kind"] == "player" and rows["Robo"]["bot"] is True
        assert rows["Robo"]["matches"] == 1
        assert "bot" not in rows["Ayşe"] and "bot" not in rows["bot (easy)"]

        history = await ayse.request("history", of="recent")
        (match,) = history["matches"]
        players = {p["name"]: p for p in match["players"]}
        assert players["Robo"]["kind"] == "human" and players["Robo"]["bot"] is True
        assert "bot" not in players["Ayşe"]
        replay = await ayse.request("replay", match=match["id"])
        assert replay["type"] == "replay", replay
        assert replay["match"]["players"][1]["bot"] is True

        profile = await ayse.request("profile", name="Robo")
        assert profile["type"] == "profile" and profile["bot"] is True
        assert len(profile["ratings"]) == 1
        mine = await robo.request("profile", name="Ayşe")
        assert "bot" not in mine
    finally:
        await server.stop()
