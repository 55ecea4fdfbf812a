"""The reactor's handle on the store: `Archive` runs every `Store` call on one thread.

Whatever the backend, its calls block (a disk, a database server), so the reactor
never makes one itself: it hands a function of the store to `Archive`, which runs it
on the store's thread and answers with a Deferred.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from twisted.internet.defer import Deferred, fail, succeed
from twisted.internet.threads import deferToThreadPool
from twisted.logger import Logger
from twisted.python.failure import Failure

from pisyedili.server.store.base import Store, Unreachable
from pisyedili.server.table.effects import MatchOver
from pisyedili.server.worker import serial_pool

log = Logger()


def not_kept(failure: Failure, table: int) -> None:
    """A finished match the store could not keep, said: with the store's message when
    it could not be written (PostgreSQL out of reach: an outage, and play goes on), with
    its traceback otherwise (a defect)."""
    error = failure.value
    if isinstance(error, Unreachable):
        log.critical("store: match at table {table} not kept: the store could not be "
                     "written ({why})", table=table, why=str(error))
    else:
        log.failure("store: match at table {table} not kept", failure, table=table)


def failed(what: str, then: str = "") -> Callable[[Failure], None]:
    """What says that the store's `what` failed: in one line when the store was out of
    reach (an outage, which the server outlives: `then` says what comes of it), with its
    traceback otherwise (a defect)."""
    def said(failure: Failure) -> None:
        if isinstance(failure.value, Unreachable):
            log.warn("store: {what} failed: the store could not be reached ({why}){then}",
                     what=what, why=str(failure.value), then=f"; {then}" if then else "")
        else:
            log.failure("store: {what} failed", failure, what=what)
    return said


T = TypeVar("T")


class Archive:
    """The reactor's handle on a `Store`: every call runs on one dedicated thread.

    One thread, not the reactor's shared pool: calls run in the order they were made
    (a `flush` or `close` comes after every write before it), the connection is never
    used by two threads at once, and a write never queues behind a bot's search.
    `adbapi.ConnectionPool` would do the same with a DB-API cursor in place of the
    `Store` methods, which a PostgreSQL store would not share.
    """

    def __init__(self, open_store: Callable[[], Store], reactor: Any) -> None:
        self._open_store = open_store
        self._store: Store | None = None
        self._reactor = reactor
        # A write cut short by a dying server is rolled back by the store's database,
        # and `close` drains them anyway.
        self._pool = serial_pool("pisyedili-store", minthreads=1)
        self._closed = False

    @property
    def reactor(self) -> Any:
        """The reactor this archive answers on (its thread pool does other slow work)."""
        return self._reactor

    @property
    def store(self) -> Store:
        if self._store is None:
            raise RuntimeError("the store is not open")
        return self._store

    def open(self) -> Deferred[None]:
        """Start the thread and open (and migrate) the store on it; fails if it cannot."""
        self._pool.start()

        def opened() -> None:
            self._store = self._open_store()

        return self.call(opened)

    def call(self, fn: Callable[..., Any], *args: Any) -> Deferred[Any]:
        """Run `fn(*args)` on the store's thread; its result (or failure) in a Deferred."""
        return deferToThreadPool(self._reactor, self._pool, fn, *args)

    def use(self, fn: Callable[[Store], T]) -> Deferred[T]:
        """Run `fn(store)` on the store's thread, once it is open (calls queued before
        `open` finishes wait for it); its result in a Deferred."""
        return self.call(lambda: fn(self.store))

    def record(self, match: MatchOver) -> Deferred[Any]:
        """Hand a finished match to the store; a failure is logged (play goes on)."""
        if self._closed or not self._pool.started:
            log.warn("store not open: match at table {table} not kept", table=match.table_id)
            return Deferred()
        # Read on the thread: the store is opened there, before anything queued after.
        d = self.use(lambda store: store.record_match(match))
        d.addCallbacks(
            lambda match_id: log.info("store: match {id} kept (table {table})",
                                      id=match_id, table=match.table_id),
            lambda f: not_kept(f, match.table_id))
        return d

    def prune(self, keep_days: float) -> Deferred[Any]:
        d = self.use(lambda store: store.prune(keep_days))
        d.addCallbacks(
            lambda n: log.info("store: {n} matches older than {days} days forgotten",
                               n=n, days=keep_days) if n else None,
            failed("pruning", "the old matches are forgotten at the next pruning, in a "
                   "day"))
        return d

    def flush(self) -> Deferred[Any]:
        """Fires once every call made before it has run."""
        return self.call(lambda: None)

    def close(self) -> Deferred[None]:
        """Let pending writes finish, close the store, stop the thread."""
        if self._closed or not self._pool.started:
            self._closed = True
            return succeed(None)
        self._closed = True

        def close_store() -> None:
            if self._store is not None:
                self._store.close()

        closing = self.call(close_store)
        closing.addErrback(failed("close"))

        def stop(_: object) -> None:
            self._pool.stop()  # the thread is idle now: joins at once

        closing.addBoth(stop)
        return closing

    @property
    def available(self) -> bool:
        """The store is open and takes calls: reads may be asked of it."""
        return not self._closed and self._pool.started and self._store is not None

    def query(self, fn: Callable[[Store], T]) -> Deferred[T]:
        """Run the read `fn(store)` on the store's thread; its result in a Deferred."""
        if not self.available:
            return fail(RuntimeError("the store is not open"))
        return self.use(fn)
