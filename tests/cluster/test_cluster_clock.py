"""A turn's clock stands still while its table is being taken over: the table's process
is killed on a player's turn, another process takes the table over once the killed
one's lease runs out, and the turn has the time it had left."""

from __future__ import annotations

import signal
from pathlib import Path

import pg_kit

from cluster.cluster_kit import LEASE, Msg, Player, cluster
from cluster.redis_kit import RedisAt


def _timed(msg: Msg) -> bool:
    return msg["type"] in ("update", "table") and "deadline" in msg


def test_a_turn_keeps_its_time_over_a_takeover(
        redis: RedisAt, postgres: pg_kit.Cluster, tmp_path: Path) -> None:
    """The outage lasts at least the lease; the snapshot of the table taken over has
    not lost it."""
    with cluster(redis.url, tmp_path, 2, "--turn-seconds", "60",
                 db=postgres.store()) as [(owner, a), (_, b)]:
        host, guest = Player(a), Player(b)
        host.hello("Ayşe")
        guest.hello("Mehmet")
        table = host.ok("create_table", rules="classic", seats=2,
                        options={"match_end": "deals:1"})["table"]["id"]
        guest.ok("join_table", table=table)
        guest.ok("ready", ready=True)
        host.ok("start")
        before = guest.wait(_timed)  # the first turn: the table's last command
        owner.send_signal(signal.SIGKILL)
        owner.wait()
        since = len(guest.seen)
        # Taken over by the guest's own process: its seat in a snapshot again.
        after = guest.wait(lambda m: m["type"] == "table", since)
        assert after["view"]["turn"] == before["view"]["turn"]
        assert after["deadline"] > before["deadline"] - LEASE / 2, (before, after)
