"""A player's home cut off from Redis while its table is taken over elsewhere misses
the new holder's word: back in touch, it finds where the table is held in the cluster,
and the player's snapshot comes from there."""

from __future__ import annotations

import re
import signal
import subprocess
from contextlib import ExitStack

import pg_kit
from poll_kit import poll_until

from cluster.cluster_kit import BACKSTOP, Player
from cluster.outage_kit import server
from cluster.redis_kit import RedisAt, SeveredRedis
from pisyedili.server.cluster.redis import PREFIX

LEASE = 6
"""Seconds: long enough that the guest's session is still its home's in Redis when
the table is taken over (its home cut off renews nothing meanwhile)."""


def test_a_home_cut_off_as_its_player_s_table_is_taken_over_finds_the_new_holder(
        redis: RedisAt, postgres: pg_kit.Cluster) -> None:
    """A holds the table, the guest is connected to B, a third player to C. B is cut
    off from Redis, then A is killed (-9); the third player's request finds nobody
    listening at A, and C takes the table over at once. Its word to B, that the table
    is C's now, reaches nobody. B's links are made again: B reads the table's holder
    in Redis, the guest gets the table's snapshot, and a move it is offered there is
    accepted."""
    relay = SeveredRedis(redis.url)
    db = postgres.store()
    procs: list[subprocess.Popen[str]] = []
    extra = ("--cluster-lease", str(LEASE))
    with ExitStack() as stack:
        (a, _), (b, log_b), (c, log_c) = (
            stack.enter_context(server(url, db, n, procs, extra=extra))
            for n, url in enumerate((redis.url, relay.url, redis.url)))
        host, guest, third = Player(a), Player(b), Player(c)
        host.hello("Ayşe")
        guest.hello("Mehmet")
        third.hello("Zeynep")
        table = host.ok("create_table", rules="classic", seats=3,
                        options={"match_end": "deals:1"})["table"]["id"]
        for player in (guest, third):
            player.ok("join_table", table=table)
            player.ok("ready", ready=True)
        host.ok("start")
        joined = re.search(r"joined the cluster at \S+ as process (p\d+)", log_c.text)
        assert joined is not None, log_c.text
        taker = joined.group(1)
        relay.sever()
        log_b.wait_for("lost the cluster's Redis")
        procs[0].send_signal(signal.SIGKILL)
        procs[0].wait()
        third.send("ready", ready=True)  # to A: nobody listens there
        poll_until(lambda: redis.hash(PREFIX + f"table:{table}").get("process") == taker,
                   BACKSTOP, "C to take the table over")
        log_c.wait_for(rf"took table {table} over")
        since = len(guest.seen)
        relay.heal()
        log_b.wait_for(r"the cluster's Redis at \S+ is back")
        snapshot = guest.wait(lambda m: m["type"] == "table" and m["table"]["id"] == table,
                              since)
        assert snapshot["table"]["id"] == table
        if snapshot.get("moves"):
            assert guest.request("move", move=snapshot["moves"][0])["type"] == "ok"
    relay.close()
