"""`RedisCluster` against a real redis-server: what it decides and what it leaves there."""

from __future__ import annotations

import socket
from typing import Any

import pytest_twisted
from poll_kit import poll_until
from twisted.internet import reactor
from twisted.internet.defer import Deferred

from cluster.redis_kit import RedisAt
from pisyedili.server.cluster import open_cluster
from pisyedili.server.cluster.holdings import SessionOpened
from pisyedili.server.cluster.redis import GONE, PREFIX, RedisCluster


async def _joined(redis: RedisAt) -> RedisCluster:
    cluster = open_cluster(redis.address, reactor)
    assert isinstance(cluster, RedisCluster)
    await cluster.start()
    return cluster


@pytest_twisted.ensureDeferred
async def test_ids_are_one_sequence_over_every_process(redis: RedisAt) -> None:
    a, b = await _joined(redis), await _joined(redis)
    try:
        assert (a.process, b.process) == ("p1", "p2")
        ids = [await a.next_id("table"), await b.next_id("table"), await a.next_id("table")]
        assert ids == [1, 2, 3]
        assert await b.next_id("player") == 1  # each kind counts on its own
        assert redis.command("PTTL", PREFIX + "process:p1") > 0  # the lease
    finally:
        await a.stop()
        await b.stop()
    assert redis.keys(PREFIX + "process:*") == []  # leaving takes the live keys along


@pytest_twisted.ensureDeferred
async def test_a_name_is_claimed_whole_or_not_at_all(redis: RedisAt) -> None:
    a, b = await _joined(redis), await _joined(redis)
    try:
        assert await a.claim_name("1", ("ali", "skeleton-ali"))
        assert await a.claim_name("1", ("ali",))  # its holder may claim it again
        assert not await b.claim_name("2", ("veli", "skeleton-ali"))
        assert redis.command("EXISTS", PREFIX + "name:veli") == 0  # none of it was taken
        b.release_name("2", ("ali",))  # not its own: stays
        a.release_name("1", ("ali", "skeleton-ali"))
        await a.next_id("sync")  # a's writes are in
        assert await b.claim_name("2", ("veli", "skeleton-ali"))
        assert redis.command("GET", PREFIX + "name:skeleton-ali") == "2"
    finally:
        await a.stop()
        await b.stop()


@pytest_twisted.ensureDeferred
async def test_a_dropped_session_lasts_its_grace_a_connected_one_the_lease(
        redis: RedisAt) -> None:
    a = await _joined(redis)
    try:
        a.session_live(b"\x01\x02", "7", "Ayşe", ("ayse",))
        assert await a.next_id("sync") == 1  # one round trip: the writes before it are in
        assert redis.hash(PREFIX + "session:0102") == {"player": "7", "name": "Ayşe",
                                                        "process": "p1"}
        assert 0 < redis.command("PTTL", PREFIX + "name:ayse") <= a.lease * 1000
        a.session_away(b"\x01\x02", ("ayse",), 2.5)
        await a.next_id("sync")
        for key in ("session:0102", "name:ayse"):
            assert 0 < redis.command("PTTL", PREFIX + key) <= 2500
        a.session_gone(b"\x01\x02", "7", ("ayse",))
        await a.next_id("sync")
        assert redis.keys(PREFIX + "session:*") == redis.keys(PREFIX + "name:*") == []
    finally:
        await a.stop()


@pytest_twisted.ensureDeferred
async def test_a_session_written_again_is_left_to_the_process_that_took_it_over(
        redis: RedisAt) -> None:
    """A's session is taken over by B once A's lease ran out (A was paused past it). A
    writing it again (its copy resumed or renamed before A checked its keys) leaves
    B's record as it is, and A lets the session go: it is told B holds it."""
    a, b = await _joined(redis), await _joined(redis)
    told: list[tuple[str, bytes, str]] = []
    a.watch_sessions(lambda player, hashed, holder: told.append((player, hashed, holder)))
    try:
        a.holdings.handle(SessionOpened("7"))  # as the process's sessions tell it
        a.session_live(b"\x01\x02", "7", "Ayşe", ("ayse",))
        await a.next_id("sync")
        redis.command("DEL", PREFIX + "process:p1")  # A's lease ran out
        assert await b.take_session(b"\x01\x02", "7", "Ayşe")
        a.session_live(b"\x01\x02", "7", "Ayşe", ("ayse",))
        await a.next_id("sync")
        assert redis.hash(PREFIX + "session:0102")["process"] == "p2"
        assert told == [("7", b"\x01\x02", "p2")]
        a.session_live(b"\x01\x02", "7", "Ayşe", ("ayse",))  # B's now: nothing written
        await a.next_id("sync")
        assert redis.hash(PREFIX + "session:0102")["process"] == "p2"
    finally:
        await a.stop()
        await b.stop()


@pytest_twisted.ensureDeferred
async def test_connections_per_address_count_the_live_processes_only(
        redis: RedisAt) -> None:
    a, b = await _joined(redis), await _joined(redis)
    try:
        assert await a.connection_opened("10.0.0.1") == 1
        assert await b.connection_opened("10.0.0.1") == 2
        assert await b.connection_opened("10.0.0.2") == 1
        a.connection_closed("10.0.0.1")
        await a.next_id("sync")
        assert await b.connection_opened("10.0.0.1") == 2
        redis.command("DEL", PREFIX + "process:p2")  # b's lease ran out: b died
        assert await a.connection_opened("10.0.0.1") == 1
    finally:
        await a.stop()
        await b.stop()


@pytest_twisted.ensureDeferred
async def test_codes_and_lobby_rows_name_their_process(redis: RedisAt) -> None:
    a, b = await _joined(redis), await _joined(redis)
    try:
        assert await a.claim_code("ABC234", 1)
        assert not await b.claim_code("ABC234", 2)
        b.table_row(2, {"table": 2, "name": "B's table"})
        await b.next_id("sync")
        row = redis.hash(PREFIX + "table:2")
        assert row["process"] == "p2" and '"name": "B\'s table"' in row["summary"]
        a.table_closed(1, "ABC234")
        await a.next_id("sync")
        assert redis.command("EXISTS", PREFIX + "code:ABC234") == 0
    finally:
        await a.stop()
        await b.stop()


@pytest_twisted.ensureDeferred
async def test_a_table_is_taken_only_from_a_process_that_is_gone(redis: RedisAt) -> None:
    a, b = await _joined(redis), await _joined(redis)
    try:
        await a.own(5)
        a.session_live(b"\x05", "9", "Ali", ("ali",))
        assert await a.next_id("sync") == 1  # a's writes are in
        assert not await b.take(5)  # its holder lives
        assert await b.session_holder(b"\x05") == a.process
        assert await b.session_holder(b"\x06") is None
        redis.command("DEL", PREFIX + f"process:{a.process}")  # a's lease ran out
        assert await b.session_holder(b"\x05") is None
        assert await b.take(5)
        assert not await a.take(5)  # b holds it now, and b lives
        assert redis.hash(PREFIX + "table:5")["process"] == b.process
        assert await b.take(6)  # one nobody holds (the whole cluster was stopped)
        assert sorted(redis.command("SMEMBERS", PREFIX + "tables")) == ["5", "6"]
    finally:
        await a.stop()
        await b.stop()


@pytest_twisted.ensureDeferred
async def test_a_lobby_row_told_again_is_news_only_where_it_is_missing_or_differs(
        redis: RedisAt) -> None:
    """A row a process tells again (it was taken for gone, or Redis came back) reaches
    the others' subscribers as an `add` where they lack it, an `update` where theirs
    differs, and not at all where they hold it as it is."""
    a, b = await _joined(redis), await _joined(redis)
    heard: list[dict[str, Any]] = []
    marks: dict[str, Deferred[None]] = {}

    def on_lobby(delta: dict[str, Any]) -> None:
        if delta["op"] == "chat":
            marks.pop(delta["chat"]).callback(None)
        else:
            heard.append({k: delta[k] for k in ("op", "table", "summary") if k in delta})

    async def told(*deltas: dict[str, Any]) -> list[dict[str, Any]]:
        """What b's subscribers heard of `deltas`, published by a in this order."""
        del heard[:]
        for delta in deltas:
            a.publish_lobby(delta)
        marks["end"] = Deferred()  # a's deltas come to b in order: after them, this
        a.publish_lobby({"op": "chat", "chat": "end"})
        await marks["end"]
        return list(heard)

    b.listen(on_lobby, lambda message: None, lambda process: None)
    row, changed = {"id": 4, "name": "Masa"}, {"id": 4, "name": "Masa 2"}
    try:
        assert await told({"op": "add", "table": 4, "summary": row},
                          {"op": "add", "table": 4, "summary": row}) == [
            {"op": "add", "table": 4, "summary": row}]
        assert await told({"op": "add", "table": 4, "summary": changed}) == [
            {"op": "update", "table": 4, "summary": changed}]
        assert await told({"op": "remove", "table": 4},
                          {"op": "update", "table": 4, "summary": row}) == [
            {"op": "remove", "table": 4}, {"op": "add", "table": 4, "summary": row}]
        assert b.lobby_rows() == {4: row}
    finally:
        await a.stop()
        await b.stop()


def test_a_process_is_taken_for_dead_only_while_nobody_listens_on_its_channel(
        redis: RedisAt) -> None:
    """`GONE` deletes a process's lease only if nobody listens on its channel at that
    moment (a paused process keeps listening: its lease stands), and says when the
    lease had gone already."""
    key = PREFIX + "process:p7"
    channel = f"{PREFIX}{redis.address.db}:to:p7"
    redis.command("SET", key, "1")
    with socket.create_connection((redis.address.host, redis.address.port),
                                  timeout=10) as listener:
        listener.sendall(f"SUBSCRIBE {channel}\r\n".encode())
        poll_until(lambda: redis.command("PUBSUB", "NUMSUB", channel)[1] == 1, 10,
                   "the subscription")
        assert redis.command("EVAL", GONE, 1, key, channel) == 0
        assert redis.command("EXISTS", key) == 1
    poll_until(lambda: redis.command("PUBSUB", "NUMSUB", channel)[1] == 0, 10,
               "the subscription to go with its connection")
    assert redis.command("EVAL", GONE, 1, key, channel) == 1
    assert redis.command("EXISTS", key) == 0
    assert redis.command("EVAL", GONE, 1, key, channel) == -1
