"""`pisyedili-bench load` with tiny parameters: it runs end to end and reports every
figure. Its speed is judged from the figures it prints, never asserted here; what is
asserted is that each figure measures what it says (the fan-out bar's shape, the paced
round's pace, which its think time caps)."""

from __future__ import annotations

import socket
import struct
import sys
from typing import Any

import msgpack
import pytest
from bench_kit import positive, run_load

from pisyedili.server.bench.load import (
    FANOUT_GROUP,
    HOST,
    Child,
    default_paced_think,
    fanout_frame_bytes,
    parse,
    percentile,
    source_address,
)

ROUND_KEYS = {"moves_per_s", "moves", "connections", "errors", "frames_per_move",
              "bytes_per_move", "mover_p50_ms", "mover_p99_ms", "last_seat_p50_ms",
              "last_seat_p99_ms", "server_cpu_s", "client_cpu_s", "echo_requests_per_s",
              "echo_server_cpu_s", "echo_client_cpu_s", "fanout_moves_per_s",
              "fanout_server_cpu_s", "fanout_client_cpu_s"}
FANOUT_KEYS = ("fanout_moves_per_s", "fanout_to_echo", "ratio_to_fanout",
               "fanout_bytes_per_frame")
PACED_KEYS = ("paced_moves_per_s", "paced_mover_p50_ms", "paced_mover_p99_ms",
              "paced_last_seat_p50_ms", "paced_last_seat_p99_ms", "paced_server_cpu_s")
PACED_THINK = 50.0
BENCH_BACKSTOP = 240
"""Seconds a one-second bench may take in all (its servers' starts, 400 idle
connections, the rounds): a backstop for a hung run on a busy machine, below the
test's own timeout."""


def run_bench(*args: str) -> dict[str, Any]:
    return run_load("--tables", "2", "--idle", "400", "--paced-think", str(PACED_THINK),
                    *args, timeout=BENCH_BACKSTOP)


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
    assert_fanout(r)
    assert_paced(r, tables=2)
    assert r["idle"]["baseline"]["hello_p50_ms"] > 0
    (idle,) = r["idle"]["levels"]
    assert idle["connections"] == 400
    assert idle["hello_p50_ms"] > 0
    if idle["rss_before_kib"] is not None:  # 400: enough that freed pages cannot hide them
        assert 0 < idle["bytes_per_connection"] < 1_000_000


def assert_fanout(r: dict[str, Any]) -> None:
    for key in FANOUT_KEYS:
        assert positive(r[key]), (key, r[key])
    (detail,) = r["rounds_detail"]
    assert detail["fanout_moves_per_s"] == r["fanout_moves_per_s"]
    assert r["fanout_to_echo"] == pytest.approx(
        r["fanout_moves_per_s"] / r["echo_requests_per_s"], rel=1e-3)
    assert r["ratio_to_fanout"] == pytest.approx(
        r["moves_per_s"] / r["fanout_moves_per_s"], rel=1e-3)
    for key in ("fanout_server_cpu_s", "fanout_client_cpu_s"):
        (value,) = r[key]
        assert value is None or value >= 0
    (client_cpu,) = r["fanout_client_cpu_s"]
    if client_cpu:  # what bounds the ratio on two cores: the bar's client over our server
        per_request = client_cpu * 1000 / (r["fanout_moves_per_s"] * r["seconds"])
        assert r["fanout_client_cpu_per_request_ms"] == pytest.approx(per_request, rel=1e-3)
        assert r["fanout_client_to_server_cpu"] == pytest.approx(
            per_request / r["cpu_per_move_ms"], rel=1e-2)
    # The bar stands for a move's I/O: its frames to a table carry about the bytes
    # the real server's frames for one move do.
    assert 0.6 < FANOUT_GROUP * r["fanout_bytes_per_frame"] / r["bytes_per_move"] < 1.5


def assert_paced(r: dict[str, Any], tables: int) -> None:
    assert r["paced_think_ms"] == PACED_THINK
    assert r["paced_warmup"] >= 2 * PACED_THINK / 1000
    for key in PACED_KEYS:
        assert positive(r[key]) or (key.endswith("cpu_s") and r[key] in (None, 0)), \
            (key, r[key])
    assert r["paced_errors"] == 0
    assert r["paced_mover_p50_ms"] <= r["paced_mover_p99_ms"]
    assert r["paced_last_seat_p50_ms"] <= r["paced_last_seat_p99_ms"]
    assert_capped_by_think(r["paced_moves_per_s"], tables, PACED_THINK)


def assert_capped_by_think(moves_per_s: float, tables: int, think_ms: float) -> None:
    """One move in flight per table, each after a think time of `think_ms` on average:
    the pace cannot pass `tables` moves a think time, however fast the server (the
    margin is for the draw of think times). A busy machine only slows it, so no lower
    bound is asserted: how fast the server is belongs to the bench's figures."""
    cap = tables * 1000 / think_ms
    assert 0 < moves_per_s < 1.5 * cap, (moves_per_s, cap)


def test_an_explicit_think_time_paces_the_main_rounds_too() -> None:
    r = run_bench("--think", "20", "--no-fanout", "--idle", "0")
    assert r["think_ms"] == 20
    assert_capped_by_think(r["moves_per_s"], 2, 20)
    assert_paced(r, tables=2)  # the paced round keeps its own pace
    for key in (*FANOUT_KEYS, "fanout_client_cpu_per_request_ms",
                "fanout_client_to_server_cpu"):
        assert r[key] is None, key  # skipped: the key stays, with no value


def read_frame(sock: socket.socket) -> tuple[int, dict[str, Any]]:
    """One length-prefixed frame: its size on the wire and its decoded body."""
    head = sock.recv(4, socket.MSG_WAITALL)
    (length,) = struct.unpack("!I", head)
    body = sock.recv(length, socket.MSG_WAITALL)
    assert len(body) == length
    return length + 4, msgpack.unpackb(body)


def send_frame(sock: socket.socket, msg: dict[str, Any]) -> None:
    body = msgpack.packb(msg)
    sock.sendall(struct.pack("!I", len(body)) + body)


def test_the_fanout_server_answers_each_request_to_its_whole_group() -> None:
    child = Child([sys.executable, "-m", "pisyedili.server.bench.load", "--fanout-serve",
                   "0"])  # it binds a free port and names it
    port = child.port
    socks: list[socket.socket] = []
    try:
        silent = socket.create_connection((HOST, port), timeout=5)  # never sends: no seat
        socks.append(silent)
        welcomes = []
        for _ in range(FANOUT_GROUP + 1):
            sock = socket.create_connection((HOST, port), timeout=5)
            socks.append(sock)
            send_frame(sock, {"type": "hello"})
            welcomes.append(read_frame(sock)[1])
        assert [(w["group"], w["seat"]) for w in welcomes] == \
            [(0, 0), (0, 1), (0, 2), (0, 3), (1, 0)]
        table, alone = socks[1:1 + FANOUT_GROUP], socks[-1]
        send_frame(table[2], {"type": "move", "seq": 7})
        for sock in table:
            size, update = read_frame(sock)
            assert update["type"] == "update" and update["seq"] == 7
            assert "view" in update and size == fanout_frame_bytes(seq=7)
        send_frame(alone, {"type": "move", "seq": 8})
        assert read_frame(alone)[1]["seq"] == 8  # the other group's update never came
        table[0].close()  # a member that leaves does not hold up the rest's frames
        send_frame(table[1], {"type": "move", "seq": 9})
        for sock in table[1:]:
            assert read_frame(sock)[1]["seq"] == 9
    finally:
        for sock in socks:
            sock.close()
        child.stop()


def test_server_bots_mode() -> None:
    r = run_bench("--server-bots", "--idle", "0", "--seconds", "0.5", "--no-fanout",
                  "--paced-think", "0")
    assert r["mode"] == "server_bots" and r["connections"] == 2
    assert_left_out(r)
    assert positive(r["moves_per_s"]) and positive(r["ratio_to_echo"])
    assert r["idle"] == {"baseline": None, "levels": []}


def assert_left_out(r: dict[str, Any]) -> None:
    """`--no-fanout` and `--paced-think 0`: the keys stay, with nulls."""
    for key in FANOUT_KEYS:
        assert r[key] is None, key
    assert r["fanout_server_cpu_s"] == r["fanout_client_cpu_s"] == [None] * r["rounds"]
    assert all(detail["fanout_moves_per_s"] is None for detail in r["rounds_detail"])
    assert r["paced_think_ms"] == 0 and r["paced_warmup"] is None
    for key in PACED_KEYS:
        assert r[key] is None, key


def test_the_store_on_a_file_against_memory() -> None:
    r = run_bench("--db", "both", "--idle", "0", "--no-fanout", "--paced-think", "0")
    assert r["store"] == "both" and r["errors"] == 0
    assert_left_out(r)
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
    with pytest.raises(SystemExit):
        parse(["--paced-think", "-1"], "load")
    args = parse([], "load")
    assert args.fanout and not parse(["--no-fanout"], "load").fanout
    assert args.paced_think == default_paced_think() > 0
