"""Moderation a player understands, over loopback: a kick keeps its player out for the
server's `kick_seconds` (a guest's address at `hello`, an account at `login`), refused
with `kicked`, the operator's reason and the seconds left, and welcome once they ran
out; a mute is told at once (`muted`) with its reason and time left; a ban's closing
error carries them too; and a kicked host's table passes to a seated human, never to a
spectator. The server runs on a `task.Clock`, so the window passes without waiting."""

from __future__ import annotations

from pathlib import Path

import pytest_twisted
from test_moderation import member, start
from twisted.internet.task import Clock
from wireclient import ROOMY, Msg, Server, WireClient

from pisyedili.server.net.limits import ServerLimits

KICK_SECONDS = 120
LIMITS = ServerLimits(rate=ROOMY.rate, burst=ROOMY.burst, kick_seconds=KICK_SECONDS)
KICKED_FROM = "127.0.0.9"
"""The kicked guest's address: the operator and everyone else connect from another."""


async def _hello(server: Server, name: str, source: str) -> Msg:
    """The answer to a `hello` as `name` from `source`: `welcome`, or a refusal."""
    client = await server.connect(source=source)
    return await client.request("hello", protocol=2, name=name)


async def _clocked(tmp_path: Path) -> tuple[Server, Clock, WireClient]:
    clock = Clock()
    clock.advance(1_000_000)  # a plausible epoch: `until` words a date
    server = await start(tmp_path / "db.sqlite3", clock=clock, limits=LIMITS)
    operator, _ = await member(server, "Deniz")
    return server, clock, operator


@pytest_twisted.ensureDeferred
async def test_a_kicked_guest_is_kept_out_then_welcome(tmp_path: Path) -> None:
    server, clock, operator = await _clocked(tmp_path)
    try:
        bora = await server.connect("Bora", source=KICKED_FROM)
        await operator.ok("kick", name="Bora", reason="flooding the chat")
        closed = await bora.wait_type("error")
        assert (closed["code"], closed["reason"], closed["retry_after"]) == (
            "kicked", "flooding the chat", KICK_SECONDS)
        await bora.closed

        again = await _hello(server, "Bora", KICKED_FROM)
        assert (again["code"], again["reason"], again["retry_after"]) == (
            "kicked", "flooding the chat", KICK_SECONDS)
        clock.advance(KICK_SECONDS - 20)
        later = await _hello(server, "Bora 2", KICKED_FROM)
        assert (later["code"], later["retry_after"]) == ("kicked", 20)
        other = await _hello(server, "Elif", "127.0.0.10")  # another address: welcome
        assert other["type"] == "welcome"

        clock.advance(21)
        back = await _hello(server, "Bora", KICKED_FROM)
        assert (back["type"], back["name"]) == ("welcome", "Bora")
    finally:
        await server.stop()


@pytest_twisted.ensureDeferred
async def test_a_guest_at_the_operators_own_address_is_kicked_but_not_kept_out(
        tmp_path: Path) -> None:
    server, _, operator = await _clocked(tmp_path)  # the operator is at 127.0.0.1
    try:
        bora = await server.connect("Bora")
        await operator.ok("kick", name="Bora", reason="spam")
        closed = await bora.wait_type("error")
        assert (closed["code"], closed["reason"]) == ("kicked", "spam")
        assert "retry_after" not in closed  # nobody is kept out
        assert (await _hello(server, "Someone", "127.0.0.1"))["type"] == "welcome"
    finally:
        await server.stop()


@pytest_twisted.ensureDeferred
async def test_a_kicked_account_is_refused_at_login_until_its_time_ran_out(
        tmp_path: Path) -> None:
    server, clock, operator = await _clocked(tmp_path)
    try:
        troll, token = await member(server, "Troll")
        await operator.ok("kick", name="Troll")
        closed = await troll.wait_type("error")
        assert closed["code"] == "kicked" and closed["retry_after"] == KICK_SECONDS
        assert "reason" not in closed  # the operator gave none
        guest = await server.connect("someone")  # the address is not kept out
        refused = await guest.request("login", name="Troll", token=token)
        assert (refused["code"], refused["retry_after"]) == ("kicked", KICK_SECONDS)
        clock.advance(KICK_SECONDS + 1)
        guest = await server.connect("someone")
        assert (await guest.request("login", name="Troll", token=token))["type"] == "account"
    finally:
        await server.stop()


@pytest_twisted.ensureDeferred
async def test_a_mute_is_told_at_once_with_its_reason_and_time(tmp_path: Path) -> None:
    server, _, operator = await _clocked(tmp_path)
    try:
        troll, _ = await member(server, "Troll")
        guest = await server.connect("Chatty", source=KICKED_FROM)
        await operator.ok("mute", name="Troll", minutes=5, reason="spam")
        told = await troll.wait_type("muted")
        assert told == {"type": "muted", "reason": "spam", "retry_after": 300}
        refused = await troll.request("chat", text="hi", scope="lobby")
        assert (refused["code"], refused["reason"], refused["retry_after"]) == (
            "muted", "spam", 300)
        await operator.ok("mute", name="Chatty")  # a guest, until lifted, no reason
        assert await guest.wait_type("muted") == {"type": "muted"}
    finally:
        await server.stop()


@pytest_twisted.ensureDeferred
async def test_a_bans_closing_error_says_why_and_for_how_long(tmp_path: Path) -> None:
    server, _, operator = await _clocked(tmp_path)
    try:
        troll, token = await member(server, "Troll")
        await operator.ok("ban", name="Troll", minutes=60, reason="cheating")
        closed = await troll.wait_type("error")
        assert (closed["code"], closed["reason"], closed["retry_after"]) == (
            "banned", "cheating", 3600)
        guest = await server.connect("someone")
        refused = await guest.request("login", name="Troll", token=token)
        assert (refused["code"], refused["reason"], refused["retry_after"]) == (
            "banned", "cheating", 3600)
        await operator.ok("ban", network=f"{KICKED_FROM}/32")  # until lifted
        from_there = await _hello(server, "Again", KICKED_FROM)
        assert from_there["code"] == "banned" and "retry_after" not in from_there
    finally:
        await server.stop()


async def _host_name(client: WireClient, gone: str) -> object:
    """The table's host once `gone` left it, as `client` was told."""
    update = await client.wait(lambda m: m["type"] == "table_update"
                               and not any(s.get("name") == gone
                                           for s in m["table"]["seats"]))
    return update["table"]["host_name"]


@pytest_twisted.ensureDeferred
async def test_a_kicked_hosts_table_passes_to_a_seated_human_never_a_spectator(
        tmp_path: Path) -> None:
    server, _, operator = await _clocked(tmp_path)
    try:
        host = await server.connect("Host", source=KICKED_FROM)
        table = (await host.ok("create_table", rules="classic", seats=3))["table"]["id"]
        spec = await server.connect("Spec")
        await spec.ok("join_table", table=table, spectate=True)  # the first to join
        player = await server.connect("Player")
        await player.ok("join_table", table=table)
        await operator.ok("kick", name="Host")
        assert await _host_name(spec, "Host") == "Player"

        await player.ok("leave_table")  # the spectator alone: the table has no host
        update = await spec.wait(lambda m: m["type"] == "table_update"
                                 and all(s.get("name") != "Player"
                                         for s in m["table"]["seats"]))
        assert update["table"]["host_name"] is None
        refused = await spec.request("add_bot", seat=0)
        assert refused["code"] == "not_host"
        await spec.ok("sit", seat=1)  # the next human to sit hosts it
        seated = await spec.wait(lambda m: m["type"] == "table_update"
                                 and m["table"]["host_name"] == "Spec")
        assert seated["table"]["seats"][1]["name"] == "Spec"
    finally:
        await server.stop()
