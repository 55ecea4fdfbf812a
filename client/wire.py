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
"""

from __future__ import annotations

import importlib.metadata
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, cast

from twisted.application.internet import ClientService, backoffPolicy
from twisted.internet.defer import Deferred, fail, succeed
from twisted.internet.interfaces import IProtocolFactory, IReactorTime, IStreamClientEndpoint
from twisted.internet.protocol import Factory, connectionDone
from twisted.logger import Logger
from twisted.protocols.basic import Int32StringReceiver
from twisted.python.failure import Failure

from pisyedili.protocol.codec import decode, decode_message, encode, limits_for
from pisyedili.protocol.errors import ERRORS, ProtocolError
from pisyedili.protocol.limits import CLIENT_LIMITS, MAX_SERVER_FRAME
from pisyedili.protocol.messages import make_hello
from pisyedili.protocol.schema import Direction, request_id, validate

log = Logger()

Message = dict[str, Any]

CLIENT_FEATURES = ("chat", "rematch", "history", "accounts", "ratings", "moderation")
"""The optional features these clients implement, and so ask for."""

_NOT_REQUESTS = frozenset({"hello", "pong"})
"""Sent by the link itself: `hello` on each connection, `pong` to the server's `ping`."""


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
        if self.transport is not None:
            self.transport.abortConnection()

    def send(self, msg: Mapping[str, Any]) -> None:
        self.sendString(encode(msg, CLIENT_LIMITS))  # type: ignore[no-untyped-call]


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
    ) -> None:
        self.name = name
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
        policy = retry or backoffPolicy(initialDelay=0.5, maxDelay=15.0, factor=2.0)

        def announce(attempt: int) -> float:
            delay = policy(attempt)
            if not self._stopping:
                what = "reconnecting" if self._ever_welcomed else "cannot reach the server"
                self._status(f"{what}; next try in {delay:.1f}s")
            return delay

        self._service = ClientService(endpoint, cast(IProtocolFactory, _Factory(self)),
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
        self._service.startService()

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
        return make_hello(self.name, token=self.token, client=self._client,
                          version=self._version, features=self._features,
                          id=self._fresh_id())

    # ---------------------------------------------------------------- protocol

    def _fresh_id(self) -> int:
        self._next_id += 1
        return self._next_id

    def _made(self, proto: WireProtocol) -> None:
        self._proto = proto
        self._welcomed = False
        try:
            hello = self.hello()
        except ProtocolError as exc:  # e.g. a name the schema refuses: no retry can help
            self._end(exc.code, exc.message)
            return
        proto.send(hello)

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
        if kind == "error":
            self._refused(msg)
        elif kind == "replaced":
            self._end("replaced", str(msg.get("message")
                                      or "this session was resumed from another connection"))

    def _refused(self, msg: Message) -> None:
        code = str(msg["code"])
        entry = ERRORS.get(code)
        text = str(msg.get("message") or code)
        if code == "bad_token":
            self.token = None  # the session expired: the next hello starts a fresh one
            self._token_changed()
        elif not self._welcomed:
            # Before `welcome` every error answers our hello: the same hello would be
            # refused again, unless the registry says the cause passes.
            if entry is None or not entry.reconnect:
                self._end(code, text)
        elif entry is not None and entry.closes and not entry.reconnect:
            self._end(code, text)

    def _unreadable(self, body: bytes, exc: ProtocolError) -> None:
        try:
            rid = request_id(decode(body, limits_for(Direction.TO_CLIENT)))
        except ProtocolError:
            rid = None
        waiter = self._pending.pop(rid, None) if rid is not None else None
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
        was_welcomed, self._welcomed = self._welcomed, False
        pending, self._pending = self._pending, {}
        for d in pending.values():
            d.errback(RequestLost("the connection closed before the reply came"))
        if was_welcomed and not self._stopping:
            self._status("connection to the server lost")

    def _end(self, code: str | None, text: str) -> None:
        if self._stopping:
            return
        self._stopping = True
        self.fatal = code
        if code is not None:
            self._status(f"disconnected for good: {text}")
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
