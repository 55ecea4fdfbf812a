"""A small protocol client and server harness for the network tests (real sockets).

`WireClient` speaks the wire protocol with nothing but Twisted's `Int32StringReceiver`
and `pisyedili.protocol`'s codec, as a third-party client would; it records every frame
it receives (the hidden-information tests read them all) and validates each one
against the schema, so a server message the schema refuses fails the test.
"""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

import pytest_twisted
from poll_kit import arrived, first_or_next
from twisted.internet import reactor, task
from twisted.internet.defer import Deferred
from twisted.internet.endpoints import TCP4ClientEndpoint, connectProtocol, serverFromString
from twisted.protocols.basic import Int32StringReceiver
from twisted.python.failure import Failure

from pisyedili.protocol.codec import decode, encode
from pisyedili.protocol.limits import MAX_SERVER_FRAME, SERVER_FRAME_LIMITS
from pisyedili.protocol.schema import Direction, validate
from pisyedili.protocol.version import FEATURES, PROTOCOL_VERSION
from pisyedili.server.net.limits import ServerLimits
from pisyedili.server.net.tcp import ServerFactory, ServerProtocol
from pisyedili.server.people.accounts import CHEAP, AccountSettings
from pisyedili.server.service.assembly import make_factory
from pisyedili.server.store import MEMORY, Archive, open_store
from pisyedili.server.store.journal import StoreJournal
from pisyedili.server.table.core import TableSettings

Msg = dict[str, Any]
Pred = Callable[[Msg], bool]

TIMEOUT = 30.0
"""A backstop for one wait on the server: a reply or a message comes within
milliseconds, but a busy 2-core machine may pause the test for seconds."""
UNTIMED_NO_DELAYS = TableSettings(turn_seconds=0, grace_seconds=60, bot_delay=0, deal_pause=0)
ROOMY = ServerLimits(rate=10_000, burst=10_000)
"""Test clients play at machine speed: only the rate-limit tests use the real defaults."""


def offers_moves(msg: Msg) -> bool:
    return msg["type"] in ("update", "table") and "moves" in msg


def event_of(update: Msg, kind: str) -> Msg:
    """The one event of `kind` in an `update`."""
    (found,) = [e for e in update["events"] if e["event"] == kind]
    return found  # type: ignore[no-any-return]


class WireClient(Int32StringReceiver):
    MAX_LENGTH = MAX_SERVER_FRAME

    def __init__(self, auto_pong: bool = True) -> None:
        self.received: list[Msg] = []
        self.invalid: list[tuple[Msg, str]] = []
        self.cursor = 0
        self.auto_pong = auto_pong
        self.closed: Deferred[None] = Deferred()
        self.is_closed = False
        self.welcome: Msg = {}
        self.address: tuple[str, int] = ("", 0)
        self._ids = itertools.count(1)
        self._waiters: list[tuple[Pred, Deferred[Msg]]] = []

    # -- wire ---------------------------------------------------------------------------

    def connectionMade(self) -> None:
        assert self.transport is not None
        self.transport.setTcpNoDelay(True)
        host = self.transport.getHost()  # type: ignore[misc]
        self.address = (host.host, host.port)

    def stringReceived(self, string: bytes) -> None:
        msg = decode(string, SERVER_FRAME_LIMITS)
        try:
            validate(msg, Direction.TO_CLIENT)
        except Exception as e:  # recorded; tests assert there are none
            self.invalid.append((msg, str(e)))
        self.received.append(msg)
        if self.auto_pong and msg["type"] == "ping":
            self.send({"type": "pong", **({"id": msg["id"]} if "id" in msg else {})})
        arrived(self._waiters, msg)

    def connectionLost(self, reason: Failure | None = None) -> None:
        self.is_closed = True
        self.closed.callback(None)
        for _, d in self._waiters:
            if not d.called:
                d.errback(ConnectionError(f"closed while waiting; got {self.types()}"))
        self._waiters.clear()

    def send(self, msg: Msg) -> None:
        self.sendString(encode(msg))  # type: ignore[no-untyped-call]

    def send_raw(self, data: bytes) -> None:
        assert self.transport is not None
        self.transport.write(data)  # type: ignore[call-arg, misc]

    # -- waiting ------------------------------------------------------------------------

    def wait(self, pred: Pred, timeout: float = TIMEOUT, consume: bool = True) -> Deferred[Msg]:
        """The next message from the cursor on that matches `pred`.

        With `consume` the cursor moves past it (and past everything before it);
        without, the cursor stays, so later waits still see the messages in between.
        """
        for i in range(self.cursor, len(self.received)):
            if pred(self.received[i]):
                if consume:
                    self.cursor = i + 1
                d: Deferred[Msg] = Deferred()
                d.callback(self.received[i])
                return d
        if consume:
            self.cursor = len(self.received)
        if self.is_closed:
            d = Deferred()
            d.errback(ConnectionError(f"closed; got {self.types()}"))
            return d
        d = Deferred()

        def advance(msg: Msg) -> Msg:
            if consume:
                self.cursor = len(self.received)
            return msg

        d.addCallback(advance)
        self._waiters.append((pred, d))
        d.addTimeout(timeout, reactor)
        return d

    def wait_type(self, type_: str, timeout: float = TIMEOUT, **match: Any) -> Deferred[Msg]:
        return self.wait(lambda m: m["type"] == type_
                         and all(m.get(k) == v for k, v in match.items()), timeout)

    def request(self, type_: str, **fields: Any) -> Deferred[Msg]:
        """Send a request with a fresh id; fires with the first reply carrying that id."""
        rid = next(self._ids)
        start = len(self.received)  # a reply can only come after the request
        self.send({"type": type_, "id": rid, **fields})
        return self.wait_for_id(rid, start)

    def wait_for_id(self, rid: int, start: int = 0) -> Deferred[Msg]:
        def answers(m: Msg) -> bool:
            return m.get("id") == rid and m["type"] != "ping"

        return first_or_next(self.received[start:], self._waiters, answers, TIMEOUT)

    async def ok(self, type_: str, **fields: Any) -> Msg:
        """A request that must succeed (anything but `error`)."""
        reply = await self.request(type_, **fields)
        assert reply["type"] != "error", reply
        return reply

    def types(self) -> list[str]:
        return [m["type"] for m in self.received]

    # -- protocol 2's table messages ------------------------------------------------------

    def events(self, kind: str | None = None) -> list[Msg]:
        """Every event of the updates received, in order (of one kind, if given)."""
        return [e for m in self.received if m["type"] == "update" for e in m["events"]
                if kind is None or e["event"] == kind]

    def decision(self) -> Msg | None:
        """The latest `update` or `table` received, if it offers moves: the decision this
        client owes (once every message the server sent has arrived, e.g. after a ping)."""
        for m in reversed(self.received):
            if m["type"] in ("update", "table"):
                return m if "moves" in m else None
        return None

    async def next_decision(self, timeout: float = TIMEOUT) -> Msg:
        """The next `update` or `table` from the cursor on that offers moves and that no
        later one has superseded yet."""
        while True:
            msg = await self.wait(offers_moves, timeout)
            if not any(m["type"] in ("update", "table") for m in self.received[self.cursor:]):
                return msg

    def wait_event(self, kind: str, timeout: float = TIMEOUT,
                   consume: bool = True) -> Deferred[Msg]:
        """The next `update` holding an event of `kind`."""
        return self.wait(lambda m: m["type"] == "update"
                         and any(e["event"] == kind for e in m["events"]), timeout, consume)

    def errors(self) -> list[Msg]:
        return [m for m in self.received if m["type"] == "error"]

    def close(self) -> Deferred[None]:
        if not self.is_closed and self.transport is not None:
            self.transport.loseConnection()  # type: ignore[misc]
        return self.closed


@dataclass
class Server:
    """A real server on a loopback port, and the clients connected to it."""

    factory: ServerFactory
    port: Any
    clients: list[WireClient] = field(default_factory=list)
    lost: dict[tuple[str, int], Deferred[None]] = field(default_factory=dict)
    """Per client address: fires once the server side of that connection has gone."""
    archive: Archive | None = None

    @classmethod
    async def start(cls, clock: Any = None, settings: TableSettings = UNTIMED_NO_DELAYS,
                    limits: ServerLimits | None = None, seed: int | None = 7,
                    journal: StoreJournal | None = None, archive: Archive | None = None,
                    accounts: AccountSettings | None = None,
                    community_from: str | None = None) -> Server:
        """With `archive` (opened here, closed by `stop`): accounts, ratings and
        moderation, their registry read from `community_from`."""
        if archive is not None:
            await archive.open()
        # Only what was asked: a test may hand its own archive to `make_factory`.
        community: dict[str, Any] = {} if archive is None else {
            "archive": archive, "account_settings": accounts,
            "community_from": community_from}
        factory = make_factory(clock or reactor, name="test server", seed=seed,
                               limits=limits or ROOMY, settings=settings, journal=journal,
                               **community)
        port = await serverFromString(reactor, "tcp:0:interface=127.0.0.1").listen(factory)  # type: ignore[no-untyped-call]
        server = cls(factory, port, archive=archive)
        build = factory.buildProtocol

        def build_watched(addr: Any) -> ServerProtocol:
            proto = build(addr)
            lost = server.lost.setdefault((addr.host, addr.port), Deferred())
            connection_lost = proto.connectionLost

            def watched(reason: Failure | None = None) -> None:
                connection_lost(reason)
                lost.callback(None)

            proto.connectionLost = watched  # type: ignore[method-assign]
            return proto

        factory.buildProtocol = build_watched  # type: ignore[method-assign]
        return server

    def dropped(self, client: WireClient) -> Deferred[None]:
        """Fires once the server has seen `client`'s connection go."""
        d = self.lost.setdefault(client.address, Deferred())  # the server may not know it yet
        waiter: Deferred[None] = Deferred()

        def fire(result: object) -> object:
            if not waiter.called:
                waiter.callback(None)
            return result

        d.addBoth(fire)
        waiter.addTimeout(TIMEOUT, reactor)
        return waiter

    async def connect(self, name: str | None = None, features: list[str] | None = None,
                      auto_pong: bool = True, token: str | None = None,
                      source: str | None = None) -> WireClient:
        """A connected client; with `name`, it has said hello and got `welcome`.
        `source`: the loopback address to connect from (127.0.0.0/8), for per-address
        limits."""
        endpoint = TCP4ClientEndpoint(reactor, "127.0.0.1", self.port.getHost().port,
                                      bindAddress=(source, 0) if source else None)
        client = await connectProtocol(endpoint, WireClient(auto_pong))  # type: ignore[no-untyped-call]
        self.clients.append(client)
        if name is not None:
            hello: Msg = {"protocol": PROTOCOL_VERSION, "name": name,
                          "features": sorted(FEATURES) if features is None else features}
            if token is not None:
                hello["token"] = token
            welcome = await client.request("hello", **hello)
            assert welcome["type"] == "welcome", welcome
            client.welcome = welcome
        return client  # type: ignore[no-any-return]

    async def stop(self) -> None:
        self.factory.shutdown()
        for client in self.clients:
            await client.close()
            await self.dropped(client)
        # Sessions left behind hold expiry timers (and seats whose timers shutdown
        # stopped): forgetting them leaves nothing scheduled on the reactor.
        for session in self.factory.sessions.each():
            self.factory.sessions.forget(session)
        await self.port.stopListening()
        if self.archive is not None:
            await self.archive.close()
        bad = [(c, m) for c in self.clients for m in c.invalid]
        assert not bad, f"server sent messages the schema refuses: {bad[:3]}"


QUIET = ServerLimits(rate=10_000, burst=10_000, ping_seconds=10_000, idle_seconds=20_000)
"""For a clock that jumps far ahead: no heartbeat may close a connection."""


async def with_accounts() -> Server:
    """A server that keeps accounts, in memory, with argon2 at its cheapest."""
    return await Server.start(archive=Archive(lambda: open_store(MEMORY), reactor),
                              accounts=AccountSettings(cost=CHEAP))


async def registered(server: Server, name: str) -> WireClient:
    """A client of `server` logged in to an account of its own, just registered."""
    client = await server.connect(name)
    account = await client.request("register", password="correct horse battery")
    assert account["type"] == "account", account
    return client


@pytest_twisted.async_yield_fixture
async def clocked() -> AsyncIterator[tuple[Server, task.Clock]]:
    """A server on a `task.Clock` the test moves, with `QUIET` limits."""
    clock = task.Clock()
    server = await Server.start(clock=clock, limits=QUIET)
    yield server, clock
    await server.stop()
