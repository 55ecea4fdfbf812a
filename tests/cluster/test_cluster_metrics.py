"""The cluster's metrics on each process's `/metrics` (`--health`): messages relayed
between two processes, the Redis round trip of the lease, a table taken over from a
process paused past its lease, and that process's missed renewal once it wakes."""

from __future__ import annotations

import signal
from collections.abc import Callable
from pathlib import Path

import pg_kit
from metrics_kit import scrape
from poll_kit import poll_until

from cluster.cluster_kit import BACKSTOP, cluster
from cluster.redis_kit import RedisAt
from cluster.test_cluster_failover import _one_deal_started
from pisyedili.server.bench.services import free_port


def _value(port: int, name: str) -> float:
    return scrape(port).get((name, ()), 0.0)


def _counted(port: int, name: str) -> Callable[[], bool]:
    """Whether the process at health port `port` counted `name` at least once."""
    return lambda: _value(port, name) > 0


def test_relays_round_trips_takeovers_and_a_missed_lease_are_counted(
        redis: RedisAt, postgres: pg_kit.Cluster, tmp_path: Path) -> None:
    health = [free_port(), free_port()]
    with cluster(redis.url, tmp_path, 2, db=postgres.store(),
                 each=lambda n: ("--health", str(health[n]))) as [(owner, a), (_, b)]:
        # The guest, on the other process, joins through it (both stay connected).
        _host, _guest, _table = _one_deal_started(a, b)
        for name, what in (("pisyedili_relayed_messages_total",
                            "messages relayed from the other process"),
                           ("pisyedili_redis_round_trip_seconds_count",
                            "a lease renewal's round trip")):
            for port in health:
                poll_until(_counted(port, name), BACKSTOP, what, 0.05)
        at_owner = scrape(health[0])
        assert at_owner[("pisyedili_connections", (("transport", "tcp"),))] == 1
        assert at_owner[("pisyedili_sessions", (("transport", "relayed"),))] == 1  # the guest
        assert at_owner[("pisyedili_tables", (("state", "playing"),))] == 1
        assert scrape(health[1])[("pisyedili_sessions", (("transport", "tcp"),))] == 1
        assert _value(health[1], "pisyedili_takeovers_total") == 0
        owner.send_signal(signal.SIGSTOP)
        try:
            poll_until(lambda: _value(health[1], "pisyedili_takeovers_total") == 1,
                       BACKSTOP, "the table taken over", 0.05)
        finally:
            owner.send_signal(signal.SIGCONT)
        poll_until(lambda: _value(health[0], "pisyedili_lease_renewals_missed_total") == 1,
                   BACKSTOP, "the woken process to find its lease ran out", 0.05)
