"""A private table's match is its players' alone: not a stranger's by `profile`, and not
the next guest's who takes one of its names.

Who played is the session that held the seat (its player id) or the account seated in
it, never a name: a guest's name is free for anyone once the guest's session is gone.
`export` is a client fetching every deal by `replay`, so a refused `replay` is a refused
export. A real server on loopback, a real SQLite store, real sockets.
"""

from __future__ import annotations

import random
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path

import pytest_twisted
from net_match import ends_match, pending_turn
from poll_kit import BACKSTOP, poll_until_async
from twisted.internet import reactor
from wireclient import UNTIMED_NO_DELAYS, Msg, Server, WireClient

from pisyedili.server.people.accounts import CHEAP, AccountSettings
from pisyedili.server.store import Archive, open_store

PASSWORD = "correct horse battery"


@pytest_twisted.async_yield_fixture
async def server(tmp_path: Path) -> AsyncIterator[Server]:
    """Sessions forgotten as soon as their connection goes (no grace), so a name is
    free for the next guest at once."""
    path = tmp_path / "private.sqlite3"
    started = await Server.start(
        settings=replace(UNTIMED_NO_DELAYS, grace_seconds=0),
        archive=Archive(lambda: open_store(path), reactor),
        accounts=AccountSettings(cost=CHEAP))
    yield started
    await started.stop()


async def gone(server: Server, client: WireClient) -> None:
    """`client` leaves its table and hangs up; its session is forgotten."""
    name = client.welcome["name"]
    await client.ok("leave_table")
    await client.close()
    await server.dropped(client)
    await poll_until_async(lambda: all(s.name != name for s in server.factory.sessions.each()),
                           BACKSTOP, f"{name}'s session to go")


async def play_private_match(server: Server) -> tuple[WireClient, WireClient, int]:
    """Ayse (registered) and Can (a guest) play one deal at a private table; their
    clients and the kept match's id."""
    ayse = await server.connect("Ayse")
    assert (await ayse.request("register", password=PASSWORD))["type"] == "account"
    can = await server.connect("Can")
    snap = await ayse.ok("create_table", rules="classic", seats=2, private=True,
                         options={"match_end": "deals:1"})
    await can.ok("join_table", code=snap["table"]["code"])
    await can.ok("ready", ready=True)
    await ayse.ok("start")
    rng = random.Random(37)
    while True:
        for c in (ayse, can):  # after a ping's pong, all the server sent has arrived
            await c.request("ping")
        if any(ends_match(m) for m in ayse.received):
            break
        client, offered = await pending_turn([ayse, can])
        plays = [m for m in offered["moves"] if m["kind"] in ("play", "pick")]
        moved = await client.request("move", move=rng.choice(plays or offered["moves"]))
        assert moved["type"] == "ok", moved
    assert server.archive is not None
    await server.archive.flush()
    (row,) = (await can.ok("history", of="mine"))["matches"]
    assert row["private"] is True
    return ayse, can, row["id"]


async def assert_hidden_from(client: WireClient, match_id: int) -> None:
    """Nothing of the match reaches `client`: no list, no profile, no replay (export)."""
    for of, name in (("mine", None), ("player", "Can"), ("player", "Ayse"),
                     ("recent", None)):
        asked = {"of": of} if name is None else {"of": of, "name": name}
        listed = await client.ok("history", **asked)
        assert match_id not in [m["id"] for m in listed["matches"]], (asked, listed)
    profile = await client.ok("profile", name="Ayse")
    assert profile["recent"] == [] and (profile["matches"], profile["wins"]) == (0, 0)
    refused = await client.request("replay", match=match_id)
    assert (refused["type"], refused["code"]) == ("error", "no_such_match"), refused


async def assert_seen_by(client: WireClient, match_id: int) -> Msg:
    """The match is `client`'s to list and replay; its first deal's replay."""
    mine = await client.ok("history", of="mine")
    assert [m["id"] for m in mine["matches"]] == [match_id]
    replay = await client.ok("replay", match=match_id)
    assert replay["type"] == "replay" and replay["match"]["id"] == match_id
    return replay


@pytest_twisted.ensureDeferred
async def test_a_private_match_is_hidden_from_a_strangers_profile(server: Server) -> None:
    ayse, can, match_id = await play_private_match(server)
    stranger = await server.connect("Zeynep")
    await assert_hidden_from(stranger, match_id)
    # Its players still see it, in the profile too.
    for player in (ayse, can):
        recent = (await player.ok("profile", name="Ayse"))["recent"]
        assert [m["id"] for m in recent] == [match_id]
        await assert_seen_by(player, match_id)


@pytest_twisted.ensureDeferred
async def test_the_next_guest_named_like_a_player_sees_nothing_of_it(server: Server) -> None:
    ayse, can, match_id = await play_private_match(server)
    played = await assert_seen_by(can, match_id)
    assert all(played["record"]["deck"]) and played["record"]["moves"]  # every hand

    await gone(server, can)
    later = await server.connect("Can")
    assert later.welcome["name"] == "Can"  # the very name, free again
    assert later.welcome["player"] != can.welcome["player"]
    await assert_hidden_from(later, match_id)

    # An account holder's matches are the account's: a new session that logs in has them.
    await gone(server, ayse)
    back = await server.connect("Someone")
    assert (await back.request("login", name="Ayse", password=PASSWORD))["type"] == "account"
    await assert_seen_by(back, match_id)
    recent = (await back.ok("profile", name="Ayse"))["recent"]
    assert [m["id"] for m in recent] == [match_id]
