"""The PROXY protocol (HAProxy's `send-proxy`) in front of an endpoint: `haproxy:tcp:...`.

Twisted's own wrapper (twisted.protocols.haproxy) connects the wrapped protocol the
moment the proxy connects, before the PROXY line has come: the server's
`connectionMade` would then admit, count and log the connection by the proxy's
address. Here the server's protocol is connected once the line has named the client
(or a proxy that connects and never says within `HEADER_SECONDS` is dropped), so the
per-address limits and the logs see the player. A line that names no client is the
proxy's health check (HAProxy's `check` on a `send-proxy` server): it is closed
without the server ever seeing it, so checks neither count nor fill the log.
"""

from __future__ import annotations

from typing import Any, cast

from twisted.internet.defer import Deferred
from twisted.internet.endpoints import serverFromString
from twisted.internet.protocol import Protocol
from twisted.protocols.haproxy._wrapper import (
    HAProxyProtocolWrapper,
    HAProxyWrappingFactory,
)
from twisted.python.failure import Failure
from zope.interface import directlyProvides, providedBy  # type: ignore[import-untyped]

PREFIX = "haproxy:"
"""An endpoint string's prefix for a port behind a proxy speaking the PROXY protocol."""
HEADER_SECONDS = 10.0
"""How long a connection may take to send its PROXY line (the proxy sends it at once)."""


class _Held(Protocol):
    """Stands in for the server's protocol while the PROXY line is parsed: it keeps
    what followed the line, for the server's protocol once it is connected."""

    def __init__(self) -> None:
        self.chunks: list[bytes] = []

    def dataReceived(self, data: bytes) -> None:
        self.chunks.append(data)


class HeaderFirst(HAProxyProtocolWrapper):
    """`HAProxyProtocolWrapper` that connects its protocol after the PROXY line."""

    factory: ProxyHeaderFactory

    def __init__(self, factory: ProxyHeaderFactory, wrappedProtocol: Any) -> None:
        super().__init__(factory, wrappedProtocol)  # type: ignore[arg-type]
        self._made = False
        self._no_header: Any = None  # IDelayedCall

    def makeConnection(self, transport: Any) -> None:
        # `ProtocolWrapper.makeConnection` without its last step, connecting the
        # wrapped protocol: `dataReceived` does that once the line has come.
        directlyProvides(self, providedBy(transport))
        Protocol.makeConnection(self, transport)  # type: ignore[no-untyped-call]
        self.factory.registerProtocol(self)  # type: ignore[no-untyped-call]
        self._no_header = self.factory.clock.callLater(self.factory.header_seconds,
                                                       self._silent)

    def _silent(self) -> None:
        self._no_header = None
        assert self.transport is not None
        self.transport.abortConnection()

    def dataReceived(self, data: bytes) -> None:
        protocol: Any = self.wrappedProtocol
        if self._made:
            protocol.dataReceived(data)
            return
        held = _Held()
        self.wrappedProtocol = cast(Any, held)
        try:
            super().dataReceived(data)  # parses; what follows the line goes to `held`
        finally:
            self.wrappedProtocol = protocol
        if self._proxyInfo is None or self.disconnecting:
            return  # the line is not complete yet, or it was not a PROXY line
        self._cancel()
        if self._proxyInfo.source is None:  # the proxy's own check (v1 UNKNOWN, v2 LOCAL)
            self.loseConnection()  # type: ignore[no-untyped-call]
            return
        self._made = True
        protocol.makeConnection(self)
        for chunk in held.chunks:
            if self.wrappedProtocol is None:
                break  # the server closed it meanwhile
            protocol.dataReceived(chunk)

    def connectionLost(self, reason: Failure) -> None:  # type: ignore[override]
        self._cancel()
        if self._made:
            super().connectionLost(reason)  # type: ignore[no-untyped-call]
        else:  # the server's protocol never knew of it
            self.factory.unregisterProtocol(self)  # type: ignore[no-untyped-call]

    def _cancel(self) -> None:
        if self._no_header is not None:
            self._no_header.cancel()
            self._no_header = None


class ProxyHeaderFactory(HAProxyWrappingFactory):
    """Wraps a server factory's protocols in `HeaderFirst`."""

    protocol = HeaderFirst  # type: ignore[assignment]
    noisy = False  # no "Starting factory <...>" per port: the server logs its own lines

    def __init__(self, wrapped: Any, clock: Any,
                 header_seconds: float = HEADER_SECONDS) -> None:
        super().__init__(wrapped)  # type: ignore[no-untyped-call]
        self.clock = clock
        self.header_seconds = header_seconds


def listen(reactor: Any, description: str, factory: Any) -> Deferred[Any]:
    """Listen at the endpoint string `description`; with `haproxy:` in front, each
    connection starts with a PROXY line (v1 or v2) that names the client."""
    if not description.startswith(PREFIX):
        endpoint: Any = serverFromString(reactor, description)  # type: ignore[no-untyped-call]
        listening: Deferred[Any] = endpoint.listen(factory)
        return listening
    inner: Any = serverFromString(reactor, description[len(PREFIX):])  # type: ignore[no-untyped-call]
    proxied: Deferred[Any] = inner.listen(ProxyHeaderFactory(factory, reactor))
    return proxied
