"""The server says what moderation did: `done` in the operator's `ok`, `player_removed`
to the removed player's table, and a server-log line for every action, lifts included."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest_twisted
from test_moderation import member, start
from twisted.logger import globalLogPublisher

Event = dict[str, Any]


def moderation_lines(events: list[Event]) -> list[tuple[str, str, str]]:
    return [(e["by"], e["action"], e["target"]) for e in events
            if e.get("log_namespace") == "pisyedili.server.people.moderation" and "action" in e]


@pytest_twisted.ensureDeferred
async def test_the_operator_is_told_and_the_table_hears_of_a_kick(tmp_path: Path) -> None:
    events: list[Event] = []
    globalLogPublisher.addObserver(events.append)  # type: ignore[arg-type]
    server = await start(tmp_path / "db.sqlite3")
    try:
        operator, _ = await member(server, "Deniz")
        troll, _ = await member(server, "Troll")
        host = await server.connect("Host")
        snap = await host.ok("create_table", rules="classic", seats=2)
        table = snap["table"]["id"]
        joined = await troll.ok("join_table", table=table)
        assert joined["you"]["seat"] == 1

        said = await operator.ok("mute", name="troll", minutes=5, reason="spam")
        assert said["done"].startswith("muted Troll until ") and said["done"].endswith(
            "UTC: spam")
        assert (await operator.ok("unmute", name="Troll"))["done"] == "unmuted Troll"
        again = await operator.ok("unmute", name="Troll")
        assert again["done"] == "Troll had no mute in force; nothing to lift"

        kicked = await operator.ok("kick", name="Troll", reason="enough")
        assert kicked["done"] == "kicked Troll: enough"
        removed = await host.wait_type("player_removed")
        assert removed == {"type": "player_removed", "table": table, "name": "Troll",
                           "seat": 1, "action": "kick", "reason": "enough"}
        await troll.closed

        closed = await operator.ok("close_table", table=table)
        assert closed["done"] == f"closed table {table} (1 member told)"
        told = await operator.ok("announce", text="bye")
        assert told["done"] == "announced to 2 players"  # the operator and the host
    finally:
        await server.stop()
        globalLogPublisher.removeObserver(events.append)  # type: ignore[arg-type]
    assert moderation_lines(events) == [
        ("Deniz", "mute", "troll"), ("Deniz", "unmute", "Troll"),
        ("Deniz", "unmute", "Troll"), ("Deniz", "kick", "Troll"),
        ("Deniz", "close_table", str(table)), ("Deniz", "announce", "everyone")]


@pytest_twisted.ensureDeferred
async def test_a_ban_and_its_lift_are_told_and_logged(tmp_path: Path) -> None:
    events: list[Event] = []
    globalLogPublisher.addObserver(events.append)  # type: ignore[arg-type]
    server = await start(tmp_path / "db.sqlite3")
    try:
        operator, _ = await member(server, "Deniz")
        troll, _ = await member(server, "Troll")
        host = await server.connect("Host")
        snap = await host.ok("create_table", rules="classic", seats=2)
        await troll.ok("join_table", table=snap["table"]["id"])
        banned = await operator.ok("ban", name="Troll", reason="cheating")
        assert banned["done"] == "banned Troll until lifted: cheating; 1 connection closed"
        removed = await host.wait_type("player_removed")
        assert (removed["name"], removed["seat"], removed["action"]) == ("Troll", 1, "ban")
        await troll.closed
        lifted = await operator.ok("unban", name="troll")
        assert lifted["done"] == "unbanned Troll"
        net = await operator.ok("ban", network="203.0.113.0/24", minutes=60)
        assert net["done"].startswith("banned 203.0.113.0/24 until ")
        assert net["done"].endswith("; 0 connections closed")
        assert (await operator.ok("unban", network="203.0.113.9/24"))["done"] == \
            "unbanned 203.0.113.0/24"
    finally:
        await server.stop()
        globalLogPublisher.removeObserver(events.append)  # type: ignore[arg-type]
    assert moderation_lines(events) == [
        ("Deniz", "ban", "Troll"), ("Deniz", "unban", "Troll"),
        ("Deniz", "ban", "203.0.113.0/24"), ("Deniz", "unban", "203.0.113.0/24")]
