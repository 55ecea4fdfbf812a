"""Ids never go back: a cluster that starts on an empty Redis (it restarted without
its data, or the database comes from a server that ran alone) hands out player and
table ids above every one its database holds. A reused player id would give a new
guest an old one's session row, private matches and sanctions.

Each process here logs JSON (`--log-format json`), so that a `critical` line (the
journal refusing a duplicate session, say) is found by its level."""

from __future__ import annotations

import json
import signal
import subprocess
from collections.abc import Iterator
from contextlib import AbstractContextManager, ExitStack, contextmanager
from pathlib import Path

import pytest
import pytest_twisted
from process_output import Output, logged_server
from twisted.internet import reactor
from twisted.internet.defer import Deferred, succeed

from cluster.cluster_kit import BACKSTOP, LEASE, Player
from cluster.redis_kit import RedisAt, own_redis
from pisyedili.server.bench.services import RedisServer
from pisyedili.server.cluster import open_cluster
from pisyedili.server.cluster.redis import RedisCluster
from pisyedili.server.store import SanctionRow, open_store
from pisyedili.server.table.effects import MatchOver

Proc = tuple[subprocess.Popen[str], int, Output]


def _server(db: str, n: int, cluster: str | None) -> AbstractContextManager[Proc]:
    """`pisyedili-server` on `db`, alone or joined to `cluster`: the process, its port
    and its log. It is killed at the end if the test did not stop it."""
    joined = ["--cluster", cluster, "--cluster-lease", str(LEASE)] if cluster else []
    return logged_server("--listen", "tcp:0:interface=127.0.0.1", "--db", db, *joined,
                         "--seed", str(n), "--turn-seconds", "0", "--bot-delay", "0",
                         "--no-announce", "--log-format", "json")


def _stop(procs: list[Proc]) -> str:
    """SIGTERM to each process, as `systemctl stop` does: their logs, once they exited
    (a process that flushes its journal on the way out logs any refusal by then)."""
    for proc, _, _ in procs:
        proc.send_signal(signal.SIGTERM)
    logs = []
    for proc, _, out in procs:
        assert proc.wait(timeout=BACKSTOP) == 0, out.text
        logs.append(out.rest())
    return "".join(logs)


def _criticals(log: str) -> list[str]:
    return [line for line in log.splitlines()
            if line.startswith("{") and json.loads(line).get("level") == "critical"]


def _use(ports: list[int], names: str) -> tuple[int, int]:
    """At each port, a player who opens a table and one who opens a table and leaves
    it (closed: its id is in no open table's row any more): the highest player and
    table ids handed out."""
    players, tables = [], []
    for n, port in enumerate(ports):
        stay, go = Player(port), Player(port)
        players += [stay.hello(f"{names}{n}a")["player"], go.hello(f"{names}{n}b")["player"]]
        tables.append(stay.ok("create_table", rules="classic", seats=2)["table"]["id"])
        tables.append(go.ok("create_table", rules="classic", seats=2)["table"]["id"])
        go.ok("leave_table")
        stay.close()
        go.close()
    return max(int(p) for p in players), max(tables)


def _above(ports: list[int], players: int, tables: int) -> None:
    """At each port, a new player's id and a new table's are above those given."""
    for port in ports:
        newcomer = Player(port)
        assert int(newcomer.hello("Yeni")["player"]) > players
        assert newcomer.ok("create_table", rules="classic", seats=2)["table"]["id"] > tables
        newcomer.close()


def _dbs(store: str, request: pytest.FixtureRequest, folder: Path) -> list[str]:
    """The `--db` of each of two processes: a SQLite file each, or one PostgreSQL
    database for both (the journal they share)."""
    if store == "postgres":
        shared: str = request.getfixturevalue("postgres").store()
        return [shared, shared]
    return [str(folder / "p0.db"), str(folder / "p1.db")]


@contextmanager
def _fresh_redis() -> Iterator[RedisServer]:
    redis = own_redis()
    try:
        yield redis
    finally:
        redis.stop()


@pytest.mark.parametrize("store", ["sqlite", "postgres"])
def test_a_cluster_restarted_on_an_empty_redis_hands_out_no_id_again(
        store: str, request: pytest.FixtureRequest, tmp_path: Path) -> None:
    """Play, stop every process (SIGTERM), start Redis again without its data, start
    the processes again: new ids go on above the old ones, and nothing is refused."""
    dbs = _dbs(store, request, tmp_path)
    with _fresh_redis() as redis:
        with ExitStack() as stack:
            procs = [stack.enter_context(_server(db, n, redis.url))
                     for n, db in enumerate(dbs)]
            players, tables = _use([port for _, port, _ in procs], "Eski")
            log = _stop(procs)
        redis.kill()
        redis.start()  # on its port, empty: it keeps nothing
        with ExitStack() as stack:
            procs = [stack.enter_context(_server(db, n, redis.url))
                     for n, db in enumerate(dbs)]
            _above([port for _, port, _ in procs], players, tables)
            log += _stop(procs)
    assert _criticals(log) == []


@pytest.mark.parametrize("store", ["sqlite", "postgres"])
def test_a_database_of_a_server_alone_moved_into_a_cluster_hands_out_no_id_again(
        store: str, request: pytest.FixtureRequest, tmp_path: Path) -> None:
    """A server without `--cluster` makes players and tables; its database then serves
    a cluster of two on an empty Redis (one process on it and one on a new file, or
    both on it for PostgreSQL): new ids go on above the old ones."""
    dbs = _dbs(store, request, tmp_path)
    with _server(dbs[0], 0, None) as alone:
        players, tables = _use([alone[1]], "Yalnız")
        log = _stop([alone])
    with _fresh_redis() as redis, ExitStack() as stack:
        procs = [stack.enter_context(_server(db, n, redis.url)) for n, db in enumerate(dbs)]
        _above([port for _, port, _ in procs], players, tables)
        log += _stop(procs)
    assert _criticals(log) == []


def test_the_floors_are_the_highest_ids_anywhere_in_the_store(db: str) -> None:
    """The counters, and the rows that hold ids besides: a database whose counters lag
    (or that has none) still tells every id it holds."""
    store = open_store(db)
    try:
        assert store.id_floors() == {}
        store.write_journal([("counter", ("table", 3)), ("counter", ("player", 2)),
                             ("table_opened", (5, 1.0, {})),
                             ("session_opened", (9, b"token", "Ayse", "127.0.0.1", 1.0))])
        assert store.id_floors() == {"table": 5, "player": 9}
        seat = {"seat": 0, "name": "Can", "kind": "human", "level": None, "player": 12}
        store.record_match(MatchOver(
            table_id=8, rules="classic", options={}, players=[seat], started_at=1.0,
            finished_at=2.0, totals=[0], winners=[0], deals=[]))
        assert store.id_floors() == {"table": 8, "player": 12}
        store.add_sanction(SanctionRow("ban", None, 15, None, "spam", "op", None), 3.0)
        assert store.id_floors() == {"table": 8, "player": 15}
    finally:
        store.close()


@pytest_twisted.ensureDeferred
async def test_no_id_is_handed_out_before_the_store_was_read_again(redis: RedisAt) -> None:
    """Redis comes back empty while a process runs: the store's ids are read again
    (a process that died meanwhile left its last ids there only), and the next id
    waits for that read, then goes on above it."""
    reads: list[Deferred[dict[str, int]]] = [succeed({"player": 40})]
    again: Deferred[dict[str, int]] = Deferred()
    cluster = open_cluster(redis.address, reactor, 3.0)
    assert isinstance(cluster, RedisCluster)
    cluster.count_from(lambda: reads.pop(0) if reads else again)
    lost: Deferred[None] = Deferred()
    back: Deferred[None] = Deferred()
    cluster.watch_link(lambda: lost.callback(None), lambda: back.callback(None))
    await cluster.start()
    try:
        assert await cluster.next_id("player") == 41  # above the store's, from the start
        redis.command("CLIENT", "KILL", "TYPE", "normal")  # (not this connection)
        redis.command("CLIENT", "KILL", "TYPE", "pubsub")
        redis.command("FLUSHDB")  # as a Redis restarted without its data
        await lost
        await back
        answer = cluster.next_id("player")
        assert await cluster.locate(1) is None  # a round trip after it, on the same link
        assert not answer.called  # the store is being read again
        again.callback({"player": 90})
        assert await answer == 91
    finally:
        await cluster.stop()
