"""The shipped HAProxy configuration (systemd/haproxy-pisyedili.cfg), run by a real
`haproxy` in front of two real processes of one cluster: one TCP port and one
WebSocket port for every player, and each process still counting the player's own
address (the PROXY protocol on TCP, X-Forwarded-For on the web side).

The file is read as Debian runs it: an include after a main configuration like
Debian's own (its stats socket, and as root its `chroot`, `user` and `group`), under a
hard limit of 20,000 open files. Its layer 7 checks (`GET /ready` on each process's
`--health` port) take a frozen or a draining process out of rotation, and a player
whose process refuses the connection is sent to another (`option redispatch`).

The players connect from loopback addresses of their own (127.0.0.2, ...), HAProxy
reaches the processes from 127.0.0.1: `--max-per-address 1` refuses a second
connection from one player's address, never the proxy's.
"""

from __future__ import annotations

import csv
import io
import os
import pwd
import random
import re
import shutil
import signal
import socket
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import pytest
import websocket
from poll_kit import poll_until

from cluster.cluster_kit import BACKSTOP, Player, cluster, play_out
from cluster.redis_kit import RedisAt
from pisyedili.protocol.codec import decode, encode
from pisyedili.protocol.limits import SERVER_FRAME_LIMITS
from pisyedili.protocol.version import PROTOCOL_VERSION
from pisyedili.server.bench.services import free_port
from pisyedili.server.cluster.redis import PREFIX

SHIPPED = Path(__file__).resolve().parents[2] / "systemd" / "haproxy-pisyedili.cfg"
FILE_LIMIT = 20000
"""The hard limit on open files HAProxy runs under (`ulimit -Hn`): the shipped
`maxconn` must fit it."""

DEBIAN_MAIN = """\
global
    log stderr format short local0
{privileges}    stats socket {stats} mode 660 level admin
    stats timeout 30s

defaults
    log global
    mode http
    option httplog
    option dontlognull
    timeout connect 5000
    timeout client 50000
    timeout server 50000
"""
"""Debian's /etc/haproxy/haproxy.cfg as far as it matters here (logging to HAProxy's
own output, the stats socket in the test's folder): the shipped file is read after
it."""


def debian_main(folder: Path, stats: Path) -> str:
    """The main configuration; as root, with Debian's `chroot`, `user` and `group`."""
    privileges = ""
    if os.geteuid() == 0:
        (folder / "chroot").mkdir()
        privileges = (f"    chroot {folder / 'chroot'}\n    user haproxy\n"
                      "    group haproxy\n")
    return DEBIAN_MAIN.format(privileges=privileges, stats=stats)


def configured(tcp: int, web: int, backends: list[tuple[int, int, int]]) -> str:
    """The shipped file, its frontends on other ports and one `server` line per process
    (its TCP, web and health ports); the rest word for word."""
    text = SHIPPED.read_text(encoding="utf-8")
    text = text.replace(':7707"', f':{tcp}"').replace(':8080"', f':{web}"')
    for n, (tcp_port, web_port, health) in enumerate(backends, start=1):
        text = text.replace(f"127.0.0.1:771{n} ", f"127.0.0.1:{tcp_port} ")
        text = text.replace(f"127.0.0.1:781{n} ", f"127.0.0.1:{web_port} ")
        text = text.replace(f"check port 791{n}\n", f"check port {health}\n")
    assert not re.search(r"127\.0\.0\.1:7[78]1\d |port 791\d", text), "a port left unset"
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


@dataclass
class Front:
    """HAProxy in front of a cluster's processes: its TCP and WebSocket ports, the
    processes (`p1` is the first), and its stats socket."""

    tcp: int
    web: int
    procs: list[subprocess.Popen[str]]
    stats: Path

    def ask(self, command: str) -> str:
        """One command on HAProxy's stats socket, and its answer."""
        with socket.socket(socket.AF_UNIX) as sock:
            sock.settimeout(BACKSTOP)
            sock.connect(str(self.stats))
            sock.sendall(command.encode() + b"\n")
            chunks = []
            while chunk := sock.recv(65536):
                chunks.append(chunk)
        return b"".join(chunks).decode()

    def servers(self, backend: str = "pisyedili_tcp") -> dict[str, dict[str, str]]:
        """`show stat` of each server of `backend`, by its name."""
        rows = csv.DictReader(io.StringIO(self.ask("show stat").removeprefix("# ")))
        return {row["svname"]: row for row in rows if row["pxname"] == backend
                and row["svname"] not in ("FRONTEND", "BACKEND")}

    def holding(self) -> str:
        """The server that holds the one connection open (`p1` or `p2`)."""
        return next(name for name, row in self.servers().items() if row["scur"] == "1")

    def proc(self, server: str) -> subprocess.Popen[str]:
        return self.procs[int(server[1:]) - 1]

    def until(self, server: str, status: str, backend: str = "pisyedili_tcp") -> None:
        """Wait until HAProxy takes `server` for `status` (UP, DOWN)."""
        poll_until(lambda: self.servers(backend)[server]["status"] == status, BACKSTOP,
                   lambda: f"{server} to be {status}: {self.servers(backend)[server]}", 0.05)


@contextmanager
def behind_haproxy(redis: RedisAt, folder: Path, binary: str, *extra: str
                   ) -> Iterator[Front]:
    """Two processes of one cluster (given `extra` options) behind HAProxy, run from
    the shipped file as an include, under a hard limit of `FILE_LIMIT` open files."""
    webs, healths = [free_port(), free_port()], [free_port(), free_port()]
    # A player here answers at once, faster than any person: the rate allows it.
    with cluster(redis.url, folder, 2, "--web-proxy", "127.0.0.1", "--rate", "500",
                 "--burst", "500", *extra,
                 listen="haproxy:tcp:0:interface=127.0.0.1",
                 each=lambda n: ("--web", f"tcp:{webs[n]}:interface=127.0.0.1",
                                 "--health", str(healths[n]))) as processes:
        tcp, web = free_port(), free_port()
        stats = folder / "admin.sock"
        main, include = folder / "haproxy.cfg", folder / "pisyedili.cfg"
        main.write_text(debian_main(folder, stats), encoding="utf-8")
        include.write_text(configured(tcp, web, [(port, webs[n], healths[n]) for n, (_, port)
                                                 in enumerate(processes)]), encoding="utf-8")
        command = [binary, "-f", str(main), "-f", str(include)]
        env = {k: v for k, v in os.environ.items() if k != "PISYEDILI_ADDRESS"}
        checked = subprocess.run([*command, "-c", "-q"], capture_output=True, text=True,
                                 timeout=BACKSTOP, env=env)
        assert checked.returncode == 0, checked.stdout + checked.stderr
        log = (folder / "haproxy.log").open("w+", encoding="utf-8")
        proxy = subprocess.Popen(["prlimit", f"--nofile={FILE_LIMIT}:{FILE_LIMIT}",
                                  *command, "-db"], env=env,
                                 stdout=log, stderr=subprocess.STDOUT)
        try:
            def listening() -> bool:
                try:
                    socket.create_connection(("127.0.0.1", web), timeout=1).close()
                except OSError:
                    assert proxy.poll() is None, f"haproxy exited: {_read(log)}"
                    return False
                return True

            poll_until(listening, BACKSTOP, "haproxy to listen")
            yield Front(tcp, web, [proc for proc, _ in processes], stats)
        finally:
            proxy.terminate()
            proxy.wait(BACKSTOP)
            log.close()


@pytest.fixture
def proxied(redis: RedisAt, tmp_path: Path, haproxy_binary: str
            ) -> Iterator[tuple[int, int]]:
    """Two processes of one cluster (each `--max-per-address 1`) behind HAProxy: yields
    its TCP and WebSocket ports."""
    with behind_haproxy(redis, tmp_path, haproxy_binary, "--max-per-address", "1") as front:
        yield front.tcp, front.web


@pytest.fixture
def front(redis: RedisAt, tmp_path: Path, haproxy_binary: str) -> Iterator[Front]:
    """Two processes of one cluster behind HAProxy, each draining for an hour once told
    to stop (the test ends them)."""
    with behind_haproxy(redis, tmp_path, haproxy_binary, "--drain-seconds", "3600") as front:
        yield front


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


def test_the_include_keeps_debians_settings(front: Front) -> None:
    """The stats socket answers (the tests read HAProxy through it), the open files
    HAProxy needs fit the limit, and as root HAProxy runs as Debian's `haproxy` user.
    Unless told an address, it listens on loopback only: 127.0.0.2 (loopback too, but
    another address) is refused."""
    assert set(front.servers()) == {"p1", "p2"}
    for port in (front.tcp, front.web):
        with pytest.raises(ConnectionRefusedError):
            socket.create_connection(("127.0.0.2", port), timeout=BACKSTOP)
    info = dict(line.split(": ", 1) for line in front.ask("show info").splitlines()
                if ": " in line)
    assert int(info["Maxsock"]) <= FILE_LIMIT, info
    if os.geteuid() == 0:
        status = Path(f"/proc/{info['Pid']}/status").read_text(encoding="utf-8")
        uid = int(status.split("Uid:")[1].split()[0])
        assert uid == pwd.getpwnam("haproxy").pw_uid, status


def test_a_frozen_process_gets_no_new_players(front: Front) -> None:
    """A process paused (SIGSTOP) still accepts connections in its kernel, but answers
    no check: HAProxy takes it out of rotation, and a new player from the address it
    was hashed to is welcomed by the other process."""
    first = Player(front.tcp, source="127.0.0.2")
    first.hello("Ayşe")
    frozen = front.holding()
    front.proc(frozen).send_signal(signal.SIGSTOP)
    try:
        front.until(frozen, "DOWN")
        late = Player(front.tcp, source="127.0.0.2")
        assert late.hello("Deniz")["type"] == "welcome"
        other = "p2" if frozen == "p1" else "p1"
        assert front.servers()[other]["scur"] == "1"
    finally:
        front.proc(frozen).send_signal(signal.SIGCONT)


def test_a_draining_process_is_out_of_rotation_before_it_closes(front: Front) -> None:
    """SIGTERM: the process answers `/ready` with 503 at once and HAProxy takes it out
    of rotation, while it still runs and still serves the player it has; a new player
    from that player's address goes to the other process."""
    first = Player(front.tcp, source="127.0.0.2")
    first.hello("Ayşe")
    draining = front.holding()
    front.proc(draining).send_signal(signal.SIGTERM)
    front.until(draining, "DOWN")
    front.until(draining, "DOWN", backend="pisyedili_web")
    assert front.proc(draining).poll() is None
    first.ok("lobby_subscribe")  # still served, through the proxy
    late = Player(front.tcp, source="127.0.0.2")
    assert late.hello("Deniz")["type"] == "welcome"
    other = "p2" if draining == "p1" else "p1"
    assert front.servers()[other]["scur"] == "1"
    assert not any(m.get("code") == "shutting_down" for m in first.seen)


def test_a_player_sent_to_a_stopped_process_is_redispatched(front: Front) -> None:
    """A process gone before any check noticed (its checks are switched off here, so
    HAProxy keeps taking it for up): a new player hashed to it is not closed on, but
    sent to the other process on the last retry."""
    first = Player(front.tcp, source="127.0.0.2")
    first.hello("Ayşe")
    gone = front.holding()
    first.close()
    for backend in ("pisyedili_tcp", "pisyedili_web"):
        front.ask(f"disable health {backend}/{gone}")
    front.proc(gone).kill()
    front.proc(gone).wait(BACKSTOP)
    assert front.servers()[gone]["status"] == "no check"  # in rotation, unchecked
    late = Player(front.tcp, source="127.0.0.2")
    assert late.hello("Deniz")["type"] == "welcome"
    browser = _ws(front.web, "127.0.0.2")
    try:
        assert _ws_hello(browser, "Can")["type"] == "welcome"
    finally:
        browser.close()


def test_a_player_of_a_stopped_process_resumes_through_the_proxy(
        redis: RedisAt, tmp_path: Path, haproxy_binary: str) -> None:
    """SIGTERM of the process a seated player is connected to (its table held by the
    other): HAProxy takes it out of rotation as it drains, it hands the session over as
    it stops, and the player, reconnecting through the one port from its own address,
    resumes with its token at the other process, in its seat."""
    with behind_haproxy(redis, tmp_path, haproxy_binary) as front:
        host = Player(front.tcp, source="127.0.0.2")
        host.hello("Ayşe")
        kept = front.holding()
        guest = Player(front.tcp, source="127.0.0.3")  # hashed to the other process
        guest.hello("Mehmet")
        stopped = "p2" if kept == "p1" else "p1"
        assert front.servers()[stopped]["scur"] == "1"
        table = host.ok("create_table", rules="classic", seats=2)["table"]["id"]
        guest.ok("join_table", table=table)
        front.proc(stopped).send_signal(signal.SIGTERM)
        while guest.recv() is not None:
            pass  # served while it drains, then told it stops
        assert guest.seen[-1]["code"] == "shutting_down", guest.seen[-1]
        back = Player(front.tcp, source="127.0.0.3")
        resumed = back.request("hello", protocol=PROTOCOL_VERSION,
                               token=guest.welcome["token"], name="Mehmet")
        assert (resumed["type"], resumed.get("resumed"), resumed.get("player"),
                resumed.get("name"), resumed.get("table")) == (
            "welcome", True, guest.welcome["player"], "Mehmet", table), resumed
        assert back.wait(lambda m: m["type"] == "table")["you"]["seat"] == 1
        assert front.proc(stopped).wait(BACKSTOP) == 0
