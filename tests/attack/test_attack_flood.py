"""Floods of WebSocket frames that are not messages (issue 37, fault 4): pings and empty
continuation frames count against the rate limit as messages do, before `hello` too, so
a flooder is closed after a bounded number of frames while other players are answered.

The bound under a frozen clock is exact: `burst` frames pass, `flood_close` more are
refused (a ping over the rate gets no pong), and the next one closes the connection
with `error` `rate_limited`, then a WebSocket close 1000 whose reason is that code.
"""

from __future__ import annotations

import pytest_twisted
from raw_ws_kit import BINARY, CONTINUATION, PING, RawWebSocket, frame, raw_ws
from twisted.internet import task
from ws_kit import WebServer, with_server

from pisyedili.server.net.limits import ServerLimits

LIMITS = ServerLimits(rate=5, burst=10, flood_close=30)
FLOOD = 1000
"""Frames a flooder writes at once: far more than the limits let through."""


async def closed_for_flooding(flooder: RawWebSocket) -> None:
    """The flooder read `rate_limited` (the closing one), then the close saying so."""
    await flooder.closed()
    (closing,) = flooder.errors("rate_limited")
    assert "closing" in closing["message"] and closing["retry_after"] >= 0
    assert flooder.close == (1000, "rate_limited")


@pytest_twisted.ensureDeferred
async def test_a_ping_flood_before_hello_is_closed_after_burst_and_flood_close() -> None:
    async def test(web: WebServer) -> None:
        canary = await web.server.connect("canary")
        flooder = await raw_ws(web.web_port)  # no hello: the limits hold from the start
        flooder.send(*[frame(PING)] * FLOOD)
        await closed_for_flooding(flooder)
        assert flooder.pongs == LIMITS.burst  # the 30 refused pings got none
        assert (await canary.request("ping"))["type"] == "pong"

    await with_server(test, clock=task.Clock(), limits=LIMITS)


@pytest_twisted.ensureDeferred
async def test_empty_continuation_frames_count_as_messages() -> None:
    async def test(web: WebServer) -> None:
        canary = await web.server.connect("canary")
        flooder = await raw_ws(web.web_port, "flooder")  # hello took one token
        flooder.send(frame(BINARY, fin=False),  # a message begun (its own token) ...
                     *[frame(CONTINUATION, fin=False)] * FLOOD)  # ... and never ended
        await closed_for_flooding(flooder)
        assert [m["type"] for m in flooder.messages] == ["welcome", "error"]
        assert (await canary.request("ping"))["type"] == "pong"

    await with_server(test, clock=task.Clock(), limits=LIMITS)


@pytest_twisted.ensureDeferred
async def test_pings_within_the_rate_are_answered_and_the_connection_stays() -> None:
    async def test(web: WebServer) -> None:
        player = await raw_ws(web.web_port, "player")  # hello took one token
        player.send(*[frame(PING, b"%d" % i) for i in range(LIMITS.burst - 1)])
        await player.until(lambda: player.pongs == LIMITS.burst - 1, "the pongs")
        player.send(frame(PING))  # over the rate: no pong, counted, not closed
        player.send_message({"type": "ping", "id": 7})  # over the rate too: answered
        await player.until(lambda: any(m.get("id") == 7 for m in player.messages), "7")
        assert player.errors("rate_limited")[0]["id"] == 7
        assert player.pongs == LIMITS.burst - 1 and not player.is_closed

    await with_server(test, clock=task.Clock(), limits=LIMITS)


class Flooding:
    """Flooders writing `frames` 100 times a second until the server closes them."""

    def __init__(self, flooders: list[RawWebSocket], frames: list[bytes]) -> None:
        self.flooders = flooders
        self.batch = b"".join(frames)
        self.loop = task.LoopingCall(self.write)

    def write(self) -> None:
        for flooder in self.flooders:
            flooder.send(self.batch)


@pytest_twisted.ensureDeferred
async def test_flooders_at_the_default_limits_are_closed_and_a_canary_is_answered() -> None:
    """The real clock and the default limits: pings and empty continuation frames,
    200 of them every 10 ms from each of four connections, until each is closed; a
    player on another connection is answered all along."""
    async def test(web: WebServer) -> None:
        canary = await web.server.connect("canary")
        pingers = [await raw_ws(web.web_port) for _ in range(2)]
        fragmenters = [await raw_ws(web.web_port, f"fragments-{i}") for i in range(2)]
        for fragmenter in fragmenters:
            fragmenter.send(frame(BINARY, fin=False))
        floods = [Flooding(pingers, [frame(PING)] * 200),
                  Flooding(fragmenters, [frame(CONTINUATION, fin=False)] * 200)]
        for flood in floods:
            flood.loop.start(0.01)
        try:
            for flooder in (*pingers, *fragmenters):
                assert (await canary.request("ping"))["type"] == "pong"
                await closed_for_flooding(flooder)
        finally:
            for flood in floods:
                flood.loop.stop()
        assert (await canary.request("ping"))["type"] == "pong"

    await with_server(test, limits=ServerLimits())
