"""A protocol client over a real WebSocket (autobahn's Twisted client), for the web tests.

`WebSocketWire` is the network tests' `WireClient` (tests/server/wireclient.py) with
the WebSocket as its framing: every waiting and request helper is the same, so a test
can drive a browser-style connection and a TCP one side by side. `WebServer` runs an
in-process server (`wireclient.Server`) with the web site on a second loopback port.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from autobahn.twisted.websocket import WebSocketClientFactory, WebSocketClientProtocol
from sibling_kit import sibling
from twisted.internet import reactor
from twisted.internet.defer import Deferred
from twisted.internet.endpoints import TCP4ClientEndpoint, clientFromString, serverFromString

from pisyedili.protocol.codec import encode
from pisyedili.protocol.version import FEATURES, PROTOCOL_VERSION
from pisyedili.server.net.web import OriginPolicy, Proxies, make_site

wireclient = sibling("server", "wireclient")
TIMEOUT = wireclient.TIMEOUT


class WebSocketWire(wireclient.WireClient):  # type: ignore[misc, name-defined]
    """`WireClient`'s bookkeeping, its frames carried as binary WebSocket messages."""

    def __init__(self) -> None:
        super().__init__()
        self.socket: ClientSocket | None = None
        self.close_code: int | None = None
        self.close_reason: str | None = None

    def send(self, msg: dict[str, Any]) -> None:
        self.send_body(encode(msg))

    def send_body(self, body: bytes) -> None:
        assert self.socket is not None
        self.socket.sendMessage(body, isBinary=True)  # type: ignore[no-untyped-call]

    def send_text(self, text: str) -> None:
        assert self.socket is not None
        self.socket.sendMessage(text.encode("utf-8"), isBinary=False)  # type: ignore[no-untyped-call]

    def close(self) -> Deferred[None]:
        if not self.is_closed and self.socket is not None:
            self.socket.sendClose(1000)
        return self.closed  # type: ignore[no-any-return]


class ClientSocket(WebSocketClientProtocol):
    factory: ClientFactory

    def onOpen(self) -> None:
        wire = self.factory.wire
        wire.socket = self
        self.factory.opened.callback(wire)

    def onMessage(self, payload: bytes, isBinary: bool) -> None:
        assert isBinary, "the server sent a text message"
        self.factory.wire.stringReceived(payload)

    def onClose(self, wasClean: bool, code: int | None, reason: str | None) -> None:
        wire = self.factory.wire
        wire.close_code, wire.close_reason = code, reason
        if not self.factory.opened.called:
            self.factory.opened.errback(ConnectionRefusedError(
                f"handshake failed: {reason} ({self.factory.refusal})"))
        if not wire.is_closed:
            wire.connectionLost(None)

    def failHandshake(self, reason: str) -> None:
        self.factory.refusal = reason
        super().failHandshake(reason)  # type: ignore[no-untyped-call]


class ClientFactory(WebSocketClientFactory):
    protocol = ClientSocket  # type: ignore[assignment]

    def __init__(self, url: str, origin: str | None, headers: dict[str, str]) -> None:
        super().__init__(url, origin=origin, headers=headers)  # type: ignore[no-untyped-call]
        # Autobahn gives up on a server's answer after 5 s; a server still starting
        # (socket activation: the socket listens before the process has imported)
        # answers later than that on a loaded machine, and `opened` has its own limit.
        self.setProtocolOptions(openHandshakeTimeout=TIMEOUT)  # type: ignore[no-untyped-call]
        self.wire = WebSocketWire()
        self.opened: Deferred[WebSocketWire] = Deferred()
        self.refusal = ""


async def ws_connect(port: int, origin: str | None = "own", name: str | None = None,
                     host: str = "127.0.0.1", headers: dict[str, str] | None = None,
                     tls_roots: Path | None = None) -> WebSocketWire:
    """A WebSocket to `/ws` on `port`, from a page of `origin` ("own": the server's;
    None: no Origin header, as a program); with `name`, it has said hello. With
    `tls_roots` (a folder of PEM certificates to trust) it is `wss://`."""
    scheme = "https" if tls_roots is not None else "http"
    url = f"{'wss' if tls_roots is not None else 'ws'}://{host}:{port}/ws"
    factory = ClientFactory(url, f"{scheme}://{host}:{port}" if origin == "own" else origin,
                            headers or {})
    factory.opened.addTimeout(TIMEOUT, reactor)
    endpoint: Any = TCP4ClientEndpoint(reactor, host, port, timeout=TIMEOUT) \
        if tls_roots is None else clientFromString(  # type: ignore[no-untyped-call]
            reactor, f"tls:{host}:{port}:trustRoots={tls_roots}:timeout={int(TIMEOUT)}")
    await endpoint.connect(factory)
    wire: WebSocketWire = await factory.opened
    if name is not None:
        welcome = await wire.request("hello", protocol=PROTOCOL_VERSION, name=name,
                                     features=sorted(FEATURES))
        assert welcome["type"] == "welcome", welcome
        wire.welcome = welcome
    return wire


@dataclass
class WebServer:
    """An in-process server (TCP on one loopback port, the web site on another)."""

    server: Any  # wireclient.Server
    site_port: Any
    sockets: list[WebSocketWire] = field(default_factory=list)

    @classmethod
    async def start(cls, origins: OriginPolicy | None = None, proxies: Proxies | None = None,
                    tls: tuple[Path, Path] | None = None, **kwargs: Any) -> WebServer:
        """Started; the web site over TLS with `tls` (a key and its certificate)."""
        server = await wireclient.Server.start(**kwargs)
        site = make_site(server.factory, origins, proxies)
        where = "tcp:0:interface=127.0.0.1" if tls is None else \
            f"ssl:0:interface=127.0.0.1:privateKey={tls[0]}:certKey={tls[1]}"
        port = await serverFromString(reactor, where).listen(site)  # type: ignore[no-untyped-call]
        return cls(server, port)

    @property
    def web_port(self) -> int:
        return int(self.site_port.getHost().port)

    def server_side(self, wire: WebSocketWire) -> Any:
        """The server's `Connection` for a welcomed `wire`."""
        player = str(wire.welcome["player"])
        (found,) = [c for c in self.server.factory.protocols
                    if c.session is not None and c.session.player_id == player]
        return found

    async def ws(self, name: str | None = None, origin: str | None = "own",
                 headers: dict[str, str] | None = None) -> WebSocketWire:
        wire = await ws_connect(self.web_port, origin, name, headers=headers)
        self.sockets.append(wire)
        return wire

    async def stop(self) -> None:
        self.server.factory.shutdown()
        for wire in self.sockets:
            await wire.close()
        await self.server.stop()
        await self.site_port.stopListening()
        bad = [(w, m) for w in self.sockets for m in w.invalid]
        assert not bad, f"server sent messages the schema refuses: {bad[:3]}"


async def with_server(test: Callable[[WebServer], Awaitable[None]], **kwargs: Any) -> None:
    """`test` run against a `WebServer` started with `kwargs`, stopped after (failing
    if the server sent anything the schema refuses)."""
    web = await WebServer.start(**kwargs)
    try:
        await test(web)
    finally:
        await web.stop()
