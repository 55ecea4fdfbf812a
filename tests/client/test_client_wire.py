"""The clients' link to a server, frame by frame on an in-memory transport.

Requests and their replies, the heartbeat, unreadable frames, and when the link stops
for good or reconnects: the server side is recorded messages, checked by the schema
(client_kit). The same behaviours against the real server: test_client_wire_live.py.
"""

from __future__ import annotations

import struct
from typing import Any, cast

import pytest
from client_kit import Msg, error, message, table, welcome
from transport_kit import written
from twisted.internet.defer import Deferred, fail, succeed
from twisted.internet.error import (
    ConnectionAborted,
    ConnectionDone,
    ConnectionRefusedError,
    DNSLookupError,
    TCPTimedOutError,
)
from twisted.internet.interfaces import IStreamClientEndpoint
from twisted.internet.task import Clock
from twisted.internet.testing import StringTransport
from twisted.logger import capturedLogs
from twisted.python.failure import Failure

from pisyedili.client.wire import (
    CLIENT_FEATURES,
    UNREACHABLE,
    WELCOME_SECONDS,
    Ended,
    Link,
    NotConnected,
    ReplyUnreadable,
    RequestLost,
    WireProtocol,
)
from pisyedili.protocol.codec import frame
from pisyedili.protocol.errors import ERRORS, ProtocolError
from pisyedili.protocol.limits import MAX_SERVER_FRAME
from pisyedili.protocol.version import PROTOCOL_VERSION


class Harness:
    """A link whose connections are made by hand on string transports."""

    def __init__(self, **kwargs: Any) -> None:
        self.messages: list[Msg] = []
        self.status: list[str] = []
        self.unreadable: list[str] = []
        self.link = Link(cast(IStreamClientEndpoint, object()), "tester", self.messages.append,
                         clock=Clock(), on_status=self.status.append,  # type: ignore[arg-type]
                         on_unreadable=lambda e: self.unreadable.append(e.code), **kwargs)
        self.transport = StringTransport()  # type: ignore[no-untyped-call]
        self.proto = self.connect()

    def connect(self) -> WireProtocol:
        self.transport = StringTransport()  # type: ignore[no-untyped-call]
        proto = WireProtocol(self.link)
        proto.makeConnection(self.transport)  # type: ignore[no-untyped-call]
        return proto

    def sent(self) -> list[Msg]:
        return written(self.transport)

    def hear(self, msg: Msg) -> None:
        self.proto.dataReceived(frame(msg))  # type: ignore[no-untyped-call]

    def welcomed(self) -> Msg:
        [hello] = self.sent()
        self.hear(welcome(id=hello["id"]))
        return hello


def outcome(d: Deferred[Any]) -> list[Any]:
    """What `d` has fired with so far: [] if nothing, [result] or [Failure]."""
    got: list[Any] = []
    d.addBoth(got.append)
    return got


def test_hello_first_then_the_resume_token_on_every_reconnection() -> None:
    h = Harness()
    [hello] = h.sent()
    assert hello["type"] == "hello" and hello["protocol"] == PROTOCOL_VERSION == 2
    assert hello["name"] == "tester" and "token" not in hello
    assert hello["features"] == ["chat", "rematch", "history", "accounts", "ratings",
                                 "moderation", "invites"] == list(CLIENT_FEATURES)
    h.hear(welcome(id=hello["id"]))
    assert h.link.connected and h.messages[-1]["type"] == "welcome"
    h.proto.connectionLost(Failure(ConnectionError()))  # type: ignore[no-untyped-call]
    assert not h.link.connected and "connection to the server lost" in h.status[-1]
    h.proto = h.connect()
    [again] = h.sent()
    assert again["token"] == "secret-token", "a reconnection resumes the session"
    assert again["id"] != hello["id"]


def test_replies_are_matched_by_id_whatever_their_order() -> None:
    h = Harness()
    h.welcomed()
    ping, lobby, move = (h.link.request({"type": "ping"}),
                         h.link.request({"type": "lobby_subscribe"}),
                         h.link.request({"type": "move", "move": {"kind": "draw"}}))
    ids = [m["id"] for m in h.sent()]
    assert len(set(ids)) == 3 and ids == sorted(ids), "fresh, increasing ids"
    got = [outcome(d) for d in (ping, lobby, move)]
    # Replies to different requests may come in any order; an id names the request.
    h.hear(error("not_your_turn", id=ids[2]))
    h.hear(message("lobby", tables=[], id=ids[1]))
    h.hear(message("pong", id=ids[0]))
    assert [g[0]["type"] for g in got] == ["pong", "lobby", "error"]
    assert [g[0]["id"] for g in got] == ids
    assert got[2][0]["code"] == "not_your_turn", "a refusal is a reply, not a failure"
    # A reply's id is spent: a second one with the same id answers nothing.
    h.hear(message("ok", id=ids[0]))
    assert h.messages[-1] == {"type": "ok", "id": ids[0]}


def test_the_listener_sees_a_reply_before_the_requester_does() -> None:
    h = Harness()
    h.welcomed()
    seen: list[int] = []
    d = h.link.request({"type": "resync"})
    d.addCallback(lambda _: seen.append(len(h.messages)))
    [req] = h.sent()
    h.hear(table(id=req["id"]))
    assert seen == [len(h.messages)] and h.messages[-1]["type"] == "table"


def test_requests_wait_for_welcome_and_bad_shapes_are_never_sent() -> None:
    h = Harness()
    h.sent()
    early = outcome(h.link.request({"type": "ready", "ready": True}))
    assert isinstance(early[0], Failure) and early[0].check(NotConnected)  # type: ignore[no-untyped-call]
    h.hear(welcome())
    with pytest.raises(ProtocolError) as err:
        h.link.request({"type": "chat", "text": "x" * 5000})
    assert err.value.code == "bad_field"
    with pytest.raises(ValueError):
        h.link.request({"type": "pong"})
    assert h.sent() == []


def test_a_lost_connection_fails_the_requests_it_carried() -> None:
    h = Harness()
    h.welcomed()
    pending = outcome(h.link.request({"type": "start"}))
    h.proto.connectionLost(Failure(ConnectionError()))  # type: ignore[no-untyped-call]
    assert isinstance(pending[0], Failure) and pending[0].check(RequestLost)  # type: ignore[no-untyped-call]


@pytest.mark.parametrize("ping", [{"type": "ping", "id": 42}, {"type": "ping"}])
def test_ping_is_answered_with_pong_and_the_same_id(ping: Msg) -> None:
    h = Harness()
    h.welcomed()
    h.hear(ping)
    assert h.sent() == [{"type": "pong", **({"id": 42} if "id" in ping else {})}]
    assert h.link.pings == 1 and h.messages[-1]["type"] == "welcome", "pings stay inside"


def test_an_unreadable_frame_is_reported_and_an_unknown_type_ignored() -> None:
    h = Harness()
    h.welcomed()
    h.proto.dataReceived(struct.pack(">I", 3) + b"\xc1\xc1\xc1")  # type: ignore[no-untyped-call]  # not msgpack
    h.hear({"type": "no_such_message_yet", "x": 1})  # a newer server's: ignored quietly
    assert h.unreadable == ["malformed_frame"]
    assert h.link.connected and not h.transport.disconnecting


def test_an_unreadable_reply_fails_its_request() -> None:
    h = Harness()
    h.welcomed()
    got = outcome(h.link.request({"type": "resync"}))
    [req] = h.sent()
    h.hear({"type": "table", "id": req["id"], "table": "not a table"})
    assert isinstance(got[0], Failure) and got[0].check(ReplyUnreadable)  # type: ignore[no-untyped-call]
    assert h.unreadable == ["bad_field"]


def test_an_oversized_frame_drops_the_connection() -> None:
    h = Harness()
    h.proto.dataReceived(struct.pack(">I", MAX_SERVER_FRAME + 1))  # type: ignore[no-untyped-call]
    assert h.transport.disconnecting or h.transport.disconnected


def ended(h: Harness) -> list[Any]:
    return outcome(h.link.when_ended())


def test_an_expired_token_is_forgotten_and_the_link_carries_on() -> None:
    h = Harness(token="old-token")
    [hello] = h.sent()
    assert hello["token"] == "old-token"
    end = ended(h)
    h.hear(error("bad_token", "expired", id=hello["id"]))
    assert h.link.token is None and h.link.fatal is None and end == []
    h.proto.connectionLost(Failure(ConnectionError()))  # type: ignore[no-untyped-call]  # the server closes after bad_token
    h.proto = h.connect()
    [fresh] = h.sent()
    assert "token" not in fresh, "the next hello starts a fresh session"


def test_being_replaced_stops_for_good() -> None:
    h = Harness()
    h.welcomed()
    end = ended(h)
    h.hear(message("replaced", message="resumed elsewhere"))
    assert h.link.fatal == "replaced" and end == [Ended("replaced", "resumed elsewhere")]
    assert "for good" in h.status[-1] and h.transport.disconnecting


@pytest.mark.parametrize("code", sorted(c for c, e in ERRORS.items() if e.closes))
def test_a_closing_error_stops_unless_the_registry_says_reconnecting_helps(code: str) -> None:
    h = Harness()
    h.welcomed()
    end = ended(h)
    h.hear(error(code))
    stops = code != "bad_token" and not ERRORS[code].reconnect
    assert (h.link.fatal == code) is stops and bool(end) is stops


@pytest.mark.parametrize(("code", "stops"), [("missing_field", True), ("bad_field", True),
                                             ("unsupported_version", True),
                                             ("server_full", False), ("shutting_down", False)])
def test_a_refused_hello_stops_unless_its_cause_passes(code: str, stops: bool) -> None:
    h = Harness()
    [hello] = h.sent()
    end = ended(h)
    h.hear(error(code, id=hello["id"]))
    assert bool(end) is stops and (h.link.fatal == code) is stops


def test_a_name_the_schema_refuses_ends_the_link_before_anything_is_dialled() -> None:
    endpoint = ManualEndpoint()
    link = Link(cast(IStreamClientEndpoint, endpoint), "tab\there", lambda m: None,
                clock=Clock())  # type: ignore[arg-type]
    end = outcome(link.when_ended())
    link.start()
    assert endpoint.transports == [] and end[0].code == "bad_field"


def test_a_hello_refused_on_a_connection_ends_the_link_after_the_connection_is_made(
) -> None:
    # Ending inside connectionMade left the service a disconnection it had no transition
    # for (automat's NoTransition, logged as an unhandled error).
    clock, endpoint = Clock(), ManualEndpoint()
    link = Link(cast(IStreamClientEndpoint, endpoint), "tester", lambda m: None, clock=clock)  # type: ignore[arg-type]
    link.start()
    link.name = "x" * 100  # as if a welcome had renamed us to what no hello may carry
    endpoint.transports[0].loseConnection()  # type: ignore[no-untyped-call]
    endpoint.protocols[0].connectionLost(Failure(ConnectionError()))  # type: ignore[no-untyped-call]
    end = outcome(link.when_ended())
    with capturedLogs() as events:
        clock.advance(60)
        assert written(endpoint.transports[1]) == [] and endpoint.transports[1].disconnecting
        endpoint.protocols[1].connectionLost(Failure(ConnectionDone()))  # type: ignore[no-untyped-call]
    assert end and end[0].code == "bad_field"
    assert not [e for e in events if e.get("log_failure") is not None]


class ManualEndpoint:
    """An endpoint whose connections are string transports, made when asked."""

    def __init__(self) -> None:
        self.transports: list[StringTransport] = []
        self.protocols: list[Any] = []  # what ClientService wraps ours in

    def connect(self, factory: Any) -> Deferred[Any]:
        proto = factory.buildProtocol(None)
        transport = StringTransport()  # type: ignore[no-untyped-call]
        proto.makeConnection(transport)
        self.transports.append(transport)
        self.protocols.append(proto)
        return succeed(proto)


def test_a_dropped_connection_is_redialled_after_the_backoff_delay() -> None:
    clock, endpoint, delays = Clock(), ManualEndpoint(), [2.0, 4.0]
    messages: list[Msg] = []
    link = Link(cast(IStreamClientEndpoint, endpoint), "tester", messages.append,
                clock=clock, retry=lambda attempt: delays[min(attempt, 2) - 1])  # type: ignore[arg-type]
    link.start()
    [hello] = written(endpoint.transports[0])
    endpoint.protocols[0].dataReceived(frame(welcome(id=hello["id"])))
    endpoint.transports[0].loseConnection()  # type: ignore[no-untyped-call]
    endpoint.protocols[0].connectionLost(Failure(ConnectionError()))  # type: ignore[no-untyped-call]
    clock.advance(1.9)
    assert len(endpoint.transports) == 1, "no new connection before the delay"
    clock.advance(0.1)
    assert len(endpoint.transports) == 2
    [again] = written(endpoint.transports[1])
    assert again["type"] == "hello" and again["token"] == "secret-token"
    endpoint.protocols[1].dataReceived(frame(welcome(resumed=True, id=again["id"])))
    assert link.connected and messages[-1]["resumed"] is True
    stopped = outcome(link.stop())
    endpoint.protocols[1].connectionLost(Failure(ConnectionError()))  # type: ignore[no-untyped-call]
    assert stopped == [None]
    clock.advance(60)
    assert len(endpoint.transports) == 2, "a stopped link does not redial"


class FailingEndpoint:
    """An endpoint whose every connection attempt fails with `reason`."""

    def __init__(self, reason: Exception) -> None:
        self.reason = reason
        self.attempts = 0

    def connect(self, factory: Any) -> Deferred[Any]:
        self.attempts += 1
        return fail(self.reason)


@pytest.mark.parametrize(("reason", "why"), [
    (ConnectionRefusedError(), "connection refused"),  # type: ignore[no-untyped-call]
    (DNSLookupError("nonexistent.invalid"), "name not found"),
    (TCPTimedOutError(), "timed out"),  # type: ignore[no-untyped-call]
])
def test_a_first_connection_that_fails_ends_the_link_saying_why(
        reason: Exception, why: str) -> None:
    clock, endpoint = Clock(), FailingEndpoint(reason)
    status: list[str] = []
    link = Link(cast(IStreamClientEndpoint, endpoint), "tester", lambda m: None,
                clock=clock, on_status=status.append, retry_first=False)  # type: ignore[arg-type]
    end = outcome(link.when_ended())
    link.start()
    clock.advance(0)
    assert end[0].code == UNREACHABLE and why in end[0].text
    clock.advance(600)
    assert endpoint.attempts == 1 and not [s for s in status if "next try" in s]


def test_by_default_a_first_connection_that_fails_is_retried_saying_why() -> None:
    clock, endpoint = Clock(), FailingEndpoint(ConnectionRefusedError())  # type: ignore[no-untyped-call]
    status: list[str] = []
    link = Link(cast(IStreamClientEndpoint, endpoint), "tester", lambda m: None,
                clock=clock, on_status=status.append, retry=lambda attempt: 1.0)  # type: ignore[arg-type]
    link.start()
    clock.advance(1.0)
    assert endpoint.attempts == 2
    assert status[0] == ("cannot reach the server: connection refused (nothing listens on "
                         "that port); next try in 1.0s")
    link.stop()


def test_a_connection_with_no_welcome_in_time_is_dropped_as_not_a_server() -> None:
    clock, endpoint = Clock(), ManualEndpoint()
    link = Link(cast(IStreamClientEndpoint, endpoint), "tester", lambda m: None,
                clock=clock, retry_first=False)  # type: ignore[arg-type]
    end = outcome(link.when_ended())
    link.start()
    clock.advance(WELCOME_SECONDS - 1)
    assert not endpoint.transports[0].disconnecting
    clock.advance(1)
    assert endpoint.transports[0].disconnected
    endpoint.protocols[0].connectionLost(Failure(ConnectionAborted()))  # type: ignore[no-untyped-call]
    clock.advance(0)
    assert end[0].code == UNREACHABLE and "no welcome within" in end[0].text


def test_a_welcome_in_time_keeps_the_connection() -> None:
    h = Harness()
    h.welcomed()
    h.link._clock.advance(WELCOME_SECONDS * 2)
    assert h.link.connected and not h.transport.disconnecting


def test_something_else_than_frames_before_welcome_is_not_a_pis_yedili_server() -> None:
    clock, endpoint = Clock(), ManualEndpoint()
    link = Link(cast(IStreamClientEndpoint, endpoint), "tester", lambda m: None,
                clock=clock, retry_first=False)  # type: ignore[arg-type]
    end = outcome(link.when_ended())
    link.start()
    endpoint.protocols[0].dataReceived(b"HTTP/1.1 400 Bad Request\r\n\r\n")
    endpoint.protocols[0].connectionLost(Failure(ConnectionAborted()))  # type: ignore[no-untyped-call]
    clock.advance(0)
    assert end[0].code == UNREACHABLE and "not a Pis Yedili server" in end[0].text


def test_once_welcomed_each_retry_says_why_the_last_try_failed() -> None:
    clock, endpoint = Clock(), ManualEndpoint()
    status: list[str] = []
    link = Link(cast(IStreamClientEndpoint, endpoint), "tester", lambda m: None,
                clock=clock, on_status=status.append, retry=lambda attempt: 2.0,  # type: ignore[arg-type]
                retry_first=False)
    link.start()
    [hello] = written(endpoint.transports[0])
    endpoint.protocols[0].dataReceived(frame(welcome(id=hello["id"])))
    endpoint.protocols[0].dataReceived(frame(error("shutting_down", "restarting")))
    endpoint.protocols[0].connectionLost(Failure(ConnectionDone()))  # type: ignore[no-untyped-call]
    assert status[-1] == "reconnecting: restarting; next try in 2.0s"
    clock.advance(2.0)
    assert len(endpoint.transports) == 2 and not link.fatal
    link.stop()


def test_a_refused_token_on_the_first_connection_is_retried_with_a_fresh_hello() -> None:
    clock, endpoint = Clock(), ManualEndpoint()
    link = Link(cast(IStreamClientEndpoint, endpoint), "tester", lambda m: None,
                clock=clock, token="stale", retry=lambda attempt: 1.0, retry_first=False)  # type: ignore[arg-type]
    link.start()
    [hello] = written(endpoint.transports[0])
    assert hello["token"] == "stale"
    endpoint.protocols[0].dataReceived(frame(error("bad_token", id=hello["id"])))
    endpoint.protocols[0].connectionLost(Failure(ConnectionDone()))  # type: ignore[no-untyped-call]
    clock.advance(1.0)
    assert not link.fatal and len(endpoint.transports) == 2
    [again] = written(endpoint.transports[1])
    assert "token" not in again or again["token"] is None
    link.stop()
