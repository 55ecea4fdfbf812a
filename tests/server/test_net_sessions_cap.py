"""The cap on live sessions per address.

Every `hello` without a token opens a session, and a dropped one outlives its
connection by the grace period, so without this cap one address could keep opening
sessions under the connection cap by reconnecting.
"""

from __future__ import annotations

from typing import Any

import pytest
import pytest_twisted
from peer_kit import Peer
from twisted.internet import task
from twisted.python import usage
from wireclient import ROOMY, UNTIMED_NO_DELAYS, Server, WireClient

from pisyedili.protocol.errors import ERRORS
from pisyedili.protocol.version import FEATURES, PROTOCOL_VERSION
from pisyedili.server.net.limits import ServerLimits
from pisyedili.server.people.session import Sessions
from pisyedili.server.service import tap

CAPPED = ServerLimits(rate=10_000, burst=10_000, max_sessions_per_address=3)
GRACE = UNTIMED_NO_DELAYS.grace_seconds


async def hello(server: Server, name: str, token: str | None = None) -> tuple[WireClient,
                                                                               dict[str, Any]]:
    """A connection that says `hello`, and the server's answer to it."""
    client = await server.connect()
    fields: dict[str, Any] = {"protocol": PROTOCOL_VERSION, "name": name,
                              "features": sorted(FEATURES)}
    if token is not None:
        fields["token"] = token
    return client, await client.request("hello", **fields)


def test_the_default_and_the_code() -> None:
    assert ServerLimits().max_sessions_per_address == 32
    code = ERRORS["too_many_sessions"]
    assert code.closes and code.reconnect


@pytest.mark.parametrize("cap", [0, -1])
def test_a_cap_below_one_is_refused(cap: int) -> None:
    with pytest.raises(ValueError, match="max_sessions_per_address"):
        ServerLimits(max_sessions_per_address=cap)


def test_sessions_count_by_the_address_that_opened_them() -> None:
    sessions = Sessions(task.Clock(), grace_seconds=10)
    a = sessions.open("a", Peer(), "192.0.2.7")
    sessions.open("b", Peer(), "192.0.2.7")
    sessions.open("c", Peer(), "192.0.2.8")
    assert (sessions.opened_from("192.0.2.7"), sessions.opened_from("192.0.2.8")) == (2, 1)
    assert a.address == "192.0.2.7"
    sessions.forget(a)
    sessions.forget(a)  # twice is once
    assert sessions.opened_from("192.0.2.7") == 1
    assert sessions.opened_from("192.0.2.9") == 0


def test_an_expired_session_stops_counting() -> None:
    clock = task.Clock()
    sessions = Sessions(clock, grace_seconds=10)
    peer = Peer()
    session = sessions.open("a", peer, "192.0.2.7")
    sessions.lost(session, peer)
    clock.advance(9)
    assert sessions.opened_from("192.0.2.7") == 1  # dropped, but within its grace
    clock.advance(1)
    assert sessions.opened_from("192.0.2.7") == 0


# -- over the wire ----------------------------------------------------------------------

@pytest_twisted.ensureDeferred
async def test_the_hello_over_the_cap_is_refused_and_closed() -> None:
    server = await Server.start(limits=CAPPED)
    try:
        answers = [(await hello(server, f"p{i}"))[1] for i in range(3)]
        assert [a["type"] for a in answers] == ["welcome"] * 3
        late, refused = await hello(server, "p3")
        assert (refused["type"], refused["code"], refused["limit"]) == (
            "error", "too_many_sessions", 3)
        assert "3 sessions" in str(refused["message"])
        await late.closed
        assert len(server.factory.sessions) == 3
    finally:
        await server.stop()


@pytest_twisted.ensureDeferred
async def test_a_resume_at_the_cap_is_welcomed() -> None:
    server = await Server.start(limits=CAPPED)
    try:
        first = await server.connect("p0")
        for i in range(1, 3):
            await server.connect(f"p{i}")
        await first.close()
        await server.dropped(first)
        token = first.welcome["token"]
        _, again = await hello(server, "ignored", token=token)
        assert (again["type"], again["resumed"], again["player"]) == (
            "welcome", True, first.welcome["player"])
        # Resuming opened nothing: the address is still at its cap.
        _, refused = await hello(server, "p3")
        assert refused["code"] == "too_many_sessions"
    finally:
        await server.stop()


@pytest_twisted.ensureDeferred
async def test_an_expired_session_frees_its_place() -> None:
    clock = task.Clock()
    server = await Server.start(clock=clock, limits=CAPPED)
    try:
        clients = [await server.connect(f"p{i}") for i in range(3)]
        _, refused = await hello(server, "p3")
        assert refused["code"] == "too_many_sessions"
        await clients[0].close()
        await server.dropped(clients[0])
        clock.advance(GRACE - 1)
        _, still = await hello(server, "p3")
        assert still["code"] == "too_many_sessions"  # dropped, but within its grace
        clock.advance(1)
        _, welcome = await hello(server, "p3")
        assert welcome["type"] == "welcome"
    finally:
        await server.stop()


@pytest_twisted.ensureDeferred
async def test_the_default_cap_lets_players_share_an_address() -> None:
    server = await Server.start(limits=ROOMY)
    try:
        answers = [(await hello(server, f"p{i}"))[1] for i in range(4)]
        assert [a["type"] for a in answers] == ["welcome"] * 4
    finally:
        await server.stop()


# -- options ----------------------------------------------------------------------------

def test_the_cap_is_an_option() -> None:
    options = tap.Options()
    options.parseOptions(["--max-sessions-per-address", "5"])  # type: ignore[no-untyped-call]
    assert options["limits"].max_sessions_per_address == 5
    defaults = tap.Options()
    defaults.parseOptions([])  # type: ignore[no-untyped-call]
    assert defaults["limits"].max_sessions_per_address == 32


@pytest.mark.parametrize("value", ["0", "-1", "many"])
def test_a_bad_cap_option_is_a_usage_error(value: str) -> None:
    with pytest.raises(usage.UsageError):
        tap.Options().parseOptions(["--max-sessions-per-address", value])  # type: ignore[no-untyped-call]
