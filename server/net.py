"""The network layer: bytes in, commands to the lobby and tables, messages out.

Thin on purpose (DESIGN.md, "The flow of one move"): Twisted's `Int32StringReceiver`
does the framing, `pisyedili.protocol` decodes and validates each frame body, and a
dispatch table turns each request into one call on the lobby, a session or a table.
Everything a request can do wrong ends in an `error` with a stable code (and the
request's `id`); a framing violation ends the connection; an unexpected exception
is logged with its traceback and answered with `internal_error`, so one bad request
never drops the server or touches another connection (issue 3).
"""

from __future__ import annotations

import importlib.metadata
import re
from collections.abc import Callable
from typing import Any, Protocol, cast

from twisted.internet.interfaces import IAddress
from twisted.internet.protocol import Factory
from twisted.logger import Logger
from twisted.protocols.basic import Int32StringReceiver
from twisted.python.failure import Failure

from pisyedili.protocol.codec import decode, encode
from pisyedili.protocol.errors import ERRORS, ProtocolError
from pisyedili.protocol.handshake import Hello, parse_hello
from pisyedili.protocol.limits import CLIENT_LIMITS, MAX_CLIENT_FRAME
from pisyedili.protocol.messages import announced_limits, make_error, make_welcome
from pisyedili.protocol.schema import MESSAGES, Direction, request_id, validate
from pisyedili.protocol.version import negotiate_features
from pisyedili.server.clock import Clock, Delayed
from pisyedili.server.limits import ConnectionCounter, Limits, TokenBucket, address_key
from pisyedili.server.lobby import Lobby
from pisyedili.server.participant import Message
from pisyedili.server.session import Session, Sessions
from pisyedili.server.table import Table

log = Logger()

ABORT_AFTER_CLOSE = 10.0
"""Seconds a closing connection may take to drain before it is aborted."""
STALLED_SECONDS = 60.0
"""Seconds a client may leave the server's output buffer full (not reading) before the
connection is aborted: what the server buffers for one client is bounded in time."""


def server_version() -> str:
    try:
        return importlib.metadata.version("pisyedili")
    except importlib.metadata.PackageNotFoundError:
        return "0"


def _address_of(peer: IAddress) -> str:
    """The key for per-address limits (an IPv4 address or IPv6 /64); UNIX sockets: one."""
    host = getattr(peer, "host", None)
    return address_key(host) if isinstance(host, str) and host else "local"


def _feature_of(msg_type: str) -> str | None:
    spec = MESSAGES.get((Direction.TO_CLIENT, msg_type))
    return spec.feature if spec is not None else None


class _Transport(Protocol):
    """The transport calls used here (`ITCPTransport` does not type-check as a class)."""

    def getPeer(self) -> IAddress: ...

    def loseConnection(self) -> None: ...

    def abortConnection(self) -> None: ...


Handler = Callable[["ServerProtocol", Session, Message], "Message | None"]


class ServerProtocol(Int32StringReceiver):
    """One client connection (net.py's half of a `Session`'s `Connection`)."""

    MAX_LENGTH = MAX_CLIENT_FRAME

    def __init__(self, server: ServerFactory) -> None:
        self.server = server
        self.session: Session | None = None
        self.features: frozenset[str] = frozenset()
        self.address = "?"
        self._admitted = False
        self._closing = False
        self._clock = server.clock
        self._bucket = TokenBucket(server.limits.rate, server.limits.burst, server.clock)
        self._refused_in_row = 0
        self._last_heard = 0.0
        self._timers: list[Delayed] = []
        self._handshake_call: Delayed | None = None
        self._heartbeat_call: Delayed | None = None
        self._stall_call: Delayed | None = None

    # -- connection life ------------------------------------------------------------

    def connectionMade(self) -> None:
        self.address = _address_of(self._transport().getPeer())
        no_delay = getattr(self.transport, "setTcpNoDelay", None)
        if no_delay is not None:
            no_delay(True)  # small interactive frames: do not wait on Nagle
        refusal = self.server.connections.admit(self.address)
        if refusal is not None:
            log.info("connection from {address} refused: {code}", address=self.address,
                     code=refusal)
            self.close(refusal, "the server has reached its connection limit"
                       if refusal == "server_full" else "too many connections from your address")
            return
        self._admitted = True
        self.server.protocols.add(self)
        assert self.transport is not None
        self.transport.registerProducer(self, True)
        self._last_heard = self._clock.seconds()
        self._handshake_call = self._clock.callLater(self.server.limits.handshake_seconds,
                                                     self._handshake_expired)
        self._heartbeat_call = self._clock.callLater(self.server.limits.ping_seconds,
                                                     self._heartbeat)

    def connectionLost(self, reason: Failure | None = None) -> None:
        self._closing = True
        for call in (self._handshake_call, self._heartbeat_call, self._stall_call,
                     *self._timers):
            if call is not None and call.active():
                call.cancel()
        if not self._admitted:
            return
        self._admitted = False
        self.server.connections.release(self.address)
        self.server.protocols.discard(self)
        session, self.session = self.session, None
        if session is not None and session.connection is self:
            try:
                self.server.lobby.unsubscribe(session)
                self.server.sessions.lost(session, self)
            except Exception:
                log.failure("cleaning up after player {player} failed",
                            player=session.player_id)

    def close(self, code: str, message: str, rid: int | None = None, **extra: Any) -> None:
        """Send an `error` saying why, then close (aborting if the peer never reads)."""
        if self._closing:
            return
        self._send(make_error(code, message, rid, **extra))
        self._shut()

    def _shut(self) -> None:
        """Stop reading and close once what is queued is written (or abort, later)."""
        self._closing = True
        if self._admitted:
            # A transport with a registered producer is not closed until it goes.
            cast(Any, self.transport).unregisterProducer()
        self._transport().loseConnection()
        self._timers.append(self._clock.callLater(ABORT_AFTER_CLOSE, self._abort))

    def _transport(self) -> _Transport:
        assert self.transport is not None
        return cast(_Transport, self.transport)

    # IPushProducer: the transport pauses us when a client stops reading.

    def pauseProducing(self) -> None:
        if self._stall_call is None and not self._closing:
            self._stall_call = self._clock.callLater(STALLED_SECONDS, self._stalled)

    def resumeProducing(self) -> None:
        if self._stall_call is not None and self._stall_call.active():
            self._stall_call.cancel()
        self._stall_call = None

    def stopProducing(self) -> None:
        self.resumeProducing()

    def _stalled(self) -> None:
        self._stall_call = None
        log.info("aborting a connection from {address} that stopped reading",
                 address=self.address)
        self._closing = True
        self._abort()

    def _abort(self) -> None:
        if self.transport is not None:
            self._transport().abortConnection()

    def replaced(self) -> None:
        """Another connection resumed this session: say so, then close (issue 4)."""
        self.session = None
        if self._closing:
            return
        self._send({"type": "replaced",
                    "message": "this session was resumed by another connection"})
        self._shut()

    def _handshake_expired(self) -> None:
        self._handshake_call = None
        if self.session is None:
            self.close("handshake_timeout", "no hello arrived in time")

    def _heartbeat(self) -> None:
        """Ping a quiet client; close one that stays silent past the idle timeout."""
        self._heartbeat_call = None
        if self._closing:
            return
        limits = self.server.limits
        silent = self._clock.seconds() - self._last_heard
        if silent >= limits.idle_seconds:
            self.close("idle_timeout", f"nothing arrived for {limits.idle_seconds:g} seconds")
            return
        if silent >= limits.ping_seconds and self.session is not None:
            self._send({"type": "ping"})
        self._heartbeat_call = self._clock.callLater(limits.ping_seconds, self._heartbeat)

    # -- sending ----------------------------------------------------------------------

    def send_message(self, msg: Message) -> None:
        """`Connection.send_message`: messages of features not agreed on are dropped."""
        feature = _feature_of(str(msg.get("type", "")))
        if feature is not None and feature not in self.features:
            return
        self._send(msg)

    def _send(self, msg: Message) -> None:
        if self._closing or self.transport is None:
            return
        try:
            body = encode(msg)
        except (TypeError, ValueError):
            log.failure("could not encode a {type} message", type=msg.get("type"))
            return
        self.sendString(body)  # type: ignore[no-untyped-call]

    def _error(self, code: str, message: str, rid: int | None, **extra: Any) -> None:
        """Answer with an `error`; codes registered as closing also end the connection."""
        spec = ERRORS.get(code)
        if spec is not None and spec.closes:
            self.close(code, message, rid, **extra)
        else:
            self._send(make_error(code, message, rid, **extra))

    # -- receiving ----------------------------------------------------------------------

    def dataReceived(self, data: bytes) -> None:
        if not self._closing:
            super().dataReceived(data)  # type: ignore[no-untyped-call]

    def lengthLimitExceeded(self, length: int) -> None:
        """A length prefix over the limit: the stream cannot be trusted, so close."""
        self.close("frame_too_large",
                   f"a {length}-byte frame is over the {self.MAX_LENGTH}-byte limit",
                   limit=self.MAX_LENGTH)

    def stringReceived(self, string: bytes) -> None:
        if self._closing:
            return
        try:
            self._receive(string)
        except Exception:  # a bug here must cost one request, not the server
            log.failure("handling a frame from {address} failed", address=self.address)
            self._error("internal_error", "the server failed to handle this message", None)

    def _receive(self, string: bytes) -> None:
        self._last_heard = self._clock.seconds()
        allowed = self._bucket.take()
        try:
            msg = decode(string, CLIENT_LIMITS)
        except ProtocolError as e:
            if allowed:
                self._error(e.code, e.message, None, **e.extra)
            else:
                self._over_limit(None)
            return
        rid = request_id(msg)
        if not allowed:
            self._over_limit(rid)
            return
        self._refused_in_row = 0
        kind = msg["type"]
        try:
            if self.session is None or kind == "hello":
                hello = parse_hello(msg)  # hello_required / unsupported_version first
            else:
                validate(msg, Direction.TO_SERVER)
        except ProtocolError as e:
            self._error(e.code, e.message, rid, **e.extra)
            return
        if kind == "hello":
            try:
                self._hello(hello)
            except Exception:
                log.failure("hello from {address} failed", address=self.address)
                self._error("internal_error", "the server failed to handle hello", rid)
            return
        self._dispatch(kind, msg, rid)

    def _over_limit(self, rid: int | None) -> None:
        self._refused_in_row += 1
        if self._refused_in_row >= self.server.limits.flood_close:
            log.info("closing a flooding connection from {address}", address=self.address)
            self.close("rate_limited", "too many messages too fast; closing",
                       retry_after=round(self._bucket.retry_after(), 3))
            return
        self._error("rate_limited", "too many messages too fast; this one was ignored", rid,
                    retry_after=round(self._bucket.retry_after(), 3))

    def _dispatch(self, kind: str, msg: Message, rid: int | None) -> None:
        session = self.session
        assert session is not None
        handler = HANDLERS.get(kind)
        if handler is None:
            self._error("unknown_type", f"no request of type {kind!r}", rid)
            return
        session.request_id = rid
        try:
            table = _table_of(session)
            if table is not None and kind not in HEARTBEAT:
                table.present(session)  # a request is a sign of life; a heartbeat is not
            reply = handler(self, session, msg)
        except ProtocolError as e:  # TableError included
            self._error(e.code, e.message, rid, **e.extra)
            return
        except Exception:
            log.failure("request {type} from {player} failed", type=kind,
                        player=session.player_id)
            self._error("internal_error", "the server failed to handle this request; "
                        "nothing changed", rid)
            return
        finally:
            session.request_id = None
        if reply is not None:
            if rid is not None:
                reply = {**reply, "id": rid}
            self.send_message(reply)

    # -- handshake ----------------------------------------------------------------------

    def _hello(self, hello: Hello) -> None:
        rid = hello.id
        token = hello.token
        if self.session is not None:
            self._error("already_welcomed", "this connection has already said hello", rid)
            return
        name = hello.name.strip()
        if token is None and BOT_NAME.fullmatch(name):
            self._error("bad_field", "name: names like 'bot (easy)' are kept for the "
                        "server's bots", rid, field="name")
            return
        self.features = frozenset(negotiate_features(hello.features))
        sessions = self.server.sessions
        was_connected = False
        if token is not None:
            existing = sessions.find(token)
            if existing is None:
                self._error("bad_token", "that resume token is unknown or has expired", rid)
                return
            was_connected = existing.connected
            session = sessions.resume(token, self)
            assert session is not None
            # A lobby subscription belongs to a connection: a resumed one asks again.
            self.server.lobby.unsubscribe(session)
        else:
            session = sessions.open(name, self)
        self.session = session
        if self._handshake_call is not None and self._handshake_call.active():
            self._handshake_call.cancel()
        self._handshake_call = None
        log.info("{address} welcomed as player {player} ({name!r}), resumed={resumed}, "
                 "client={client!r}", address=self.address, player=session.player_id,
                 name=session.name, resumed=token is not None, client=hello.client)
        self._send(make_welcome(
            server=self.server.name, version=server_version(),
            player=int(session.player_id), name=session.name, token=session.token,
            features=sorted(self.features),
            limits={**announced_limits(), **self.server.limits.to_wire()},
            resumed=token is not None, id=rid))
        if token is not None:
            if _table_of(session) is not None:
                sessions.restore_table(session, was_connected)


def _table_of(session: Session) -> Table | None:
    table = session.table
    if table is not None and table.closed:
        session.table = None
        return None
    return table


def _require_table(session: Session) -> Table:
    table = _table_of(session)
    if table is None:
        raise ProtocolError("not_at_table", "you are not at a table")
    return table


def _require_feature(conn: ServerProtocol, feature: str) -> None:
    if feature not in conn.features:
        raise ProtocolError("feature_not_negotiated",
                      f"say features: [{feature!r}] in hello to use this", feature=feature)


OK: Message = {"type": "ok"}
HEARTBEAT = frozenset({"ping", "pong"})
BOT_NAME = re.compile(r"(?i)bot\s*\(.*\)")
"""How the tables name bot seats ("bot (easy)"): no person may pass for a bot."""
"""Requests that keep a connection alive but do not show the player is there: a client
left open by an absent player answers pings (issue 4: the stand-in bot keeps the seat)."""


def _ping(conn: ServerProtocol, s: Session, msg: Message) -> Message | None:
    return {"type": "pong"}


def _pong(conn: ServerProtocol, s: Session, msg: Message) -> Message | None:
    return None


def _lobby_subscribe(conn: ServerProtocol, s: Session, msg: Message) -> Message | None:
    return conn.server.lobby.subscribe(s)


def _lobby_unsubscribe(conn: ServerProtocol, s: Session, msg: Message) -> Message | None:
    conn.server.lobby.unsubscribe(s)
    return OK


def _create_table(conn: ServerProtocol, s: Session, msg: Message) -> Message | None:
    if _table_of(s) is not None:
        raise ProtocolError("already_at_table", "leave your table before opening another")
    table = conn.server.lobby.create(s, msg["rules"], msg["seats"], msg.get("options"),
                                     msg.get("name"), bool(msg.get("private", False)))
    s.table = table
    table.join(s)  # sends the `table` snapshot, which answers this request
    return None


def _join_table(conn: ServerProtocol, s: Session, msg: Message) -> Message | None:
    table = conn.server.lobby.find(msg.get("table"), msg.get("code"))
    current = _table_of(s)
    if current is not None and current is not table:
        raise ProtocolError("already_at_table", "leave your table before joining another")
    table.join(s, spectate=bool(msg.get("spectate", False)))
    s.table = table
    return None


def _leave_table(conn: ServerProtocol, s: Session, msg: Message) -> Message | None:
    table = _require_table(s)
    s.table = None
    table.leave(s)
    return OK


def _sit(conn: ServerProtocol, s: Session, msg: Message) -> Message | None:
    _require_table(s).sit(s, msg["seat"])
    return OK


def _stand(conn: ServerProtocol, s: Session, msg: Message) -> Message | None:
    _require_table(s).stand(s)
    return OK


def _add_bot(conn: ServerProtocol, s: Session, msg: Message) -> Message | None:
    _require_table(s).add_bot(s, msg["seat"], msg.get("level", "medium"))
    return OK


def _remove_bot(conn: ServerProtocol, s: Session, msg: Message) -> Message | None:
    _require_table(s).remove_bot(s, msg["seat"])
    return OK


def _ready(conn: ServerProtocol, s: Session, msg: Message) -> Message | None:
    _require_table(s).set_ready(s, bool(msg.get("ready", True)))
    return OK


def _start(conn: ServerProtocol, s: Session, msg: Message) -> Message | None:
    _require_table(s).start(s)
    return OK


def _move(conn: ServerProtocol, s: Session, msg: Message) -> Message | None:
    _require_table(s).move(s, msg["move"])
    return OK


def _chat(conn: ServerProtocol, s: Session, msg: Message) -> Message | None:
    _require_feature(conn, "chat")
    scope = msg.get("scope")
    table = _table_of(s)
    if scope is None:
        scope = "lobby" if table is None else "table"
    text = msg["text"].strip()
    if scope == "lobby":
        conn.server.lobby.chat(s, text)
    else:
        _require_table(s).chat(s, text)
    return OK


def _rematch(conn: ServerProtocol, s: Session, msg: Message) -> Message | None:
    _require_feature(conn, "rematch")
    _require_table(s).rematch(s, bool(msg["agree"]))
    return OK


HANDLERS: dict[str, Handler] = {
    "ping": _ping,
    "pong": _pong,
    "lobby_subscribe": _lobby_subscribe,
    "lobby_unsubscribe": _lobby_unsubscribe,
    "create_table": _create_table,
    "join_table": _join_table,
    "leave_table": _leave_table,
    "sit": _sit,
    "stand": _stand,
    "add_bot": _add_bot,
    "remove_bot": _remove_bot,
    "ready": _ready,
    "start": _start,
    "move": _move,
    "chat": _chat,
    "rematch": _rematch,
}


class ServerFactory(Factory):
    """The server's shared state: lobby, sessions, limits and the live connections."""

    def __init__(self, name: str, lobby: Lobby, sessions: Sessions, limits: Limits,
                 clock: Clock) -> None:
        self.name = name
        self.lobby = lobby
        self.sessions = sessions
        self.limits = limits
        self.clock = clock
        self.connections = ConnectionCounter(limits.max_connections, limits.max_per_address)
        self.protocols: set[ServerProtocol] = set()

    def buildProtocol(self, addr: IAddress | None) -> ServerProtocol:
        return ServerProtocol(self)

    def shutdown(self) -> None:
        """Tell every client the server is going away, then close their connections."""
        for proto in list(self.protocols):
            proto.close("shutting_down", "the server is shutting down")


