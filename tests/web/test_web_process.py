"""`pisyedili-server --web` as an operator runs it: a process, its options, its sockets."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager

import fork_kit
import pytest
import pytest_twisted
from twisted.internet.threads import deferToThread
from web_kit import START, served
from ws_kit import ws_connect


def get(url: str) -> tuple[int, str]:
    with urllib.request.urlopen(url, timeout=10) as response:
        return response.status, response.headers["content-type"]


@pytest_twisted.ensureDeferred
async def test_the_process_serves_the_page_and_a_websocket_beside_tcp() -> None:
    with served() as server:
        assert await deferToThread(get, server.url) == (200, "text/html; charset=utf-8")
        browser = await ws_connect(server.web_port, name="ayşe")
        assert browser.welcome["server"] == "web test"
        await browser.close()
        with socket.create_connection(("127.0.0.1", server.tcp_port), timeout=10):
            pass  # the TCP port listens too
        assert server.ws_url == f"ws://127.0.0.1:{server.web_port}/ws"


@pytest.mark.parametrize(("option", "value"), [
    ("--web-origin", "play.example.org"),  # no scheme: not an origin
    ("--web-origin", "https://example.org/path"),
    ("--web-proxy", "proxy.example.org"),  # a name, not an address
])
def test_bad_web_options_are_refused_at_start(option: str, value: str) -> None:
    done = fork_kit.run([sys.executable, "-c", START, "--web", "tcp:0", option, value],
                        capture_output=True, text=True, timeout=30)
    assert done.returncode == 2
    assert option in done.stderr


def test_a_web_endpoint_that_cannot_listen_stops_the_server() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = fork_kit.run(
            [sys.executable, "-c", START, "--listen", "tcp:0:interface=127.0.0.1",
             "--web", f"tcp:{port}:interface=127.0.0.1", "--db", ":memory:",
             "--no-announce"], capture_output=True, text=True, timeout=30)
    assert done.returncode == 1
    assert "cannot listen" in done.stdout


@contextmanager
def listening_sockets(count: int) -> Iterator[list[socket.socket]]:
    """Listening dual-stack sockets on free ports, as a systemd socket unit makes them."""
    made = []
    try:
        for _ in range(count):
            sock = socket.socket(socket.AF_INET6)
            sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
            sock.bind(("::", 0))
            sock.listen()
            made.append(sock)
        yield made
    finally:
        for sock in made:
            sock.close()


# The child moves the sockets it inherited to fds 3, 4..., sets LISTEN_PID to itself
# (as systemd does) and runs the server: the test process's own fds stay untouched.
AS_SYSTEMD = """import fcntl, os
fds = [fcntl.fcntl(int(fd), fcntl.F_DUPFD, 64) for fd in os.environ["TEST_FDS"].split()]
for at, fd in enumerate(fds, start=3):
    os.dup2(fd, at)
    os.close(fd)
os.environ["LISTEN_PID"] = str(os.getpid())
""" + START


@pytest_twisted.ensureDeferred
async def test_the_web_endpoint_takes_systemds_second_socket() -> None:
    """The drop-in of docs/operating.md: `ListenStream=` twice, `index=0` and `index=1`."""
    with listening_sockets(2) as (tcp, web):
        fds = (tcp.fileno(), web.fileno())
        env = {**os.environ, "LISTEN_FDS": "2", "TEST_FDS": " ".join(map(str, fds)),
               "LISTEN_FDNAMES": "pisyedili.socket:pisyedili.socket"}
        process = subprocess.Popen(
            [sys.executable, "-c", AS_SYSTEMD, "--listen", "systemd:domain=INET6:index=0",
             "--web", "systemd:domain=INET6:index=1", "--db", ":memory:", "--no-announce"],
            pass_fds=fds, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            text=True)
        try:
            web_port = web.getsockname()[1]
            # The socket listens already: the connection waits until the server accepts.
            browser = await ws_connect(web_port, name="from-systemd")
            assert browser.welcome["type"] == "welcome"
            await browser.close()
            assert await deferToThread(get, f"http://127.0.0.1:{web_port}/") == (
                200, "text/html; charset=utf-8")
            assert tcp.getsockname()[1] != web_port
        finally:
            process.terminate()
            out, _ = process.communicate(timeout=30)
        assert process.returncode == 0, out
