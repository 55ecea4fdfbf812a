"""`pisyedili-server status --cluster`: the live processes read from Redis, each with
its name, address, uptime, tables and sessions; a process stopping shows draining,
then is gone."""

from __future__ import annotations

import json
import signal
import sys
from pathlib import Path
from typing import Any

import fork_kit
from poll_kit import poll_until
from process_output import SERVER

from cluster.cluster_kit import Player, cluster
from cluster.redis_kit import RedisAt
from pisyedili.server.bench.services import free_port
from pisyedili.server.interproc.messages import VERSION

STATUS_TIMEOUT = 60.0
DRAIN = 10
"""Seconds B still serves after SIGTERM: long enough for `status` to see it drain."""


def status(url: str, *args: str) -> dict[str, Any]:
    done = fork_kit.run([sys.executable, "-c", SERVER, "status", "--cluster", url,
                         *args, "--json"], text=True, capture_output=True,
                        timeout=STATUS_TIMEOUT, check=False)
    assert done.returncode == 0, done.stderr
    report: dict[str, Any] = json.loads(done.stdout)
    return report


def by_port(report: dict[str, Any]) -> dict[int, dict[str, Any]]:
    return {int(p["address"].rpartition(":")[2]): p for p in report["processes"]}


def test_status_shows_each_process_its_tables_sessions_and_drain(redis: RedisAt,
                                                                  tmp_path: Path) -> None:
    def each(n: int) -> tuple[str, ...]:
        """B drains (it has a health port to answer 503 on) for `DRAIN` seconds."""
        return ("--health", str(free_port()), "--drain-seconds", str(DRAIN)) if n else ()

    with cluster(redis.url, tmp_path, 2, each=each) as [(_, a), (proc_b, b)]:
        on_a, on_b, idle_b = Player(a), Player(b), Player(b)
        for player, name in ((on_a, "Ali"), (on_b, "Veli"), (idle_b, "Ayşe")):
            player.hello(name)
        table_a = on_a.ok("create_table", rules="classic", seats=2)["table"]["id"]
        table_b = on_b.ok("create_table", rules="classic", seats=2)["table"]["id"]

        def settled() -> dict[int, dict[str, Any]] | None:
            seen = by_port(status(redis.url))
            counts = {port: (p["tables"], p["sessions"]) for port, p in seen.items()}
            return seen if counts == {a: ([table_a], 1), b: ([table_b], 2)} else None

        seen = poll_until(settled, STATUS_TIMEOUT, "both processes with their tables")
        assert [p["draining"] for p in seen.values()] == [False, False]
        assert all(p["uptime"] is not None and p["uptime"] >= 0 for p in seen.values())
        assert seen[a]["process"] != seen[b]["process"]
        assert [p["messages"] for p in seen.values()] == [VERSION, VERSION]

        proc_b.send_signal(signal.SIGTERM)
        poll_until(lambda: by_port(status(redis.url)).get(b, {}).get("draining"),
                   STATUS_TIMEOUT, "B shown draining")
        assert by_port(status(redis.url))[a]["draining"] is False
        poll_until(lambda: b not in by_port(status(redis.url)), STATUS_TIMEOUT + DRAIN,
                   "B gone once it stopped")
        assert list(by_port(status(redis.url))) == [a]


def test_the_table_for_people_names_every_process(redis: RedisAt, tmp_path: Path) -> None:
    with cluster(redis.url, tmp_path, 2, "--cluster-name", "web") as [(_, a), (_, b)]:
        def table() -> str | None:
            done = fork_kit.run([sys.executable, "-c", SERVER, "status", "--cluster",
                                 redis.url], text=True, capture_output=True,
                                timeout=STATUS_TIMEOUT, check=False)
            assert done.returncode == 0, done.stderr
            return done.stdout if f":{a}" in done.stdout and f":{b}" in done.stdout \
                else None

        lines = poll_until(table, STATUS_TIMEOUT, "both processes listed").splitlines()
        assert lines[0] == f"cluster {redis.url}: 2 live processes"
        assert lines[1].split() == ["PROCESS", "NAME", "ADDRESS", "UP", "STATE",
                                    "SESSIONS", "TABLES"]
        assert len(lines) == 4
        assert all(" web " in line and " serving " in line for line in lines[2:])
