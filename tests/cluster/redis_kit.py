"""What the cluster tests read from Redis: a blocking client, RESP by hand (enough for
looking at keys; the server's own client is txredisapi)."""

from __future__ import annotations

import os
import socket
import threading
from collections.abc import Callable
from typing import Any, TypeVar

import pytest
from pg_kit import LostReply, close_all
from poll_kit import poll_until

from pisyedili.server.bench.services import NotInstalled, RedisServer
from pisyedili.server.cluster import ClusterAddress

T = TypeVar("T")


def own_redis(keep: bool = False) -> RedisServer:
    """A redis-server of the caller's own (`RedisServer`, which it stops); without one
    installed the test skips, saying why, except under CI=true, where it fails."""
    try:
        return RedisServer(keep)
    except NotInstalled as e:
        if os.environ.get("CI") == "true":
            pytest.fail(str(e))
        pytest.skip(str(e))


class RedisAt:
    """One command at a time over a fresh connection to the test database."""

    def __init__(self, address: ClusterAddress) -> None:
        self.address = address

    @property
    def url(self) -> str:
        return str(self.address)

    def command(self, *args: object) -> Any:
        with socket.create_connection((self.address.host, self.address.port),
                                      timeout=10) as sock:
            stream = sock.makefile("rb")
            sock.sendall(_encode("SELECT", self.address.db) + _encode(*args))
            _read(stream)  # +OK
            return _read(stream)

    def eventually(self, read: Callable[[RedisAt], T], timeout: float = 10.0) -> T:
        """What `read` finds once it finds something: a server writes there after it
        answered its client (the writes that only tell the other processes)."""
        return poll_until(lambda: read(self), timeout, "a value written to Redis")

    def now_ms(self) -> int:
        """Redis's own clock, in milliseconds: the one its keys' lives run on."""
        seconds, micros = self.command("TIME")
        return int(seconds) * 1000 + int(micros) // 1000

    def end_ms(self, key: str) -> int:
        """When `key`, as it is now, ends on Redis's clock (`now_ms`; read after its
        TTL, so never early); a key that is gone ends now."""
        left = int(self.command("PTTL", key))
        return self.now_ms() + max(0, left)

    def keys(self, pattern: str) -> list[str]:
        return sorted(self.command("KEYS", pattern))

    def hash(self, key: str) -> dict[str, str]:
        flat = self.command("HGETALL", key)
        return dict(zip(flat[::2], flat[1::2], strict=True))


class LostRedisReply(LostReply):
    """`pg_kit.LostReply` in front of Redis: the reply held back is lost once a line of
    it came whole (a command's reply ends its line)."""

    def _answered(self, held: bytes) -> bool:
        return held.endswith(b"\r\n")


class SilentRedis(LostReply):
    """`pg_kit.LostReply` in front of Redis that, once armed, never answers on the link
    it found the marker on (a Redis or a network that hangs): its client gives up."""

    def _answered(self, held: bytes) -> bool:
        return False


class SeveredRedis(LostReply):
    """`pg_kit.LostReply`'s relay in front of Redis, to cut one process off from it:
    `sever()` closes every link it carries and every one made after, until `heal()`
    (a network cut between that process and Redis, the others unaware)."""

    def __init__(self, url: str) -> None:
        self._links: list[socket.socket] = []
        self._severed = threading.Event()
        super().__init__(url)

    def sever(self) -> None:
        with self._lock:
            self._severed.set()
            links, self._links = self._links, []
        close_all(*links)

    def heal(self) -> None:
        self._severed.clear()

    def _requests(self, client: socket.socket, server: socket.socket) -> None:
        with self._lock:
            severed = self._severed.is_set()
            if not severed:
                self._links += [client, server]
        if severed:
            close_all(client, server)
            return
        super()._requests(client, server)


def _encode(*args: object) -> bytes:
    parts = [a if isinstance(a, bytes) else str(a).encode() for a in args]
    return b"*%d\r\n" % len(parts) + b"".join(b"$%d\r\n%s\r\n" % (len(p), p) for p in parts)


def _read(stream: Any) -> Any:
    line = stream.readline()
    kind, rest = line[:1], line[1:-2]
    if kind == b"+":
        return rest.decode()
    if kind == b"-":
        raise RuntimeError(rest.decode())
    if kind == b":":
        return int(rest)
    if kind == b"$":
        size = int(rest)
        if size < 0:
            return None
        data = stream.read(size + 2)[:-2]
        return data.decode()
    if kind == b"*":
        return [_read(stream) for _ in range(int(rest))]
    raise RuntimeError(f"unreadable reply {line!r}")
