"""Caps on open tables (per player, per address, in all) and the listen backlog.

Measured before the caps: from one loopback address, a new `hello` per table opened
6,000 tables in 12 seconds, since the only cap counted tables per player.
"""

from __future__ import annotations

import pytest
import pytest_twisted
from peer_kit import Peer
from twisted.internet import reactor, task
from twisted.internet.endpoints import serverFromString
from wireclient import Server, WireClient

from pisyedili.protocol.errors import ERRORS
from pisyedili.server.net.limits import ServerLimits, address_key
from pisyedili.server.net.tcp import ServerFactory
from pisyedili.server.service import tap
from pisyedili.server.service.assembly import make_factory
from pisyedili.server.table.core import TableError, TableSettings


def lobby_factory(**caps: int) -> ServerFactory:
    return make_factory(task.Clock(), limits=ServerLimits(**caps),
                        settings=TableSettings(turn_seconds=0))


def open_from(factory: ServerFactory, address: str, name: str = "p") -> str | None:
    """Open a table as a brand-new player from `address`: None, or the refusal's code."""
    session = factory.sessions.open(name, Peer())
    try:
        factory.lobby.create(session, "classic", 2, address=address)
    except TableError as e:
        assert e.extra["limit"] > 0
        return e.code
    return None


def test_the_defaults() -> None:
    limits = ServerLimits()
    assert (limits.max_tables_per_player, limits.max_tables_per_address,
            limits.max_tables_total) == (3, 6, 2000)
    assert limits.max_output_bytes == 4 * 1024 * 1024
    assert not ERRORS["too_many_tables"].closes


def test_new_players_from_one_address_stop_at_the_address_cap() -> None:
    factory = lobby_factory(max_tables_per_address=6)
    results = [open_from(factory, "192.0.2.7") for _ in range(10)]
    assert results == [None] * 6 + ["too_many_tables"] * 4
    assert open_from(factory, "192.0.2.8") is None  # another address is not held back
    assert len(factory.lobby.tables()) == 7


def test_an_ipv6_64_counts_as_one_address() -> None:
    factory = lobby_factory(max_tables_per_address=2)
    hosts = ["2001:db8:1:2::1", "2001:db8:1:2::2", "2001:db8:1:2:ffff::9"]
    assert [open_from(factory, address_key(h)) for h in hosts] == [None, None,
                                                                   "too_many_tables"]
    assert open_from(factory, address_key("2001:db8:1:3::1")) is None


def test_the_total_cap_holds_for_every_address() -> None:
    factory = lobby_factory(max_tables_total=3)
    assert [open_from(factory, f"192.0.2.{i}") for i in range(5)] == [None] * 3 + [
        "too_many_tables"] * 2


def test_the_per_player_cap_is_kept() -> None:
    factory = lobby_factory(max_tables_per_player=2, max_tables_per_address=10)
    session = factory.sessions.open("ann", Peer())
    factory.lobby.create(session, "classic", 2, address="192.0.2.7")
    factory.lobby.create(session, "classic", 2, address="192.0.2.7")
    with pytest.raises(TableError) as info:
        factory.lobby.create(session, "classic", 2, address="192.0.2.7")
    assert (info.value.code, info.value.extra["limit"]) == ("too_many_tables", 2)


@pytest.mark.parametrize("caps", [
    {"max_tables_per_address": 0}, {"max_tables_total": 0}, {"max_tables_total": -5},
    {"max_output_bytes": 1024},
])
def test_bad_caps_are_refused(caps: dict[str, int]) -> None:
    with pytest.raises(ValueError):
        ServerLimits(**caps)


# -- over the wire ----------------------------------------------------------------------

async def host(server: Server, name: str) -> tuple[WireClient, dict[str, object]]:
    client = await server.connect(name)
    reply = await client.request("create_table", rules="classic", seats=2)
    return client, reply


@pytest_twisted.ensureDeferred
async def test_one_address_cannot_fill_the_lobby_by_saying_hello_again() -> None:
    server = await Server.start(limits=ServerLimits(rate=10_000, burst=10_000,
                                                    max_tables_per_address=3))
    try:
        replies = [(await host(server, f"p{i}"))[1] for i in range(5)]
        assert [r["type"] for r in replies] == ["table"] * 3 + ["error"] * 2
        refused = replies[3]
        assert (refused["code"], refused["limit"]) == ("too_many_tables", 3)
        assert "address" in str(refused["message"])
        assert len(server.factory.lobby.tables()) == 3
        # Refused, the connections stay and can do everything else.
        late = server.clients[-1]
        assert (await late.request("ping"))["type"] == "pong"
        # A closed table frees its place for the address.
        await server.clients[0].ok("leave_table")
        again = await late.request("create_table", rules="classic", seats=2)
        assert again["type"] == "table"
    finally:
        await server.stop()


@pytest_twisted.ensureDeferred
async def test_the_server_wide_cap_over_the_wire() -> None:
    server = await Server.start(limits=ServerLimits(rate=10_000, burst=10_000,
                                                    max_tables_total=2))
    try:
        replies = [(await host(server, f"p{i}"))[1] for i in range(3)]
        assert [r["type"] for r in replies] == ["table", "table", "error"]
        assert (replies[2]["code"], replies[2]["limit"]) == ("too_many_tables", 2)
        assert "server" in str(replies[2]["message"])
    finally:
        await server.stop()


# -- options and the listen backlog -------------------------------------------------------

def test_the_caps_are_options() -> None:
    options = tap.Options()
    options.parseOptions(["--max-tables-per-address", "9", "--max-tables-total", "90",  # type: ignore[no-untyped-call]
                          "--max-output-bytes", "2097152"])
    limits = options["limits"]
    assert (limits.max_tables_per_address, limits.max_tables_total,
            limits.max_output_bytes) == (9, 90, 2 * 1024 * 1024)


@pytest.mark.parametrize("argv", [["--max-tables-per-address", "0"],
                                  ["--max-tables-total", "-1"],
                                  ["--max-output-bytes", "1000"]])
def test_bad_cap_options_are_usage_errors(argv: list[str]) -> None:
    from twisted.python import usage

    with pytest.raises(usage.UsageError):
        tap.Options().parseOptions(argv)  # type: ignore[no-untyped-call]


def test_the_default_endpoint_asks_for_a_long_listen_backlog() -> None:
    options = tap.Options()
    options.parseOptions([])  # type: ignore[no-untyped-call]
    (endpoint,) = options["listen"]
    assert endpoint == tap.DEFAULT_ENDPOINT == "tcp:7707:backlog=1024"
    parsed = serverFromString(reactor, endpoint)  # type: ignore[no-untyped-call]
    assert (parsed._port, parsed._backlog) == (7707, 1024)


@pytest_twisted.ensureDeferred
async def test_the_backlog_reaches_the_listening_socket() -> None:
    factory = make_factory(reactor, limits=ServerLimits())
    port = await serverFromString(reactor, "tcp:0:interface=127.0.0.1:backlog=1024").listen(  # type: ignore[no-untyped-call]
        factory)
    try:
        assert port.backlog == 1024
    finally:
        await port.stopListening()
