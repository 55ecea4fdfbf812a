"""The protocol over a WebSocket: autobahn's server, whose binary messages each carry one
msgpack map, the body a TCP frame would carry, handed to the same `Connection` logic as
TCP (server/net/connection.py), and the resource at `/ws` that takes an HTTP
connection of the site (server/net/web.py) over.

Only a server that serves the web loads it (`web.make_site`): autobahn is a large
part of a server's start.
"""

from __future__ import annotations

from typing import Any, cast

from autobahn.twisted.resource import WebSocketResource
from autobahn.twisted.websocket import WebSocketServerFactory, WebSocketServerProtocol
from autobahn.websocket.protocol import WebSocketProtocol
from autobahn.websocket.types import ConnectionDeny, ConnectionRequest
from twisted.logger import Logger
from twisted.web.server import Request

from pisyedili.protocol.errors import ProtocolError
from pisyedili.protocol.limits import MAX_CLIENT_FRAME
from pisyedili.server.net.connection import ABORT_AFTER_CLOSE, Connection
from pisyedili.server.net.tcp import ServerFactory
from pisyedili.server.net.web import OriginPolicy, Proxies, WebChannel

log = Logger()

WS_HEADER_MAX = 10
"""Bytes of a server WebSocket frame's header at most (unmasked, 64-bit length)."""
BINARY = 2
"""The WebSocket opcode of a binary message."""
CONTINUATION = 0
"""The WebSocket opcode of a message's later fragment."""
CLOSE = 8
"""The WebSocket opcode of a close frame; opcodes from 8 up are control frames."""

# -- the WebSocket ----------------------------------------------------------------------


class WebSocketConnection(Connection):
    """`Connection` over a WebSocket: a body is one binary message."""

    FRAME_OVERHEAD = WS_HEADER_MAX
    TRANSPORT = "websocket"

    def __init__(self, server: ServerFactory, socket: WebSocketServer) -> None:
        super().__init__(server)
        self.socket = socket
        self.transport = socket.transport  # the TCP (or TLS) stream: producer, peer, buffer

    def _write_body(self, body: bytes) -> None:
        # `sendFrame`, not `sendMessage`: autobahn applies its message limit (the client
        # frame limit, for what it receives) to what it sends too, and a server frame
        # may be larger. No extension is negotiated, so a frame is all a message needs.
        if self.socket.state == WebSocketProtocol.STATE_OPEN:
            self.socket.sendFrame(opcode=BINARY, payload=body)

    def _end(self, code: str | None) -> None:
        if code == "frame_too_large":
            return  # autobahn fails the connection itself next, with close code 1009
        if code == "rate_limited":
            self.socket.stop_reading()  # a flooder's frames still coming cost nothing
        if self.socket.state == WebSocketProtocol.STATE_OPEN:
            # 1000 (normal): the `error` just sent says why; the reason repeats its code.
            self.socket.sendClose(WebSocketProtocol.CLOSE_STATUS_CODE_NORMAL, code)
        if code == "rate_limited":
            # Deaf, it would not read the client's answer to the close: the stream ends
            # once what is queued is written, as over TCP, rather than after autobahn's
            # close handshake timeout.
            self.socket.dropConnection(abort=False)


class WebSocketServer(WebSocketServerProtocol):
    """autobahn's side of one browser connection: the handshake and the framing; the
    rest is its `WebSocketConnection`.

    Every frame counts against the connection's rate limit, not only whole messages:
    a message's first frame as the message, each control frame (ping, pong, close) and
    each continuation frame as one more (`Connection.frame_received`). A ping or pong
    over the rate is dropped (no pong); a flood of frames is closed as a flood of
    messages is, and reads nothing more."""

    factory: WebSocketFactory

    def __init__(self) -> None:
        super().__init__()
        self.connection: WebSocketConnection | None = None
        self.client_host: str | None = None
        self._frame_refused = False  # the frame being read is over the rate
        self._deaf = False  # closed for a flood: what still arrives is dropped unparsed

    def onConnect(self, request: ConnectionRequest) -> None:
        origin = request.headers.get("origin")  # `request.host` has lost the port
        if not self.factory.origins.allows(origin, request.headers.get("host")):
            log.info("WebSocket from {peer} refused: origin {origin!r} is not allowed "
                     "(see --web-origin)", peer=request.peer, origin=origin)
            raise ConnectionDeny(  # type: ignore[no-untyped-call]
                ConnectionDeny.FORBIDDEN, "origin not allowed")
        peer = getattr(cast(Any, self.transport).getPeer(), "host", "")
        self.client_host = self.factory.proxies.client(
            str(peer), request.headers.get("x-forwarded-for"))

    def onOpen(self) -> None:
        # twisted.web's HTTP channel is the stream's producer still; the connection
        # takes its place, so a browser that stops reading pauses this connection.
        cast(Any, self.transport).unregisterProducer()
        self.connection = WebSocketConnection(self.factory.game, self)
        self.connection.opened(self.client_host)

    def onFrameBegin(self) -> None:
        opcode = self.current_frame.opcode
        connection = self.connection
        if connection is not None and (opcode == CONTINUATION or opcode >= CLOSE):
            self._frame_refused = not connection.frame_received()
        super().onFrameBegin()

    def processControlFrame(self) -> bool:
        if self._frame_refused and self.current_frame.opcode != CLOSE:
            self._frame_refused = False
            self.control_frame_data = []
            return True  # over the rate: not acted on (a close always is)
        return bool(super().processControlFrame())

    def processData(self) -> bool:
        if self._deaf:
            self.data = b""
            return False
        return bool(super().processData())

    def stop_reading(self) -> None:
        """Parse nothing more: the connection is closed for a flood or a broken frame,
        and its client may still be sending. What arrives is dropped unread (the
        socket is still read, so the client's own close is seen at once); the close
        handshake's answer is not waited for (`WebSocketConnection._end`)."""
        self._deaf = True
        self.data = b""

    def onMessageFrameBegin(self, length: int) -> None:
        total = self.message_data_total_length + length
        if total > MAX_CLIENT_FRAME and self.connection is not None:
            self.connection.too_large(total)  # the error, then the close
        super().onMessageFrameBegin(length)  # over the limit: autobahn drops the rest

    def _max_message_size_exceeded(self, msg_size: int, max_msg_size: int,
                                   reason: str) -> None:
        """autobahn's hook for a message over the limit: the close (1009) gives the
        error code as its reason, as every other close does, not autobahn's text."""
        self._fail_connection(WebSocketProtocol.CLOSE_STATUS_CODE_MESSAGE_TOO_BIG,
                              "frame_too_large")

    def _protocol_violation(self, reason: str) -> bool:
        """autobahn's hook for a frame that breaks RFC 6455: after the close (1002) it
        would read on, and take the bad frame itself for more (a bad close frame as
        the close's answer, whose abort loses the close). The framing can no longer be
        trusted, so nothing more is read."""
        super()._protocol_violation(reason)
        self.stop_reading()
        return True  # discontinue

    def _invalid_payload(self, reason: str) -> bool:
        """autobahn's hook for text that is not UTF-8 (a text message, a close reason):
        closed with 1007, then read no more, as a protocol violation is."""
        super()._invalid_payload(reason)
        self.stop_reading()
        return True

    def onMessage(self, payload: bytes, isBinary: bool) -> None:
        connection = self.connection
        if connection is None:
            return
        if isBinary:
            connection.body_received(payload)
        else:
            connection.body_refused(ProtocolError(
                "text_message", "send each message as a binary WebSocket message holding "
                "one msgpack map; text messages are not read"))

    def onClose(self, wasClean: bool, code: int | None, reason: str | None) -> None:
        connection, self.connection = self.connection, None
        if connection is not None:
            connection.lost()


class WebSocketFactory(WebSocketServerFactory):
    """autobahn's factory for `/ws`, tied to the server's shared state."""

    protocol = WebSocketServer  # type: ignore[assignment]
    noisy = False

    def __init__(self, server: ServerFactory, origins: OriginPolicy,
                 proxies: Proxies) -> None:
        super().__init__()  # type: ignore[no-untyped-call]
        # autobahn's `server` is the upgrade answer's `Server` header: none, rather
        # than a name and version that tell a scanner what to try.
        self.server = None
        self.game = server
        self.origins = origins
        self.proxies = proxies
        # The protocol's client frame limit, checked by autobahn as each frame begins.
        self.setProtocolOptions(  # type: ignore[no-untyped-call]
            maxFramePayloadSize=MAX_CLIENT_FRAME,
            maxMessagePayloadSize=MAX_CLIENT_FRAME,
            # A violation (an oversize message) gets a closing handshake, not a reset: a
            # reset could destroy the `error` that says why before the client reads it.
            failByDrop=False,
            # A closing connection has as long to drain what is queued as over TCP
            # (the `error` saying why is last in the queue); autobahn's own is 1 s.
            closeHandshakeTimeout=ABORT_AFTER_CLOSE,
            allowNullOrigin=True,  # `OriginPolicy` decides on "null" too (refused but for *)
            webStatus=False)  # a plain GET of /ws: 426 Upgrade Required, no status page

class WebSocketUpgrade(WebSocketResource):
    """autobahn's resource at `/ws`: once it takes the connection over, the HTTP
    channel's place goes to the WebSocket's `Connection` (counted as it opens)."""

    def render(self, request: Request) -> Any:
        channel = request.channel
        if isinstance(channel, WebChannel) and channel.transport is not None:
            channel.uncount()  # autobahn takes the transport: the channel never closes
        return super().render(request)  # type: ignore[no-untyped-call]

