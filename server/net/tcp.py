"""TCP framing (`Int32StringReceiver`: each body behind a 4-byte big-endian length) and
the factory that holds the server's shared state for every transport.

`ServerProtocol` is a `Connection` over TCP, TLS or a UNIX socket; a request's frames
to its own client go out corked, in one `send`, straight to an idle socket.
`ServerFactory` builds one per connection and is what the WebSocket (web.py) and the
handlers read the lobby, sessions, limits and live connections from.
"""

from __future__ import annotations

import socket
import struct
from collections.abc import Callable
from typing import Any, cast

from twisted.internet import tcp as twisted_tcp
from twisted.internet.interfaces import IAddress, IHalfCloseableProtocol
from twisted.internet.protocol import Factory
from twisted.protocols.basic import Int32StringReceiver
from twisted.python.failure import Failure
from zope.interface import classImplements  # type: ignore[import-untyped]

from pisyedili.protocol.limits import MAX_CLIENT_FRAME
from pisyedili.protocol.version import FEATURES, negotiate_features
from pisyedili.server.clock import Clock
from pisyedili.server.cluster import LOCAL, Cluster
from pisyedili.server.net.connection import Connection
from pisyedili.server.net.hello import AGREED_CACHE
from pisyedili.server.net.limits import ConnectionCounter, ServerLimits
from pisyedili.server.net.relay import Relay
from pisyedili.server.people.accounts import Accounts
from pisyedili.server.people.invitations import Invitations
from pisyedili.server.people.moderation import Moderation
from pisyedili.server.people.ratings import Ratings
from pisyedili.server.people.session import Sessions
from pisyedili.server.store import Archive
from pisyedili.server.table.effects import Message
from pisyedili.server.table.journal import NO_JOURNAL, Journal
from pisyedili.server.table.lobby import Lobby

LENGTH_PREFIX = 4
"""Bytes of a frame's length prefix (`Int32StringReceiver`)."""
LINGERING = frozenset({"rate_limited", "frame_too_large"})
"""Closing codes sent to a client that may still be sending (a flood, the rest of an
oversize frame): over plain TCP the close lingers (`ServerProtocol._end`)."""


class ServerProtocol(Connection, Int32StringReceiver):
    """A client connection over TCP (or TLS, or a UNIX socket): each body behind a
    4-byte big-endian length prefix."""

    MAX_LENGTH = MAX_CLIENT_FRAME
    FRAME_OVERHEAD = LENGTH_PREFIX
    TRANSPORT = "tcp"

    __slots__ = ("_batch", "_reading", "_socket")

    # The framing's own call, bound straight to the logic: nothing between them on the
    # hot path.
    stringReceived = Connection.body_received

    def connectionMade(self) -> None:
        self._batch: bytearray | None = None  # a read's refusals (`_flush_batched`)
        self._reading = False
        no_delay = getattr(self.transport, "setTcpNoDelay", None)
        if no_delay is not None:
            no_delay(True)  # small interactive frames: do not wait on Nagle
        self._socket = sendable_socket(self.transport)
        self.opened()

    def _dispatch(self, kind: str, msg: Message, rid: int | None) -> None:
        """The frames one request writes to its own client go out together at its end:
        a move's `ok` and the mover's `update` in one `send`, not two. They wait on the
        journal as one (its commit of the move comes first), and a close the request
        causes follows them. A request handled inside another's (frames held behind a
        store read, released at once) adds to the outer one's frames, so they keep
        their order."""
        if self._cork is not None:
            super()._dispatch(kind, msg, rid)
            return
        self._cork = cork = cast(list[bytes], [])
        try:
            super()._dispatch(kind, msg, rid)
        finally:
            self._cork = None
            journal = self.server.journal
            if cork:
                journal.after_commit(self._send_corked, cork)
            if self._lose_due:
                self._lose_due = False
                journal.after_commit(self._lose)

    def _send_corked(self, bodies: list[bytes]) -> None:
        """A request's frames, in one `send`."""
        if self.transport is None:
            return
        if self._batch:
            self._send_batch()  # they came first
        pack = _LENGTH.pack
        send_frame(self._socket, self.transport,
                   b"".join([pack(len(body)) + body for body in bodies]))
        self._written()

    def _flush(self, body: bytes) -> None:
        """`Connection._flush` with `_write_body` inline: every frame comes this way."""
        transport = self.transport
        if transport is None:
            return
        if self._batch:
            self._send_batch()  # they came first
        send_frame(self._socket, transport, _LENGTH.pack(len(body)) + body)
        self._written()

    def _flush_batched(self, body: bytes) -> None:
        """A frame that may wait for the others of this read (a flood's refusals): they
        go out together in one `send` once the read is handled, or before any other
        frame written meanwhile, so the order holds. Outside a read, at once."""
        batch = self._batch
        if batch is None:
            batch = self._batch = bytearray()
        batch += _LENGTH.pack(len(body))
        batch += body
        if not self._reading:
            self._send_batch()

    def _send_batch(self) -> None:
        batch, self._batch = self._batch, None
        if batch and self.transport is not None:
            send_frame(self._socket, self.transport, bytes(batch))
            self._written()

    def _write_body(self, body: bytes) -> None:
        """Send the frame at once where the transport holds nothing yet, else hand it
        to the transport (as `sendString` would).

        Twisted's transports only buffer in `write` and send once the reactor finds the
        socket writable: for a server whose every frame goes to an idle socket that is
        two `epoll` changes and one more reactor wake-up per frame, the largest share of
        a move's cost. Sending at once when nothing is queued keeps the order of bytes
        (anything queued goes first, through the transport) and leaves every partial
        send, full buffer, error and close to the transport.
        """
        send_frame(self._socket, self.transport, _LENGTH.pack(len(body)) + body)

    def connectionLost(self, reason: Failure | None = None) -> None:
        self.lost()

    def _end(self, code: str | None) -> None:
        transport = self.transport
        if code in LINGERING and self._socket is not None:
            # The client may still be sending: a socket closed with bytes unread is
            # reset, and a reset can destroy the error before the client reads it. So
            # read nothing until the error is written, then send FIN and drop what
            # still arrives until the client closes (or the abort, ABORT_AFTER_CLOSE).
            transport.stopReading()
            transport.loseWriteConnection()
            return
        transport.loseConnection()

    def writeConnectionLost(self) -> None:
        """`IHalfCloseableProtocol`: our FIN is out after a lingering close's error;
        read on (dropping it all) until the client closes."""
        self.transport.startReading()

    def readConnectionLost(self) -> None:
        """`IHalfCloseableProtocol`: the client sent FIN. Close once what is queued for
        it is written (a client that half-closes may still read)."""
        self.transport.loseConnection()

    def dataReceived(self, data: bytes) -> None:
        if self._closing:
            return
        self._reading = True
        try:
            super().dataReceived(data)  # type: ignore[no-untyped-call]
        finally:
            self._reading = False
        if self._batch:
            self._send_batch()

    def lengthLimitExceeded(self, length: int) -> None:
        self.too_large(length)


classImplements(ServerProtocol, IHalfCloseableProtocol)  # a lingering close (`_end`)

_LENGTH = struct.Struct("!I")
"""`Int32StringReceiver`'s length prefix."""


def send_frame(sock: socket.socket | None, transport: Any, frame: bytes) -> None:
    """Write `frame` (length prefix included) to `transport`, straight to `sock` while
    the transport holds nothing queued, else through the transport (with what a partial
    send left). `sock`: `sendable_socket(transport)`. The load bench's fan-out bar sends
    the same way, so that it measures the server's own write path."""
    if sock is not None and not transport._tempDataLen and not transport.dataBuffer \
            and transport.connected and not transport.disconnecting:
        try:
            sent = sock.send(frame)
        except OSError:  # full (EAGAIN) or broken: the transport finds out which
            sent = 0
        if sent == len(frame):
            return
        frame = frame[sent:]
    transport.write(frame)


def sendable_socket(transport: object) -> socket.socket | None:
    """The socket of a plain TCP transport whose buffers `send_frame` may look at (not
    TLS, whose bytes go through its own layer, nor any other kind); None: always write
    through the transport."""
    if type(transport) is not twisted_tcp.Server:
        return None
    if not all(hasattr(transport, name) for name in ("_tempDataLen", "dataBuffer",
                                                      "disconnecting", "socket")):
        return None  # a Twisted without these: no shortcut
    sock = transport.socket
    return sock if isinstance(sock, socket.socket) else None


class ServerFactory(Factory):
    """The server's shared state: lobby, sessions, limits and the live connections."""

    noisy = False  # no "Stopping factory <...>": the server logs what it listens on, and stops

    def __init__(self, name: str, lobby: Lobby, sessions: Sessions, limits: ServerLimits,
                 clock: Clock, invitations: Invitations, archive: Archive | None = None,
                 journal: Journal = NO_JOURNAL, cluster: Cluster = LOCAL,
                 accounts: Accounts | None = None, moderation: Moderation | None = None,
                 ratings: Ratings | None = None,
                 relay: Callable[[ServerFactory], Relay] | None = None) -> None:
        """`relay` makes this server's relay (in a cluster), given the server: the two
        call each other, so the relay is made here, once the server holds its parts."""
        self.name = name
        self.journal = journal
        self.cluster = cluster
        """The processes this one serves a lobby with (`server/cluster/`)."""
        self.archive = archive
        """Where finished matches are kept and read; None: the server keeps none, and
        does not offer the `history` feature."""
        self.features = frozenset(FEATURES) - ({"history"} if archive is None else set())
        """The features this server offers in `welcome`."""
        self._agreed: dict[tuple[str, ...] | None, frozenset[str]] = {}
        self.lobby = lobby
        self.sessions = sessions
        self.invitations = invitations
        """The open invitations: the lobby tells them of each table's change."""
        self.limits = limits
        self.clock = clock
        self.connections = ConnectionCounter(limits.max_connections, limits.max_per_address)
        self.protocols: set[Connection] = set()
        """Every admitted connection, over any transport."""
        self.accounts = accounts
        """Accounts, moderation and ratings: on a server with a store, else None."""
        self.moderation = moderation
        self.ratings = ratings
        self.relay = relay(self) if relay is not None else None
        """In a cluster: how players here reach tables elsewhere (`relay.py`)."""

    def agreed(self, requested: tuple[str, ...] | None) -> frozenset[str]:
        """The features agreed with a client that asked for `requested`: one shared set
        per distinct request (clients ask for a handful of combinations), not one per
        connection."""
        agreed = self._agreed.get(requested)
        if agreed is None:
            agreed = frozenset(negotiate_features(requested, self.features))
            if len(self._agreed) < AGREED_CACHE:
                self._agreed[requested] = agreed
        return agreed

    def buildProtocol(self, addr: IAddress | None) -> ServerProtocol:
        return ServerProtocol(self)

    def shutdown(self) -> None:
        """Tell every client the server is going away, close their connections, and stop
        every table's timers."""
        for proto in list(self.protocols):
            proto.close("shutting_down", "the server is shutting down")
        for table in self.lobby.tables():
            table.stop()


