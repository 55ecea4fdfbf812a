"""A steady flood over real sockets: refusals are counted over a window, not in a row,
answered only a few at a time, and the flooder is closed with an error it can read."""

from __future__ import annotations

import itertools

import pytest_twisted
from twisted.internet import reactor, task
from twisted.internet.endpoints import TCP4ClientEndpoint, connectProtocol
from twisted.internet.error import ConnectionDone
from twisted.python.failure import Failure
from wireclient import Server, WireClient

from pisyedili.protocol.codec import frame
from pisyedili.protocol.version import PROTOCOL_VERSION
from pisyedili.server.net.limits import ANSWERED_REFUSALS, FLOOD_WINDOW, ServerLimits


def refusals(client: WireClient) -> tuple[list[dict[str, object]], list[dict[str, object]]]:
    """The `rate_limited` answers, and the closing one(s)."""
    limited = [m for m in client.received
               if m["type"] == "error" and m["code"] == "rate_limited"]
    closing = [m for m in limited if "closing" in str(m["message"])]
    return [m for m in limited if m not in closing], closing


@pytest_twisted.ensureDeferred
async def test_a_flood_that_lets_each_refilled_token_through_is_still_closed() -> None:
    """Each step refills one token, so one ping of three passes and two are refused:
    never 30 refusals in a row, but more than 30 within the window."""
    clock = task.Clock()
    limits = ServerLimits(rate=5, burst=10, flood_close=30)
    server = await Server.start(clock=clock, limits=limits)
    try:
        flood = await server.connect("flood")
        bystander = await server.connect("bystander")
        ids = itertools.count(1000)
        steps = 0
        while not flood.is_closed and steps < 100:
            steps += 1
            clock.advance(1 / limits.rate)  # one more token
            batch = [next(ids) for _ in range(3)]
            for i in batch:
                flood.send({"type": "ping", "id": i})
            try:
                await flood.wait_for_id(batch[0])  # the first takes the token: pong
            except ConnectionError:
                break  # closed after the last step's batch
        await flood.closed
        assert steps * (1 / limits.rate) < FLOOD_WINDOW  # closed within one window
        answered, (closing,) = refusals(flood)
        assert len(answered) == ANSWERED_REFUSALS  # the rest were dropped unanswered
        assert closing["retry_after"] >= 0  # type: ignore[operator]
        assert (await bystander.request("ping"))["type"] == "pong"
    finally:
        await server.stop()


@pytest_twisted.ensureDeferred
async def test_refusals_of_an_earlier_window_are_forgotten() -> None:
    clock = task.Clock()
    limits = ServerLimits(rate=5, burst=10, flood_close=15)
    server = await Server.start(clock=clock, limits=limits)
    try:
        client = await server.connect("bursty")
        ids = itertools.count(1000)
        for _ in range(3):  # 10 refusals a window, 30 in all: over 15, but not in one
            clock.advance(FLOOD_WINDOW)  # a full bucket and a new window
            batch = [next(ids) for _ in range(limits.burst + ANSWERED_REFUSALS)]
            for i in batch:
                client.send({"type": "ping", "id": i})
            assert (await client.wait_for_id(batch[-1]))["type"] == "error"
        assert not client.is_closed
        clock.advance(1)
        assert (await client.request("ping"))["type"] == "pong"
        answered, closing = refusals(client)
        assert not closing and len(answered) == 3 * ANSWERED_REFUSALS
    finally:
        await server.stop()


class Flooder(WireClient):
    """Keeps writing pings, 10 every 10 ms (1,000 a second), until the server closes."""

    def __init__(self) -> None:
        super().__init__()
        self.reason: Failure | None = None
        self.burst = b"".join(frame({"type": "ping", "id": i}) for i in range(10))
        self.loop = task.LoopingCall(self.write_burst)

    def write_burst(self) -> None:
        if self.transport is not None and not self.is_closed:
            self.transport.write(self.burst)  # type: ignore[call-arg, misc]

    def connectionLost(self, reason: Failure | None = None) -> None:
        self.reason = reason
        if self.loop.running:
            self.loop.stop()
        super().connectionLost(reason)


@pytest_twisted.ensureDeferred
async def test_a_steady_flood_at_the_default_limits_reads_its_closing_error() -> None:
    """The real clock and the default limits (20 a second, 200 refused): a flood of
    1,000 pings a second, still writing as the server closes, is closed within a few
    seconds, reads the closing error and then a clean end of stream (not a reset)."""
    server = await Server.start(limits=ServerLimits())
    try:
        endpoint = TCP4ClientEndpoint(reactor, "127.0.0.1", server.port.getHost().port)
        flood = await connectProtocol(endpoint, Flooder())  # type: ignore[no-untyped-call]
        server.clients.append(flood)
        welcome = await flood.request("hello", protocol=PROTOCOL_VERSION, name="flood")
        assert welcome["type"] == "welcome"
        flood.loop.start(0.01)
        closed = flood.closed
        closed.addTimeout(30, reactor)  # the old count, reset by each refill, never closed
        await closed
        answered, (closing,) = refusals(flood)
        assert len(answered) <= ANSWERED_REFUSALS
        assert closing["code"] == "rate_limited"
        assert flood.received[-1] is closing  # the last thing read before the end
        assert flood.reason is not None and flood.reason.check(ConnectionDone)
    finally:
        await server.stop()
