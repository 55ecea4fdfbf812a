"""Moderation over loopback: operators kick, mute, ban (accounts and address ranges),
close tables and announce; everyone else is refused with `not_operator`; bans and
mutes survive a restart on the same file; every action is logged with its operator."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
import pytest_twisted
from twisted.internet import reactor
from wireclient import Server, WireClient

from pisyedili.server import tap
from pisyedili.server.accounts import CHEAP, AccountSettings
from pisyedili.server.journal import SqliteJournal
from pisyedili.server.store import Archive, SqliteStore

PASSWORD = "correct horse battery"
REQUESTS = {
    "kick": {"name": "Troll"}, "mute": {"name": "Troll"}, "unmute": {"name": "Troll"},
    "ban": {"name": "Troll"}, "unban": {"name": "Troll"}, "close_table": {"table": 1},
    "announce": {"text": "hello all"},
}


async def start(path: Path, operators: frozenset[str] = frozenset({"Deniz"})) -> Server:
    return await Server.start(
        archive=Archive(lambda: SqliteStore(path), reactor),
        journal=SqliteJournal(path, reactor), community_from=str(path),
        accounts=AccountSettings(cost=CHEAP, operators=operators))


async def member(server: Server, name: str, **connect: str) -> tuple[WireClient, str]:
    client = await server.connect(name, **connect)  # type: ignore[arg-type]
    account = await client.request("register", password=PASSWORD)
    assert account["type"] == "account", account
    return client, account["login"]


async def login(server: Server, name: str, token: str) -> WireClient:
    client = await server.connect("someone")
    answer = await client.request("login", name=name, token=token)
    assert answer["type"] == "account", answer
    return client


@pytest_twisted.ensureDeferred
async def test_operator_requests_are_refused_to_everyone_else(tmp_path: Path) -> None:
    server = await start(tmp_path / "db.sqlite3")
    try:
        await member(server, "Troll")
        player, _ = await member(server, "Player")
        guest = await server.connect("Guest")
        for client in (player, guest):
            for kind, fields in REQUESTS.items():
                refused = await client.request(kind, **fields)  # type: ignore[arg-type]
                assert refused["code"] == "not_operator", (kind, refused)
        operator, _ = await member(server, "Deniz")
        account = operator.received[-1]
        assert account["operator"] is True
    finally:
        await server.stop()


@pytest_twisted.ensureDeferred
async def test_kick_mute_announce_and_close_table(tmp_path: Path) -> None:
    server = await start(tmp_path / "db.sqlite3")
    try:
        operator, _ = await member(server, "Deniz")
        troll, _ = await member(server, "Troll")
        bystander = await server.connect("Bystander")
        snap = await bystander.ok("create_table", rules="classic", seats=2)
        table = snap["table"]["id"]

        assert (await operator.request("mute", name="troll", minutes=5))["type"] == "ok"
        muted = await troll.request("chat", text="spam", scope="lobby")
        assert muted["code"] == "muted"
        await operator.ok("unmute", name="Troll")
        await troll.ok("chat", text="sorry", scope="lobby")

        await operator.ok("announce", text="Restart at ten")
        for client in (troll, bystander, operator):
            notice = await client.wait_type("announcement")
            assert (notice["text"], notice["by"]) == ("Restart at ten", "Deniz")

        await operator.ok("close_table", table=table, reason="test")
        closed = await bystander.wait_type("table_closed")
        assert closed == {"type": "table_closed", "table": table, "reason": "test"}
        lobby = await bystander.request("lobby_subscribe")
        assert lobby["tables"] == []
        again = await bystander.ok("create_table", rules="classic", seats=2)
        assert again["type"] == "table"  # the bystander was at no table any more

        await operator.ok("kick", name="Troll", reason="enough")
        kicked = await troll.wait_type("error")
        assert kicked["code"] == "kicked" and "enough" in kicked["message"]
        await troll.closed
        missing = await operator.request("kick", name="Troll")
        assert missing["code"] == "no_such_player"
    finally:
        await server.stop()


@pytest_twisted.ensureDeferred
async def test_bans_and_mutes_survive_a_restart(tmp_path: Path) -> None:
    path = tmp_path / "db.sqlite3"
    first = await start(path)
    try:
        operator, op_login = await member(first, "Deniz")
        troll, troll_login = await member(first, "Troll")
        chatty, chatty_login = await member(first, "Chatty")
        flooder = await first.connect("Flooder", source="127.0.0.5")
        await operator.ok("ban", name="Troll", reason="cheating")
        banned = await troll.wait_type("error")
        assert banned["code"] == "banned" and "cheating" in banned["message"]
        await troll.closed
        await operator.ok("ban", network="127.0.0.5/32", minutes=60)
        assert (await flooder.wait_type("error"))["code"] == "banned"
        await operator.ok("mute", name="Chatty")
        refused = await operator.request("ban", network="127.0.0.0/8")
        assert refused["code"] == "bad_field"  # it would cover the operator
        bad = await operator.request("ban", network="not-a-net")
        assert bad["code"] == "bad_network"
    finally:
        await first.stop()

    second = await start(path)
    try:
        guest = await second.connect("x")
        refused = await guest.request("login", name="Troll", token=troll_login)
        assert refused["code"] == "banned"
        from_range = await second.connect(source="127.0.0.5")
        hello = await from_range.request("hello", protocol=2, name="Again")
        assert hello["code"] == "banned"
        await from_range.closed
        chatty = await login(second, "Chatty", chatty_login)
        assert (await chatty.request("chat", text="hi", scope="lobby"))["code"] == "muted"
        operator = await login(second, "Deniz", op_login)
        await operator.ok("unban", name="Troll")
        await operator.ok("unban", network="127.0.0.5")
        await operator.ok("unmute", name="Chatty")
        await chatty.ok("chat", text="hi", scope="lobby")
        back = await login(second, "Troll", troll_login)
        assert back.welcome["type"] == "welcome"
        assert (await second.connect("Again", source="127.0.0.5")).welcome["name"] == "Again"
    finally:
        await second.stop()
    conn = sqlite3.connect(path)
    actions = conn.execute("SELECT operator, action, target FROM moderation_log "
                           "ORDER BY id").fetchall()
    conn.close()
    assert actions == [("Deniz", "ban", "Troll"), ("Deniz", "ban", "127.0.0.5/32"),
                       ("Deniz", "mute", "Chatty"), ("Deniz", "unban", "Troll"),
                       ("Deniz", "unban", "127.0.0.5/32"), ("Deniz", "unmute", "Chatty")]


@pytest_twisted.ensureDeferred
async def test_the_operator_subcommand_flags_an_account_in_the_store(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "db.sqlite3"
    first = await start(path, operators=frozenset())
    try:
        _, token = await member(first, "Ayşe")
    finally:
        await first.stop()
    tap.main(["operator", "--db", str(path), "add", "AYŞE"])
    tap.main(["operator", "--db", str(path), "list"])
    assert capsys.readouterr().out.splitlines()[-1] == "Ayşe"
    with pytest.raises(SystemExit):
        tap.main(["operator", "--db", str(path), "add", "Nobody"])
    second = await start(path, operators=frozenset())
    try:
        client = await second.connect("x")
        answer = await client.request("login", name="Ayşe", token=token)
        assert answer["operator"] is True
        await client.ok("announce", text="now I may")
    finally:
        await second.stop()
