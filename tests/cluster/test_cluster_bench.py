"""`pisyedili-bench load --cluster 2` and `pisyedili-bench takeover`, tiny, against the
tests' Redis (and PostgreSQL): the load bench runs end to end, spreads each table's
members over the processes and counts moves on both; the takeover bench kills a table's
process and reports when its members sat again. Their speed is judged from the figures
they print, never asserted here."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pg_kit
import pytest
from bench_kit import positive, run_load

from cluster.redis_kit import RedisAt

PACED_RATE = 80.0
TABLES = 4


def run_bench(*args: str) -> dict[str, Any]:
    return run_load("--tables", str(TABLES), "--idle", "0", "--no-fanout",
                    "--paced-think", "0", *args, timeout=180)


def test_the_cluster_round_spreads_tables_and_members_over_the_processes(
        redis: RedisAt) -> None:
    r = run_bench("--cluster", "2", "--redis-url", redis.url,
                  "--paced-rate", str(PACED_RATE))
    assert r["cluster"] == 2 and r["cluster_db"] == "memory"
    assert r["cluster_errors"] == 0 and r["errors"] == 0
    # 4 members of each of 4 tables, 2 on the table's process and 2 on the other.
    assert r["cluster_connections_by_process"] == [8, 8]
    ((first, second),) = r["cluster_moves_by_process"]
    assert first > 0 and second > 0  # tables held by both processes moved
    (detail,) = r["cluster_rounds_detail"]
    assert detail["moves"] == first + second
    assert r["cluster_moves_per_s"] == pytest.approx(detail["moves"], rel=1e-3)  # 1 s
    for key in ("cluster_moves_per_s", "cluster_last_seat_p50_ms",
                "cluster_last_seat_p99_ms", "cluster_mover_p50_ms"):
        assert positive(r[key]), (key, r[key])
    assert r["cluster_last_seat_p50_ms"] <= r["cluster_last_seat_p99_ms"]
    ((cpu_a, cpu_b),) = r["cluster_server_cpu_s"]
    if cpu_a is not None:  # /proc: the CPU of both processes, summed per move
        assert detail["server_cpu_s"] == pytest.approx(cpu_a + cpu_b, abs=0.002)
        assert r["cluster_cpu_per_move_ms"] == pytest.approx(
            detail["server_cpu_s"] * 1000 / detail["moves"], rel=1e-2)
        assert r["cluster_cpu_ratio"] == pytest.approx(
            r["cluster_cpu_per_move_ms"] / r["cpu_per_move_ms"], rel=1e-2)
    assert r["cluster_redis_cpu_s"] == [None]  # a Redis we were given is not measured
    (waited,) = r["cluster_server_waited_s"]  # time ready to run without a core
    assert waited is None or 0 <= waited < 2 * 1.0  # two processes, a 1 s window
    # Paced: one move in flight per table, a mean think time of tables / rate.
    think = TABLES * 1000 / PACED_RATE
    assert r["cluster_paced_think_ms"] == think
    for side in ("rate_single", "cluster_paced"):
        assert r[f"{side}_errors"] == 0
        expected = TABLES * 1000 / (think + r[f"{side}_mover_p50_ms"])
        assert 0.5 * expected < r[f"{side}_moves_per_s"] < 1.5 * expected, \
            (side, r[f"{side}_moves_per_s"], expected)
        assert r[f"{side}_last_seat_p50_ms"] <= r[f"{side}_last_seat_p99_ms"]


def test_postgresql_against_the_file(postgres: pg_kit.Cluster) -> None:
    r = run_bench("--db", "postgresql", "--postgres-url", postgres.url)
    assert r["store"] == "postgresql" and r["errors"] == 0
    (stored,) = r["postgres_rounds_detail"]
    assert stored["store"] == "postgresql" and stored["errors"] == 0
    assert r["rounds_detail"][0]["store"] == "file"
    assert positive(r["postgres_moves_per_s"]) and positive(r["file_moves_per_s"])
    assert r["postgres_to_file"] == pytest.approx(
        r["postgres_moves_per_s"] / r["file_moves_per_s"], rel=1e-3)
    assert r["postgres_db_cpu_s"] == [None]  # a server we were given is not measured


def test_the_takeover_bench_kills_and_times_each_return(redis: RedisAt,
                                                         postgres: pg_kit.Cluster) -> None:
    """`pisyedili-bench takeover`, one kill on two processes: the round's members were
    all seated again (its figure), whatever the time it took."""
    done = subprocess.run([sys.executable, "-m", "pisyedili.server.bench.cli", "takeover",
                           "--kills", "1", "--processes", "2", "--quiet",
                           "--redis-url", redis.url, "--postgres-url", postgres.url],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    (line,) = done.stdout.strip().splitlines()
    r = json.loads(line)
    assert (r["bench"], r["kills"], r["processes"], r["lease_s"]) == (
        "takeover", 1, 2, "default")
    (seated,) = r["seated_s"]
    assert positive(seated)
    assert r["seated_p50_s"] <= r["seated_p99_s"] <= r["seated_max_s"]
