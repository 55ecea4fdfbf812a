"""A process told to stop (SIGTERM) hands every session it homes to a live process
before it exits: a player seated at a table of another process, a spectator, a player
in the lobby, and a player at a table the stopping process held itself. Each resumes
with its token through another process and is back where it was. A rolling restart of
three processes, while a match is played, loses no session and no acknowledged move.

The lease is far longer than any wait here: only the hand-over as the process stops
can keep a session, a lease later would leave the test waiting in vain."""

from __future__ import annotations

import random
import re
import select
import signal
import subprocess
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

import pg_kit
from poll_kit import poll_until

from cluster.cluster_kit import BACKSTOP, Msg, Player, log_of, server
from cluster.redis_kit import RedisAt
from cluster.test_cluster_failover import (
    Mover,
    _ends_keeping_every_ack,
    _one_deal_started,
    _resume,
)
from pisyedili.server.cluster.redis import PREFIX
from pisyedili.server.store.journal import token_hash

LONG = ("--cluster-lease", str(100 * BACKSTOP))
"""Given last, it wins over the kit's own --cluster-lease."""
ARGS = ("--rate", "500", "--burst", "500", *LONG)


def _snapshot(player: Player, since: int = 0) -> Msg:
    """The next `table` snapshot `player` gets (from its `seen[since]` on)."""
    return player.wait(lambda m: m["type"] == "table", since)


def _back(port: int, before: Player, table: int | None) -> Player:
    """`before`'s player resumes through the process at `port`: the same player, name
    and table, resumed."""
    back, welcome = _resume(port, before.welcome)
    assert (welcome["resumed"], welcome["player"], welcome["name"], welcome.get("table")) \
        == (True, before.welcome["player"], before.welcome["name"], table), welcome
    return back


def _hung_up(player: Player) -> None:
    """Read what the stopping process still said, up to its close: `shutting_down`."""
    while player.recv() is not None:
        pass
    assert any(m.get("code") == "shutting_down" for m in player.seen), player.seen[-3:]


def test_a_stopping_process_hands_its_sessions_to_a_live_one(
        redis: RedisAt, postgres: pg_kit.Cluster, tmp_path: Path) -> None:
    db = postgres.store()
    with ExitStack() as stack:
        (_, a), (stopping, b) = (stack.enter_context(server(redis.url, db, n, *ARGS))
                                 for n in range(2))
        host, seated, watching, idle, own = (Player(p) for p in (a, b, b, b, b))
        host.hello("Ayşe")
        seated.hello("Mehmet")
        watching.hello("Zeynep")
        idle.hello("Can")
        own.hello("Deniz")
        table = host.ok("create_table", rules="classic", seats=2)["table"]["id"]
        seated.ok("join_table", table=table)
        watching.ok("join_table", table=table, spectate=True)
        idle.ok("lobby_subscribe")
        held = own.ok("create_table", rules="classic", seats=2)["table"]["id"]  # by B
        stopping.send_signal(signal.SIGTERM)
        assert stopping.wait(BACKSTOP) == 0
        for player in (seated, watching, idle, own):
            _hung_up(player)
        seated = _back(a, seated, table)
        assert _snapshot(seated)["you"]["seat"] == 1
        watching = _back(a, watching, table)
        assert _snapshot(watching)["you"]["spectator"] is True
        idle = _back(a, idle, None)
        assert idle.ok("lobby_subscribe")["tables"]
        own = _back(a, own, held)
        assert _snapshot(own)["you"]["seat"] == 0
        # The table of A sees its guest back, and the game goes on.
        since = len(host.seen)
        seated.ok("ready", ready=True)
        host.wait(lambda m: m["type"] == "table_update"
                  and m["table"]["seats"][1].get("ready") is True, since)
        host.ok("start")


def _named(proc: subprocess.Popen[str]) -> str:
    """The cluster's name for a process `server` started (its log says it)."""
    joined = re.search(r"joined the cluster at \S+ as process (p\d+)", log_of(proc).text)
    assert joined is not None, log_of(proc).text
    return joined.group(1)


def test_a_player_handed_on_resumes_at_its_table_through_the_process_that_took_it(
        redis: RedisAt, postgres: pg_kit.Cluster, tmp_path: Path) -> None:
    """Both players of a match on C are connected to C, which stops: it hands one
    session to A and the other to B (in turn), then lets the table go, and one of A and
    B takes it over. The taker seats its own player, and tells the other's new home
    that the table is here now. That other player resumes through the taker: welcomed
    at its table, whose snapshot follows, its seat connected again. So does the first,
    through the process that did not take the table."""
    db = postgres.store()
    with ExitStack() as stack:
        live = [stack.enter_context(server(redis.url, db, n, *ARGS)) for n in range(2)]
        stopping, c = stack.enter_context(server(redis.url, db, 2, *ARGS))
        host, guest, table = _one_deal_started(c, c)
        stopping.send_signal(signal.SIGTERM)
        assert stopping.wait(BACKSTOP) == 0
        for player in (host, guest):
            _hung_up(player)
        by_name = {_named(proc): (proc, port) for proc, port in live}

        def holder() -> str | None:
            name = redis.hash(f"{PREFIX}table:{table}").get("process")
            return name if name in by_name else None

        taker = poll_until(holder, BACKSTOP, "a live process to take the table over")
        log_of(by_name[taker][0]).wait_for(rf"took table {table} over")
        homes = {player: redis.hash(
            f"{PREFIX}session:{token_hash(player.welcome['token']).hex()}")["process"]
            for player in (host, guest)}
        assert sorted(homes.values()) == sorted(by_name), homes  # one on A, one on B
        for seat, player in enumerate((host, guest)):
            elsewhere = next(name for name in by_name if name != homes[player])
            back = _back(by_name[elsewhere][1], player, table)
            snapshot = _snapshot(back)
            assert snapshot["you"]["seat"] == seat
            assert snapshot["table"]["seats"][seat]["connected"] is True


@dataclass
class _Client:
    """One player of the rolling restart and the process it is connected to."""

    player: Player
    port: int
    table: int | None
    mover: Mover | None = None


def _play(clients: list[_Client], done: Callable[[], bool]) -> None:
    """Every message to every client, the movers answering what they are offered,
    until `done`."""
    by_sock = {c.player.sock: c for c in clients}
    while not done():
        ready, _, _ = select.select(list(by_sock), [], [], 20)
        assert ready, "nothing came for 20 s"
        for sock in ready:
            client = by_sock[sock]
            if client.mover is not None:
                assert client.mover.read(), "a live process hung up"
            else:
                assert client.player.recv() is not None, "a live process hung up"


def test_a_rolling_restart_of_three_processes_keeps_every_session_and_move(
        redis: RedisAt, postgres: pg_kit.Cluster, tmp_path: Path) -> None:
    """Three processes, each stopped with SIGTERM and started again in turn while a
    three-player match is played, with a spectator and a player in the lobby. Each
    player of the stopping process resumes with its token through the next process,
    at once; the match ends with every move acknowledged in its record."""
    db = postgres.store()
    with ExitStack() as stack:
        procs: list[subprocess.Popen[str]] = []
        ports: list[int] = []
        for n in range(3):
            proc, port = stack.enter_context(server(redis.url, db, n, *ARGS))
            procs.append(proc)
            ports.append(port)
        rng = random.Random(31)
        movers = [Player(port) for port in ports]
        for player, name in zip(movers, ("Ayşe", "Mehmet", "Zeynep"), strict=True):
            player.hello(name)
        table = movers[0].ok("create_table", rules="classic", seats=3,
                             options={"match_end": "deals:1"})["table"]["id"]
        for guest in movers[1:]:
            guest.ok("join_table", table=table)
            guest.ok("ready", ready=True)
        movers[0].ok("start")
        watcher, idler = Player(ports[2]), Player(ports[1])
        watcher.hello("Deniz")
        watcher.ok("join_table", table=table, spectate=True)
        idler.hello("Can")
        clients = [_Client(p, port, table, Mover(p, rng))
                   for p, port in zip(movers, ports, strict=True)]
        clients += [_Client(watcher, ports[2], table), _Client(idler, ports[1], None)]

        def acked() -> int:
            return sum(len(c.mover.acked) for c in clients if c.mover is not None)

        for n in range(3):
            goal = acked() + 3
            _play(clients, lambda: acked() >= goal)  # noqa: B023 (used at once)
            procs[n].send_signal(signal.SIGTERM)
            assert procs[n].wait(BACKSTOP) == 0
            to = ports[(n + 1) % 3]
            for client in clients:
                if client.port != ports[n]:
                    continue
                if client.mover is not None:
                    while client.mover.read():
                        pass  # what it still said, up to its close
                else:
                    _hung_up(client.player)
                client.player, client.port = _back(to, client.player, client.table), to
                if client.mover is not None:
                    client.mover.player, client.mover.pending = client.player, None
            procs[n], ports[n] = stack.enter_context(server(redis.url, db, 3 + n, *ARGS))
        assert all(c.player.ok("ping")["type"] == "pong" for c in clients if not c.mover)
        _ends_keeping_every_ack([c.mover for c in clients if c.mover is not None], ports[0])


def test_a_session_handed_to_a_process_that_dies_before_taking_it_in_resumes(
        redis: RedisAt, postgres: pg_kit.Cluster, tmp_path: Path) -> None:
    """A stops (SIGTERM) while B, the only other process, is paused (SIGSTOP): A hands
    its player's session to B, which is killed before it reads the hand-over. The
    journal still has the session's row, so its token resumes through a process
    started afterwards: the same player, in the lobby, not a `bad_token`."""
    db = postgres.store()
    with ExitStack() as stack:
        (stopping, a), (target, _) = (stack.enter_context(server(redis.url, db, n, *ARGS))
                                      for n in range(2))
        player = Player(a)
        player.hello("Ayşe")
        # (B's lease is written by its first beat, maybe after it listens)
        poll_until(lambda: len(redis.keys(PREFIX + "process:*")) == 2, BACKSTOP,
                   "both processes' leases")
        target.send_signal(signal.SIGSTOP)
        try:
            stopping.send_signal(signal.SIGTERM)
            log_of(stopping).wait_for(r"stopping: handing 1 sessions to processes",
                                      BACKSTOP)
        finally:
            target.send_signal(signal.SIGKILL)
            target.wait(BACKSTOP)
        assert stopping.wait(BACKSTOP) == 0
        _hung_up(player)
        _, c = stack.enter_context(server(redis.url, db, 2, *ARGS))
        _back(c, player, None)
