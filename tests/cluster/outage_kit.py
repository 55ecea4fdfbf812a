"""What the tests of a cluster's outages share: a Redis of a test's own to kill and
start again, one process of the cluster with a short grace and its log, and a ban
made while Redis is away."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

from process_output import Output, add_operator

from cluster.cluster_kit import Player, log_of
from cluster.cluster_kit import server as cluster_server
from cluster.redis_kit import RedisAt, own_redis
from pisyedili.server.bench.services import RedisServer
from pisyedili.server.cluster import ClusterAddress

PASSWORD = "a long enough password 7"

GRACE = 2
"""Seconds a member cut off by the outage keeps its seat before a stand-in plays it:
short, so the owner's players go on meanwhile."""


@contextmanager
def redis_process(keep: bool) -> Iterator[tuple[RedisServer, RedisAt]]:
    """A redis-server of this test's own, to kill and start again on its port, and a
    way to read it."""
    redis = own_redis(keep)
    try:
        yield redis, RedisAt(ClusterAddress.parse(redis.url))
    finally:
        redis.stop()


@contextmanager
def server(url: str, db: Path | str, n: int,
           procs: list[subprocess.Popen[str]] | None = None,
           grace: float = GRACE, extra: Sequence[str] = ()) -> Iterator[tuple[int, Output]]:
    """One process of the cluster, its port and its log (which the test reads); the
    process itself goes into `procs`, for a test that kills it; `extra` options too."""
    with cluster_server(url, str(db), n, "--grace-seconds", str(grace), "--rate", "500",
                        "--burst", "500", *extra) as (proc, port):
        if procs is not None:
            procs.append(proc)
        yield port, log_of(proc)


@dataclass
class BannedWhileAway:
    """A ban its target's process has not heard of: Redis is away (`redis.start()`
    brings it back), and `target`, connected to process B (its log `log_b`), is banned
    by an operator on process A."""

    redis: RedisServer
    log_b: Output
    target: Player


@contextmanager
def banned_while_redis_is_away(db: str) -> Iterator[BannedWhileAway]:
    """Two processes on the shared store `db` and a Redis of their own; an operator
    logged in on A bans Mehmet, registered and connected to B, once both processes
    said Redis is lost: B cannot be told."""
    features = ("chat", "accounts", "moderation")
    add_operator(db, "Zeynep", PASSWORD)
    with ExitStack() as stack:
        redis, _ = stack.enter_context(redis_process(keep=False))
        (a, log_a), (b, log_b) = (stack.enter_context(server(redis.url, db, n))
                                  for n in range(2))
        operator, target = Player(a), Player(b)
        operator.hello("z", features)
        operator.ok("login", name="Zeynep", password=PASSWORD)
        target.hello("Mehmet", features)
        target.ok("register", password=PASSWORD)
        redis.kill()
        log_a.wait_for("lost the cluster's Redis")
        log_b.wait_for("lost the cluster's Redis")
        operator.ok("ban", name="Mehmet")
        yield BannedWhileAway(redis, log_b, target)
