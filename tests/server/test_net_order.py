"""Replies in the order of requests, over loopback: a request whose answer waits on a
password hash or a store write (accounts, moderation) holds the connection's later
requests until it is answered, and a connection held so reads no more than it has.
A real server, real sockets, a real SQLite file; argon2 at its cheapest cost."""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, cast

import pytest
import pytest_twisted
from poll_kit import BACKSTOP, poll_until_async
from twisted.internet import reactor, task
from twisted.internet.defer import Deferred
from twisted.logger import LogEvent, globalLogPublisher
from wireclient import Msg, Server, WireClient

from pisyedili.protocol.codec import frame
from pisyedili.server.net.connection import HELD_FRAMES, Connection
from pisyedili.server.people import accounts as accounts_
from pisyedili.server.people.accounts import CHEAP, AccountSettings, LoginLimits
from pisyedili.server.store import Archive
from pisyedili.server.store.sqlite import SqliteStore

PASSWORD = "correct horse battery"
ROOMY_LOGINS = LoginLimits(address_burst=1000, address_rate=1000, account_free=1000)


async def start(path: Path, clock: Any = None,
                limits: LoginLimits = ROOMY_LOGINS) -> Server:
    """A server on the SQLite file `path`, with `Deniz` an operator's account there."""
    store = SqliteStore(path)
    try:
        accounts_.add_account(store, "Deniz", CHEAP.hasher().hash(PASSWORD), 0.0)
    finally:
        store.close()
    return await Server.start(
        clock=clock, archive=Archive(lambda: SqliteStore(path), reactor),
        community_from=str(path), accounts=AccountSettings(
            cost=CHEAP, limits=limits, operators=frozenset({"Deniz"})))


@pytest_twisted.async_yield_fixture
async def server(tmp_path: Path) -> AsyncIterator[Server]:
    started = await start(tmp_path / "db.sqlite3")
    yield started
    await started.stop()


async def logged_in(server: Server, name: str) -> tuple[WireClient, Msg]:
    """A client of the account `name` (registered now, unless it is Deniz's)."""
    if name == "Deniz":
        client = await server.connect("someone")
        account = await client.request("login", name=name, password=PASSWORD)
    else:
        client = await server.connect(name)
        account = await client.request("register", password=PASSWORD)
    assert account["type"] == "account", account
    return client, account


async def with_ping(client: WireClient, request: Msg) -> list[Msg]:
    """`request` and a `ping` behind it in one write: the replies to both, as they came."""
    start = len(client.received)
    client.send_raw(frame({**request, "id": 501}) + frame({"type": "ping", "id": 502}))
    await client.wait_for_id(501, start)
    await client.wait_for_id(502, start)
    return [m for m in client.received[start:] if m.get("id") in (501, 502)]


def ids(replies: list[Msg]) -> list[tuple[int, str]]:
    return [(int(m["id"]), str(m.get("code", m["type"]))) for m in replies]


@pytest.mark.parametrize("kind", ["register", "login", "bad login", "logout", "passwd"])
@pytest_twisted.ensureDeferred
async def test_an_account_request_and_a_ping_behind_it_are_answered_in_order(
        server: Server, kind: str) -> None:
    if kind == "register":
        client = await server.connect("Ayse")
        request: Msg = {"type": "register", "password": PASSWORD}
        answer = "account"
    elif kind in ("login", "bad login"):
        client = await server.connect("Guest")
        request = {"type": "login", "name": "Deniz",
                   "password": PASSWORD if kind == "login" else "a wrong guess"}
        answer = "account" if kind == "login" else "bad_login"
    elif kind == "logout":  # revoking its login token is a store write
        client, account = await logged_in(server, "Ayse")
        request = {"type": "logout", "token": account["login"]}
        answer = "account"
    else:
        client, _ = await logged_in(server, "Ayse")
        request = {"type": "passwd", "old": PASSWORD, "new": "staple grammar ok"}
        answer = "account"
    assert ids(await with_ping(client, request)) == [(501, answer), (502, "pong")]


@pytest.mark.parametrize("request_", [
    {"type": "announce", "text": "maintenance at noon"},
    {"type": "mute", "name": "Troll", "minutes": 5},
    {"type": "kick", "name": "Troll"},
], ids=lambda r: r["type"])
@pytest_twisted.ensureDeferred
async def test_an_operators_request_and_a_ping_behind_it_are_answered_in_order(
        server: Server, request_: Msg) -> None:
    operator, _ = await logged_in(server, "Deniz")
    await server.connect("Troll")
    assert ids(await with_ping(operator, request_)) == [(501, "ok"), (502, "pong")]


@pytest_twisted.ensureDeferred
async def test_a_later_answer_that_fails_is_one_internal_error_logged_and_reading_goes_on(
        server: Server, tmp_path: Path) -> None:
    operator, _ = await logged_in(server, "Deniz")
    db = sqlite3.connect(tmp_path / "db.sqlite3")
    db.execute("DROP TABLE moderation_log")  # behind the server's back: its writes fail
    db.commit()
    db.close()
    failures: list[LogEvent] = []

    def observe(event: LogEvent) -> None:
        if event.get("log_failure") is not None:
            failures.append(event)

    globalLogPublisher.addObserver(observe)  # type: ignore[arg-type]
    try:
        replies = await with_ping(operator, {"type": "announce", "text": "hello all"})
    finally:
        globalLogPublisher.removeObserver(observe)  # type: ignore[arg-type]
    assert ids(replies) == [(501, "internal_error"), (502, "pong")]
    assert replies[0]["message"] == "the action took effect but could not be kept"
    assert len(failures) == 1 and "moderation_log" in str(failures[0]["log_failure"].value)
    assert (await operator.request("ping"))["type"] == "pong"


def connection_of(server: Server, name: str) -> Connection:
    (conn,) = [p for p in server.factory.protocols
               if p.session is not None and p.session.name == name]
    return conn


def reading(conn: Connection) -> bool:
    """Whether the reactor reads the connection's socket."""
    return conn.transport in cast(Any, reactor).getReaders()


async def check_begun(server: Server) -> None:
    """Until a password check waits out its account's delay on the server's clock (the
    login has been read); polled on the real reactor, with a backstop."""
    accounts = server.factory.accounts
    assert accounts is not None
    clock = server.factory.clock
    await poll_until_async(
        lambda: any(due > clock.seconds() for due in accounts._checking.values()),
        BACKSTOP, "a password check's beginning")


@pytest_twisted.ensureDeferred
async def test_a_held_connection_reads_no_more_until_it_is_answered(tmp_path: Path) -> None:
    # Every password check waits 10 s on the server's clock: the login stays unanswered.
    clock = task.Clock()
    server = await start(tmp_path / "db.sqlite3", clock, LoginLimits(
        address_burst=1000, address_rate=1000, account_free=0, account_delay=10,
        account_max_delay=10))
    try:
        guest = await server.connect("Guest")
        other = await server.connect("Other")
        pings = 5000  # about 100 KB behind the login: more than one read holds
        guest.send_raw(frame({"type": "login", "name": "Deniz", "password": PASSWORD,
                              "id": 1000})
                       + b"".join(frame({"type": "ping", "id": 1001 + n})
                                  for n in range(pings)))
        await check_begun(server)
        await other.request("ping")  # a round trip elsewhere: time for the rest to come
        conn = connection_of(server, "Guest")
        assert not reading(conn)
        held = list(conn._held or ())
        assert sum(len(body) + 4 for body in held) <= 2 ** 16  # one read at most
        assert not [m for m in guest.received if m.get("id", 0) >= 1000]
        clock.advance(10)
        await guest.wait_for_id(1000 + pings)
        answers = [m for m in guest.received if m.get("id", 0) >= 1000]
        assert [m["id"] for m in answers] == list(range(1000, 1001 + pings))
        assert answers[0]["type"] == "account"
        assert reading(conn)
    finally:
        await server.stop()


@pytest_twisted.ensureDeferred
async def test_a_connection_waiting_on_another_process_answers_pings_and_keeps_the_rest(
        ) -> None:
    """A request whose answer another process holds (as the relay waits for a table
    elsewhere whose journal waits for its store: `wait_for(..., reads_on=True)`):
    meanwhile a ping is answered at once, the client's other requests wait their turn,
    and past `HELD_FRAMES` of them waiting the connection reads no more; once the
    answer comes they are answered in order."""
    server = await Server.start()
    try:
        client = await server.connect("Ayşe")
        conn = next(iter(server.factory.protocols))
        answer: Deferred[None] = Deferred()
        conn.wait_for(answer, reads_on=True)
        start = len(client.received)
        client.send_raw(frame({"type": "lobby_subscribe", "id": 601})
                        + frame({"type": "ping", "id": 602}))
        await client.wait_for_id(602, start)  # the pong, before the answer
        assert not any(m.get("id") == 601 for m in client.received[start:])
        later = [frame({"type": "lobby_unsubscribe", "id": 610 + n})
                 for n in range(HELD_FRAMES - 1)]
        client.send_raw(b"".join(later) + frame({"type": "ping", "id": 603}))
        await poll_until_async(lambda: conn.transport not in cast(Any, reactor).getReaders(),
                               BACKSTOP, "the connection to stop reading")
        answer.callback(None)
        await client.wait_for_id(603, start)
        replies = [int(m["id"]) for m in client.received[start:]
                   if m.get("id") not in (None, 602)]
        assert replies == [601, *range(610, 610 + HELD_FRAMES - 1), 603]
    finally:
        await server.stop()
