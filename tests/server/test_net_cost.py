"""What a connection costs the server: what an idle one keeps (one timer, shared
feature sets, one log line for its hello) and how a frame leaves (at once, to a socket
with nothing queued).

The load bench's figures rest on these; each test fails if a connection goes back to
holding its own copy, or a frame back to waiting for the reactor.
"""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

import pytest
import pytest_twisted
from twisted.internet import reactor
from twisted.internet.task import Clock
from twisted.logger import formatEvent, globalLogPublisher
from wireclient import Server

from pisyedili.protocol.version import FEATURES, PROTOCOL_VERSION
from pisyedili.server.net.hello import AGREED_CACHE
from pisyedili.server.net.limits import ServerLimits
from pisyedili.server.store.journal import StoreJournal


@pytest_twisted.ensureDeferred
async def test_hello_fires_the_handshake_timer_rather_than_leave_it_cancelled() -> None:
    """A cancelled call stays in the reactor's heap (Twisted compacts it only once more
    than half is cancelled): one per idle connection, were it cancelled at `hello`."""
    server = await Server.start(limits=ServerLimits(handshake_seconds=600, ping_seconds=30,
                                                    idle_seconds=90))
    try:
        calls: list[Any] = []
        build = server.factory.buildProtocol

        def recording(addr: Any) -> Any:
            proto = build(addr)
            made = proto.connectionMade

            def record() -> None:
                made()
                calls.append(proto._handshake_call)

            proto.connectionMade = record  # type: ignore[method-assign]
            return proto

        server.factory.buildProtocol = recording  # type: ignore[method-assign]
        clients = [await server.connect() for _ in range(5)]
        for n, client in enumerate(clients):  # each hello read once its call was made
            welcome = await client.request("hello", protocol=PROTOCOL_VERSION, name=f"i{n}")
            assert welcome["type"] == "welcome"
        for client in clients:  # the reactor has turned since each hello
            assert (await client.request("ping"))["type"] == "pong"
        pending = reactor.getDelayedCalls()  # type: ignore[misc]
        for call in calls:  # fired, so out of the reactor's calls; not cancelled, left there
            assert call is not None and call.called and not call.cancelled
            assert all(c is not call for c in pending)
        assert len(calls) == 5
        assert all(p._handshake_call is None for p in server.factory.protocols)
    finally:
        await server.stop()


@pytest_twisted.ensureDeferred
async def test_the_handshake_timer_fired_at_hello_closes_nobody_later() -> None:
    clock = Clock()
    server = await Server.start(clock=clock, limits=ServerLimits(handshake_seconds=5))
    try:
        talker = await server.connect("talker")
        silent = await server.connect()
        clock.advance(5)
        assert (await silent.wait_type("error"))["code"] == "handshake_timeout"
        clock.advance(5)
        assert (await talker.request("ping"))["type"] == "pong"
        assert not talker.errors()
    finally:
        await server.stop()


@pytest_twisted.ensureDeferred
async def test_clients_asking_the_same_features_share_one_set() -> None:
    server = await Server.start()
    try:
        a = await server.connect("a", features=["chat", "rematch"])
        b = await server.connect("b", features=["chat", "rematch"])
        c = await server.connect("c", features=["chat"])
        assert a.welcome["features"] == b.welcome["features"] == ["chat", "rematch"]
        assert c.welcome["features"] == ["chat"]
        by_name = {p.session.name: p for p in server.factory.protocols if p.session}
        assert by_name["a"].features is by_name["b"].features
        assert by_name["c"].features == frozenset({"chat"})
    finally:
        await server.stop()


def test_shared_feature_sets_are_bounded_yet_always_right() -> None:
    server_factory = _factory()
    for n in range(AGREED_CACHE + 20):  # each request unique: past the cap, not kept
        junk = tuple(f"x{n}-{i}" for i in range(3))
        assert server_factory.agreed((*junk, "chat")) == frozenset({"chat"})
    late = ("chat", "late")
    assert server_factory.agreed(late) == frozenset({"chat"})
    assert server_factory.agreed(late) is not server_factory.agreed(late)  # not kept
    assert server_factory.agreed(None) == frozenset()
    everything = tuple(sorted(FEATURES))
    assert server_factory.agreed(everything) == server_factory.features


def _factory() -> Any:
    from pisyedili.server.service.assembly import make_factory

    return make_factory(Clock(), name="test server", seed=1)


@pytest_twisted.ensureDeferred
async def test_a_hello_logs_one_line_saying_the_name_asked_for_when_suffixed() -> None:
    events: list[dict[str, Any]] = []

    def observe(event: dict[str, Any]) -> None:
        if event.get("log_namespace", "").startswith("pisyedili.server"):
            events.append(event)

    server = await Server.start()
    globalLogPublisher.addObserver(observe)  # type: ignore[arg-type]
    try:
        await server.connect("Ayşe")
        twin = await server.connect("AYŞE")
        assert twin.welcome["name"] == "AYŞE 2"
        back = await server.connect(token=twin.welcome["token"], name="ignored")
        assert back.welcome["resumed"] is True
    finally:
        globalLogPublisher.removeObserver(observe)  # type: ignore[arg-type]
        await server.stop()
    lines = [formatEvent(e) for e in events]
    hellos = [line for line in lines if " welcomed as " in line]
    assert len(hellos) == 3
    assert hellos[0].endswith("welcomed as player 1 ('Ayşe'), resumed=False, "
                              "client=None")
    assert "player 2 ('AYŞE 2', asked for 'AYŞE'), resumed=False" in hellos[1]
    assert "player 2 ('AYŞE 2'), resumed=True" in hellos[2]
    assert not [line for line in lines if "opened for" in line]  # not a second line


def _server_side(server: Server, name: str) -> Any:
    return next(p for p in server.factory.protocols
                if p.session is not None and p.session.name == name)


def _line(n: int) -> dict[str, Any]:
    return {"type": "chat", "scope": "lobby", "name": "op", "text": f"{n:05d} " + "x" * 250,
            "spectator": False}


@pytest_twisted.ensureDeferred
async def test_a_frame_to_an_idle_socket_is_sent_at_once_not_queued() -> None:
    server = await Server.start()
    try:
        client = await server.connect("reader")
        proto = _server_side(server, "reader")
        proto.send_message(_line(0))
        # Already with the kernel: nothing waits in the transport for the reactor.
        assert not proto.transport._tempDataLen and not proto.transport.dataBuffer
        assert (await client.wait_type("chat"))["text"].startswith("00000 ")
    finally:
        await server.stop()


@pytest_twisted.ensureDeferred
async def test_frames_behind_a_full_socket_queue_in_the_transport_and_keep_order() -> None:
    server = await Server.start(limits=ServerLimits(max_output_bytes=16 * 1024 * 1024))
    try:
        client = await server.connect("slow")
        proto = _server_side(server, "slow")
        # Small kernel buffers on both ends, and a client that stops reading: the
        # socket fills after a few frames and the rest must wait in the transport.
        proto.transport.socket.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
        client.transport.socket.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # type: ignore[union-attr]
        client.transport.pauseProducing()  # type: ignore[union-attr]
        lines = 400
        queued = False
        for n in range(lines):
            proto.send_message(_line(n))
            queued = queued or bool(proto.transport._tempDataLen or proto.transport.dataBuffer)
        assert queued  # the transport's path was taken: the socket was full
        client.transport.resumeProducing()  # type: ignore[union-attr]
        await client.wait(lambda m: m["type"] == "chat"
                          and m["text"].startswith(f"{lines - 1:05d} "))
        texts = [m["text"][:5] for m in client.received if m["type"] == "chat"]
        assert texts == [f"{n:05d}" for n in range(lines)]
    finally:
        await server.stop()


class CountingSocket:
    """The connection's real socket, counting the `send` calls made on it."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.sends: list[int] = []

    def send(self, data: bytes) -> int:
        sent = self.sock.send(data)
        self.sends.append(sent)
        return sent


@pytest_twisted.ensureDeferred
async def test_the_frames_a_request_writes_to_its_own_client_leave_in_one_send() -> None:
    server = await Server.start()
    try:
        client = await server.connect("talker")
        assert (await client.request("lobby_subscribe"))["type"] == "lobby"
        proto = _server_side(server, "talker")
        counting = CountingSocket(proto._socket)
        proto._socket = counting
        client.send({"type": "chat", "id": 50, "scope": "lobby", "text": "hello all"})
        line = await client.wait_type("chat")  # said in the lobby: back to its subscriber
        assert line["text"] == "hello all"
        assert any(m.get("id") == 50 and m["type"] == "ok" for m in client.received)
        assert len(counting.sends) == 1  # the `ok` and the line together
        assert (await client.request("ping"))["type"] == "pong"
        assert len(counting.sends) == 2
    finally:
        await server.stop()


@pytest_twisted.ensureDeferred
@pytest.mark.parametrize("journaled", [False, True], ids=["no journal", "journal"])
async def test_a_table_requests_frames_leave_in_one_send_with_or_without_a_journal(
        tmp_path: Path, journaled: bool) -> None:
    """With a journal the frames wait for its commit of the chat line: they must still
    join the request's one send, not leave one by one once the commit is done."""
    journal = StoreJournal.open(tmp_path / "journal.sqlite", reactor) if journaled else None
    server = await Server.start(journal=journal)
    try:
        client = await server.connect("talker")
        await client.ok("create_table", rules="classic", seats=2)
        proto = _server_side(server, "talker")
        counting = CountingSocket(proto._socket)
        proto._socket = counting
        client.send({"type": "chat", "id": 60, "scope": "table", "text": "hello table"})
        line = await client.wait_type("chat")
        assert line["text"] == "hello table"
        assert any(m.get("id") == 60 and m["type"] == "ok" for m in client.received)
        assert len(counting.sends) == 1  # the `ok` and the line together
        if journal is not None:
            assert journal.commits >= 1  # the line was committed before it was sent
    finally:
        await server.stop()
        if journal is not None:
            journal.close()
