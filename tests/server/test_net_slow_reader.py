"""A client that stops reading costs the server a bounded number of bytes.

Measured before the bound: a spectator that stopped reading at a fast table raised the
server's memory from 35 to 238 MiB before the 60-second stall abort; a client asking
for the lobby (4,500 tables) under the rate limit without reading, from 83 to 664 MiB
in 29 seconds. Here a real loopback client stops reading (its transport paused) while
the server writes to it; the server must close it with `too_slow` and never hold more
than `max_output_bytes` (and one frame) for it.
"""

from __future__ import annotations

import socket
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest
import pytest_twisted
from twisted.internet import reactor, task
from twisted.internet.abstract import FileDescriptor
from twisted.internet.defer import Deferred
from wireclient import Server, WireClient

from pisyedili.protocol.codec import encode
from pisyedili.protocol.errors import ERRORS
from pisyedili.protocol.limits import MAX_NAME, MAX_SERVER_FRAME, MAX_TABLE_NAME
from pisyedili.server.net import connection as net
from pisyedili.server.net import tcp
from pisyedili.server.net.limits import ServerLimits
from pisyedili.server.net.tcp import ServerProtocol
from pisyedili.server.service.assembly import make_factory
from pisyedili.server.table import commands as cmd
from pisyedili.server.table.core import TableSettings

BOUND = MAX_SERVER_FRAME  # the smallest bound allowed: reached soonest
TIGHT = ServerLimits(rate=10_000, burst=10_000, max_output_bytes=BOUND,
                     max_tables_per_player=10_000, max_tables_per_address=10_000,
                     max_tables_total=10_000)
SMALL_SOCKET_BUFFER = 8192
"""The server's kernel send buffer, shrunk so that what the client does not read piles
up in the server process (as over a slow link) rather than in the kernel."""


def buffered(transport: Any) -> int:
    """What a Twisted TCP transport holds, unwritten (its private buffers: tests only)."""
    return int(len(transport.dataBuffer) - transport.offset + transport._tempDataLen)


@dataclass
class Watch:
    """The server side of one client: every write to it, and what was pending after."""

    proto: ServerProtocol
    peak: int = 0  # the most bytes the transport held
    largest_frame: int = 0
    under_estimated: list[tuple[int, int]] = field(default_factory=list)
    closed_with: Deferred[str] = field(default_factory=Deferred)


def server_side(server: Server, client: WireClient) -> ServerProtocol:
    player = str(client.welcome["player"])
    (proto,) = [p for p in server.factory.protocols
                if p.session is not None and p.session.player_id == player]
    return proto  # type: ignore[return-value]


def watch(server: Server, client: WireClient) -> Watch:
    """Shrink the kernel's send buffer, and record the server's pending bytes for
    `client`."""
    proto = server_side(server, client)
    transport: Any = proto.transport
    transport.socket.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, SMALL_SOCKET_BUFFER)
    seen = Watch(proto)
    write: Callable[[bytes], None] = transport.write

    def recording_write(data: bytes) -> None:
        write(data)
        seen.largest_frame = max(seen.largest_frame, len(data))
        now = buffered(transport)
        seen.peak = max(seen.peak, now)
        if now > proto.pending_output:
            seen.under_estimated.append((now, proto.pending_output))

    transport.write = recording_write
    close = proto.close

    def recording_close(code: str, message: str, rid: int | None = None,
                        **extra: Any) -> None:
        if not seen.closed_with.called:
            seen.closed_with.callback(code)
        close(code, message, rid, **extra)

    proto.close = recording_close  # type: ignore[method-assign]
    return seen


def assert_bounded(seen: Watch) -> None:
    assert seen.peak > FileDescriptor.bufferSize, "the client never fell behind"
    assert seen.peak <= BOUND + seen.largest_frame, seen.peak
    assert not seen.under_estimated, seen.under_estimated[:3]


async def fast_table(server: Server, watchers: list[str]) -> tuple[WireClient,
                                                                    list[WireClient]]:
    """Four bots playing a long match at machine speed, watched by `watchers`."""
    host = await server.connect("host")
    snap = await host.ok("create_table", rules="classic", seats=4,
                         options={"match_end": "deals:100"})
    for seat in (1, 2, 3):
        await host.ok("add_bot", seat=seat, level="easy")
    clients = []
    for name in watchers:
        client = await server.connect(name)
        await client.ok("join_table", table=snap["table"]["id"], spectate=True)
        clients.append(client)
    return host, clients


@pytest_twisted.ensureDeferred
async def test_a_spectator_that_stops_reading_is_closed_too_slow() -> None:
    server = await Server.start(limits=TIGHT)
    try:
        host, (slow, steady) = await fast_table(server, ["slow", "steady"])
        seen = watch(server, slow)
        assert slow.transport is not None
        slow.transport.pauseProducing()  # stops reading: the server's writes pile up
        await host.ok("start")
        await host.ok("leave_table")  # a bot takes the seat for good: bots only now
        code = await seen.closed_with.addTimeout(30, reactor)
        assert code == "too_slow"
        assert_bounded(seen)
        # Reading again, the client gets what was queued, then the reason, then the close.
        slow.transport.resumeProducing()
        await slow.closed
        last = slow.received[-1]
        assert (last["type"], last["code"], last["limit"]) == ("error", "too_slow", BOUND)
        assert ERRORS["too_slow"].closes and ERRORS["too_slow"].reconnect
        # A spectator that reads is not touched.
        assert not steady.is_closed
        assert (await steady.request("ping"))["type"] == "pong"
    finally:
        await server.stop()


@pytest_twisted.ensureDeferred
async def test_asking_for_pages_without_reading_them_is_bounded(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(net, "ABORT_AFTER_CLOSE", 0.5)
    # The default rate and burst: the client stays under the rate limit.
    limits = ServerLimits(max_output_bytes=BOUND, max_tables_per_player=10_000,
                          max_tables_per_address=10_000, max_tables_total=10_000)
    server = await Server.start(limits=limits)
    try:
        for i in range(400):
            session = server.factory.sessions.open(f"host{i}", PeerStub())
            table = server.factory.lobby.create(session, "classic", 6)
            table.handle(cmd.Join(session.player_id, session.name))
        greedy = await server.connect("greedy")
        seen = watch(server, greedy)
        assert greedy.transport is not None
        greedy.transport.pauseProducing()
        for i in range(limits.burst - 1):  # its hello took one token
            greedy.send({"type": "lobby_subscribe", "id": 100 + i})
        assert await seen.closed_with.addTimeout(30, reactor) == "too_slow"
        assert_bounded(seen)
        assert server.factory.lobby.subscriber_count() == 1  # asked 39 times: one
        # It never reads again: the server aborts it rather than wait.
        await server.dropped(greedy)
        assert server.factory.lobby.subscriber_count() == 0
    finally:
        await server.stop()


class PeerStub:
    def send_message(self, msg: object) -> None:
        pass

    def replaced(self) -> None:
        pass


def test_the_default_bound_holds_a_burst_of_the_largest_pages() -> None:
    """A client that reads is never closed for one burst of requests: the default bound
    holds `burst` lobby pages of the widest rows."""
    limits = ServerLimits()
    factory = make_factory(task.Clock(), limits=TIGHT, settings=TableSettings())
    wide = "\U0001d538"
    for _ in range(200):
        session = factory.sessions.open(wide * MAX_NAME, PeerStub())
        table = factory.lobby.create(session, "classic", 6, None, wide * MAX_TABLE_NAME)
        table.handle(cmd.Join(session.player_id, session.name))
    page = len(encode({**factory.lobby.snapshot(), "id": 2**53 - 1})) + tcp.LENGTH_PREFIX
    assert limits.burst * page + FileDescriptor.bufferSize <= limits.max_output_bytes


def test_twisted_still_pauses_its_producer_at_its_buffer_size() -> None:
    """What the server's byte count rests on: a transport over `bufferSize` pauses its
    streaming producer at once, and resumes it only once its buffer is empty."""

    class Producer:
        paused = 0
        resumed = 0

        def pauseProducing(self) -> None:
            self.paused += 1

        def resumeProducing(self) -> None:
            self.resumed += 1

        def stopProducing(self) -> None:
            pass

    class Descriptor(FileDescriptor):
        connected = 1

        def writeSomeData(self, data: bytes) -> int:
            return len(data)

        def startWriting(self) -> None:
            pass

        def stopWriting(self) -> None:
            pass

    fd = Descriptor(reactor)
    producer = Producer()
    fd.registerProducer(producer, True)  # type: ignore[arg-type]
    fd.write(b"x" * fd.bufferSize)
    assert producer.paused == 0
    fd.write(b"x")
    assert producer.paused == 1 and producer.resumed == 0
    fd.doWrite()  # type: ignore[no-untyped-call]  # everything written: the buffer is empty
    assert producer.resumed == 1
