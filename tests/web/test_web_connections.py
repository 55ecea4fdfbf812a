"""The web port's connections over real loopback sockets: plain HTTP connections count
against the server's connection limits (by address, in an allowance of their own),
leave places to the TCP port, and one that does not finish its request is closed in
`HTTP_REQUEST_SECONDS`."""

from __future__ import annotations

import pytest_twisted
from poll_kit import BACKSTOP, poll_until_async
from twisted.internet import reactor, task
from twisted.internet.defer import Deferred
from twisted.internet.endpoints import TCP4ClientEndpoint, connectProtocol
from twisted.internet.protocol import Protocol, connectionDone
from twisted.python.failure import Failure
from ws_kit import WebServer

from pisyedili.server.net.limits import ServerLimits, web_reserve
from pisyedili.server.net.web import HTTP_REQUEST_SECONDS

UNFINISHED = b"GET / HTTP/1.1\r\nHost: x\r\n"
"""A request's head without its closing blank line: the server waits for the rest."""


class HalfRequest(Protocol):
    """An HTTP connection that sends part of a request (`first`) and stops."""

    def __init__(self, first: bytes = UNFINISHED) -> None:
        self.first = first
        self.data = b""
        self.gone: Deferred[None] = Deferred()

    def connectionMade(self) -> None:
        assert self.transport is not None
        self.transport.write(self.first)  # type: ignore[call-arg, misc]

    def dataReceived(self, data: bytes) -> None:
        self.data += data

    def connectionLost(self, reason: Failure = connectionDone) -> None:
        self.gone.callback(None)


async def half_requests(web: WebServer, count: int, source: str,
                        first: bytes = UNFINISHED) -> list[HalfRequest]:
    endpoint = TCP4ClientEndpoint(reactor, "127.0.0.1", web.web_port, bindAddress=(source, 0))
    return [await connectProtocol(endpoint, HalfRequest(first)) for _ in range(count)]  # type: ignore[no-untyped-call]


def gone(clients: list[HalfRequest]) -> int:
    return sum(c.gone.called for c in clients)


@pytest_twisted.ensureDeferred
async def test_idle_http_connections_count_and_leave_the_tcp_port_its_places() -> None:
    clock = task.Clock()
    limits = ServerLimits(max_connections=20, max_per_address=100)
    web = await WebServer.start(clock=clock, limits=limits)
    try:
        counter = web.server.factory.connections
        web_places = limits.max_connections - web_reserve(limits.max_connections)
        assert web_places == 18
        idle = await half_requests(web, 30, "127.0.0.2")
        # Past the web's share, each is closed as it is accepted; the rest are held.
        await poll_until_async(
            lambda: counter.total == web_places and gone(idle) == 30 - web_places,
            BACKSTOP, "the web's share")
        # A player over TCP from another address is still welcomed...
        player = await web.server.connect("player", source="127.0.0.3")
        assert (await player.request("ping"))["type"] == "pong"
        assert counter.total == web_places + 1
        # ...while a browser gets no place until the unfinished requests time out.
        late = await half_requests(web, 1, "127.0.0.4", b"")
        await late[0].gone
        clock.advance(HTTP_REQUEST_SECONDS)
        await poll_until_async(lambda: gone(idle) == 30, BACKSTOP, "the unfinished requests' close")
        assert counter.total == 1
        browser = await web.ws("browser")  # the upgrade's HTTP place went to its socket
        assert (await browser.request("ping"))["type"] == "pong"
        assert counter.total == 2
    finally:
        await web.stop()


@pytest_twisted.ensureDeferred
async def test_http_connections_count_against_their_own_per_address_cap() -> None:
    """Page loads from one address have an allowance apart from its players': full,
    it refuses the next page load but not a player."""
    limits = ServerLimits(max_connections=100, max_per_address=2, max_http_per_address=4)
    web = await WebServer.start(limits=limits)
    try:
        idle = await half_requests(web, 6, "127.0.0.2")
        await poll_until_async(lambda: gone(idle) == 2, BACKSTOP, "the address's cap")
        player = await web.server.connect("player", source="127.0.0.2")
        assert (await player.request("ping"))["type"] == "pong"
        second = await web.server.connect("second", source="127.0.0.2")
        assert (await second.request("ping"))["type"] == "pong"
        refused = await web.server.connect(source="127.0.0.2")  # players' cap: 2
        err = await refused.wait_type("error")
        assert err["code"] == "too_many_connections"
        other = await half_requests(web, 4, "127.0.0.3")  # another address's own four
        assert gone(other) == 0 and web.server.factory.connections.total == 10
    finally:
        await web.stop()


@pytest_twisted.ensureDeferred
async def test_a_request_dribbled_a_byte_at_a_time_is_closed_in_the_request_seconds() -> None:
    """twisted.web's own timeout restarts at every byte: this one does not."""
    clock = task.Clock()
    web = await WebServer.start(clock=clock)
    try:
        (slow,) = await half_requests(web, 1, "127.0.0.2", b"G")
        sent = 1
        while not slow.gone.called and sent < len(UNFINISHED):
            clock.advance(1)
            assert slow.transport is not None
            slow.transport.write(UNFINISHED[sent:sent + 1])  # type: ignore[call-arg, misc]
            sent += 1
            await task.deferLater(reactor, 0.05, lambda: None)  # let the byte arrive
        await slow.gone
        assert sent <= HTTP_REQUEST_SECONDS + 1
        assert web.server.factory.connections.total == 0
    finally:
        await web.stop()
