"""The table list comes in pages: every `lobby` frame fits the protocol's limits however
many tables are open, `total` and `offset` say where the page sits, and asking again
while subscribed costs one page, not a second subscription."""

from __future__ import annotations

from typing import Any

import pytest
import pytest_twisted
from peer_kit import Peer
from twisted.internet import task
from wireclient import Msg, Server

from pisyedili.protocol.codec import decode, encode
from pisyedili.protocol.limits import (
    MAX_NAME,
    MAX_SERVER_FRAME,
    MAX_TABLE_NAME,
    SERVER_FRAME_LIMITS,
)
from pisyedili.protocol.schema import Direction, validate
from pisyedili.protocol.shapes import LOBBY_PAGE
from pisyedili.server.net.limits import ServerLimits
from pisyedili.server.net.tcp import ServerFactory
from pisyedili.server.people.session import Session
from pisyedili.server.service.assembly import make_factory
from pisyedili.server.table import commands as cmd
from pisyedili.server.table.core import TableSettings

MANY = ServerLimits(max_tables_per_player=10_000, max_tables_per_address=10_000,
                    max_tables_total=10_000, rate=10_000, burst=10_000)
BIG = "\U0001d538"  # four bytes in UTF-8: the widest character


def factory_with_tables(n: int, *, wide: bool = False,
                        limits: ServerLimits = MANY) -> ServerFactory:
    """A server (on a fake clock) with `n` open tables, each hosted by its own player."""
    factory = make_factory(task.Clock(), limits=limits, settings=TableSettings(turn_seconds=0))
    open_tables(factory, n, wide=wide)
    return factory


def open_tables(factory: ServerFactory, n: int, *, wide: bool = False) -> list[int]:
    ids = []
    for i in range(n):
        name = (BIG * MAX_NAME) if wide else f"host{i}"
        session = factory.sessions.open(name, Peer())
        table = factory.lobby.create(session, "classic", 6, None,
                                     BIG * MAX_TABLE_NAME if wide else None)
        session.table = table
        table.handle(cmd.Join(session.player_id, session.name))
        ids.append(table.id)
    return ids


def subscriber(factory: ServerFactory, name: str = "watcher") -> tuple[Session, Peer]:
    peer = Peer()
    return factory.sessions.open(name, peer), peer


def row_ids(msg: Msg) -> list[int]:
    return [row["id"] for row in msg["tables"]]


# -- pages ------------------------------------------------------------------------------

def test_pages_cover_the_list_in_order_and_say_where_they_are() -> None:
    factory = factory_with_tables(450)
    ids = [t.id for t in factory.lobby.tables()]
    pages = [factory.lobby.snapshot(offset) for offset in (0, 200, 400)]
    assert [len(p["tables"]) for p in pages] == [200, 200, 50]
    assert [p["offset"] for p in pages] == [0, 200, 400]
    assert {p["total"] for p in pages} == {450}
    assert [i for p in pages for i in row_ids(p)] == ids == sorted(ids)


@pytest.mark.parametrize(("offset", "limit", "rows"), [
    (0, None, LOBBY_PAGE),  # the default: one page
    (0, 10, 10),
    (0, 4096, LOBBY_PAGE),  # more than a page is capped, not refused
    (445, None, 5),
    (450, None, 0),  # at the end: no rows, still the total
    (2**53 - 1, 50, 0),
])
def test_offset_and_limit(offset: int, limit: int | None, rows: int) -> None:
    factory = factory_with_tables(450)
    page = factory.lobby.snapshot(offset, limit)
    assert (len(page["tables"]), page["total"], page["offset"]) == (rows, 450, offset)
    validate(page, Direction.TO_CLIENT)


def test_the_worst_page_fits_the_frame_limit_with_any_number_of_tables() -> None:
    """2000 tables of the widest names give pages that every client decodes: one
    `lobby` of every row would be megabytes, past any frame limit."""
    factory = factory_with_tables(2000, wide=True)
    sizes = []
    for offset in range(0, 2000, LOBBY_PAGE):
        page = factory.lobby.snapshot(offset)
        body = encode({**page, "id": 2**53 - 1})
        decode(body, SERVER_FRAME_LIMITS)  # within every limit of the direction
        validate(page, Direction.TO_CLIENT)
        sizes.append(len(body))
    assert len(sizes) == 2000 // LOBBY_PAGE
    assert max(sizes) < MAX_SERVER_FRAME // 10


def test_subscribing_again_sends_a_page_and_subscribes_once() -> None:
    factory = factory_with_tables(3)
    lobby = factory.lobby
    session, peer = subscriber(factory)
    for offset in (0, 1, 0, 2, 0):
        assert lobby.subscribe(session, offset)["offset"] == offset
    assert lobby.subscriber_count() == 1
    assert peer.sent == []  # pages are replies; nothing was fanned out
    open_tables(factory, 1)
    deltas = [m for m in peer.sent if m["type"] == "lobby_update"]
    assert [d["op"] for d in deltas] == ["add"]  # one subscription: one delta per change


def test_deltas_cover_every_table_whichever_page_is_held() -> None:
    factory = factory_with_tables(LOBBY_PAGE + 5)
    session, peer = subscriber(factory)
    page = factory.lobby.subscribe(session)
    last = factory.lobby.tables()[-1]
    assert last.id not in row_ids(page)
    watcher = factory.sessions.open("spectator", Peer())
    last.handle(cmd.Join(watcher.player_id, watcher.name, True))
    (delta,) = [m for m in peer.sent if m["type"] == "lobby_update"]
    assert (delta["op"], delta["table"], delta["summary"]["spectators"]) == \
        ("update", last.id, 1)


# -- over the wire ----------------------------------------------------------------------

async def page_server(tables: int) -> Server:
    server = await Server.start(limits=MANY)
    open_tables(server.factory, tables)
    return server


@pytest_twisted.ensureDeferred
async def test_a_client_reads_the_list_page_by_page() -> None:
    server = await page_server(LOBBY_PAGE + 50)
    try:
        ann = await server.connect("ann")
        first = await ann.ok("lobby_subscribe")
        assert (len(first["tables"]), first["total"], first["offset"]) == (LOBBY_PAGE,
                                                                            250, 0)
        rest = await ann.ok("lobby_subscribe", offset=len(first["tables"]))
        assert (len(rest["tables"]), rest["total"], rest["offset"]) == (50, 250, 200)
        assert row_ids(first) + row_ids(rest) == [t.id for t in server.factory.lobby.tables()]
        small = await ann.ok("lobby_subscribe", offset=10, limit=3)
        assert row_ids(small) == row_ids(first)[10:13]
        # Still one subscriber, and one delta per change.
        assert server.factory.lobby.subscriber_count() == 1
        start = len(ann.received)
        open_tables(server.factory, 1)
        await ann.request("ping")
        assert [m["type"] for m in ann.received[start:]] == ["lobby_update", "pong"]
    finally:
        await server.stop()


BAD_PAGES: list[tuple[dict[str, Any], str]] = [
    ({"offset": -1}, "offset"),
    ({"offset": True}, "offset"),
    ({"offset": 2**53}, "offset"),
    ({"offset": "next"}, "offset"),
    ({"limit": 0}, "limit"),
    ({"limit": 4097}, "limit"),
    ({"limit": 1.5}, "limit"),
]


@pytest_twisted.ensureDeferred
async def test_bad_page_requests_are_refused_with_the_field() -> None:
    server = await page_server(3)
    try:
        ann = await server.connect("ann")
        for fields, field in BAD_PAGES:
            err = await ann.request("lobby_subscribe", **fields)
            assert (err["type"], err["code"], err["field"]) == ("error", "bad_field", field)
        assert server.factory.lobby.subscriber_count() == 0  # refused: subscribes nobody
        page = await ann.ok("lobby_subscribe", offset=1)
        assert page["offset"] == 1 and page["total"] == 3
    finally:
        await server.stop()


@pytest_twisted.ensureDeferred
async def test_page_requests_are_rate_limited_like_any_request() -> None:
    limits = ServerLimits(max_tables_per_player=100, max_tables_per_address=100, rate=1,
                          burst=3)
    server = await Server.start(limits=limits)
    open_tables(server.factory, 5)
    try:
        ann = await server.connect("ann")  # its hello took one token
        replies = [await r for r in [ann.request("lobby_subscribe") for _ in range(4)]]
        assert [r["type"] for r in replies] == ["lobby", "lobby", "error", "error"]
        assert {r["code"] for r in replies[2:]} == {"rate_limited"}
    finally:
        await server.stop()

