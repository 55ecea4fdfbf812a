"""A real server process answering health checks (`--health`), and a blocking HTTP
client for its health port."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.client import HTTPConnection
from typing import Any

from process_output import BACKSTOP, SERVER, Output

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
    proc = subprocess.Popen(
        [sys.executable, "-c", SERVER, "--listen", "tcp:0:interface=127.0.0.1",
         "--db", ":memory:", "--no-announce", "--health", str(health), *args],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, encoding="utf-8")
    assert proc.stdout is not None
    out = Output(proc.stdout)
    try:
        port = int(out.wait_for(r"listening on .*port=(\d+)").group(1))
        out.wait_for(r"answering health checks on .*port=(\d+)")
        yield Served(proc, port, health, out)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        proc.stdout.close()


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
    """`/ready`'s body once it answers `status` (asked every 20 ms, up to BACKSTOP)."""
    deadline = time.monotonic() + BACKSTOP
    while True:
        got, body = check(port, "/ready")
        if got == status:
            return body
        assert time.monotonic() < deadline, f"/ready still answers {got}: {body}"
        time.sleep(0.02)


def exchange(port: int, data: bytes) -> bytes:
    """Send `data` on a new connection and read until the server closes it."""
    with socket.create_connection(("127.0.0.1", port), timeout=BACKSTOP) as sock:
        sock.sendall(data)
        chunks = []
        while chunk := sock.recv(65536):
            chunks.append(chunk)
        return b"".join(chunks)
