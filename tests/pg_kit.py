"""A real PostgreSQL for the tests: a throwaway cluster, or the server a variable names.

With `PISYEDILI_TEST_POSTGRES=postgresql://...` the tests use that server (its user
may create schemas in the URL's database). Otherwise `Cluster.start` makes one in a
temporary folder from Debian's binaries, on a free loopback port, with fsync off (it
is thrown away), as the load bench does: the starter is the bench's
(`pisyedili.server.bench.services.Postgres`). Each test gets a fresh store
(`Cluster.store`), a schema of its own. Where neither is possible the PostgreSQL
tests skip, saying why, except under CI=true, where they fail.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import threading
from collections.abc import Iterator
from typing import NoReturn
from urllib.parse import urlsplit

import psycopg
import skip_kit

from pisyedili.server.bench.services import Postgres

ENV = "PISYEDILI_TEST_POSTGRES"


def unavailable(why: str) -> NoReturn:
    """Skip the test that needs PostgreSQL, or fail it in CI (where it must run)."""
    skip_kit.unavailable("PostgreSQL", why)


class Cluster(Postgres):
    """The bench's PostgreSQL, its statements run through psycopg: a test makes many
    stores, and a connection is quicker than starting `psql` for each."""

    def sql(self, statement: str) -> None:
        with psycopg.connect(self.url, autocommit=True) as conn:
            conn.execute(statement)


@contextlib.contextmanager
def cluster() -> Iterator[Cluster | str]:
    """The cluster the tests use, or why there is none (a test then calls `unavailable`)."""
    given = os.environ.get(ENV)
    try:
        found = Cluster(given) if given else Cluster.start()
    except (RuntimeError, OSError, subprocess.TimeoutExpired) as e:
        yield str(e)
        return
    try:
        yield found
    finally:
        found.stop()


@contextlib.contextmanager
def own_cluster() -> Iterator[Cluster]:
    """A cluster of the test's own, to stop and start (the session's serves the rest)."""
    try:
        cluster = Cluster.start()
    except (RuntimeError, OSError) as e:
        unavailable(str(e))
        raise
    try:
        yield cluster
    finally:
        cluster.stop()


READY = b"Z\x00\x00\x00\x05"
"""The head of PostgreSQL's ReadyForQuery: the last message of its answer to a query."""


class LostReply:
    """A TCP relay in front of PostgreSQL that loses one answer, as a network cut at
    the worst moment would: `arm(marker)`, and the first request holding `marker` goes
    through; PostgreSQL runs it (and commits it, outside a transaction) and answers,
    and the relay keeps that answer back and closes both ends. The client sees its
    connection lost and cannot know the statement landed. Everything else, and every
    connection after, is relayed as it comes. `arm(first, second, ...)` loses one
    answer to each marker in turn (the next is looked for once one was found)."""

    def __init__(self, url: str) -> None:
        target = urlsplit(url)
        self._target = (target.hostname or "127.0.0.1", target.port or 5432)
        self._listener = socket.create_server(("127.0.0.1", 0))
        port = self._listener.getsockname()[1]
        self.url = target._replace(
            netloc=target.netloc.replace(f":{self._target[1]}", f":{port}")).geturl()
        self._markers: list[bytes] = []
        self._cutting: socket.socket | None = None  # the client end whose answer is lost
        self.cut = threading.Event()
        self._lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    def arm(self, *markers: bytes) -> None:
        with self._lock:
            self._markers = list(markers)

    def close(self) -> None:
        self._listener.close()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            server = socket.create_connection(self._target)
            threading.Thread(target=self._requests, args=(client, server), daemon=True).start()
            threading.Thread(target=self._answers, args=(server, client), daemon=True).start()

    def _answered(self, held: bytes) -> bool:
        """Whether `held`, the answer kept back so far, is whole."""
        return READY in held

    def _requests(self, client: socket.socket, server: socket.socket) -> None:
        while chunk := _read(client):
            with self._lock:
                if self._markers and self._markers[0] in chunk:
                    self._markers.pop(0)
                    self._cutting = client  # before it goes: its answer is the one lost
            try:
                server.sendall(chunk)
            except OSError:
                break
        close_all(client, server)

    def _answers(self, server: socket.socket, client: socket.socket) -> None:
        held = b""
        while chunk := _read(server):
            if self._cutting is client:
                held += chunk
                if self._answered(held):  # the server is done with it: lose the answer
                    self.cut.set()  # (before the client can see its connection go)
                    close_all(client, server)
                    return
                continue
            try:
                client.sendall(chunk)
            except OSError:
                break
        close_all(client, server)


class HeldReply(LostReply):
    """`LostReply`'s relay (in front of PostgreSQL, or of Redis) that, once armed,
    holds back what the server answers on the link it found the marker on (that answer
    and every one after it, since a link is answered in order) until `release()`: a
    process stalled on one statement half-way through what it was doing. What that
    process sends goes through meanwhile. `cut` is set once the answer is held."""

    def __init__(self, url: str) -> None:
        super().__init__(url)
        self._released = threading.Event()

    def release(self) -> None:
        self._released.set()

    def _answers(self, server: socket.socket, client: socket.socket) -> None:
        while chunk := _read(server):
            if self._cutting is client:
                self.cut.set()
                self._released.wait()
            try:
                client.sendall(chunk)
            except OSError:
                break
        close_all(client, server)


def _read(sock: socket.socket) -> bytes:
    try:
        return sock.recv(65536)
    except OSError:
        return b""


def close_all(*socks: socket.socket) -> None:
    for sock in socks:
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)
        sock.close()
