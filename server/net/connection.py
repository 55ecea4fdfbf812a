"""One client connection, whatever carries it: bodies in, messages out.

`Connection` holds everything between bodies in and bodies out once, for every
transport (TCP in server/net/tcp.py, the WebSocket in server/net/websocket.py): admission,
the rate limit, the heartbeat, flow control, sending, closing and the per-connection
state. A transport supplies only how a body is written and how it ends. A decoded
`hello` goes to server/net/hello.py, every other request to server/net/dispatch.py.
A framing violation ends the connection; an unexpected exception is logged with its
traceback and answered with `internal_error`, so one bad frame never drops the server
or touches another connection.

Replies come in the order of the requests: a handler whose answer takes a slow step (a
password hash, a store read or write) hands it to `Connection.answer_later`, which
holds the connection's later requests until that answer is sent.
"""

from __future__ import annotations

import collections
import functools
import math
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, cast

import ormsgpack
from twisted.internet.abstract import FileDescriptor
from twisted.internet.defer import Deferred
from twisted.internet.interfaces import IAddress
from twisted.logger import Logger
from twisted.python.failure import Failure

from pisyedili.protocol.codec import decode, encode, refused_id
from pisyedili.protocol.errors import ERRORS, ProtocolError
from pisyedili.protocol.handshake import parse_hello
from pisyedili.protocol.limits import CLIENT_FRAME_LIMITS, MAX_CLIENT_FRAME
from pisyedili.protocol.messages import make_error
from pisyedili.protocol.schema import MESSAGES, Direction, request_id, validate
from pisyedili.server import metrics
from pisyedili.server.clock import Delayed
from pisyedili.server.cluster import unavailable
from pisyedili.server.net import dispatch, hello
from pisyedili.server.net.handlers import REQUEST_FAILED
from pisyedili.server.net.limits import (
    ANSWERED_REFUSALS,
    FLOOD_WINDOW,
    RefusalWindow,
    address_key,
)
from pisyedili.server.people.session import Session
from pisyedili.server.store.base import Unreachable
from pisyedili.server.table.effects import Message
from pisyedili.server.table.journal import last_word
from pisyedili.server.token_bucket import TokenBucket

if TYPE_CHECKING:
    from pisyedili.server.net.dispatch import Replier
    from pisyedili.server.net.tcp import ServerFactory

log = Logger()

ABORT_AFTER_CLOSE = 10.0
"""Seconds a closing connection may take to drain before it is aborted."""
STALLED_SECONDS = 60.0
"""Seconds a client may leave the server's output buffer full (not reading) before the
connection is aborted: what the server buffers for one client is bounded in time (and
in bytes, by `ServerLimits.max_output_bytes`)."""
HELD_FRAMES = 16
"""Frames a connection reading on behind a long answer (`wait_for`) keeps waiting
before it stops reading: what a client can queue meanwhile stays bounded."""
DUE_SLACK = 1e-6
"""Seconds a timer may wake before its deadline and still count as due: a float sum
may fall short of the deadline it was computed for."""
SHORT_REFUSAL = "too fast"
"""The `message` of the pre-encoded `rate_limited` reply (`refusal_reply`): short, since
a flood is answered with one per request."""
MAX_RETRY_AFTER = 3600.0
"""The schema's bound on `error.retry_after`."""


@functools.lru_cache(maxsize=16)
def _refusal_parts(retry_after: float) -> tuple[bytes, bytes]:
    """The pre-encoded `rate_limited` reply without an id, and the one with an id but
    for the id's value, which comes last (the map's last key is `id`)."""
    msg = make_error("rate_limited", SHORT_REFUSAL, retry_after=retry_after)
    with_id = encode({**msg, "id": 0})
    assert with_id.endswith(b"\x00")  # the id's value: positive fixint 0
    return encode(msg), with_id[:-1]


def refusal_reply(rid: int | None, retry_after: float) -> bytes:
    """The body of a `rate_limited` reply to request `rid`: pre-encoded but for the id,
    so that answering a flood costs little more than dropping it."""
    without_id, head = _refusal_parts(retry_after)
    return without_id if rid is None else head + ormsgpack.packb(rid)


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


class Connection:
    """One client connection, whatever carries it: the `Peer` of a `Session` once it
    said `hello`.

    A transport's class calls `opened` once bodies can flow, `body_received` with each
    body, `body_refused` for a message it could not hand on (a WebSocket text message)
    and `lost` when the connection is gone; it implements `_write_body` (one body out)
    and `_end` (close once what is written has gone). `transport` is the byte stream
    underneath (TCP or TLS): its producer, peer address and buffer size are read here.
    """

    FRAME_OVERHEAD: ClassVar[int]
    """Bytes the transport adds to each body it writes (an upper bound)."""
    TRANSPORT: ClassVar[str]
    """The transport's name, as the metrics' `transport` label says it."""

    # Slots, so that a connection's own state never sits in its instance dict: Twisted
    # reads a protocol's `__dict__` on every frame, which makes the dict real, and one
    # holding these as well took over a kilobyte per idle connection.
    __slots__ = ("__weakref__", "_abort_call", "_admitted", "_bucket", "_clock",
                 "_close_code", "_closing", "_cork", "_handshake_call", "_heartbeat_call",
                 "_held", "_last_heard", "_lose_due", "_paused", "_pinged", "_queued",
                 "_reads_on", "_refused", "_stall_call", "_waiting", "address", "features",
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
        self._reads_on = False  # ... read meanwhile, pings answered (`wait_for`)
        self._held: collections.deque[bytes] | None = None  # made by the first frame held
        self._close_code: str | None = None
        self._cork: list[bytes] | None = None  # bodies a request holds back (ServerProtocol)
        self._lose_due = False  # closing while corked: the close follows the cork's frames

    @property
    def pending_output(self) -> int:
        """An upper bound on the bytes written to this client that it has not read yet
        (the transport's buffer), kept under `max_output_bytes` plus one frame."""
        return self._queued

    @property
    def closing(self) -> bool:
        """Closed or closing: nothing more is read, and a late answer has nobody to reach."""
        return self._closing

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
        if self.server.cluster.shared:
            self._count_in_cluster()
        self.server.protocols.add(self)
        assert self.transport is not None
        self.transport.registerProducer(self, True)
        self._last_heard = self._clock.seconds()
        self._handshake_call = self._clock.callLater(self.server.limits.handshake_seconds,
                                                     self._handshake_expired)
        self._heartbeat_call = self._clock.callLater(self.server.limits.ping_seconds,
                                                     self._heartbeat)

    def _count_in_cluster(self) -> None:
        """The per-address cap over every process: this connection is counted in the
        cluster too, and closed if it is one too many there."""
        cap = self.server.limits.max_per_address

        def counted(count: int) -> None:
            if count > cap and not self._closing:
                log.info("connection from {address} refused: {count} in the cluster",
                         address=self.address, count=count)
                self.close("too_many_connections", "too many connections from your address")

        counting = self.server.cluster.connection_opened(self.address)
        counting.addCallbacks(counted, lambda f: log.failure(
            "counting a connection in the cluster failed", f))

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
        if self.server.cluster.shared:
            self.server.cluster.connection_closed(self.address)
        self.server.protocols.discard(self)
        session, self.session = self.session, None
        if session is not None and session.peer is self:
            try:
                self.server.lobby.unsubscribe(session)
                self.server.sessions.lost(session, self)
                self.server.invitations.lost(session)
            except Exception:
                log.failure("cleaning up after player {player} failed",
                            player=session.player_id)

    def close(self, code: str, message: str, rid: int | None = None, **extra: Any) -> None:
        """Send an `error` saying why, then close (aborting if the peer never reads)."""
        if self._closing:
            return
        self._send_last(make_error(code, message, rid, **extra))  # even past the output bound
        self._close_code = code
        self._shut()

    def _shut(self) -> None:
        """Stop reading and close once what is queued is written (or abort, later)."""
        self._closing = True
        if self._cork is not None:
            self._lose_due = True  # after the corked frames, which are not queued yet
            return
        self.server.journal.after_commit(self._lose)

    @last_word
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
        self._send_last({"type": "replaced",
                         "message": "this session was resumed by another connection"})
        self._shut()

    def handshake_done(self) -> None:
        """The hello was answered: the handshake timer has nothing more to do."""
        if self._handshake_call is not None and self._handshake_call.active():
            # Fired now rather than cancelled: it finds the session and does nothing. A
            # cancelled call stays in the reactor's heap until more than half of that
            # heap is cancelled, so with every connection's handshake call cancelled
            # each idle connection would keep one there.
            self._handshake_call.reset(0)

    def _handshake_expired(self) -> None:
        self._handshake_call = None
        if self._waiting and self.session is None and not self._closing:
            # The hello came and its answer is the server's to give (a resume waiting
            # for the takeover of its gone process): the client is not the late one.
            self._handshake_call = self._clock.callLater(
                self.server.limits.handshake_seconds, self._handshake_expired)
            return
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
            if self.server.journal.holding:
                self.send_now({"type": "ping"})  # it tells nothing: it need not wait
            else:
                self.send({"type": "ping"})
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
        """`Peer.send_message`: messages of features not agreed on are dropped.

        `send` and `send_body` in one: every frame a table sends comes this way."""
        feature = _FEATURE_OF.get(msg.get("type", ""))
        if feature is not None and feature not in self.features:
            return
        if self._closing or self.transport is None:
            return
        try:
            body = encode(msg)
        except (TypeError, ValueError):
            log.failure("could not encode a {type} message", type=msg.get("type"))
            return
        if self._paused:
            self.send_body(body)  # it checks the output bound
        else:
            self._queue(body)

    def send_now(self, msg: Message) -> None:
        """Write one message at once, ahead of what waits for the journal: only one
        that tells nothing the journal has yet to commit (a ping, a pong, a refusal
        while the journal is `holding`), which may come before earlier replies."""
        if self._closing or self.transport is None:
            return
        body = self._encode(msg)
        if body is not None:
            self._queued += len(body) + self.FRAME_OVERHEAD
            self._flush(body)

    def send(self, msg: Message) -> None:
        """Queue one message, or close a client that left too much unread."""
        if self._closing or self.transport is None:
            return
        body = self._encode(msg)
        if body is not None:
            self.send_body(body)

    def send_body(self, body: bytes, batched: bool = False) -> None:
        """Queue one encoded message (`send`'s, or one a table elsewhere sent this
        client: `relay.py`), or close a client that left too much unread. `batched`:
        it may wait in the transport's buffer for the frames that follow it in this
        read (`_flush_batched`)."""
        if self._closing or self.transport is None:
            return
        limit = self.server.limits.max_output_bytes
        if self._paused and self._queued + len(body) + self.FRAME_OVERHEAD > limit:
            log.info("closing a connection from {address} that reads too slowly "
                     "({queued} bytes unread)", address=self.address, queued=self._queued)
            self.close("too_slow", f"more than {limit} bytes were waiting for you to read "
                       "them", limit=limit)
            return
        self._queue(body, batched)

    def _send_last(self, msg: Message) -> None:
        """Queue one message past the output bound (a closing error: small, and the last)."""
        if self.transport is not None:
            body = self._encode(msg)
            if body is not None:
                self._queue(body, last=True)

    @staticmethod
    def _encode(msg: Message) -> bytes | None:
        try:
            return encode(msg)
        except (TypeError, ValueError):
            log.failure("could not encode a {type} message", type=msg.get("type"))
            return None

    def _queue(self, body: bytes, batched: bool = False, last: bool = False) -> None:
        """Write one frame once the journal has committed what it tells of; while a
        request corks its frames, add it to them (they wait on the journal together).
        The `last` one says why the connection closes: a fence keeps it (`last_word`)."""
        self._queued += len(body) + self.FRAME_OVERHEAD
        if self._cork is not None:
            self._cork.append(body)
            return
        self.server.journal.after_commit(
            self._flush_last if last else self._flush_batched if batched else self._flush, body)

    @last_word
    def _flush_last(self, body: bytes) -> None:
        """`_flush` of the error a hang-up sends."""
        self._flush(body)

    def _flush(self, body: bytes) -> None:
        """Write one queued body to the transport, now that the journal has it."""
        if self.transport is None:
            return
        self._write_body(body)  # may pause us at once
        self._written()

    def _flush_batched(self, body: bytes) -> None:
        """`_flush` for a frame that may wait for those written after it (a refusal of
        a flood: the replies to one read go out in one write); the transport's own."""
        self._flush(body)

    def _written(self) -> None:
        """Frames went to the transport: unless it paused us, it holds no more than its
        high-water mark."""
        if not self._paused:
            high_water = getattr(self.transport, "bufferSize", FileDescriptor.bufferSize)
            self._queued = min(self._queued, high_water)

    def send_error(self, code: str, message: str, rid: int | None, **extra: Any) -> None:
        """Answer with an `error`; codes registered as closing also end the connection."""
        spec = ERRORS.get(code)
        if spec is not None and spec.closes:
            self.close(code, message, rid, **extra)
        else:
            self.send(make_error(code, message, rid, **extra))

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
            if self._reads_on and self._heartbeat_answered(string):
                return
            if self._held is None:
                self._held = collections.deque()
            self._held.append(string)
            if self._reads_on and len(self._held) >= HELD_FRAMES:
                self._pause_reading()
            return
        try:
            self._receive(string)
        except Exception:  # a bug here must cost one request, not the server
            log.failure("handling a frame from {address} failed", address=self.address)
            self.send_error("internal_error", "the server failed to handle this message", None)

    def _heartbeat_answered(self, string: bytes) -> bool:
        """While reading on behind a long answer (`wait_for`): a valid `ping` within
        the rate answered at once (its `pong` tells nothing, so it need not wait), a
        `pong` heard; False for any other frame, which waits its turn."""
        try:
            msg = decode(string, CLIENT_FRAME_LIMITS)
            if msg.get("type") not in ("ping", "pong"):
                return False
            validate(msg, Direction.TO_SERVER)
        except ProtocolError:
            return False
        if not self._bucket.take():
            return False  # (its turn comes, over the rate then too)
        self._heard()
        if msg["type"] == "ping":
            rid = request_id(msg)
            self.send_now({"type": "pong"} if rid is None else {"type": "pong", "id": rid})
        return True

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
            self.send_error(e.code, e.message, rid, **e.extra)

    def _receive(self, string: bytes) -> None:
        self._heard()
        allowed = self._bucket.take()
        try:
            msg = decode(string, CLIENT_FRAME_LIMITS)
        except ProtocolError as e:
            self._undecodable(allowed, e, refused_id(string))
            return
        rid = request_id(msg)
        if not allowed:
            self._over_limit(rid)
            return
        kind = msg["type"]
        if self.session is not None and kind == "hello":
            self.send_error("already_welcomed", "this connection has already said hello", rid)
            return
        try:
            if self.session is None:
                greeting = parse_hello(msg)  # hello_required / unsupported_version first
            else:
                validate(msg, Direction.TO_SERVER)
        except ProtocolError as e:
            if self.session is None:  # a refused hello: welcome or an error and close
                self.close(e.code, e.message, rid, **e.extra)
            else:
                self.send_error(e.code, e.message, rid, **e.extra)
            return
        if kind == "hello":
            if self.server.journal.holding:  # a welcome would wait on it: refused now
                refusal = unavailable("hello")
                self.send_now(make_error(refusal.code, refusal.message, rid,
                                         **refusal.extra))
                self._close_code = refusal.code
                self._closing = True
                self._lose()
                return
            try:
                hello.answer(self, greeting)
            except Exception:  # refused like any hello: an error, then the close
                log.failure("hello from {address} failed", address=self.address)
                self.close("internal_error", "the server failed to handle hello", rid)
            return
        self._dispatch(kind, msg, rid)

    def frame_received(self) -> bool:
        """A transport's frame that is not a body of its own (a WebSocket control frame,
        or a continuation of a message): each costs a read, so each is counted against
        the rate limit as a message is, from the connection's start (before `hello`
        too). It is not a request and gets no reply; False: over the rate or closing,
        so the transport does not act on it (a WebSocket ping gets no pong)."""
        if self._closing:
            return False
        if self._bucket.take():
            return True
        self._refusal()
        return False

    def _refusal(self) -> int:
        """Count one refusal over the rate, and close the connection past `flood_close`
        refusals in its window; the count in the window, this one included."""
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
        return refused

    def _over_limit(self, rid: int | None) -> None:
        """A request over the rate: answered `rate_limited` with the wait that brings
        the next token while its window has seen few refusals, past them with one
        pre-encoded frame (`refusal_reply`), and the connection closed past
        `flood_close`. Every request gets its reply, and a flood costs no encoding."""
        refused = self._refusal()
        if self._closing:
            return
        if refused <= ANSWERED_REFUSALS:
            self.send_error("rate_limited", "too many messages too fast; this one was ignored",
                            rid, retry_after=round(self._bucket.retry_after(), 3))
        else:
            # A whole token's wait, never less than the next token's: one value per server.
            rate = self.server.limits.rate
            self.send_body(refusal_reply(
                rid, min(MAX_RETRY_AFTER, math.ceil(1000 / rate) / 1000)), batched=True)

    def _dispatch(self, kind: str, msg: Message, rid: int | None) -> None:
        """Hand one valid request of a welcomed connection to its handler."""
        dispatch.handle(self, kind, msg, rid)

    # -- answers that come later ------------------------------------------------------

    def answer_later(self, answer: Deferred[Message | None], reply: Replier,
                     failed: str = REQUEST_FAILED, reads_on: bool = False) -> None:
        """Reply with what `answer` brings once it fires, and hold this connection's
        later requests until then, so replies keep the order of the requests.

        While held the connection reads nothing more (its transport is paused; frames
        already read wait in order), so what a client can queue is bounded by one read.
        `answer` brings the reply, or None when there is none to send (sent through
        `reply` already, or the connection let its session go). A `ProtocolError` it
        fails with is the refusal; any other failure is logged with its traceback and
        answered `internal_error` saying `failed`, unless the reply went already. An
        `answer` that has fired already is replied to at once, holding nothing.
        `reads_on`: as `wait_for`'s.
        """
        def answered(result: Message | None) -> None:
            if result is not None:
                reply(result)

        def refused(failure: Failure) -> None:
            player = self.session.player_id if self.session is not None else None
            if not reply.sent and isinstance(failure.value, ProtocolError):
                metrics.login_refused(reply.kind, failure.value.code)
                reply(failure.value.to_message())
                return
            error = failure.value
            if isinstance(error, Unreachable):
                # The store out of reach (PostgreSQL stopped, the network): an outage
                # the store says as it reconnects, not a defect of this request.
                log.warn("request {type} from {player} failed: the store could not be "
                         "read or written ({why}); answered internal_error",
                         type=reply.kind, player=player, why=str(error))
            else:
                log.failure("request {type} from {player} failed", failure,
                            type=reply.kind, player=player)
            if not reply.sent:
                reply(make_error("internal_error", failed))

        answer.addCallbacks(answered, refused)
        answer.addErrback(lambda f: log.failure("answering {type} failed", f,
                                                type=reply.kind))
        self.wait_for(answer, reads_on)

    def wait_for(self, work: Deferred[Any], reads_on: bool = False) -> None:
        """Read nothing more until `work` fires (at once if it has), so what comes after
        a request waits for its answer; `work`'s result is left as it was.

        `reads_on`: the answer may take as long as another process holds it (a table
        elsewhere whose journal waits for its store), longer than the heartbeat allows a
        silent client. So frames are read on meanwhile: a `ping` is answered and a
        `pong` heard at once, the rest wait in order as they would in the transport,
        which is paused once `HELD_FRAMES` of them wait."""
        fired = held = False

        def settled(result: object) -> object:
            nonlocal fired
            fired = True
            if held:
                self._release()
            return result

        work.addBoth(settled)
        if not fired:
            held = True
            self._hold(reads_on)

    def _hold(self, reads_on: bool = False) -> None:
        """Read nothing more until `_release` (`reads_on`: nothing but pings and
        pongs): later frames wait in `_held`."""
        self._waiting = True
        self._reads_on = reads_on
        if not reads_on:
            self._pause_reading()

    def _pause_reading(self) -> None:
        self._reads_on = False
        pause = getattr(self.transport, "pauseProducing", None)
        if pause is not None:
            pause()

    def _release(self) -> None:
        """Read on after a later answer: the frames that waited, then the transport."""
        self._waiting = False
        reading, self._reads_on = self._reads_on, False
        if self._closing or self.transport is None:
            self._held = None
            return
        resume = None if reading else getattr(self.transport, "resumeProducing", None)
        if resume is not None:
            resume()
        held = self._held
        while held and not self._waiting and not self._closing:
            self.body_received(held.popleft())
        if held is not None and not held:
            self._held = None
