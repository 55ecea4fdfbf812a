"""The real `pisyedili HOST` as a process, its input a pipe: what it says when the name
or the first connection is no good, and why each retry failed once it had a session.

Servers are real: the server process on loopback (behind TLS where that is the point),
a port where nothing listens, a name that cannot resolve, a plain HTTP server, and a
socket that refuses `hello` the way a server refuses a name it will not take.
"""

from __future__ import annotations

import http.server
import os
import signal
import socket
import struct
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from fork_kit import popen, preloaded
from process_output import Output, server_process
from test_client_tls import make_certificate

from pisyedili.protocol.codec import decode, frame
from pisyedili.protocol.limits import SERVER_FRAME_LIMITS
from pisyedili.protocol.messages import make_error

CLIENT = preloaded("from pisyedili.client.cli import main; raise SystemExit(main())",
                   "pisyedili.client.cli")
BACKSTOP = 60.0
"""Seconds any one wait may take; a healthy run needs a fraction of it."""


@contextmanager
def server(tmp_path: Path, listen: str = "tcp:0:interface=127.0.0.1"
           ) -> Iterator[tuple[subprocess.Popen[str], int]]:
    """The real server process; yields it and the port it listens on."""
    with server_process("--listen", listen, "--db", str(tmp_path / "db"), "--no-announce",
                        timeout=BACKSTOP) as running:
        yield running


class Client:
    """`pisyedili ARGS` with a pipe for its keyboard and its stdout and stderr read
    together."""

    def __init__(self, tmp_path: Path, *args: str) -> None:
        env = {**os.environ, "XDG_STATE_HOME": str(tmp_path / "state")}
        self.proc = popen(
            [sys.executable, "-c", CLIENT, *args], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, encoding="utf-8",
            env=env)
        assert self.proc.stdout is not None
        self.out = Output(self.proc.stdout)

    def type(self, line: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()

    def exit_status(self) -> int:
        """How the client exited; it must exit by itself (its keyboard stays open)."""
        try:
            return self.proc.wait(BACKSTOP)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"the client did not exit:\n{self.out.text}") from None

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        for stream in (self.proc.stdin, self.proc.stdout):
            if stream is not None:
                stream.close()


@contextmanager
def client(tmp_path: Path, *args: str) -> Iterator[Client]:
    c = Client(tmp_path, *args)
    try:
        yield c
    finally:
        c.close()


def failed_at_once(tmp_path: Path, target: str, why: str) -> str:
    """Run the client at `target`; it must exit 1 saying `why`, with no traceback."""
    with client(tmp_path, target, "--name", "ayse") as c:
        assert c.exit_status() == 1, c.out.text
        text = c.out.rest()
    assert f"pisyedili: cannot connect to {target}: " in text
    assert why in text, text
    assert "Traceback" not in text and "next try" not in text, text
    return text


@pytest.mark.parametrize("name", ["tab\there", "esc\x1b[31mred", "rtl\u202eevil",
                                  "bot (easy)"])
def test_a_name_the_server_refuses_is_refused_before_connecting(
        tmp_path: Path, name: str) -> None:
    with server(tmp_path) as (_, port), client(tmp_path, f"127.0.0.1:{port}",
                                               "--name", name) as c:
        assert c.exit_status() == 2, c.out.text
        text = c.out.rest()
    assert "error: --name " in text and "the server refuses such a name" in text, text
    assert "Traceback" not in text and "connecting" not in text, text


@contextmanager
def refusing_hello(code: str, message: str, **extra: object) -> Iterator[int]:
    """A socket that answers the first `hello` with `code` and closes, as a server does
    with a name it will not take; yields its port."""
    listener = socket.create_server(("127.0.0.1", 0))

    def serve() -> None:
        conn, _ = listener.accept()
        with conn:
            conn.settimeout(BACKSTOP)
            (size,) = struct.unpack(">I", conn.recv(4, socket.MSG_WAITALL))
            hello = decode(conn.recv(size, socket.MSG_WAITALL), SERVER_FRAME_LIMITS)
            conn.sendall(frame(make_error(code, message, hello["id"], **extra)))

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield listener.getsockname()[1]
    finally:
        listener.close()
        thread.join(BACKSTOP)


def test_a_refused_hello_ends_the_client_with_the_reason(tmp_path: Path) -> None:
    why = "name: must not look like a bot's name"
    with refusing_hello("bad_field", why, field="name") as port, \
            client(tmp_path, f"127.0.0.1:{port}", "--name", "ayse") as c:
        assert c.exit_status() == 1, c.out.text
        text = c.out.rest()
    assert f"pisyedili: 127.0.0.1:{port} refused the connection: {why} (bad_field)" in text
    assert "Traceback" not in text and "lobby>" not in text, text


def test_a_closed_port_says_connection_refused(tmp_path: Path) -> None:
    with socket.socket() as bound:  # bound, never listening: connecting is refused
        bound.bind(("127.0.0.1", 0))
        failed_at_once(tmp_path, f"127.0.0.1:{bound.getsockname()[1]}",
                       "connection refused")


def test_an_unknown_host_says_name_not_found(tmp_path: Path) -> None:
    failed_at_once(tmp_path, "nonexistent.invalid", "name not found")


def test_a_certificate_for_another_name_is_a_name_mismatch(tmp_path: Path) -> None:
    key, cert = make_certificate(tmp_path, "other.example")
    listen = f"ssl:0:interface=127.0.0.1:privateKey={key}:certKey={cert}"
    with server(tmp_path, listen) as (_, port):
        failed_at_once(tmp_path, f"tls:localhost:{port}:trustRoots={cert.parent}",
                       "name mismatch")


def test_a_self_signed_certificate_is_not_trusted(tmp_path: Path) -> None:
    key, cert = make_certificate(tmp_path)
    listen = f"ssl:0:interface=127.0.0.1:privateKey={key}:certKey={cert}"
    with server(tmp_path, listen) as (_, port):
        failed_at_once(tmp_path, f"tls:localhost:{port}", "certificate is not trusted")


class _HeaderTimeout(http.server.BaseHTTPRequestHandler):
    """An HTTP server that answers `408 Request Timeout` to a request whose line does
    not come within its header timeout, as Apache does (shortened here): our `hello`
    has no line end, so this is what a client that dialled a web server's port reads."""

    timeout = 0.3

    def handle(self) -> None:
        try:
            self.raw_requestline = self.rfile.readline(65537)
        except TimeoutError:
            self.wfile.write(b"HTTP/1.0 408 Request Timeout\r\nConnection: close\r\n\r\n")
            return
        self.send_error(400)


def test_an_http_server_on_the_port_is_not_a_pis_yedili_server(tmp_path: Path) -> None:
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _HeaderTimeout)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        failed_at_once(tmp_path, f"127.0.0.1:{httpd.server_address[1]}",
                       "not a Pis Yedili server (it answers in another protocol)")
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_once_welcomed_the_client_retries_and_says_why_each_try_failed(
        tmp_path: Path) -> None:
    with server(tmp_path) as (proc, port), client(tmp_path, f"127.0.0.1:{port}",
                                                  "--name", "ayse") as c:
        c.out.wait_for(r"lobby: ")
        proc.send_signal(signal.SIGKILL)
        c.out.wait_for(r"reconnecting: the server closed the connection; next try in")
        c.out.wait_for(r"reconnecting: connection refused .*; next try in")
        assert c.proc.poll() is None, "a client that had a session keeps trying"
        c.type("/quit")
        assert c.exit_status() == 0, c.out.text
