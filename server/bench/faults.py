"""What `pisyedili-bench nemesis` breaks things with: cuttable links and server processes
it can kill, stop, pause and start again.

A `CutProxy` stands between one server process and Redis or PostgreSQL, on loopback
(`twisted.protocols.portforward`): cut, it drops every link it carries and closes each
new one at once, as a network partition seen from that process would; healed, it
carries links again. A `ServerProcess` is one process of the cluster on ports it keeps
across restarts (so that HAProxy and the players find it again), its output appended
to one log file for all its lives.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import IO, Any

from twisted.internet.protocol import Protocol
from twisted.protocols import portforward

from pisyedili.server.bench.services import START_TIMEOUT, end_process

HOST = "127.0.0.1"


class _Link(portforward.ProxyServer):
    """One carried connection, known to its proxy while it lives."""

    factory: CutProxy

    def connectionMade(self) -> None:
        if self.factory.cut:
            self.transport.abortConnection()
            return
        self.factory.links.add(self)
        super().connectionMade()

    def connectionLost(self, reason: Any = None) -> None:
        self.factory.links.discard(self)
        super().connectionLost(reason)  # type: ignore[no-untyped-call]


class CutProxy(portforward.ProxyFactory):
    """A TCP forwarder to `host:port` that can be cut and healed (on the reactor)."""

    protocol = _Link

    def __init__(self, host: str, port: int) -> None:
        super().__init__(host, port)
        self.cut = False
        self.links: set[_Link] = set()
        self.listening_port = 0

    def sever(self) -> None:
        """Cut: every carried link is aborted (both ends), and new ones are refused."""
        self.cut = True
        for link in list(self.links):
            link.transport.abortConnection()
            peer: Protocol | None = link.peer
            if peer is not None and peer.transport is not None:
                peer.transport.abortConnection()
        self.links.clear()

    def heal(self) -> None:
        self.cut = False


def listen_proxy(reactor: Any, host: str, port: int) -> CutProxy:
    proxy = CutProxy(host, port)
    proxy.listening_port = reactor.listenTCP(0, proxy, interface=HOST).getHost().port
    return proxy


def accepting(port: int) -> bool:
    try:
        with socket.create_connection((HOST, port), timeout=1):
            return True
    except OSError:
        return False


class ServerProcess:
    """One process of the cluster: `argv` started again and again, on its own ports."""

    def __init__(self, index: int, argv: list[str], port: int, log: Path) -> None:
        self.index, self.argv, self.port = index, argv, port
        self.log_path = log
        self.proc: subprocess.Popen[bytes] | None = None
        self._log: IO[bytes] | None = None
        self.lives = 0
        self.proxied = 0
        """Its port for HAProxy (the PROXY protocol), or 0."""
        self.health = 0
        """Its `--health` port, or 0."""

    def start(self) -> None:
        """Start it and wait until it takes connections; RuntimeError if it does not."""
        self._log = self.log_path.open("ab")
        self._log.write(f"--- life {self.lives} ---\n".encode())
        self._log.flush()
        self.lives += 1
        self.proc = subprocess.Popen(self.argv, stdin=subprocess.DEVNULL, stdout=self._log,
                                     stderr=subprocess.STDOUT)
        deadline = time.monotonic() + START_TIMEOUT
        while not accepting(self.port):  # bounded by START_TIMEOUT
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"process {self.index} did not start (exit "
                                   f"{self.proc.poll()}): see {self.log_path}")
            time.sleep(0.05)

    def signal(self, sig: signal.Signals) -> None:
        if self.proc is not None and self.proc.poll() is None:
            os.kill(self.proc.pid, sig)

    def wait(self, seconds: float) -> bool:
        """Whether it exited within `seconds`."""
        if self.proc is None:
            return True
        try:
            self.proc.wait(seconds)
        except subprocess.TimeoutExpired:
            return False
        return True

    def down(self) -> None:
        """After it exited (or to make it): reaped, its log file closed."""
        if self.proc is not None:
            self.proc.send_signal(signal.SIGCONT)  # a paused one cannot stop otherwise
            end_process(self.proc)
            self.proc = None
        if self._log is not None:
            self._log.close()
            self._log = None


def server_command() -> list[str]:
    """`pisyedili-server`, by the interpreter running the bench."""
    return [sys.executable, "-c",
            "import sys; from pisyedili.server.service.tap import main; main(sys.argv[1:])"]
