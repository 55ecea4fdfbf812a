"""The client's link to a server: framing, codec, handshake, heartbeat and reconnection.

Framing is Twisted's `Int32StringReceiver`, bodies go through `pisyedili.protocol`'s
codec and schema (the same code the server runs), and `ClientService` keeps the
connection up with exponential backoff.  Every (re)connection opens with `hello`
carrying the resume token of the last `welcome`, so a dropped connection gets the same
player and seat back and the server's full `table` snapshot (issue 4).

The reactor is a parameter: production passes the installed asyncio reactor; tests may
pass any reactor, or an endpoint built on one.
"""

from __future__ import annotations

import importlib.metadata
from collections.abc import Callable, Mapping
from typing import Any, cast

from twisted.application.internet import ClientService, backoffPolicy
from twisted.internet.defer import Deferred
from twisted.internet.interfaces import IProtocolFactory, IReactorTime, IStreamClientEndpoint
from twisted.internet.protocol import Factory, connectionDone
from twisted.logger import Logger
from twisted.protocols.basic import Int32StringReceiver
from twisted.python.failure import Failure

from pisyedili.protocol.codec import decode_message, encode
from pisyedili.protocol.errors import ERRORS, ProtocolError
from pisyedili.protocol.limits import CLIENT_LIMITS, MAX_SERVER_FRAME
from pisyedili.protocol.messages import make_hello
from pisyedili.protocol.schema import Direction, validate
from pisyedili.protocol.version import FEATURES

log = Logger()

Message = dict[str, Any]

FATAL_CODES = frozenset({"unsupported_version", "bad_name", "replaced"})
"""Closing errors after which retrying cannot help: stop and tell the player."""


def client_version() -> str:
    try:
        return importlib.metadata.version("pisyedili")
    except importlib.metadata.PackageNotFoundError:
        return "0"


class ClientProtocol(Int32StringReceiver):
    """One TCP connection; everything it hears goes to its `Connection`."""

    MAX_LENGTH = MAX_SERVER_FRAME

    def __init__(self, owner: Connection) -> None:
        self.owner = owner

    def connectionMade(self) -> None:
        self.owner._made(self)

    def stringReceived(self, string: bytes) -> None:
        self.owner._received(self, string)

    def connectionLost(self, reason: Failure = connectionDone) -> None:
        self.owner._lost(self, reason)

    def lengthLimitExceeded(self, length: int) -> None:
        log.warn("server frame of {length} bytes is over the limit; closing", length=length)
        if self.transport is not None:
            self.transport.abortConnection()

    def send(self, msg: Mapping[str, Any]) -> None:
        self.sendString(encode(msg, CLIENT_LIMITS))  # type: ignore[no-untyped-call]


class _Factory(Factory):
    def __init__(self, owner: Connection) -> None:
        self.owner = owner

    def buildProtocol(self, addr: object) -> ClientProtocol:
        return ClientProtocol(self.owner)


class Connection:
    """A self-healing session with one server.

    `on_message(msg)` gets every validated server message; `on_status(text)` gets
    connection news for the player (lost, retrying, back).  `send` stamps each request
    with a fresh `id` and returns it, or returns None while disconnected.
    """

    def __init__(
        self,
        endpoint: IStreamClientEndpoint,
        name: str,
        on_message: Callable[[Message], None],
        on_status: Callable[[str], None],
        clock: IReactorTime,
        retry: Callable[[int], float] | None = None,
    ) -> None:
        self.name = name
        self.token: str | None = None
        self.on_message = on_message
        self.on_status = on_status
        self._proto: ClientProtocol | None = None
        self._welcomed = False
        self._next_id = 0
        self._requests: dict[int, Message] = {}
        self._stopping = False
        self.fatal: str | None = None
        policy = retry or backoffPolicy(initialDelay=0.5, maxDelay=15.0, factor=2.0)
        self._ever_welcomed = False

        def announce(attempt: int) -> float:
            delay = policy(attempt)
            if not self._stopping:
                what = "reconnecting" if self._ever_welcomed else "cannot reach the server"
                self.on_status(f"{what}; next try in {delay:.1f}s")
            return delay

        self._service = ClientService(endpoint, cast(IProtocolFactory, _Factory(self)),
                                      retryPolicy=announce, clock=clock)

    # ------------------------------------------------------------------ public

    @property
    def connected(self) -> bool:
        """Connected and welcomed: requests can be sent."""
        return self._proto is not None and self._welcomed

    def start(self) -> None:
        self._service.startService()

    def stop(self) -> Deferred[None]:
        """Stop reconnecting and close the connection (a clean `/quit`)."""
        self._stopping = True
        d: Deferred[None] = self._service.stopService()
        return d

    def request_of(self, reply_id: object) -> Message | None:
        """The request a reply answers (its `id`), if we sent it."""
        return self._requests.get(reply_id) if isinstance(reply_id, int) else None

    def send(self, msg: Mapping[str, Any]) -> int | None:
        """Send one request; raises ProtocolError if the schema refuses its shape."""
        if not self.connected or self._proto is None:
            self.on_status("not connected yet; the request was not sent")
            return None
        self._next_id += 1
        out = validate({**msg, "id": self._next_id}, Direction.TO_SERVER)
        self._proto.send(out)
        self._requests[self._next_id] = out
        if len(self._requests) > 256:
            del self._requests[min(self._requests)]
        return self._next_id

    def drop(self) -> None:
        """Drop the TCP connection without stopping (tests: a flaky network)."""
        if self._proto is not None and self._proto.transport is not None:
            self._proto.transport.abortConnection()

    # ---------------------------------------------------------------- protocol

    def _made(self, proto: ClientProtocol) -> None:
        self._proto = proto
        self._welcomed = False
        proto.send(make_hello(self.name, token=self.token, client="pisyedili",
                              version=client_version(), features=sorted(FEATURES)))

    def _received(self, proto: ClientProtocol, body: bytes) -> None:
        try:
            msg = decode_message(body, Direction.TO_CLIENT)
        except ProtocolError as exc:
            # A newer server may send what we cannot read; say so and carry on.
            log.warn("unreadable server message: {code}", code=exc.code)
            self.on_status(f"ignored a server message I cannot read ({exc.code})")
            return
        kind = msg["type"]
        if kind == "ping":
            pong: Message = {"type": "pong"}
            if "id" in msg:
                pong["id"] = msg["id"]
            proto.send(pong)
            return
        if kind == "welcome":
            self._welcomed = self._ever_welcomed = True
            self.token = msg["token"]
            self.name = msg["name"]
        elif kind == "replaced":
            self._fatal("replaced", str(msg.get("message") or
                                        "this session was resumed from another connection"))
        elif kind == "error" and ERRORS.get(str(msg["code"])) is not None:
            code = str(msg["code"])
            if code == "bad_token":
                self.token = None  # the session expired: start afresh on the next attempt
            elif code in FATAL_CODES:
                self._fatal(code, str(msg.get("message", code)))
        self.on_message(msg)

    def _fatal(self, code: str, text: str) -> None:
        self.fatal = code
        self._stopping = True
        self._service.stopService()
        self.on_status(f"disconnected for good: {text}")

    def _lost(self, proto: ClientProtocol, reason: Failure) -> None:
        if proto is not self._proto:
            return
        self._proto = None
        was_welcomed, self._welcomed = self._welcomed, False
        if was_welcomed and not self._stopping:
            self.on_status("connection to the server lost")
