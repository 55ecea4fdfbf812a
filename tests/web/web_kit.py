"""A real `pisyedili-server --web` process for the web tests, on free loopback ports.

`served()` starts the console script's code in a child process listening on
`tcp:0` for both the TCP protocol and the web endpoint (the kernel picks free ports,
so parallel runs never race for one) and reads the ports back from its JSON log.
The log is drained by a thread all along, so a chatty server never blocks on a full
pipe, and is shown whenever the server fails to start. On exit the process gets
SIGTERM, as an operator's would, and is reaped (killed if it will not go).
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import IO, Any

from fork_kit import popen
from process_output import SERVER

START = SERVER
"""`pisyedili-server` (forked, `fork_kit`)."""
LOOPBACK = "tcp:0:interface=127.0.0.1"
FAST = ("--bot-delay", "0.05", "--deal-pause", "0.2", "--grace-seconds", "5")
"""Bots, deals and dropped players at test speed; extra arguments may override them."""
START_TIMEOUT = 30.0
STOP_TIMEOUT = 15.0


@dataclass
class WebServer:
    """A running server: where to reach it, and what it has logged so far."""

    process: subprocess.Popen[str]
    tcp_port: int = 0
    web_port: int = 0
    records: list[dict[str, Any]] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)
    changed: threading.Condition = field(default_factory=threading.Condition)
    _reading: bool = True  # until the log's pipe closes

    @property
    def url(self) -> str:
        """The web client's page."""
        return f"http://127.0.0.1:{self.web_port}/"

    @property
    def ws_url(self) -> str:
        """The protocol's WebSocket."""
        return f"ws://127.0.0.1:{self.web_port}/ws"

    def log(self) -> str:
        """Everything the server wrote so far, one JSON record a line."""
        with self.changed:
            return "".join(self.lines)

    def wait_for_log(self, predicate: Any, timeout: float = 10.0) -> dict[str, Any]:
        """The first log record `predicate` accepts, waiting for it up to `timeout`."""
        deadline = time.monotonic() + timeout
        with self.changed:
            while True:
                for record in self.records:
                    if predicate(record):
                        return record
                left = deadline - time.monotonic()
                if left <= 0 or not self._reading:  # or the process has gone
                    raise AssertionError(f"no such log record; the log:\n{''.join(self.lines)}")
                self.changed.wait(min(left, 0.5))

    def _drain(self, stream: IO[str]) -> None:
        for line in stream:
            try:
                record = json.loads(line)
            except ValueError:
                record = {"message": line.rstrip("\n")}
            with self.changed:
                self.lines.append(line)
                self.records.append(record if isinstance(record, dict) else {})
                self.changed.notify_all()
        with self.changed:
            self._reading = False
            self.changed.notify_all()


def _port_from(server: WebServer, prefix: str) -> int:
    record = server.wait_for_log(lambda r: str(r.get("message", "")).startswith(prefix)
                                 or r.get("level") == "critical", START_TIMEOUT)
    if record.get("level") == "critical" or not isinstance(record.get("port"), int):
        raise AssertionError(f"the server did not start; its log:\n{server.log()}")
    return int(record["port"])


@contextmanager
def served(*extra_args: str) -> Iterator[WebServer]:
    """A server process with the protocol and the web client on loopback; `extra_args`
    are more `pisyedili-server` options (they win over the kit's own)."""
    args = [sys.executable, "-c", START, "--listen", LOOPBACK, "--web", LOOPBACK,
            "--db", ":memory:", "--no-announce", "--log-format", "json", "--name",
            "web test", *FAST, *extra_args]
    process = popen(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                    stdin=subprocess.DEVNULL, text=True, encoding="utf-8")
    assert process.stdout is not None
    server = WebServer(process)
    reader = threading.Thread(target=server._drain, args=(process.stdout,), daemon=True)
    reader.start()
    try:
        server.tcp_port = _port_from(server, "listening on")
        server.web_port = _port_from(server, "serving the web client")
        yield server
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        reader.join(timeout=STOP_TIMEOUT)
        process.stdout.close()
