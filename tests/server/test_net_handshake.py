"""Handshake over real sockets: hello/welcome, versions, timeouts."""

from __future__ import annotations

from typing import Any

import pytest
import pytest_twisted
from twisted.internet import task
from twisted.internet.defer import Deferred
from wireclient import Server

from pisyedili.protocol.codec import decode
from pisyedili.protocol.limits import CLIENT_FRAME_LIMITS
from pisyedili.protocol.version import PROTOCOL_VERSION, SUPPORTED_VERSIONS
from pisyedili.server.net.limits import ServerLimits


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
        # Even one that a first hello would be refused (and closed) for: it is not read.
        err = await client.request("hello", protocol=1, name=["not", "a", "name"])
        assert err["code"] == "already_welcomed"
        assert (await client.request("ping"))["type"] == "pong"
    finally:
        await server.stop()


@pytest_twisted.ensureDeferred
async def test_handshake_timeout_closes_silent_connection() -> None:
    clock = task.Clock()
    server = await Server.start(clock=clock, limits=ServerLimits(handshake_seconds=5))
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


def frames_heard(server: Server, name: str) -> Any:
    """An awaitable per frame the server reads from `name`'s connection, in order."""
    proto = next(p for p in server.factory.protocols
                 if p.session is not None and p.session.name == name)
    frames: list[dict[str, Any]] = []
    waiting: list[Deferred[dict[str, Any]]] = []
    receive = proto.stringReceived  # type: ignore[attr-defined]

    def spy(data: bytes) -> None:
        receive(data)
        frames.append(decode(data, CLIENT_FRAME_LIMITS))
        if waiting:
            waiting.pop(0).callback(frames.pop(0))

    proto.stringReceived = spy  # type: ignore[attr-defined]

    def next_frame() -> Deferred[dict[str, Any]]:
        d: Deferred[dict[str, Any]] = Deferred()
        if frames:
            d.callback(frames.pop(0))
        else:
            waiting.append(d)
        return d

    return next_frame


@pytest_twisted.ensureDeferred
async def test_heartbeat_pings_then_idle_timeout_closes() -> None:
    clock = task.Clock()
    server = await Server.start(clock=clock, limits=ServerLimits(ping_seconds=10, idle_seconds=25))
    try:
        mute = await server.connect("mute", auto_pong=False)
        lively = await server.connect("lively")  # answers every ping with pong
        heard = frames_heard(server, "lively")
        for _ in range(3):
            clock.advance(10)
            await lively.wait_type("ping")  # it answers with pong, which is traffic
            pong = await heard()  # the pong reached the server (and nothing else did)
            assert pong["type"] == "pong"
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
        await client.closed  # a refused hello closes
        robot = await server.connect("robot")
        assert robot.welcome["name"] == "robot"
    finally:
        await server.stop()


REFUSED_HELLOS = [
    ({"name": "x"}, "missing_field", {"field": "protocol"}),
    ({"name": "x", "protocol": "2"}, "bad_field", {"field": "protocol"}),
    ({"name": "x", "protocol": 2.0}, "bad_field", {"field": "protocol"}),
    ({"name": "x", "protocol": True}, "bad_field", {"field": "protocol"}),
    ({"name": "x", "protocol": 1}, "unsupported_version", {"versions": [2]}),
    ({"name": "x", "protocol": 3, "features": "all"}, "unsupported_version",
     {"versions": [2]}),
    ({"protocol": 2}, "missing_field", {"field": "name"}),
    ({"protocol": 2, "name": 7}, "bad_field", {"field": "name"}),
]


@pytest.mark.parametrize(("fields", "code", "extra"), REFUSED_HELLOS,
                         ids=[f"{c}-{sorted(f.items())}" for f, c, _ in REFUSED_HELLOS])  # type: ignore[attr-defined]
@pytest_twisted.ensureDeferred
async def test_a_refused_hello_is_answered_then_closed(fields: dict[str, Any], code: str,
                                                       extra: dict[str, Any]) -> None:
    server = await Server.start()
    try:
        client = await server.connect()
        client.send({"type": "hello", "id": 4, **fields})
        err = await client.wait_for_id(4)
        assert err["type"] == "error" and err["code"] == code
        assert {k: err.get(k) for k in extra} == extra
        await client.closed
        assert client.types() == ["error"], "nothing after the refusal"
        other = await server.connect("other")  # the server itself is unharmed
        assert (await other.request("ping"))["type"] == "pong"
    finally:
        await server.stop()


def _server_side(server: Server, name: str) -> Any:
    return next(p for p in server.factory.protocols
                if p.session is not None and p.session.name == name)


MARK = {"type": "chat", "scope": "lobby", "name": "op", "text": "mark", "spectator": False}
"""A frame the server writes to a client just before a deadline: the frames of one
connection keep their order, so a ping or close that came early arrives before it."""


@pytest_twisted.ensureDeferred
async def test_pings_and_the_idle_close_come_when_welcome_limits_say() -> None:
    clock = task.Clock()
    server = await Server.start(clock=clock,
                                limits=ServerLimits(ping_seconds=30, idle_seconds=90))
    try:
        clock.advance(7)
        mute = await server.connect(auto_pong=False)  # opened at 7, silent until hello
        lively = await server.connect()  # answers every ping
        clock.advance(4)
        for client, name in ((mute, "mute"), (lively, "lively")):
            welcome = await client.request("hello", protocol=PROTOCOL_VERSION, name=name,
                                           features=["chat"])
            assert welcome["limits"]["ping_seconds"] == 30
            assert welcome["limits"]["idle_seconds"] == 90
        quiet, busy = _server_side(server, "mute"), _server_side(server, "lively")
        heard = frames_heard(server, "lively")

        # The first ping: 30 s after hello (at 11), not at the next fixed tick.
        clock.advance(29.5)
        quiet.send_message(MARK)
        busy.send_message(MARK)
        clock.advance(0.5)
        for client in (mute, lively):
            await client.wait_type("ping")
            assert [m["type"] for m in client.received[-2:]] == ["chat", "ping"]
        assert (await heard())["type"] == "pong"  # lively's pong, read at 41

        # lively's next ping: 30 s after its pong.
        clock.advance(29.5)
        busy.send_message(MARK)
        clock.advance(0.5)
        await lively.wait_type("ping")
        assert [m["type"] for m in lively.received[-2:]] == ["chat", "ping"]
        assert (await heard())["type"] == "pong"

        # mute's close: exactly 90 s after hello, at 101.
        clock.advance(29.5)  # 100.5
        assert not mute.is_closed
        quiet.send_message(MARK)
        clock.advance(0.5)
        err = await mute.wait_type("error")
        assert err["code"] == "idle_timeout"
        assert [m["type"] for m in mute.received[-3:]] == ["ping", "chat", "error"]
        await mute.closed
        assert not lively.is_closed
    finally:
        await server.stop()
