"""Real server processes joined to one cluster by `--cluster`: what they share."""

from __future__ import annotations

import signal
import sys
from pathlib import Path

import pytest
from process_output import SERVER, running
from twisted.python import usage

from cluster.cluster_kit import BACKSTOP, Player, cluster
from cluster.redis_kit import RedisAt
from pisyedili.server.cluster.redis import PREFIX
from pisyedili.server.service.tap import ServerOptions


def test_names_and_ids_are_unique_across_the_processes(redis: RedisAt,
                                                       tmp_path: Path) -> None:
    with cluster(redis.url, tmp_path, 2) as [(_, a), (_, b)]:
        players = [Player(port) for port in (a, b, a, b)]
        welcomes = [p.hello(name) for p, name in zip(players, ["Ali", "Ali", "ALİ", "Veli"],
                                                      strict=True)]
        assert [w["name"] for w in welcomes] == ["Ali", "Ali 2", "ALİ 3", "Veli"]
        assert len({w["player"] for w in welcomes}) == 4
        assert redis.command("GET", PREFIX + "name:ali") == str(welcomes[0]["player"])
        tables = [p.ok("create_table", rules="classic", seats=2)["table"]["id"]
                  for p in players[:2]]
        assert tables[0] != tables[1]
        rows = [redis.eventually(lambda r: r.hash(PREFIX + f"table:{tables[0]}")),
                redis.eventually(lambda r: r.hash(PREFIX + f"table:{tables[1]}"))]
        hosts = {row["process"] for row in rows}
        assert len(hosts) == 2  # each row names the process that holds the table
        private = players[2].ok("create_table", rules="classic", seats=2,
                                private=True)["table"]
        assert redis.command("GET", PREFIX + f"code:{private['code']}") == str(private["id"])
        # From another process: by its code, and not by its id (it is private).
        assert players[3].request("join_table", table=private["id"])["code"] == "private_table"
        joined = players[3].ok("join_table", code=private["code"].lower())
        assert joined["table"]["id"] == private["id"]
        assert players[3].request("join_table", code="ZZZZZZ")["code"] == "already_at_table"
        stranger = Player(b)
        stranger.hello("Zeynep")
        assert stranger.request("join_table", code="ZZZZZZ")["code"] == "no_such_table"
        assert stranger.request("join_table", table=999)["code"] == "no_such_table"


def test_a_dropped_session_keeps_its_name_for_its_grace(redis: RedisAt,
                                                        tmp_path: Path) -> None:
    with cluster(redis.url, tmp_path, 2, "--grace-seconds", "30") as [(_, a), (_, b)]:
        first = Player(a)
        first.hello("Ayşe")
        first.close()
        second = Player(b)
        assert second.hello("Ayşe")["name"] == "Ayşe 2"  # held through the grace
        sessions = redis.eventually(lambda r: r.keys(PREFIX + "session:*")[1:] and
                                    r.keys(PREFIX + "session:*"))
        assert len(sessions) == 2
        ttls = sorted(redis.command("PTTL", key) for key in sessions)
        assert 0 < ttls[0] <= 30_000


def test_the_per_address_cap_counts_every_process(redis: RedisAt, tmp_path: Path) -> None:
    with cluster(redis.url, tmp_path, 2, "--max-per-address", "2") as [(_, a), (_, b)]:
        held = [Player(a), Player(a)]
        for n, player in enumerate(held):
            player.hello(f"p{n}")
        third = Player(b)
        refused = third.recv()
        assert refused is not None and refused["code"] == "too_many_connections"
        assert third.recv() is None  # and closed


def test_a_bad_cluster_address_is_refused_before_anything_starts() -> None:
    options = ServerOptions()
    with pytest.raises(usage.UsageError, match="--cluster: a cluster is addressed as"):
        options.parseOptions(  # type: ignore[no-untyped-call]
            ["--cluster", "http://localhost:6379"])
    options = ServerOptions()
    options.parseOptions(["--cluster", "redis://127.0.0.1:7000/3"])  # type: ignore[no-untyped-call]
    assert str(options["cluster"]) == "redis://127.0.0.1:7000/3"


def test_a_server_that_cannot_reach_its_cluster_stops(tmp_path: Path) -> None:
    with running(sys.executable, "-c", SERVER, "--listen", "tcp:0:interface=127.0.0.1",
                 "--db", str(tmp_path / "p.db"), "--no-announce",
                 "--cluster", "redis://127.0.0.1:1/0") as (proc, out):
        out.wait_for("cannot join the cluster", BACKSTOP)
        assert proc.wait(BACKSTOP) != 0
        assert "Unhandled error" not in out.rest()  # its ports, never started, stop too


def test_a_restarted_process_brings_its_tables_back_to_the_cluster(
        redis: RedisAt, tmp_path: Path) -> None:
    """A process killed and started again on its own file carries its tables on, as a
    lone server does, and lists them to the cluster again under its new name."""
    with cluster(redis.url, tmp_path, 1) as [(first, a)]:
        host = Player(a)
        host.hello("Ayşe")
        table = host.ok("create_table", rules="classic", seats=2)["table"]["id"]
        old = redis.eventually(lambda r: r.hash(PREFIX + f"table:{table}"))["process"]
        first.send_signal(signal.SIGKILL)
        first.wait()
    with cluster(redis.url, tmp_path, 2) as [(_, a), (_, b)]:
        row = redis.eventually(lambda r: r.hash(PREFIX + f"table:{table}"))
        assert row["process"] in ("p2", "p3")  # the restarted one: p1 was the first run
        watcher = Player(b)
        watcher.hello("Can")
        listed = redis.eventually(lambda r: watcher.ok("lobby_subscribe")["tables"])
        assert [t["id"] for t in listed] == [table]
        assert Player(a).hello("Ayşe")["name"] == "Ayşe 2"  # the host's name is held
        mine = Player(a)  # its old name's lease runs out: its table stays listed here
        mine.hello("Deniz")
        assert [t["id"] for t in mine.ok("lobby_subscribe")["tables"]] == [table]
        _checked_since_gone(redis, old, row["process"])
        assert [t["id"] for t in mine.ok("lobby_subscribe")["tables"]] == [table]
        assert not any(m["type"] == "lobby_update" for m in mine.seen)


def _checked_since_gone(redis: RedisAt, gone: str, alive: str) -> None:
    """Once the lease of process `gone` ran out in Redis, process `alive` renewed its own
    twice: each renewal asks Redis, in the same turn, whether the processes whose tables
    it lists still live, and the first one's answer is back long before the second."""
    redis.eventually(lambda r: not r.command("EXISTS", PREFIX + f"process:{gone}"),
                     BACKSTOP)
    lease = PREFIX + f"process:{alive}"
    for _ in range(2):
        _renewed(redis, lease, int(redis.command("PEXPIRETIME", lease)))


def _renewed(redis: RedisAt, lease: str, ends: int) -> None:
    """`lease` (a key) set to end later than at `ends` (Unix ms, as Redis keeps it)."""
    redis.eventually(lambda r: int(r.command("PEXPIRETIME", lease)) > ends, BACKSTOP)
