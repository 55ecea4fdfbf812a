"""`pisyedili-bench load` with tiny parameters: it runs end to end and reports every
figure. Its speed is judged from the figures it prints, never asserted here."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest

from pisyedili.server.load_bench import parse, percentile, source_address

ROUND_KEYS = {"moves_per_s", "moves", "connections", "errors", "frames_per_move",
              "bytes_per_move", "mover_p50_ms", "mover_p99_ms", "last_seat_p50_ms",
              "last_seat_p99_ms", "server_cpu_s", "client_cpu_s", "echo_requests_per_s",
              "echo_server_cpu_s", "echo_client_cpu_s"}


def run_bench(*args: str) -> dict[str, Any]:
    done = subprocess.run([sys.executable, "-m", "pisyedili.server.bench", "load",
                           "--tables", "2", "--seconds", "1", "--warmup", "0.3",
                           "--rounds", "1", "--idle", "50", *args],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.strip().splitlines()
    assert len(lines) == 1, done.stdout
    result: dict[str, Any] = json.loads(lines[0])
    return result


def positive(value: object) -> bool:
    return isinstance(value, (int, float)) and value > 0


def test_scripted_tables_report_every_figure() -> None:
    r = run_bench("--rules", "cardiva")
    assert r["mode"] == "scripted" and r["rules"] == "cardiva" and r["connections"] == 8
    assert r["errors"] == 0
    for key in ("moves_per_s", "echo_requests_per_s", "ratio_to_echo", "mover_p50_ms",
                "mover_p99_ms", "last_seat_p50_ms", "last_seat_p99_ms"):
        assert positive(r[key]), (key, r[key])
    assert r["mover_p50_ms"] <= r["mover_p99_ms"]
    assert r["mover_p50_ms"] <= r["last_seat_p50_ms"]
    # Each move: the mover's `ok` and one `update` per member, so about five frames.
    assert 4.5 <= r["frames_per_move"] <= 7, r["frames_per_move"]
    assert 100 < r["bytes_per_move"] < 20_000
    for key in ("server_cpu_s", "client_cpu_s", "echo_server_cpu_s", "echo_client_cpu_s"):
        values = r[key]
        assert isinstance(values, list) and len(values) == 1
        assert values[0] is None or values[0] >= 0  # None: no /proc on this system
    (detail,) = r["rounds_detail"]
    assert ROUND_KEYS <= set(detail)
    assert r["idle"]["baseline"]["hello_p50_ms"] > 0
    (idle,) = r["idle"]["levels"]
    assert idle["connections"] == 50
    assert idle["hello_p50_ms"] > 0
    if idle["rss_before_kib"] is not None:
        assert 0 < idle["bytes_per_connection"] < 1_000_000


def test_server_bots_mode() -> None:
    r = run_bench("--server-bots", "--idle", "0", "--seconds", "0.5")
    assert r["mode"] == "server_bots" and r["connections"] == 2
    assert positive(r["moves_per_s"]) and positive(r["ratio_to_echo"])
    assert r["idle"] == {"baseline": None, "levels": []}


def test_the_store_on_a_file_against_memory() -> None:
    r = run_bench("--db", "both", "--idle", "0")
    assert r["store"] == "both" and r["errors"] == 0
    assert positive(r["file_moves_per_s"]) and positive(r["file_to_memory"])
    (stored,) = r["file_rounds_detail"]
    assert stored["store"] == "file" and stored["db_bytes"] > 0  # the journal wrote
    assert r["rounds_detail"][0]["store"] == "memory"


def test_helpers() -> None:
    assert percentile([], 50) is None
    assert percentile([3.0, 1.0, 2.0], 50) == 2.0
    assert percentile([float(i) for i in range(100)], 99) == 99.0
    addresses = [source_address(i) for i in range(2000)]
    assert len(set(addresses)) == 2000
    assert all(a.startswith("127.") and not a.endswith((".0", ".255"))
               and a != "127.0.0.1" for a in addresses)
    with pytest.raises(SystemExit):
        parse(["--tables", "0"], "load")
