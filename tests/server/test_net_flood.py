"""A steady flood over real sockets: refusals are counted over a window, not in a row;
every refused request gets its `rate_limited` reply (the first few of a window in full,
the rest as one pre-encoded frame), and the flooder is closed with an error it can read."""

from __future__ import annotations

import itertools
import math

import pytest_twisted
from twisted.internet import reactor, task
from twisted.internet.endpoints import TCP4ClientEndpoint, connectProtocol
from twisted.internet.error import ConnectionDone
from twisted.python.failure import Failure
from wireclient import Server, WireClient

from pisyedili.protocol.codec import encode, frame
from pisyedili.protocol.version import PROTOCOL_VERSION
from pisyedili.server.net.connection import SHORT_REFUSAL, refusal_reply
from pisyedili.server.net.limits import ANSWERED_REFUSALS, FLOOD_WINDOW, ServerLimits
from pisyedili.server.net.tcp import LENGTH_PREFIX

Msg = dict[str, object]


def refusals(client: WireClient) -> tuple[list[Msg], list[Msg]]:
    """The `rate_limited` answers, and the closing one(s)."""
    limited = [m for m in client.received
               if m["type"] == "error" and m["code"] == "rate_limited"]
    closing = [m for m in limited if "closing" in str(m["message"])]
    return [m for m in limited if m not in closing], closing


def one_reply_each(client: WireClient, ids: list[int]) -> list[Msg]:
    """The replies to `ids`, in order: exactly one each."""
    replies = [m for m in client.received if m.get("id") in ids]
    assert [m["id"] for m in replies] == ids
    return replies


def short(limits: ServerLimits) -> Msg:
    """The pre-encoded reply past a window's first refusals (a whole token's wait)."""
    return {"type": "error", "code": "rate_limited", "message": SHORT_REFUSAL,
            "retry_after": math.ceil(1000 / limits.rate) / 1000}


@pytest_twisted.ensureDeferred
async def test_every_request_over_the_rate_gets_its_reply_until_the_close() -> None:
    clock = task.Clock()  # frozen: the bucket never refills
    limits = ServerLimits(rate=5, burst=10, flood_close=30)
    server = await Server.start(clock=clock, limits=limits)
    try:
        flood = await server.connect("flood")  # hello took one token
        ids = list(range(100, 100 + limits.burst - 1 + limits.flood_close))
        for i in ids:
            flood.send({"type": "ping", "id": i})
        await flood.wait_for_id(ids[-1])
        replies = one_reply_each(flood, ids)
        passed, full, rest = (replies[:limits.burst - 1],
                              replies[limits.burst - 1:][:ANSWERED_REFUSALS],
                              replies[limits.burst - 1 + ANSWERED_REFUSALS:])
        assert {m["type"] for m in passed} == {"pong"}
        assert {(m["code"], m["message"]) for m in full} == {
            ("rate_limited", "too many messages too fast; this one was ignored")}
        assert [{k: v for k, v in m.items() if k != "id"} for m in rest] == \
            [short(limits)] * (limits.flood_close - ANSWERED_REFUSALS)
        assert not flood.is_closed
        flood.send({"type": "ping", "id": 999})  # the refusal past `flood_close`
        await flood.closed
        (closing,) = refusals(flood)[1]
        assert "id" not in closing and flood.received[-1] is closing
        assert (await (await server.connect("bystander")).request("ping"))["type"] == "pong"
        assert not flood.invalid  # every reply is a valid `error`
    finally:
        await server.stop()


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
                await flood.wait_for_id(batch[-1])  # a pong, then two refusals
            except ConnectionError:
                break  # closed within the last step's batch
        await flood.closed
        assert steps * (1 / limits.rate) < FLOOD_WINDOW  # closed within one window
        answered, (closing,) = refusals(flood)
        assert len(answered) == limits.flood_close  # each refusal answered, then the close
        replied = [m["id"] for m in flood.received if "id" in m and m["type"] != "welcome"]
        assert replied == sorted(replied)  # pongs sent at once, refusals batched: in order
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
    """Keeps writing `burst` (10 pings by default) every 10 ms until the server closes,
    and counts the bytes it reads."""

    def __init__(self, burst: bytes | None = None) -> None:
        super().__init__()
        self.reason: Failure | None = None
        self.burst = burst or b"".join(frame({"type": "ping", "id": i}) for i in range(10))
        self.loop = task.LoopingCall(self.write_burst)
        self.bytes_read = 0

    def write_burst(self) -> None:
        if self.transport is not None and not self.is_closed:
            self.transport.write(self.burst)  # type: ignore[call-arg, misc]

    def dataReceived(self, data: bytes) -> None:
        self.bytes_read += len(data)
        super().dataReceived(data)  # type: ignore[no-untyped-call]

    def connectionLost(self, reason: Failure | None = None) -> None:
        self.reason = reason
        if self.loop.running:
            self.loop.stop()
        super().connectionLost(reason)


async def flooder(server: Server, burst: bytes | None = None) -> Flooder:
    """A welcomed `Flooder`, not flooding yet."""
    endpoint = TCP4ClientEndpoint(reactor, "127.0.0.1", server.port.getHost().port)
    flood: Flooder = await connectProtocol(endpoint, Flooder(burst))  # type: ignore[no-untyped-call]
    server.clients.append(flood)
    welcome = await flood.request("hello", protocol=PROTOCOL_VERSION, name="flood")
    assert welcome["type"] == "welcome"
    return flood


@pytest_twisted.ensureDeferred
async def test_a_steady_flood_at_the_default_limits_reads_its_closing_error() -> None:
    """The real clock and the default limits (20 a second, 200 refused): a flood of
    1,000 pings a second, still writing as the server closes, is closed within a few
    seconds, reads a reply to each ping it read, the closing error and then a clean end
    of stream (not a reset)."""
    server = await Server.start(limits=ServerLimits())
    try:
        flood = await flooder(server)
        flood.loop.start(0.01)
        closed = flood.closed
        closed.addTimeout(30, reactor)  # the old count, reset by each refill, never closed
        await closed
        answered, (closing,) = refusals(flood)
        assert len(answered) == ServerLimits().flood_close
        assert closing["code"] == "rate_limited"
        assert flood.received[-1] is closing  # the last thing read before the end
        assert flood.reason is not None and isinstance(flood.reason.value, ConnectionDone)
    finally:
        await server.stop()


@pytest_twisted.ensureDeferred
async def test_a_flood_of_the_smallest_requests_is_answered_within_a_bound() -> None:
    """A reply cannot be smaller than a request can: `{"id": 1}` is a 9-byte frame, and
    its `rate_limited` reply must carry `type`, `code`, `message` and the id. What bounds
    a flood's replies is the close: at most `flood_close` refusals a window, each
    answered with at most one pre-encoded frame, and the flooder must read them."""
    limits = ServerLimits()
    smallest = b"\x00\x00\x00\x05\x81\xa2id\x01"  # {"id": 1}: no type, its id answered
    largest_reply = len(refusal_reply(2**53 - 1, 0.05)) + LENGTH_PREFIX
    assert len(smallest) == 9 and largest_reply <= 84
    server = await Server.start(limits=limits)
    try:
        flood = await flooder(server, smallest * 100)
        welcomed = flood.bytes_read
        flood.loop.start(0.01)
        await flood.closed
        full = len(frame(flood.received[-2]))  # a full refusal or the closing error: larger
        bound = (limits.burst * full  # what passed the rate (`missing_type`, in full)
                 + ANSWERED_REFUSALS * full + limits.flood_close * largest_reply
                 + len(frame(flood.received[-1])))
        assert flood.bytes_read - welcomed <= bound
        assert refusals(flood)[1]
    finally:
        await server.stop()


def test_the_pre_encoded_reply_is_the_error_the_encoder_would_write() -> None:
    for rid in (None, 0, 127, 128, 65536, 2**53 - 1):
        expected = {"type": "error", "code": "rate_limited", "message": SHORT_REFUSAL,
                    "retry_after": 0.05, **({} if rid is None else {"id": rid})}
        assert refusal_reply(rid, 0.05) == encode(expected)
