"""The network layer: bytes in, commands to the lobby and tables, messages out.

Thin on purpose: the transport frames the bytes (Twisted's `Int32StringReceiver` over
TCP here, autobahn's WebSocket in server/net/web.py), `pisyedili.protocol` decodes and
validates each frame body, and a dispatch table turns each request into one call on the
lobby or a session, or one command to a table. `Connection` holds everything between
bodies in and bodies out (handshake, limits, flow control, closing) once, for every
transport; a transport supplies only how a body is written and how it ends.
Everything a request can do wrong ends in an `error` with a stable code (and the
request's `id`); a framing violation ends the connection; an unexpected exception
is logged with its traceback and answered with `internal_error`, so one bad request
never drops the server or touches another connection.

Every request gets exactly one reply, and it is sent before anything the request
causes: table requests become table commands whose `Reply` effect comes first. Replies
come in the order of the requests: a handler whose answer takes a slow step (a password
hash, a store read or write) hands it to `Connection.answer_later`, which holds the
connection's later requests until that answer is sent.
"""

from __future__ import annotations

import collections
import functools
import importlib.metadata
import socket
import struct
from collections.abc import Callable
from typing import Any, Protocol, cast

from twisted.internet import tcp
from twisted.internet.abstract import FileDescriptor
from twisted.internet.defer import Deferred
from twisted.internet.interfaces import IAddress, IHalfCloseableProtocol
from twisted.internet.protocol import Factory
from twisted.logger import Logger
from twisted.protocols.basic import Int32StringReceiver
from twisted.python.failure import Failure
from zope.interface import classImplements  # type: ignore[import-untyped]

from pisyedili.protocol.codec import decode, encode, refused_id
from pisyedili.protocol.errors import ERRORS, ProtocolError
from pisyedili.protocol.handshake import Hello, parse_hello
from pisyedili.protocol.limits import CLIENT_LIMITS, MAX_CLIENT_FRAME
from pisyedili.protocol.messages import announced_limits, make_error, make_welcome
from pisyedili.protocol.schema import MESSAGES, Direction, request_id, validate
from pisyedili.protocol.shapes import HISTORY_PAGE
from pisyedili.protocol.version import FEATURES, negotiate_features
from pisyedili.server.clock import Clock, Delayed
from pisyedili.server.net.limits import (
    ANSWERED_REFUSALS,
    FLOOD_WINDOW,
    ConnectionCounter,
    RefusalWindow,
    ServerLimits,
    TokenBucket,
    address_key,
)
from pisyedili.server.people import accounts, moderation, names, ratings
from pisyedili.server.people.session import Session, Sessions
from pisyedili.server.store import Archive, Store, history
from pisyedili.server.store.journal import NO_JOURNAL, Journal
from pisyedili.server.table import commands as cmd
from pisyedili.server.table.effects import Message
from pisyedili.server.table.lobby import Lobby
from pisyedili.server.table.runner import ReplyTo, TableRunner

log = Logger()

ABORT_AFTER_CLOSE = 10.0
"""Seconds a closing connection may take to drain before it is aborted."""
STALLED_SECONDS = 60.0
"""Seconds a client may leave the server's output buffer full (not reading) before the
connection is aborted: what the server buffers for one client is bounded in time (and
in bytes, by `ServerLimits.max_output_bytes`)."""
DUE_SLACK = 1e-6
"""Seconds a timer may wake before its deadline and still count as due: a float sum
may fall short of the deadline it was computed for."""
LENGTH_PREFIX = 4
"""Bytes of a frame's length prefix (`Int32StringReceiver`)."""
LINGERING = frozenset({"rate_limited", "frame_too_large"})
"""Closing codes sent to a client that may still be sending (a flood, the rest of an
oversize frame): over plain TCP the close lingers (`ServerProtocol._end`)."""
AGREED_CACHE = 256
"""Distinct `hello.features` requests whose agreed set is kept for sharing: bounded, since
a client may ask for any list of names."""


@functools.cache
def server_version() -> str:
    """The installed package's version, read once: the metadata lookup costs about a
    third of a millisecond, which was half of every `hello`."""
    try:
        return importlib.metadata.version("pisyedili")
    except importlib.metadata.PackageNotFoundError:
        return "0"


WELCOMED = ("{address} welcomed as player {player} ({name!r}), resumed={resumed}, "
            "client={client!r}")
WELCOMED_RENAMED = ("{address} welcomed as player {player} ({name!r}, asked for {asked!r}), "
                    "resumed={resumed}, client={client!r}")
"""The log line of a `welcome`; a new player whose name was taken gets a suffixed one."""


def _address_of(peer: IAddress) -> str:
    """The key for per-address limits (an IPv4 address or IPv6 /64); UNIX sockets: one."""
    host = getattr(peer, "host", None)
    return address_key(host) if isinstance(host, str) and host else "local"


_FEATURE_OF: dict[str, str] = {
    msg_type: spec.feature for (direction, msg_type), spec in MESSAGES.items()
    if direction is Direction.TO_CLIENT and spec.feature is not None}
"""Per server→client message type, the optional feature it belongs to: a plain dict of
strings, since every frame sent looks it up (an `Enum` in a key hashes in Python)."""


class _Transport(Protocol):
    """The transport calls used here (`ITCPTransport` does not type-check as a class)."""

    def getPeer(self) -> IAddress: ...

    def loseConnection(self) -> None: ...

    def abortConnection(self) -> None: ...


REQUEST_FAILED = "the server failed to handle this request"
"""The `internal_error` message of a request that failed unexpectedly."""


class Replier:
    """The reply to one request (a `ReplyTo`): sent with the request's `id`, an `error`
    as `Connection._error` sends it (a closing code closes). `sent` says whether it
    went, so a failure after the reply is logged, not answered a second time."""

    __slots__ = ("_conn", "_rid", "kind", "sent")

    def __init__(self, conn: Connection, rid: int | None, kind: str) -> None:
        self._conn = conn
        self._rid = rid
        self.kind = kind
        self.sent = False

    def __call__(self, answer: Message) -> None:
        self.sent = True
        rid = self._rid
        if answer.get("type") == "error":
            self._conn._error(answer["code"], answer["message"], rid,
                              **{k: v for k, v in answer.items()
                                 if k not in ("type", "code", "message", "id")})
        else:
            self._conn.send_message({**answer, "id": rid} if rid is not None else answer)


Handler = Callable[["Connection", Session, Message, Replier], "Message | None"]
"""A request handler: returns its reply, hands the `Replier` to a table that will, or
to `Connection.answer_later` with the slow step its answer waits on."""


class Connection:
    """One client connection, whatever carries it: the `Peer` of a `Session` once it
    said `hello`.

    A transport's class calls `opened` once bodies can flow, `body_received` with each
    body, `body_refused` for a message it could not hand on (a WebSocket text message)
    and `lost` when the connection is gone; it implements `_write_body` (one body out)
    and `_end` (close once what is written has gone). `transport` is the byte stream
    underneath (TCP or TLS): its producer, peer address and buffer size are read here.
    """

    FRAME_OVERHEAD = LENGTH_PREFIX
    """Bytes the transport adds to each body it writes (an upper bound)."""

    # Slots, so that a connection's own state never sits in its instance dict: Twisted
    # reads a protocol's `__dict__` on every frame, which makes the dict real, and one
    # holding these as well took over a kilobyte per idle connection.
    __slots__ = ("__weakref__", "_abort_call", "_admitted", "_bucket", "_clock",
                 "_close_code", "_closing", "_cork", "_handshake_call", "_heartbeat_call",
                 "_held", "_last_heard", "_lose_due", "_paused", "_pinged", "_queued",
                 "_refused", "_stall_call", "_waiting", "address", "features",
                 "server", "session")

    transport: Any

    def __init__(self, server: ServerFactory) -> None:
        self.server = server
        self.session: Session | None = None
        self.features: frozenset[str] = frozenset()
        self.address = "?"
        self._admitted = False
        self._closing = False
        self._clock = server.clock
        self._bucket = TokenBucket(server.limits.rate, server.limits.burst, server.clock)
        self._refused: RefusalWindow | None = None  # made at the first refusal
        self._last_heard = 0.0
        self._pinged = False  # a ping went out and nothing was heard since
        self._abort_call: Delayed | None = None
        self._handshake_call: Delayed | None = None
        self._heartbeat_call: Delayed | None = None
        self._stall_call: Delayed | None = None
        self._paused = False
        self._queued = 0  # at least the bytes the transport still holds for this client
        self._waiting = False  # a later answer is due: later frames wait
        self._held: collections.deque[bytes] | None = None  # made by the first frame held
        self._close_code: str | None = None
        self._cork: list[bytes] | None = None  # bodies a request holds back (ServerProtocol)
        self._lose_due = False  # closing while corked: the close follows the cork's frames

    @property
    def pending_output(self) -> int:
        """An upper bound on the bytes written to this client that it has not read yet
        (the transport's buffer), kept under `max_output_bytes` plus one frame."""
        return self._queued

    # -- connection life ------------------------------------------------------------

    def opened(self, client_host: str | None = None) -> None:
        """Bodies can flow: admit the connection (or refuse it) and start its timers.

        `client_host` is the client's IP address where the peer is a trusted proxy that
        said whom it speaks for; the per-address limits count by it."""
        self.address = address_key(client_host) if client_host else \
            _address_of(self._transport().getPeer())
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

    def lost(self) -> None:
        """The connection is gone: stop its timers, release its place and its session."""
        self._closing = True
        for call in (self._handshake_call, self._heartbeat_call, self._stall_call,
                     self._abort_call):
            if call is not None and call.active():
                call.cancel()
        if not self._admitted:
            return
        self._admitted = False
        self.server.connections.release(self.address)
        self.server.protocols.discard(self)
        session, self.session = self.session, None
        if session is not None and session.peer is self:
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
        self._write(make_error(code, message, rid, **extra))  # even past the output bound
        self._close_code = code
        self._shut()

    def _shut(self) -> None:
        """Stop reading and close once what is queued is written (or abort, later)."""
        self._closing = True
        if self._cork is not None:
            self._lose_due = True  # after the corked frames, which are not queued yet
            return
        self.server.journal.later(self._lose)

    def _lose(self) -> None:
        if self.transport is None:
            return
        if self._admitted:
            # A transport with a registered producer is not closed until it goes.
            cast(Any, self.transport).unregisterProducer()
        self._end(self._close_code)
        if self._abort_call is None:
            self._abort_call = self._clock.callLater(ABORT_AFTER_CLOSE, self._abort)

    def _write_body(self, body: bytes) -> None:
        """Write one body, framed as the transport frames it."""
        raise NotImplementedError

    def _end(self, code: str | None) -> None:
        """Close once what is written has gone; `code` is the error that closes, if any."""
        raise NotImplementedError

    def _transport(self) -> _Transport:
        assert self.transport is not None
        return cast(_Transport, self.transport)

    # IPushProducer: the transport pauses us when a client stops reading. Twisted's
    # transports keep no public count of the bytes they buffer, so `_queued` is kept
    # from what the producer contract says: a transport (`FileDescriptor`: TCP, UNIX,
    # systemd sockets; TLS passes its TCP transport's calls on) pauses its producer as
    # soon as its buffer goes over `bufferSize`, and resumes it only once that buffer
    # is empty. So while we are not paused it holds at most `bufferSize`; while paused,
    # that plus what we wrote since. Only `send_frame` looks at the
    # private buffers, to know whether anything is queued at all.

    def pauseProducing(self) -> None:
        self._paused = True
        if self._stall_call is None and not self._closing:
            self._stall_call = self._clock.callLater(STALLED_SECONDS, self._stalled)

    def resumeProducing(self) -> None:
        self._paused = False
        self._queued = 0
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
        """Another connection resumed this session: say so, then close."""
        self.session = None
        if self._closing:
            return
        self._write({"type": "replaced",
                     "message": "this session was resumed by another connection"})
        self._shut()

    def _handshake_expired(self) -> None:
        self._handshake_call = None
        if self.session is None and not self._closing:
            self.close("handshake_timeout", "no hello arrived in time")

    def _heartbeat(self) -> None:
        """Ping a client silent for `ping_seconds`; close one silent for `idle_seconds`.

        Both are due from the last frame heard (or the connection's start), as
        `welcome.limits` says. A frame heard does not move the timer (that would cost a
        reschedule per frame): a wake-up that finds later traffic sleeps again until the
        deadline counted from it. Only the first frame after a ping moves it, since the
        timer then waits for the idle deadline."""
        self._heartbeat_call = None
        if self._closing:
            return
        limits = self.server.limits
        now = self._clock.seconds()
        heard = self._last_heard
        if now - heard >= limits.idle_seconds - DUE_SLACK:
            self.close("idle_timeout", f"nothing arrived for {limits.idle_seconds:g} seconds")
            return
        if self._pinged or self.session is None:
            due = heard + limits.idle_seconds  # before hello the handshake timer is first
        elif now - heard >= limits.ping_seconds - DUE_SLACK:
            self._send({"type": "ping"})
            self._pinged = True
            due = heard + limits.idle_seconds
        else:
            due = heard + limits.ping_seconds
        self._heartbeat_call = self._clock.callLater(max(0.0, due - now), self._heartbeat)

    def _heard(self) -> None:
        """A frame arrived: it is the traffic the heartbeat counts from."""
        self._last_heard = self._clock.seconds()
        if self._pinged:
            self._pinged = False
            call = self._heartbeat_call
            if call is not None and call.active():
                call.reset(self.server.limits.ping_seconds)  # the next ping is due then

    # -- sending ----------------------------------------------------------------------

    def send_message(self, msg: Message) -> None:
        """`Peer.send_message`: messages of features not agreed on are dropped."""
        feature = _FEATURE_OF.get(msg.get("type", ""))
        if feature is not None and feature not in self.features:
            return
        self._send(msg)

    def _send(self, msg: Message) -> None:
        """Queue one message, or close a client that left too much unread."""
        if self._closing or self.transport is None:
            return
        limit = self.server.limits.max_output_bytes
        body = self._encode(msg)
        if body is None:
            return
        if self._paused and self._queued + len(body) + self.FRAME_OVERHEAD > limit:
            log.info("closing a connection from {address} that reads too slowly "
                     "({queued} bytes unread)", address=self.address, queued=self._queued)
            self.close("too_slow", f"more than {limit} bytes were waiting for you to read "
                       "them", limit=limit)
            return
        self._put(body)

    def _write(self, msg: Message) -> None:
        """Queue one message whatever is pending (a closing error: small, and the last)."""
        if self.transport is not None:
            body = self._encode(msg)
            if body is not None:
                self._put(body)

    @staticmethod
    def _encode(msg: Message) -> bytes | None:
        try:
            return encode(msg)
        except (TypeError, ValueError):
            log.failure("could not encode a {type} message", type=msg.get("type"))
            return None

    def _put(self, body: bytes) -> None:
        """Write one frame once the journal has committed what it tells of; while a
        request corks its frames, add it to them (they wait on the journal together)."""
        self._queued += len(body) + self.FRAME_OVERHEAD
        if self._cork is not None:
            self._cork.append(body)
            return
        self.server.journal.later(self._put_now, body)

    def _put_now(self, body: bytes) -> None:
        if self.transport is None:
            return
        self._write_body(body)  # may pause us at once
        self._written()

    def _written(self) -> None:
        """Frames went to the transport: unless it paused us, it holds no more than its
        high-water mark."""
        if not self._paused:
            high_water = getattr(self.transport, "bufferSize", FileDescriptor.bufferSize)
            self._queued = min(self._queued, high_water)

    def _error(self, code: str, message: str, rid: int | None, **extra: Any) -> None:
        """Answer with an `error`; codes registered as closing also end the connection."""
        spec = ERRORS.get(code)
        if spec is not None and spec.closes:
            self.close(code, message, rid, **extra)
        else:
            self._send(make_error(code, message, rid, **extra))

    # -- receiving ----------------------------------------------------------------------

    def too_large(self, length: int) -> None:
        """A frame over the limit: the stream cannot be trusted, so close."""
        self.close("frame_too_large",
                   f"a {length}-byte frame is over the {MAX_CLIENT_FRAME}-byte limit",
                   limit=MAX_CLIENT_FRAME)

    def body_received(self, string: bytes) -> None:
        """One frame body from the client."""
        if self._closing:
            return
        if self._waiting:  # behind a later answer: replies keep the order of requests
            if self._held is None:
                self._held = collections.deque()
            self._held.append(string)
            return
        try:
            self._receive(string)
        except Exception:  # a bug here must cost one request, not the server
            log.failure("handling a frame from {address} failed", address=self.address)
            self._error("internal_error", "the server failed to handle this message", None)

    def body_refused(self, error: ProtocolError) -> None:
        """A message the transport could not hand on as a body: answered (and counted
        against the rate limit) like a body that does not decode."""
        if self._closing:
            return
        self._heard()
        self._undecodable(self._bucket.take(), error, None)

    def _undecodable(self, allowed: bool, e: ProtocolError, rid: int | None) -> None:
        """A frame that is not a readable message; before `hello`, not a hello: closed."""
        if not allowed:
            self._over_limit(rid)
        elif self.session is None:
            self.close(e.code, e.message, rid, **e.extra)
        else:
            self._error(e.code, e.message, rid, **e.extra)

    def _receive(self, string: bytes) -> None:
        self._heard()
        allowed = self._bucket.take()
        try:
            msg = decode(string, CLIENT_LIMITS)
        except ProtocolError as e:
            self._undecodable(allowed, e, refused_id(string))
            return
        rid = request_id(msg)
        if not allowed:
            self._over_limit(rid)
            return
        kind = msg["type"]
        if self.session is not None and kind == "hello":
            self._error("already_welcomed", "this connection has already said hello", rid)
            return
        try:
            if self.session is None:
                hello = parse_hello(msg)  # hello_required / unsupported_version first
            else:
                validate(msg, Direction.TO_SERVER)
        except ProtocolError as e:
            if self.session is None:  # a refused hello: welcome or an error and close
                self.close(e.code, e.message, rid, **e.extra)
            else:
                self._error(e.code, e.message, rid, **e.extra)
            return
        if kind == "hello":
            try:
                self._hello(hello)
            except Exception:  # refused like any hello: an error, then the close
                log.failure("hello from {address} failed", address=self.address)
                self.close("internal_error", "the server failed to handle hello", rid)
            return
        self._dispatch(kind, msg, rid)

    def _over_limit(self, rid: int | None) -> None:
        """A request over the rate: answered while its window has seen few refusals,
        dropped unanswered past them, and the connection closed past `flood_close`."""
        now = self._clock.seconds()
        window = self._refused
        if window is None:
            window = self._refused = RefusalWindow(now)
        refused = window.refuse(now)
        flood_close = self.server.limits.flood_close
        if refused > flood_close:
            log.info("closing a flooding connection from {address}: more than {limit} "
                     "requests refused within {window:g} seconds", address=self.address,
                     limit=flood_close, window=FLOOD_WINDOW)
            self.close("rate_limited", "too many messages too fast; closing",
                       retry_after=round(self._bucket.retry_after(), 3))
        elif refused <= ANSWERED_REFUSALS:
            self._error("rate_limited", "too many messages too fast; this one was ignored",
                        rid, retry_after=round(self._bucket.retry_after(), 3))

    def _dispatch(self, kind: str, msg: Message, rid: int | None) -> None:
        session = self.session
        assert session is not None
        handler = HANDLERS.get(kind)
        if handler is None:
            self._error("unknown_type", f"no request of type {kind!r}", rid)
            return
        reply = Replier(self, rid, kind)
        table = _table_of(session)
        seen = table is not None and kind not in TABLE_REQUESTS \
            and MESSAGES[(Direction.TO_SERVER, kind)].presence
        try:
            answer = handler(self, session, msg, reply)
        except ProtocolError as e:  # TableError included
            answer = None
            self._error(e.code, e.message, rid, **e.extra)
        except Exception:
            log.failure("request {type} from {player} failed", type=kind,
                        player=session.player_id)
            if not reply.sent:
                self._error("internal_error", REQUEST_FAILED, rid)
            return
        if answer is not None:
            reply(answer)
        if seen and table is not None and not table.closed:
            # After the reply, so a seat taken back is told after it; a refused request
            # shows the player is there all the same.
            table.handle(cmd.Seen(session.player_id))

    # -- answers that come later ------------------------------------------------------

    def answer_later(self, answer: Deferred[Message | None], reply: Replier,
                     failed: str = REQUEST_FAILED) -> None:
        """Reply with what `answer` brings once it fires, and hold this connection's
        later requests until then, so replies keep the order of the requests.

        While held the connection reads nothing more (its transport is paused; frames
        already read wait in order), so what a client can queue is bounded by one read.
        `answer` brings the reply, or None when there is none to send (sent through
        `reply` already, or the connection let its session go). A `ProtocolError` it
        fails with is the refusal; any other failure is logged with its traceback and
        answered `internal_error` saying `failed`, unless the reply went already. An
        `answer` that has fired already is replied to at once, holding nothing.
        """
        fired = held = False

        def answered(result: Message | None) -> None:
            if result is not None:
                reply(result)

        def refused(failure: Failure) -> None:
            player = self.session.player_id if self.session is not None else None
            if not reply.sent and isinstance(failure.value, ProtocolError):
                reply(failure.value.to_message())
                return
            log.failure("request {type} from {player} failed", failure, type=reply.kind,
                        player=player)
            if not reply.sent:
                reply(make_error("internal_error", failed))

        def settled(_: object) -> None:
            nonlocal fired
            fired = True
            if held:
                self._release()

        answer.addCallbacks(answered, refused)
        answer.addErrback(lambda f: log.failure("answering {type} failed", f,
                                                type=reply.kind))
        answer.addBoth(settled)
        if not fired:
            held = True
            self._hold()

    def from_store(self, query: Callable[[Store], Message], reply: Replier) -> None:
        """Answer with what `query` reads, run on the store's thread (`answer_later`:
        a `ProtocolError` from `query` is its refusal)."""
        archive = self.server.archive
        if archive is None or not archive.available:
            raise ProtocolError("history_unavailable",
                                "this server keeps no finished matches now")
        self.answer_later(archive.query(query), reply, "the server failed to read its store")

    def _hold(self) -> None:
        """Read nothing more until `_release`: later frames wait in `_held`."""
        self._waiting = True
        pause = getattr(self.transport, "pauseProducing", None)
        if pause is not None:
            pause()

    def _release(self) -> None:
        """Read on after a later answer: the frames that waited, then the transport."""
        self._waiting = False
        if self._closing or self.transport is None:
            self._held = None
            return
        resume = getattr(self.transport, "resumeProducing", None)
        if resume is not None:
            resume()
        held = self._held
        while held and not self._waiting and not self._closing:
            self.body_received(held.popleft())
        if held is not None and not held:
            self._held = None

    # -- handshake ----------------------------------------------------------------------

    def _hello(self, hello: Hello) -> None:
        rid = hello.id
        token = hello.token
        name = hello.name  # a resumed session keeps its name: this one is not looked at
        if token is None:
            try:
                name = names.accept(name)  # blank, invisible, a bot's: refused
            except names.BadName as e:
                self.close("bad_field", f"name: {e}", rid, field="name")
                return
        self.features = self.server.agreed(hello.features)
        sessions = self.server.sessions
        banned = self.server.moderation and self.server.moderation.address_banned(
            self.address)
        if banned:
            self.close("banned", banned, rid)
            return
        if token is not None:
            existing = sessions.find(token)
            if existing is None:
                self._error("bad_token", "that resume token is unknown or has expired", rid)
                return
            session = sessions.resume(token, self)
            assert session is not None
            # A lobby subscription belongs to a connection: a resumed one asks again.
            self.server.lobby.unsubscribe(session)
        else:
            cap = self.server.limits.max_sessions_per_address
            if sessions.opened_from(self.address) >= cap:
                log.info("hello from {address} refused: {cap} sessions open from there",
                         address=self.address, cap=cap)
                self.close("too_many_sessions", f"this address has {cap} sessions open, "
                           "the most allowed; a dropped one lasts until its grace period "
                           "ends (or resume one with its token)", rid, limit=cap)
                return
            session = sessions.open(name, self, self.address)
        self.session = session
        if self._handshake_call is not None and self._handshake_call.active():
            # Fired now rather than cancelled: it finds the session and does nothing. A
            # cancelled call stays in the reactor's heap until more than half of that
            # heap is cancelled, so with every connection's handshake call cancelled
            # each idle connection would keep one there.
            self._handshake_call.reset(0)
        # The one line a hello logs (a line costs about as much as the rest of hello).
        renamed = token is None and name != session.name
        log.info(WELCOMED_RENAMED if renamed else WELCOMED, address=self.address,
                 player=session.player_id, name=session.name, resumed=token is not None,
                 client=hello.client, **({"asked": name} if renamed else {}))
        at = _table_of(session) if token is not None else None
        welcome = make_welcome(
            server=self.server.name, version=server_version(),
            player=int(session.player_id), name=session.name, token=session.token,
            features=sorted(self.features),
            limits={**announced_limits(), **self.server.limits.to_wire()},
            resumed=token is not None, table=at.id if at is not None else None, id=rid)
        if session.account is not None and "accounts" in self.features:
            welcome["registered"] = True
        self._send(welcome)
        if at is not None:
            sessions.rejoin(session)  # the table sends its snapshot after this welcome


class ServerProtocol(Connection, Int32StringReceiver):
    """A client connection over TCP (or TLS, or a UNIX socket): each body behind a
    4-byte big-endian length prefix."""

    MAX_LENGTH = MAX_CLIENT_FRAME

    __slots__ = ("_socket",)

    # The framing's own call, bound straight to the logic: nothing between them on the
    # hot path.
    stringReceived = Connection.body_received

    def connectionMade(self) -> None:
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
                journal.later(self._send_corked, cork)
            if self._lose_due:
                self._lose_due = False
                journal.later(self._lose)

    def _send_corked(self, bodies: list[bytes]) -> None:
        """A request's frames, in one `send`."""
        if self.transport is None:
            return
        pack = _LENGTH.pack
        send_frame(self._socket, self.transport,
                   b"".join([pack(len(body)) + body for body in bodies]))
        self._written()

    def _write_body(self, body: bytes) -> None:
        """Send the frame at once where the transport holds nothing yet, else hand it
        to the transport (as `sendString` would).

        Twisted's transports only buffer in `write` and send once the reactor finds the
        socket writable: for a server whose every frame goes to an idle socket that is
        two `epoll` changes and one more reactor wake-up per frame, the largest share of
        a move's cost. Sending at once when nothing is queued keeps the order of bytes
        (anything queued goes first, through the transport) and leaves every partial
        send, full buffer, error and close to the transport, as before.
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
        if not self._closing:
            super().dataReceived(data)  # type: ignore[no-untyped-call]

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
    if type(transport) is not tcp.Server:
        return None
    if not all(hasattr(transport, name) for name in ("_tempDataLen", "dataBuffer",
                                                      "disconnecting", "socket")):
        return None  # a Twisted without these: no shortcut
    sock = transport.socket
    return sock if isinstance(sock, socket.socket) else None


def _table_of(session: Session) -> TableRunner | None:
    table = session.table
    if table is not None and table.closed:
        session.table = None
        return None
    return table


def _require_table(session: Session) -> TableRunner:
    table = _table_of(session)
    if table is None:
        raise ProtocolError("not_at_table", "you are not at a table")
    return table


def _require_feature(conn: Connection, feature: str) -> None:
    if feature not in conn.features:
        raise ProtocolError("feature_not_negotiated",
                      f"say features: [{feature!r}] in hello to use this", feature=feature)


OK: Message = {"type": "ok"}


def _ping(conn: Connection, s: Session, msg: Message, reply: ReplyTo) -> Message | None:
    return {"type": "pong"}


def _pong(conn: Connection, s: Session, msg: Message, reply: ReplyTo) -> Message | None:
    return None


def _lobby_subscribe(conn: Connection, s: Session, msg: Message,
                     reply: ReplyTo) -> Message | None:
    page = {key: msg[key] for key in ("offset", "limit") if key in msg}  # else the first
    return conn.server.lobby.subscribe(s, **page)


def _lobby_unsubscribe(conn: Connection, s: Session, msg: Message,
                       reply: ReplyTo) -> Message | None:
    conn.server.lobby.unsubscribe(s)
    return OK


def _create_table(conn: Connection, s: Session, msg: Message,
                  reply: ReplyTo) -> Message | None:
    if _table_of(s) is not None:
        raise ProtocolError("already_at_table", "leave your table before opening another")
    table = conn.server.lobby.create(s, msg["rules"], msg["seats"], msg.get("options"),
                                     msg.get("name"), bool(msg.get("private", False)),
                                     address=conn.address,
                                     rated=bool(msg.get("rated", False)))
    s.table = table
    table.handle(cmd.Join(s.player_id, s.name, registered=s.account is not None),
                 reply)  # the snapshot is the reply
    return None


def _join_table(conn: Connection, s: Session, msg: Message,
                reply: ReplyTo) -> Message | None:
    table = conn.server.lobby.find(msg.get("table"), msg.get("code"))
    current = _table_of(s)
    if current is not None and current is not table:
        raise ProtocolError("already_at_table", "leave your table before joining another")
    table.handle(cmd.Join(s.player_id, s.name, bool(msg.get("spectate", False)),
                          registered=s.account is not None), reply)
    if table.core.is_member(s.player_id):
        s.table = table
    return None


def _table_command(build: Callable[[Session, Message, TableRunner], cmd.Command]) -> Handler:
    """A handler that hands the request to the player's table as one command."""

    def handler(conn: Connection, s: Session, msg: Message,
                reply: ReplyTo) -> Message | None:
        table = _require_table(s)
        table.handle(build(s, msg, table), reply)
        return None

    return handler


def _sit(conn: Connection, s: Session, msg: Message, reply: ReplyTo) -> Message | None:
    table = _require_table(s)
    table.handle(cmd.Sit(s.player_id, msg["seat"], registered=s.account is not None), reply)
    return None


def _chat(conn: Connection, s: Session, msg: Message, reply: ReplyTo) -> Message | None:
    _require_feature(conn, "chat")
    scope = msg.get("scope")
    table = _table_of(s)
    if scope is None:
        scope = "lobby" if table is None else "table"
    text = msg["text"].strip()
    muted = conn.server.moderation and conn.server.moderation.muted(s)
    if muted:
        raise ProtocolError("muted", muted)
    if scope == "lobby":
        reply(OK)  # first: the line itself and a seat taken back come after it
        conn.server.lobby.chat(s, text)
        if table is not None:
            table.handle(cmd.Seen(s.player_id))
        return None
    _require_table(s).handle(cmd.Chat(s.player_id, text), reply)
    return None


def _rematch(conn: Connection, s: Session, msg: Message,
             reply: ReplyTo) -> Message | None:
    _require_feature(conn, "rematch")
    table = _require_table(s)
    table.handle(cmd.Rematch(s.player_id, bool(msg["agree"]), table.new_seed()), reply)
    return None


def _history(conn: Connection, s: Session, msg: Message,
             reply: Replier) -> Message | None:
    _require_feature(conn, "history")
    of, name = msg["of"], msg.get("name")
    if of == "player":
        if name is None:
            raise ProtocolError("missing_field", "of: player needs the player's name",
                                field="name")
        name = history.lookup_name(name)
    offset, limit = msg.get("offset", 0), min(msg.get("limit", HISTORY_PAGE), HISTORY_PAGE)
    viewer = s.name
    conn.from_store(lambda store: history.history_page(store, of, name, viewer, offset,
                                                       limit), reply)
    return None


def _replay(conn: Connection, s: Session, msg: Message,
            reply: Replier) -> Message | None:
    _require_feature(conn, "history")
    match_id, deal_no, start = msg["match"], msg.get("deal", 1), msg.get("from", 0)
    viewer = s.name
    steps = bool(msg.get("steps", False))
    conn.from_store(lambda store: history.replay_page(store, match_id, deal_no, start,
                                                      viewer, steps), reply)
    return None


HANDLERS: dict[str, Handler] = {
    "ping": _ping,
    "pong": _pong,
    "lobby_subscribe": _lobby_subscribe,
    "lobby_unsubscribe": _lobby_unsubscribe,
    "create_table": _create_table,
    "join_table": _join_table,
    "resync": _table_command(lambda s, m, t: cmd.Resync(s.player_id)),
    "leave_table": _table_command(lambda s, m, t: cmd.Leave(s.player_id)),
    "sit": _sit,
    "stand": _table_command(lambda s, m, t: cmd.Stand(s.player_id)),
    "add_bot": _table_command(lambda s, m, t: cmd.AddBot(
        s.player_id, m["seat"], m.get("level", "medium"), t.new_seed())),
    "remove_bot": _table_command(lambda s, m, t: cmd.RemoveBot(s.player_id, m["seat"])),
    "ready": _table_command(lambda s, m, t: cmd.Ready(s.player_id, bool(m["ready"]))),
    "start": _table_command(lambda s, m, t: cmd.Start(s.player_id, t.new_seed())),
    "move": _table_command(lambda s, m, t: cmd.Play(s.player_id, m["move"])),
    "chat": _chat,
    "rematch": _rematch,
    "history": _history,
    "replay": _replay,
    "register": accounts.handle_register,
    "login": accounts.handle_login,
    "logout": accounts.handle_logout,
    "passwd": accounts.handle_passwd,
    "leaderboard": ratings.handle_leaderboard,
    "profile": ratings.handle_profile,
    "kick": moderation.handle_kick,
    "mute": moderation.handle_mute,
    "unmute": moderation.handle_unmute,
    "ban": moderation.handle_ban,
    "unban": moderation.handle_unban,
    "close_table": moderation.handle_close_table,
    "announce": moderation.handle_announce,
}

TABLE_REQUESTS = frozenset({"resync", "leave_table", "sit", "stand", "add_bot",
                            "remove_bot", "ready", "start", "move", "chat", "rematch"})
"""Requests whose table command counts presence itself (the core's one path for it);
other requests that show presence (the schema's `presence`) are told as `Seen`. Not
`create_table` or `join_table`: from a player at a table, the first never reaches it
and the second only asks for a snapshot."""


class ServerFactory(Factory):
    """The server's shared state: lobby, sessions, limits and the live connections."""

    def __init__(self, name: str, lobby: Lobby, sessions: Sessions, limits: ServerLimits,
                 clock: Clock, archive: Archive | None = None,
                 journal: Journal = NO_JOURNAL) -> None:
        self.name = name
        self.journal = journal
        self.archive = archive
        """Where finished matches are kept and read; None: the server keeps none, and
        does not offer the `history` feature."""
        self.features = frozenset(FEATURES) - ({"history"} if archive is None else set())
        """The features this server offers in `welcome`."""
        self._agreed: dict[tuple[str, ...] | None, frozenset[str]] = {}
        self.lobby = lobby
        self.sessions = sessions
        self.limits = limits
        self.clock = clock
        self.connections = ConnectionCounter(limits.max_connections, limits.max_per_address)
        self.protocols: set[Connection] = set()
        """Every admitted connection, over any transport."""
        # Set by `tap.make_factory` on a server with a store.
        self.accounts: accounts.Accounts | None = None
        self.moderation: moderation.Moderation | None = None
        self.ratings: ratings.Ratings | None = None

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


