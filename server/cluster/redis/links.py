"""The cluster's two links to Redis: the command link (`Link`, its protocol `NoDelay`,
and `Batched`, which holds the messages to other processes to the end of the reactor
turn) and the subscribing one (`Listener`); each reconnects on its own (`back_off`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import msgpack
import txredisapi
from twisted.internet.defer import Deferred, succeed
from twisted.logger import Logger
from twisted.python.failure import Failure

from pisyedili.server.cluster.base import ClusterAddress

log = Logger(namespace="pisyedili.server.cluster.redis")  # (one namespace for the cluster)


class NoDelay(txredisapi.RedisProtocol):  # type: ignore[misc]
    """The command link's protocol, with Nagle's algorithm off (as redis-py sets it): a publish is
    a small write that must leave at once, not wait for the previous one's ACK."""

    def connectionMade(self) -> Deferred[Any]:
        self.transport.setTcpNoDelay(True)
        made: Deferred[Any] = super().connectionMade()
        return made


class Batched:
    """The command link, holding `send`'s messages to the end of the reactor turn:
    each run of messages to one process is published as one list (a step's frames for
    the members a process holds: one publish, one wake-up there, not one a frame; a
    process from before lists reads only the single ones, so a cluster is upgraded
    all at once).
    Any other command goes through `link`, which first publishes what is held, so the
    link still carries every message and command in the order it was made."""

    def __init__(self, link: Any, clock: Any, channel: Callable[[str], str],
                 failed: Callable[[Failure, str], None],
                 unheard: Callable[[str], None]) -> None:
        self._link = link
        self._clock = clock
        self._channel = channel
        self._failed = failed
        self._unheard = unheard
        self._held: list[tuple[str, list[dict[str, Any]]]] = []
        self._call: Any = None

    def hold(self, process: str, message: dict[str, Any]) -> None:
        if self._held and self._held[-1][0] == process:
            self._held[-1][1].append(message)
        else:
            self._held.append((process, [message]))
        if self._call is None:
            self._call = self._clock.callLater(0, self.flush)

    def flush(self) -> None:
        if self._call is not None:
            if self._call.active():
                self._call.cancel()
            self._call = None
        held, self._held = self._held, []
        for process, messages in held:
            payload = msgpack.packb(messages if len(messages) > 1 else messages[0],
                                    use_bin_type=True)  # one alone, unwrapped: `_heard` reads both
            d: Deferred[Any] = self._link.publish(self._channel(f"to:{process}"), payload)
            d.addCallback(self._heard_by, process)
            d.addErrback(self._failed, "a message to another process")

    def _heard_by(self, receivers: object, process: str) -> None:
        if receivers == 0:  # nobody listens there: it may be dead
            self._unheard(process)

    @property
    def link(self) -> Any:
        """The link itself, for any other command: what is held is published first."""
        if self._held:
            self.flush()
        return self._link


class Listener(txredisapi.SubscriberProtocol):  # type: ignore[misc]
    """The subscribing link: (re)subscribes on every connect, hands on what it hears,
    and says when it is lost."""

    def connectionMade(self) -> Deferred[Any]:
        self.transport.setTcpNoDelay(True)
        made: Deferred[Any] = super().connectionMade()
        made.addCallback(lambda _: self.subscribe(self.factory.channels))
        made.addCallback(lambda _: self.factory.subscribed(self))
        made.addErrback(lambda _: None)  # lost meanwhile: `connectionLost` tells
        return made

    def connectionLost(self, why: Failure) -> None:
        super().connectionLost(why)
        self.factory.unsubscribed()

    def messageReceived(self, pattern: object, channel: bytes, message: bytes) -> None:
        self.factory.heard(channel, message)


class Link(txredisapi.RedisFactory):  # type: ignore[misc]
    """The command link (one connection, reconnected with back-off): says when its
    connection is ready (`up`) and when it is gone (`down`)."""

    protocol = NoDelay
    noisy = False  # not a line a reconnection: the cluster says when a link goes and comes

    def __init__(self, address: ClusterAddress, reply_timeout: float,
                 up: Callable[[], None], down: Callable[[], None],
                 stopping: Callable[[], bool]) -> None:
        super().__init__(f"{address.host}:{address.port}", address.db, 1, True,
                         txredisapi.ConnectionHandler, "utf-8", None, reply_timeout, True)
        self.address = address
        self._up, self._down, self._stopping = up, down, stopping
        self.deferred.addErrback(lambda _: None)  # nobody waits on it: `up` tells

    def stopTrying(self) -> Deferred[Any]:
        """txredisapi gives up for good once a connection's SELECT fails (refused by a
        Redis still loading its data after a restart, or lost as it went again): this
        link tries again, with its back-off, unless its cluster is stopping
        (`connectionError`, which comes next, says why)."""
        if self._stopping():
            stopped: Deferred[Any] = super().stopTrying()
            return stopped
        return succeed(None)

    def connectionError(self, why: str) -> None:
        super().connectionError(why)
        if not self._stopping():
            log.warn("cluster: a link to Redis at {address} was not made ({why}): trying "
                     "again", address=str(self.address), why=why.removeprefix("Redis error: "))

    def addConnection(self, conn: Any) -> None:
        super().addConnection(conn)
        if conn in self.pool:
            self._up()

    def delConnection(self, conn: Any) -> None:
        super().delConnection(conn)
        self._down()


def back_off(factory: Any, lease: float) -> None:
    """Reconnect within a third of a lease at most: back within a lease of the
    others, this process is not taken for gone by them."""
    factory.maxDelay = max(0.5, min(10.0, lease / 3))
    factory.initialDelay = min(factory.initialDelay, factory.maxDelay)
    factory.reconnect = True
