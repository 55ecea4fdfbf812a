"""The shipped HAProxy configuration (systemd/haproxy-pisyedili.cfg), run by a real
`haproxy` in front of two real processes of one cluster: one TCP port and one
WebSocket port for every player, and each process still counting the player's own
address (the PROXY protocol on TCP, X-Forwarded-For on the web side).

The players connect from loopback addresses of their own (127.0.0.2, ...), HAProxy
reaches the processes from 127.0.0.1: `--max-per-address 1` refuses a second
connection from one player's address, never the proxy's.
"""

from __future__ import annotations

import os
import random
import re
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import pytest
import websocket

from cluster.cluster_kit import BACKSTOP, Player, cluster, play_out
from cluster.redis_kit import RedisAt
from pisyedili.protocol.codec import decode, encode
from pisyedili.protocol.limits import SERVER_FRAME_LIMITS
from pisyedili.protocol.version import PROTOCOL_VERSION
from pisyedili.server.bench.services import free_port
from pisyedili.server.cluster.redis import PREFIX

SHIPPED = Path(__file__).resolve().parents[2] / "systemd" / "haproxy-pisyedili.cfg"


def configured(tcp: int, web: int, backends: list[tuple[int, int]]) -> str:
    """The shipped file, its frontends on loopback ports and one `server` line per
    process; the rest word for word. Global logging goes to HAProxy's own output, and
    `maxconn` is small (HAProxy wants twice as many file descriptors)."""
    text = SHIPPED.read_text(encoding="utf-8")
    text = text.replace("log /dev/log local0", "log stderr format short local0")
    text = re.sub(r"(?m)^    maxconn \d+$", "    maxconn 100", text)  # fits any FD limit
    text = text.replace("bind :7707", f"bind 127.0.0.1:{tcp}")
    text = text.replace("bind :8080", f"bind 127.0.0.1:{web}")
    for n, (tcp_port, web_port) in enumerate(backends, start=1):
        text = text.replace(f"127.0.0.1:771{n} ", f"127.0.0.1:{tcp_port} ")
        text = text.replace(f"127.0.0.1:781{n} ", f"127.0.0.1:{web_port} ")
    assert not re.search(r"127\.0\.0\.1:7[78]1\d ", text), "a server line left unset"
    return text


@pytest.fixture(scope="session")
def haproxy_binary() -> str:
    binary = shutil.which("haproxy") or shutil.which("haproxy", path="/usr/sbin")
    if binary is None:
        reason = "haproxy is not installed (Debian: apt-get install haproxy)"
        if os.environ.get("CI") == "true":
            pytest.fail(reason)
        pytest.skip(reason)
    return binary


@pytest.fixture
def proxied(redis: RedisAt, tmp_path: Path, haproxy_binary: str
            ) -> Iterator[tuple[int, int]]:
    """Two processes of one cluster (each `--max-per-address 1`) behind HAProxy: yields
    its TCP and WebSocket ports."""
    webs = [free_port(), free_port()]
    # A player here answers at once, faster than any person: the rate allows it.
    with cluster(redis.url, tmp_path, 2, "--max-per-address", "1", "--web-proxy",
                 "127.0.0.1", "--rate", "500", "--burst", "500",
                 listen="haproxy:tcp:0:interface=127.0.0.1",
                 each=lambda n: ("--web", f"tcp:{webs[n]}:interface=127.0.0.1")
                 ) as processes:
        tcp, web = free_port(), free_port()
        cfg = tmp_path / "haproxy.cfg"
        cfg.write_text(configured(tcp, web, [(port, webs[n]) for n, (_, port)
                                             in enumerate(processes)]), encoding="utf-8")
        checked = subprocess.run([haproxy_binary, "-c", "-q", "-f", str(cfg)],
                                 capture_output=True, text=True, timeout=BACKSTOP)
        assert checked.returncode == 0, checked.stdout + checked.stderr
        log = (tmp_path / "haproxy.log").open("w+", encoding="utf-8")
        proxy = subprocess.Popen([haproxy_binary, "-db", "-f", str(cfg)],
                                 stdout=log, stderr=subprocess.STDOUT)
        try:
            deadline = time.monotonic() + BACKSTOP
            while True:
                try:
                    socket.create_connection(("127.0.0.1", web), timeout=1).close()
                    break
                except OSError:
                    assert proxy.poll() is None, f"haproxy exited: {_read(log)}"
                    assert time.monotonic() < deadline, "haproxy did not listen"
                    time.sleep(0.02)
            yield tcp, web
        finally:
            proxy.terminate()
            proxy.wait(BACKSTOP)
            log.close()


def _read(log: IO[str]) -> str:
    log.seek(0)
    return log.read()


def test_two_players_through_the_one_port_play_at_one_table(
        proxied: tuple[int, int], redis: RedisAt) -> None:
    tcp, _ = proxied
    host, guest = Player(tcp, source="127.0.0.2"), Player(tcp, source="127.0.0.3")
    host.hello("Ayşe")
    guest.hello("Ayşe")
    assert guest.welcome["name"] == "Ayşe 2"  # one cluster's names, wherever they landed
    table = host.ok("create_table", rules="classic", seats=2,
                    options={"match_end": "deals:1"})["table"]["id"]
    listed = [row["id"] for row in guest.ok("lobby_subscribe")["tables"]]
    if not listed:  # the row crosses to the guest's process through Redis: it comes next
        guest.wait(lambda m: m["type"] == "lobby_update" and m["op"] == "add"
                   and m["table"] == table)
    else:
        assert listed == [table]
    guest.ok("join_table", table=table)
    guest.ok("ready", ready=True)
    host.ok("start")
    play_out([host, guest], [], random.Random(5))
    # The cap counts each player's own address (the PROXY line), not HAProxy's: two
    # players came through one proxy address, and the second from 127.0.0.2 is refused.
    again = Player(tcp, source="127.0.0.2")
    refused = again.recv()
    assert refused is not None and refused["code"] == "too_many_connections", refused
    assert again.recv() is None
    # What the cluster counts, by address: the players', never the proxy's.
    assert redis.keys(PREFIX + "conns:*") == [PREFIX + "conns:127.0.0.2",
                                               PREFIX + "conns:127.0.0.3"]
    # `balance source` put these two addresses on different processes: one lobby.
    sessions = [redis.hash(key) for key in redis.keys(PREFIX + "session:*")]
    assert len({session["process"] for session in sessions}) == 2, sessions


def _ws(port: int, source: str) -> websocket.WebSocket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=BACKSTOP,
                                    source_address=(source, 0))
    return websocket.create_connection(f"ws://127.0.0.1:{port}/ws", socket=sock,
                                       timeout=BACKSTOP)


def _received(ws: websocket.WebSocket) -> dict[str, Any]:
    body = ws.recv()
    assert isinstance(body, bytes), body
    msg: dict[str, Any] = decode(body, SERVER_FRAME_LIMITS)
    return msg


def _ws_hello(ws: websocket.WebSocket, name: str) -> dict[str, Any]:
    ws.send_binary(encode({"type": "hello", "id": 1, "protocol": PROTOCOL_VERSION,
                           "name": name}))
    return _received(ws)


def test_a_websocket_through_the_proxy_counts_the_browsers_address(
        proxied: tuple[int, int], redis: RedisAt) -> None:
    tcp, web = proxied
    player = Player(tcp, source="127.0.0.2")  # holds the one connection 127.0.0.2 may have
    player.hello("Can")
    browser = _ws(web, "127.0.0.4")
    try:
        welcome = _ws_hello(browser, "Deniz")
        assert welcome["type"] == "welcome", welcome
        assert redis.keys(PREFIX + "conns:*") == [PREFIX + "conns:127.0.0.2",
                                                   PREFIX + "conns:127.0.0.4"]
        table = player.ok("create_table", rules="classic", seats=2)["table"]["id"]
        browser.send_binary(encode({"type": "join_table", "id": 2, "table": table}))
        joined = _received(browser)
        assert joined["type"] == "table" and joined["table"]["id"] == table, joined
        second = _ws(web, "127.0.0.4")  # X-Forwarded-For: the same browser's address
        try:
            refused = _received(second)
            assert refused["code"] == "too_many_connections", refused
        finally:
            second.close()
    finally:
        browser.close()
