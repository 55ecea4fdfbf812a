"""The clients' link against the real server on loopback, in this process.

The server is tests/server/wireclient.py's (the network tests' own), on pytest-twisted's
reactor. Links retry at once (a zero backoff) so no test waits on the clock: each waits
for the message or Deferred it is about, with a timeout only as a backstop.
"""

from __future__ import annotations

from typing import Any

import pytest_twisted
from client_kit import Inbox, Msg
from sibling_kit import sibling
from twisted.internet import reactor
from twisted.internet.defer import Deferred, gatherResults
from twisted.internet.endpoints import TCP4ClientEndpoint
from twisted.internet.task import Clock

from pisyedili.client.wire import Ended, Link

wireclient = sibling("server", "wireclient")

TIMEOUT = 10.0


def guard(d: Deferred[Any]) -> Deferred[Any]:
    """A failure instead of a hang if `d` never fires."""
    return d.addTimeout(TIMEOUT, reactor)


class Clients:
    """Links to one server, each with its inbox; all stopped at the end."""

    def __init__(self, server: Any) -> None:
        self.server = server
        self.links: list[Link] = []

    def link(self, name: str = "tester", cls: type[Link] = Link,
             token: str | None = None) -> tuple[Link, Inbox]:
        inbox = Inbox(reactor, TIMEOUT)
        endpoint = TCP4ClientEndpoint(reactor, "127.0.0.1", self.server.port.getHost().port)
        link = cls(endpoint, name, inbox, clock=reactor, on_status=inbox.status.append,  # type: ignore[arg-type]
                   token=token, retry=lambda attempt: 0.0)
        self.links.append(link)
        link.start()
        return link, inbox

    async def stop(self) -> None:
        for link in self.links:
            await guard(link.stop())


async def welcomed(inbox: Inbox, start: int = 0, **match: Any) -> Msg:
    msg: Msg = await inbox.wait_type("welcome", start, **match)
    return msg


@pytest_twisted.ensureDeferred
async def test_pipelined_requests_get_their_own_replies() -> None:
    server = await wireclient.Server.start()
    kit = Clients(server)
    try:
        link, inbox = kit.link()
        await welcomed(inbox)
        asked = [link.request({"type": "ping"}), link.request({"type": "lobby_subscribe"}),
                 link.request({"type": "create_table", "rules": "classic", "seats": 3}),
                 link.request({"type": "resync"}), link.request({"type": "join_table",
                                                                  "table": 999_999})]
        replies = await guard(gatherResults(asked))
        assert [r["type"] for r in replies] == ["pong", "lobby", "table", "table", "error"]
        assert len({r["id"] for r in replies}) == 5
        assert replies[2]["table"]["id"] == replies[3]["table"]["id"]
        assert (await guard(link.request({"type": "leave_table"})))["type"] == "ok"
    finally:
        await kit.stop()
        await server.stop()


@pytest_twisted.ensureDeferred
async def test_the_servers_ping_is_answered() -> None:
    clock = Clock()  # the server's clock: its heartbeat runs when the test says
    server = await wireclient.Server.start(clock=clock)
    kit = Clients(server)
    try:
        link, inbox = kit.link()
        await welcomed(inbox)
        clock.advance(server.factory.limits.ping_seconds + 1)
        # The ping went out before our own ping's pong: once that is back, it was heard.
        await guard(link.request({"type": "ping"}))
        assert link.pings == 1 and link.connected
    finally:
        await kit.stop()
        await server.stop()


@pytest_twisted.ensureDeferred
async def test_a_dropped_connection_resumes_the_session_and_the_seat() -> None:
    server = await wireclient.Server.start()
    kit = Clients(server)
    try:
        link, inbox = kit.link()
        first = await welcomed(inbox)
        snap = await guard(link.request({"type": "create_table", "rules": "classic",
                                         "seats": 2}))
        mark = len(inbox.messages)
        link.drop()
        back = await welcomed(inbox, mark)
        again = await inbox.wait_type("table", mark)
        assert back["resumed"] is True and back["player"] == first["player"]
        assert again["table"]["id"] == snap["table"]["id"]
        assert again["you"]["seat"] == snap["you"]["seat"] == 0
        assert "connection to the server lost" in inbox.status
        assert (await guard(link.request({"type": "leave_table"})))["type"] == "ok"
    finally:
        await kit.stop()
        await server.stop()


@pytest_twisted.ensureDeferred
async def test_an_unknown_token_starts_a_fresh_session() -> None:
    server = await wireclient.Server.start()
    kit = Clients(server)
    try:
        link, inbox = kit.link(token="no-such-token")
        refused = await inbox.wait_type("error", code="bad_token")
        fresh = await welcomed(inbox)
        assert inbox.messages.index(refused) < inbox.messages.index(fresh)
        assert not fresh.get("resumed") and link.token == fresh["token"]
        assert link.fatal is None and link.connected
    finally:
        await kit.stop()
        await server.stop()


class OldClient(Link):
    """A client that speaks version 1: the server refuses it for good."""

    hellos = 0

    def hello(self) -> Msg:
        OldClient.hellos += 1
        return {**super().hello(), "protocol": 1}


@pytest_twisted.ensureDeferred
async def test_a_closing_error_that_reconnecting_cannot_cure_stops_the_link() -> None:
    server = await wireclient.Server.start()
    kit = Clients(server)
    try:
        OldClient.hellos = 0
        link, inbox = kit.link(cls=OldClient)
        end: Ended = await guard(link.when_ended())
        assert end.code == link.fatal == "unsupported_version"
        assert inbox.messages[-1]["versions"] == [2]
        assert OldClient.hellos == 1, "no second try"
    finally:
        await kit.stop()
        await server.stop()


@pytest_twisted.ensureDeferred
async def test_a_session_resumed_elsewhere_stops_the_old_link() -> None:
    server = await wireclient.Server.start()
    kit = Clients(server)
    try:
        old, old_inbox = kit.link()
        first = await welcomed(old_inbox)
        new, new_inbox = kit.link(token=first["token"])
        resumed = await welcomed(new_inbox)
        end: Ended = await guard(old.when_ended())
        assert end.code == "replaced" and "replaced" in old_inbox.types()
        assert resumed["resumed"] is True and resumed["player"] == first["player"]
        assert new.connected and not old.connected
    finally:
        await kit.stop()
        await server.stop()
