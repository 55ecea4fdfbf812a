"""A real server process answering health checks (`--health`), and a blocking HTTP
client for its health port."""

from __future__ import annotations

import json
import socket
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.client import HTTPConnection
from typing import Any

from poll_kit import poll_until
from process_output import BACKSTOP, Output, logged_server

from pisyedili.server.bench.services import free_port


@dataclass
class Served:
    """A server process: its game port, its health port, and its log."""

    proc: subprocess.Popen[str]
    port: int
    health: int
    out: Output


@contextmanager
def health_server(*args: str) -> Iterator[Served]:
    """`pisyedili-server --health PORT ARGS` on loopback, keeping nothing, once its
    game port listens; killed after, if it still runs."""
    health = free_port()
    with logged_server("--listen", "tcp:0:interface=127.0.0.1", "--db", ":memory:",
                       "--no-announce", "--health", str(health), *args) as (proc, port, out):
        out.wait_for(r"answering health checks on .*port=(\d+)")
        yield Served(proc, port, health, out)


def check(port: int, path: str, method: str = "GET") -> tuple[int, Any]:
    """One request to the health port: its status and its JSON body (None for HEAD)."""
    conn = HTTPConnection("127.0.0.1", port, timeout=BACKSTOP)
    try:
        conn.request(method, path)
        answer = conn.getresponse()
        body = answer.read()
        assert answer.getheader("content-type") == "application/json", answer.headers
        return answer.status, json.loads(body) if body else None
    finally:
        conn.close()


def ready_turns(port: int, status: int) -> Any:
    """`/ready`'s body once it answers `status` (asked until it does)."""
    last: list[tuple[int, Any]] = []

    def turned() -> tuple[Any] | None:
        last[:] = [check(port, "/ready")]
        got, body = last[0]
        return (body,) if got == status else None

    (body,) = poll_until(turned, BACKSTOP,
                         lambda: f"/ready to answer {status} (it answers {last[-1]})")
    return body


def exchange(port: int, data: bytes) -> bytes:
    """Send `data` on a new connection and read until the server closes it."""
    with socket.create_connection(("127.0.0.1", port), timeout=BACKSTOP) as sock:
        sock.sendall(data)
        chunks = []
        while chunk := sock.recv(65536):
            chunks.append(chunk)
        return b"".join(chunks)
