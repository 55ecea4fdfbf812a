"""The one link to a server that every client here uses: the terminal client and
`pisyedili-bot` alike.

Framing is Twisted's `Int32StringReceiver` (MAX_LENGTH = the protocol's server frame
limit); bodies go through `pisyedili.protocol`'s codec and schema, the code the server
runs. `ClientService` keeps the connection up with backoff, and every (re)connection
opens with `hello` carrying the token of the last `welcome`, so a dropped connection
gets its session back, and the server follows the resumed `welcome` with a `table`
snapshot when the session is at a table.

Requests and replies: `Link.request(msg)` stamps a fresh `id` and returns a Deferred
for the server's one reply carrying that `id` (`ok`, `table`, `lobby`, `pong`, or
`error`). An `error` reply fires the callback like any other: refusals are part of the
game (a stale move, a seat just taken), so callers branch on `reply["type"]` instead of
trapping exceptions. The Deferred errbacks with a `RequestFailed` only when no reply
will come: `NotConnected` (nothing was sent), `RequestLost` (the connection went first),
`ReplyUnreadable` (the reply failed the schema). Every server message except `ping`
also reaches `on_message`, replies included, and it does so before the reply's
Deferred fires, so what the caller keeps (a screen, a bot's view) is up to date when
the requester's callback runs.

When to stop reconnecting comes from the error registry, not a list kept here: an
error that closes and cannot be cured by reconnecting (`ErrorCode.reconnect` False)
ends the link, as does any refusal of `hello` unless its code says reconnecting helps;
`bad_token` only drops the token, so the next `hello` starts a fresh session;
`replaced` (another connection resumed the session) ends the link.

A first connection that fails is another matter: until a session has been welcomed the
link cannot tell a server that is briefly away from a wrong address, a certificate that
is not trusted or a port where something else listens. With `retry_first` False (the
terminal client) any failure before the first `welcome` ends the link with `Ended.code`
`unreachable` and why, in plain words; after it, every retry's status says why the last
try failed. A connection that gets no `welcome` within `WELCOME_SECONDS` is dropped, so
a server that never speaks (an HTTP server waiting for its request line) is a failure
too, not a prompt that hangs.
"""

from __future__ import annotations

import importlib.metadata
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, cast

from twisted.application.internet import ClientService, backoffPolicy
from twisted.internet import error as net_error
from twisted.internet.defer import Deferred, fail, succeed
from twisted.internet.interfaces import IProtocolFactory, IReactorTime, IStreamClientEndpoint
from twisted.internet.protocol import Factory, connectionDone
from twisted.logger import Logger
from twisted.protocols.basic import Int32StringReceiver
from twisted.python.failure import Failure

from pisyedili.protocol.codec import decode, decode_message, encode, limits_for
from pisyedili.protocol.errors import ERRORS, ProtocolError
from pisyedili.protocol.limits import CLIENT_FRAME_LIMITS, MAX_SERVER_FRAME
from pisyedili.protocol.messages import make_hello
from pisyedili.protocol.schema import Direction, request_id, validate

from .i18n import _, number

log = Logger()

Message = dict[str, Any]

CLIENT_FEATURES = ("chat", "rematch", "history", "accounts", "ratings", "moderation",
                   "invites")
"""The optional features these clients implement, and so ask for."""

_NOT_REQUESTS = frozenset({"hello", "pong"})
"""Sent by the link itself: `hello` on each connection, `pong` to the server's `ping`."""

WELCOME_SECONDS = 15.0
"""How long a connection may go without `welcome`: a server answers `hello` at once, so
silence this long means something else listens there (or the server is stuck)."""

UNREACHABLE = "unreachable"
"""`Ended.code` of a link whose first connection failed (with `retry_first` False)."""

FOREIGN = "not a Pis Yedili server (it answers in another protocol)"


def why_failed(reason: Failure) -> str:
    """A connection's failure in plain words, for a person deciding what to fix."""
    exc = reason.value
    kind = type(exc)
    if isinstance(exc, net_error.ConnectionRefusedError):
        return "connection refused (nothing listens on that port)"
    if isinstance(exc, net_error.DNSLookupError):
        return "name not found (no such host)"
    if isinstance(exc, net_error.TimeoutError | net_error.TCPTimedOutError):
        return "no answer (the connection timed out)"
    if isinstance(exc, net_error.NoRouteError):
        return "no route to the host"
    if kind.__name__ == "VerificationError":  # service_identity: the certificate's names
        return "the certificate is for another name (name mismatch)"
    if kind.__module__.startswith("OpenSSL"):
        text = str(exc)
        if "certificate verify failed" in text:
            return "the certificate is not trusted (no authority this machine trusts signed it)"
        return f"the TLS handshake failed ({text})"
    if isinstance(exc, net_error.ConnectionDone | net_error.ConnectionLost):
        return "the server closed the connection"
    return str(exc) or kind.__name__


def client_version() -> str:
    try:
        return importlib.metadata.version("pisyedili")
    except importlib.metadata.PackageNotFoundError:
        return "0"


class RequestFailed(Exception):
    """No reply will come for this request."""


class NotConnected(RequestFailed):
    """The link was not connected and welcomed: the request was not sent."""


class RequestLost(RequestFailed):
    """The connection closed before the reply came; the request may or may not have
    reached the server."""


class ReplyUnreadable(RequestFailed):
    """The reply came but the schema refuses it."""

    def __init__(self, error: ProtocolError) -> None:
        super().__init__(str(error))
        self.error = error


@dataclass(frozen=True)
class Ended:
    """Why a link stopped for good: `code` is the error code (or `replaced`) that
    ended it, None when the client asked (`Link.stop`)."""

    code: str | None
    text: str


class WireProtocol(Int32StringReceiver):
    """One TCP connection; everything it hears goes to its `Link`."""

    MAX_LENGTH = MAX_SERVER_FRAME

    def __init__(self, link: Link) -> None:
        self.link = link

    def connectionMade(self) -> None:
        self.link._made(self)

    def stringReceived(self, string: bytes) -> None:
        self.link._received(self, string)

    def connectionLost(self, reason: Failure = connectionDone) -> None:
        self.link._lost(self, reason)

    def lengthLimitExceeded(self, length: int) -> None:
        # Reading on would mean buffering a frame the limits say nobody may send.
        log.warn("server frame of {length} bytes is over the limit; closing", length=length)
        self.link._over_limit(self)
        if self.transport is not None:
            self.transport.abortConnection()

    def send(self, msg: Mapping[str, Any]) -> None:
        self.sendString(encode(msg, CLIENT_FRAME_LIMITS))  # type: ignore[no-untyped-call]


class _Watched:
    """The link's endpoint, so the link hears why a connection attempt failed (the
    service only counts attempts)."""

    def __init__(self, endpoint: IStreamClientEndpoint, link: Link) -> None:
        self.endpoint: Any = endpoint  # zope interfaces do not type-check as classes
        self.link = link

    def connect(self, factory: IProtocolFactory) -> Deferred[Any]:
        d: Deferred[Any] = self.endpoint.connect(factory)

        def failed(reason: Failure) -> Failure:
            self.link._why = why_failed(reason)
            return reason

        return d.addErrback(failed)


class _Factory(Factory):
    def __init__(self, link: Link) -> None:
        self.link = link

    def buildProtocol(self, addr: object) -> WireProtocol:
        return WireProtocol(self.link)


class Link:
    """A self-healing session with one server.

    `on_message(msg)` gets every validated server message but `ping`; `on_status(text)`
    gets connection news worth telling a person (lost, retrying, stopped for good);
    `on_unreadable(error)` hears of each server message the schema refuses (a newer
    server's unknown message types are ignored quietly, as the protocol asks).
    """

    def __init__(
        self,
        endpoint: IStreamClientEndpoint,
        name: str,
        on_message: Callable[[Message], None],
        *,
        clock: IReactorTime,
        on_status: Callable[[str], None] | None = None,
        on_unreadable: Callable[[ProtocolError], None] | None = None,
        client: str = "pisyedili",
        version: str | None = None,
        features: Iterable[str] = CLIENT_FEATURES,
        token: str | None = None,
        retry: Callable[[int], float] | None = None,
        on_token: Callable[[str | None, str], None] | None = None,
        retry_first: bool = True,
    ) -> None:
        self.name = name
        self.retry_first = retry_first
        """Whether a first connection that fails is tried again (a bot started before
        its server); False ends the link instead, saying why (`UNREACHABLE`)."""
        self.token = token
        self.on_token = on_token
        """Hears `(token, name)` at each `welcome` and `(None, name)` when the server no
        longer knows the token, so a caller can keep it beyond this process."""
        self.welcome: Message | None = None
        """The last `welcome`: player id, agreed features, limits."""
        self.fatal: str | None = None
        """The code that stopped the link for good, if one did."""
        self.pings = 0
        """Server pings answered (diagnostics)."""
        self._on_message = on_message
        self._on_status = on_status
        self._on_unreadable = on_unreadable
        self._client = client
        self._version = version or client_version()
        self._features = tuple(features)
        self._proto: WireProtocol | None = None
        self._welcomed = False
        self._ever_welcomed = False
        self._next_id = 0
        self._pending: dict[int, Deferred[Message]] = {}
        self._stopping = False
        self._ended: Ended | None = None
        self._end_waiters: list[Deferred[Ended]] = []
        self._welcome_waiters: list[Deferred[Message]] = []
        self._clock: Any = clock  # zope interfaces do not type-check as classes
        self._why: str | None = None
        """Why the last connection attempt failed, once it has."""
        self._welcome_timer: Any = None
        """The `IDelayedCall` that drops a connection still not welcomed."""
        self._fresh_hello = False
        """The token was just refused: the next try is a fresh `hello`, not a failure."""
        policy = retry or backoffPolicy(initialDelay=0.5, maxDelay=15.0, factor=2.0)

        def announce(attempt: int) -> float:
            # The service asks this after each failed attempt and each lost connection.
            delay = policy(attempt)
            why, self._why = self._why or "the connection failed", None
            fresh, self._fresh_hello = self._fresh_hello, False
            if self._stopping or fresh:  # `bad_token`: the next hello starts a session
                return delay
            if not self._ever_welcomed and not self.retry_first:
                # Ended on the next turn: the service is mid-transition now.
                self._clock.callLater(0, self._end, UNREACHABLE, why)
            elif self._ever_welcomed:
                self._status(_("reconnecting: {why}; next try in {delay}s", why=why,
                               delay=number(delay, 1)))
            else:
                self._status(_("cannot reach the server: {why}; next try in {delay}s", why=why,
                               delay=number(delay, 1)))
            return delay

        self._service = ClientService(cast(IStreamClientEndpoint, _Watched(endpoint, self)),
                                      cast(IProtocolFactory, _Factory(self)),
                                      retryPolicy=announce, clock=clock)

    # ------------------------------------------------------------------ public

    @property
    def connected(self) -> bool:
        """Connected and welcomed: requests can be sent."""
        return self._proto is not None and self._welcomed

    @property
    def features(self) -> tuple[str, ...]:
        """The features the server agreed on in the last `welcome`."""
        return tuple(self.welcome["features"]) if self.welcome else ()

    def start(self) -> None:
        """Connect; a `hello` the schema refuses (a bad name) ends the link at once,
        before anything is dialled: no retry could help it."""
        try:
            self._hello(None)
        except ProtocolError as exc:
            self._end(exc.code, exc.message)
            return
        self._service.startService()

    def when_welcomed(self) -> Deferred[Message]:
        """Fires with the next `welcome` (never, if the link ends first)."""
        d: Deferred[Message] = Deferred()
        self._welcome_waiters.append(d)
        return d

    def stop(self) -> Deferred[None]:
        """Stop reconnecting and close the connection; fires once it is closed."""
        self._end(None, "stopped")
        d = self.when_ended()
        return d.addCallback(lambda _: None)

    def when_ended(self) -> Deferred[Ended]:
        """Fires once the link has stopped for good and its connection is closed."""
        if self._ended is not None:
            return succeed(self._ended)
        d: Deferred[Ended] = Deferred()
        self._end_waiters.append(d)
        return d

    def request(self, msg: Mapping[str, Any]) -> Deferred[Message]:
        """Send one request with a fresh `id`; the Deferred fires with its reply.

        Raises ProtocolError at once if the schema refuses the request: a shape the
        server would refuse is the caller's bug, and nothing is sent.
        """
        if msg.get("type") in _NOT_REQUESTS:
            raise ValueError(f"the link sends {msg.get('type')!r} itself")
        rid = self._fresh_id()
        out = validate({**msg, "id": rid}, Direction.TO_SERVER)
        if not self.connected or self._proto is None:
            return fail(NotConnected("not connected to the server"))
        self._proto.send(out)
        d: Deferred[Message] = Deferred()
        self._pending[rid] = d
        return d

    def drop(self) -> None:
        """Drop the TCP connection but keep the session (a flaky network, in tests)."""
        if self._proto is not None and self._proto.transport is not None:
            self._proto.transport.abortConnection()

    def hello(self) -> Message:
        """The `hello` for a new connection: the last session's token, if any."""
        return self._hello(self._fresh_id())

    def _hello(self, rid: int | None) -> Message:
        return make_hello(self.name, token=self.token, client=self._client,
                          version=self._version, features=self._features, id=rid)

    # ---------------------------------------------------------------- protocol

    def _fresh_id(self) -> int:
        self._next_id += 1
        return self._next_id

    def _made(self, proto: WireProtocol) -> None:
        self._proto = proto
        self._welcomed = False
        self._why = None
        try:
            hello = self.hello()
        except ProtocolError as exc:  # e.g. a name the schema refuses: no retry can help
            # Not ended here: the service is still making this connection, and stopping
            # it from inside that leaves it a disconnection it has no transition for.
            self._why = exc.message
            self._clock.callLater(0, self._end, exc.code, exc.message)
            return
        proto.send(hello)
        self._welcome_timer = self._clock.callLater(WELCOME_SECONDS, self._no_welcome, proto)

    def _no_welcome(self, proto: WireProtocol) -> None:
        self._welcome_timer = None
        if proto is self._proto and not self._welcomed and proto.transport is not None:
            self._why = (f"no welcome within {WELCOME_SECONDS:g} s: not a Pis Yedili server, "
                         "or one that does not answer")
            proto.transport.abortConnection()

    def _over_limit(self, proto: WireProtocol) -> None:
        if proto is self._proto and not self._welcomed:
            self._why = FOREIGN

    def _received(self, proto: WireProtocol, body: bytes) -> None:
        if proto is not self._proto:
            return
        try:
            msg = decode_message(body, Direction.TO_CLIENT)
        except ProtocolError as exc:
            self._unreadable(body, exc)
            return
        kind = msg["type"]
        if kind == "ping":
            self.pings += 1
            proto.send({"type": "pong", **({"id": msg["id"]} if "id" in msg else {})})
            return
        rid = request_id(msg)
        waiter = self._pending.pop(rid, None) if rid is not None else None
        if kind == "welcome":
            self._welcomed = self._ever_welcomed = True
            self._why = None
            self._cancel_welcome_timer()
            self.welcome = msg
            self.token = msg["token"]
            self.name = msg["name"]
            self._token_changed()
        elif kind == "account":  # a login may have moved us to another session
            self.token = msg["token"]
            self.name = msg["name"]
            self._token_changed()
        self._call(self._on_message, msg)
        if waiter is not None:
            waiter.callback(msg)
        if kind == "welcome":
            welcomed, self._welcome_waiters = self._welcome_waiters, []
            for d in welcomed:
                d.callback(msg)
        if kind == "error":
            self._refused(msg)
        elif kind == "replaced":
            self._end("replaced", str(msg.get("message")
                                      or "this session was resumed from another connection"))

    def _refused(self, msg: Message) -> None:
        code = str(msg["code"])
        entry = ERRORS.get(code)
        text = str(msg.get("message") or code)
        if entry is not None and entry.closes:
            self._why = text  # what the next retry's status gives as the reason
        if code == "bad_token":
            self.token = None  # the session expired: the next hello starts a fresh one
            self._fresh_hello = True
            self._token_changed()
        elif not self._welcomed:
            # Before `welcome` every error answers our hello: the same hello would be
            # refused again, unless the registry says the cause passes (and, before the
            # first welcome, the link is to retry at all).
            first = not self._ever_welcomed and not self.retry_first
            if entry is None or not entry.reconnect or first:
                self._end(code, text)
        elif entry is not None and entry.closes and not entry.reconnect:
            self._end(code, text)

    def _unreadable(self, body: bytes, exc: ProtocolError) -> None:
        try:
            rid = request_id(decode(body, limits_for(Direction.TO_CLIENT)))
        except ProtocolError:
            rid = None
        waiter = self._pending.pop(rid, None) if rid is not None else None
        if not self._welcomed:
            self._why = FOREIGN
        if exc.code == "unknown_type" and waiter is None:
            log.debug("ignoring a server message of a type unknown here: {message}",
                      message=exc.message)
            return
        log.warn("unreadable server message: {code}: {message}", code=exc.code,
                 message=exc.message)
        if self._on_unreadable is not None:
            self._call(self._on_unreadable, exc)
        if waiter is not None:
            waiter.errback(ReplyUnreadable(exc))

    def _lost(self, proto: WireProtocol, reason: Failure) -> None:
        if proto is not self._proto:
            return
        self._proto = None
        self._cancel_welcome_timer()
        if self._why is None:
            self._why = why_failed(reason)
        was_welcomed, self._welcomed = self._welcomed, False
        pending, self._pending = self._pending, {}
        for d in pending.values():
            d.errback(RequestLost("the connection closed before the reply came"))
        if was_welcomed and not self._stopping:
            self._status(_("connection to the server lost"))

    def _end(self, code: str | None, text: str) -> None:
        if self._stopping:
            return
        self._stopping = True
        self.fatal = code
        self._cancel_welcome_timer()
        if code is not None:
            self._status(_("disconnected for good: {why}", why=text))
        stopped = self._service.stopService()
        # A connection the service did not make (tests attach one by hand) is closed too.
        transport: Any = self._proto.transport if self._proto is not None else None
        if transport is not None:
            transport.loseConnection()
        ended = Ended(code, text)

        def done(_: object) -> None:
            self._ended = ended
            waiters, self._end_waiters = self._end_waiters, []
            for d in waiters:
                d.callback(ended)

        stopped.addBoth(done)

    def _cancel_welcome_timer(self) -> None:
        timer, self._welcome_timer = self._welcome_timer, None
        if timer is not None and timer.active():
            timer.cancel()

    def _token_changed(self) -> None:
        hook = self.on_token
        if hook is not None:
            token, name = self.token, self.name
            # `_call` logs its argument if the hook fails: a label, never the token.
            self._call(lambda _: hook(token, name), "the token hook")

    def _status(self, text: str) -> None:
        if self._on_status is not None:
            self._call(self._on_status, text)

    def _call(self, fn: Callable[[Any], None], arg: object) -> None:
        # A listener's bug costs that one message, never the connection.
        try:
            fn(arg)
        except Exception:
            # Name the message's type only: a `welcome` carries the resume token.
            what = f"a {arg.get('type')} message" if isinstance(arg, dict) else repr(arg)[:80]
            log.failure("a listener failed on {what}", what=what)
