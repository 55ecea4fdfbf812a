"""Handshake over real sockets: hello/welcome, versions, timeouts (DESIGN.md fixed points)."""

from __future__ import annotations

import pytest_twisted
from twisted.internet import reactor, task
from twisted.internet.task import deferLater
from wireclient import Server

from pisyedili.protocol.version import PROTOCOL_VERSION, SUPPORTED_VERSIONS
from pisyedili.server.limits import Limits


@pytest_twisted.ensureDeferred
async def test_hello_gets_welcome_with_token_limits_and_features() -> None:
    server = await Server.start()
    try:
        alice = await server.connect("alice", features=["chat", "no_such_feature"])
        w = alice.welcome
        assert w["protocol"] == PROTOCOL_VERSION
        assert w["server"] == "test server"
        assert w["name"] == "alice"
        assert w["features"] == ["chat"]  # only those both ends know
        assert len(w["token"]) >= 32
        assert w["limits"]["frame"] == 64 * 1024
        assert w["limits"]["rate"] >= 1
        bob = await server.connect("bob")
        assert bob.welcome["player"] != w["player"]
        assert bob.welcome["token"] != w["token"]
        twin = await server.connect("Alice")  # names stay unique: welcome says which
        assert twin.welcome["name"] == "Alice 2"
        pong = await alice.request("ping")
        assert pong["type"] == "pong"
    finally:
        await server.stop()


@pytest_twisted.ensureDeferred
async def test_unsupported_version_lists_versions_and_closes() -> None:
    server = await Server.start()
    try:
        client = await server.connect()
        client.send({"type": "hello", "id": 1, "protocol": 999, "name": "future"})
        err = await client.wait_for_id(1)
        assert err["code"] == "unsupported_version"
        assert err["versions"] == list(SUPPORTED_VERSIONS)
        await client.closed
    finally:
        await server.stop()


@pytest_twisted.ensureDeferred
async def test_first_message_must_be_hello() -> None:
    server = await Server.start()
    try:
        client = await server.connect()
        client.send({"type": "lobby_subscribe", "id": 3})
        err = await client.wait_for_id(3)
        assert err["code"] == "hello_required"
        await client.closed
    finally:
        await server.stop()


@pytest_twisted.ensureDeferred
async def test_second_hello_is_refused_but_connection_stays() -> None:
    server = await Server.start()
    try:
        client = await server.connect("alice")
        err = await client.request("hello", protocol=PROTOCOL_VERSION, name="again")
        assert err["code"] == "already_welcomed"
        assert (await client.request("ping"))["type"] == "pong"
    finally:
        await server.stop()


@pytest_twisted.ensureDeferred
async def test_handshake_timeout_closes_silent_connection() -> None:
    clock = task.Clock()
    server = await Server.start(clock=clock, limits=Limits(handshake_seconds=5))
    try:
        silent = await server.connect()
        talker = await server.connect("talker")
        clock.advance(5)
        err = await silent.wait_type("error")
        assert err["code"] == "handshake_timeout"
        await silent.closed
        assert not talker.is_closed
        assert (await talker.request("ping"))["type"] == "pong"
    finally:
        await server.stop()


@pytest_twisted.ensureDeferred
async def test_heartbeat_pings_then_idle_timeout_closes() -> None:
    clock = task.Clock()
    server = await Server.start(clock=clock, limits=Limits(ping_seconds=10, idle_seconds=25))
    try:
        mute = await server.connect("mute", auto_pong=False)
        lively = await server.connect("lively")  # answers every ping with pong
        for _ in range(3):
            clock.advance(10)
            await lively.wait_type("ping")  # it answers with pong, which is traffic
            await deferLater(reactor, 0.05)  # let the pong reach the server
        await mute.wait_type("ping")
        err = await mute.wait_type("error")
        assert err["code"] == "idle_timeout"
        await mute.closed
        assert not lively.is_closed
    finally:
        await server.stop()


@pytest_twisted.ensureDeferred
async def test_a_person_may_not_take_a_bots_name() -> None:
    server = await Server.start()
    try:
        client = await server.connect()
        client.send({"type": "hello", "id": 1, "protocol": PROTOCOL_VERSION,
                     "name": "Bot (Hard)"})
        err = await client.wait_for_id(1)
        assert (err["code"], err["field"]) == ("bad_field", "name")
        client.send({"type": "hello", "id": 2, "protocol": PROTOCOL_VERSION, "name": "robot"})
        welcome = await client.wait_for_id(2)
        assert welcome["type"] == "welcome" and welcome["name"] == "robot"
    finally:
        await server.stop()
