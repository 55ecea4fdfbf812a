"""A loopback TCP forwarder to Redis that stalls one command: the first link on which a
given byte string goes towards Redis carries nothing more either way, as if Redis (or
the process, paused) never answered it; every other link, and each one made after,
is carried on. It shows how a server takes a reply that never comes to one command
of many, which no kill or pause can aim at."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from cluster.redis_kit import RedisAt
from pisyedili.server.cluster import ClusterAddress


class Stall:
    """The forwarder's state: what it waits for, and whether it stalled a link yet."""

    def __init__(self, marks: tuple[bytes, ...]) -> None:
        self.marks = marks
        self.armed = False
        self.stalled = threading.Event()
        self._lock = threading.Lock()

    def arm(self) -> None:
        """The next link that sends one of the marks is stalled."""
        with self._lock:
            self.armed = True

    def hits(self, seen: bytes) -> bool:
        with self._lock:
            if self.armed and any(mark in seen for mark in self.marks):
                self.armed = False
                self.stalled.set()
                return True
            return False


def _pump(source: socket.socket, sink: socket.socket, stall: Stall | None,
          stalled: threading.Event) -> None:
    """Bytes from `source` to `sink` until either closes or the link is stalled; with
    `stall`, each chunk (with the end of the one before, for a mark cut in two) is
    looked at first."""
    tail = b""
    try:
        while not stalled.is_set():
            chunk = source.recv(65536)
            if not chunk:
                break
            if stall is not None and stall.hits(tail + chunk):
                stalled.set()  # (held, as is everything after it, both ways)
                break
            tail = chunk[-256:]
            if not stalled.is_set():
                sink.sendall(chunk)
    except OSError:
        pass
    if not stalled.is_set():
        for end in (source, sink):
            try:
                end.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


@contextmanager
def stalling(redis: RedisAt, *marks: bytes) -> Iterator[tuple[str, Stall]]:
    """A forwarder to `redis` (its URL, and its `Stall` to arm) for as long as the
    block lasts."""
    stall = Stall(marks)
    listener = socket.create_server(("127.0.0.1", 0))
    links: list[socket.socket] = [listener]
    closing = threading.Event()

    def serve() -> None:
        while not closing.is_set():
            try:
                near, _ = listener.accept()
            except OSError:
                return
            far = socket.create_connection((redis.address.host, redis.address.port))
            links.extend((near, far))
            stalled = threading.Event()
            threading.Thread(target=_pump, args=(near, far, stall, stalled),
                             daemon=True).start()
            threading.Thread(target=_pump, args=(far, near, None, stalled),
                             daemon=True).start()

    threading.Thread(target=serve, daemon=True).start()
    port = listener.getsockname()[1]
    address = redis.address
    url = str(ClusterAddress.parse(f"redis://{address.host}:{port}/{address.db}"))
    try:
        yield url, stall
    finally:
        closing.set()
        for link in links:
            try:
                link.close()
            except OSError:
                pass
