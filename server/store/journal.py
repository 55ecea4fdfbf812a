"""What a restart needs, written as it happens: tables, their commands, sessions.

A table core is deterministic (`table/core.py`): its setup and the commands it was
given, with their times, are its whole state. So the server keeps, in its store
(`Store.write_journal`), every open table's setup and every command it accepted, and
every session by the hash of its resume token. A restart reads them back
(`recovery.py`) and replays each table into a fresh core.

At each deal's start the core itself is kept too (pickled: it is our own object, in
our own file, and this is a cache): a restart then replays only the commands after
it. The snapshot is used only by the very code that wrote it (`core_code` tells), so
after an upgrade the tables are rebuilt from their commands, which stay the truth.

Nothing is told to anyone before it is written: while rows wait to be committed,
everything a connection would send waits behind them (`after_commit`), in order. The rows
of one reactor turn go in one transaction at the end of it (group commit), so a
burst of moves costs one commit, and a move whose reply or update anyone received
is in the store. A SQLite file is in WAL mode with `synchronous = NORMAL`: a commit
survives the process being killed at any moment (not, without an fsync per commit,
a power cut, which may lose the last commits but never corrupts the file).

A commit that fails (a full disk, a database out of reach) does not stop play: its
rows are kept, with every row after them, until the store takes them again; then they
are written, in order (`_catch_up`). What waited for them depends on whose journal it
is. A server's own store is the only one its restart reads, so what waited is sent and
play goes on from memory: a crash before the catch-up loses it, as the log says. A
cluster's shared journal (`fence`) is what another process reads to take a table
over, so nothing may be told before it is there: what waited stays held, and so does
everything sent after it, until the catch-up has written it (`holding`); meanwhile the
connections refuse requests at once (`cluster_unavailable`), so a player meets a clear
refusal rather than silence, and a process killed meanwhile took with it only moves
nobody saw acknowledged.
"""

from __future__ import annotations

import functools
import hashlib
import os
import pickle
import sys
import time
from collections.abc import Callable, Collection
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgpack
from twisted.internet.defer import Deferred
from twisted.internet.threads import deferToThreadPool
from twisted.logger import Logger
from twisted.python.threadpool import ThreadPool

from pisyedili.server import metrics
from pisyedili.server.clock import Clock, Delayed
from pisyedili.server.store import open_store
from pisyedili.server.store.base import (
    TABLE_OPS,
    JournalOp,
    JournalRows,
    Store,
    StoreError,
    is_url,
)
from pisyedili.server.table.commands import Command, from_record, to_record
from pisyedili.server.table.journal import SavedTable, Setup, is_last_word
from pisyedili.server.worker import serial_pool

if TYPE_CHECKING:
    from pisyedili.server.table.core import TableCore

log = Logger()

CATCH_UP_SECONDS = 2.0
"""Seconds between two tries to write what a journal that fell behind keeps."""

HELD_CATCH_UP_SECONDS = 1.0
"""The same for a journal that holds its sends back meanwhile (`holding`): each
reply waits for it, so it tries sooner."""

BEHIND_LIMIT = 200_000
"""Rows a journal that fell behind keeps at most: a move's row takes about 250 bytes
kept (`tracemalloc`), so some 50 MB, more with the deals' snapshots among them. Past
that it gives up, and writes nothing more until the server restarts."""


def token_hash(token: str) -> bytes:
    """What is kept of a resume token. The token is 32 random bytes, so a plain SHA-256
    is enough: there is nothing to guess that a slow hash would protect."""
    return hashlib.sha256(token.encode()).digest()


@functools.cache
def core_code() -> str:
    """A fingerprint of the code a pickled core depends on: the core's modules, the
    rules engine, whether that is compiled (a deal pickled by the mypyc build does not
    load into the interpreted class, nor the other way), the Python version. A snapshot
    from other code is not used."""
    from pisyedili.server import rules
    from pisyedili.server.table import commands, default_move, effects, seats
    from pisyedili.server.table import core as table_core

    digest = hashlib.sha256(f"{sys.version_info[:2]} compiled={rules.COMPILED}".encode())
    files = [Path(m.__file__ or "") for m in (table_core, seats, commands, effects,
                                               default_move)]
    files += sorted(Path(rules.__file__ or "").parent.glob("*.py"))
    for path in files:
        digest.update(path.name.encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:32]


@dataclass(frozen=True)
class SavedSession:
    player_id: int
    token: bytes  # its hash
    name: str
    address: str


@dataclass
class Saved:
    """Everything a restart reads back, in the order it was written."""

    tables: list[SavedTable]
    sessions: list[SavedSession]
    last_table: int
    last_player: int
    unreadable: list[int] = field(default_factory=list)
    """Tables whose stored commands could not be read: they are not rebuilt."""
    session_accounts: dict[int, int] = field(default_factory=dict)
    """By player id: the account each logged-in session belongs to."""


@dataclass
class _Commit:
    """One transaction of the journal on its way to a database server."""

    ops: list[JournalOp]
    waiting: list[tuple[Callable[..., object], tuple[Any, ...]]]
    """What was held back for these rows: sent once they are committed."""
    holders: dict[int, int] | None = None
    again: bool = False
    """Rows kept from a failed commit, which may have landed all the same (its
    connection lost as the database committed): `Store.write_journal`'s `again`."""
    error: Exception | None = None
    fenced: set[int] = field(default_factory=set)


def read_saved(rows: JournalRows, next_seq: dict[int, int],
               only: Callable[[int], bool] | None = None) -> Saved:
    """What `rows` (`Store.read_journal`) hold, as `Saved`: of the tables `only` lets
    through (all without it); `next_seq` gets each table's next command number."""
    if only is not None:
        rows = replace(rows, tables=[t for t in rows.tables if only(t[0])])
    tables: dict[int, SavedTable] = {}
    for table_id, opened_at, setup in rows.tables:
        tables[table_id] = SavedTable(table_id, opened_at, setup)
        next_seq[table_id] = 0
    start: dict[int, int] = {}  # by table: the first command after its snapshot
    for table_id, seq, code, core in rows.snapshots:
        if code != core_code() or table_id not in tables:
            continue  # other code wrote it: the commands are replayed from the start
        try:
            tables[table_id].core = pickle.loads(core)
        except Exception as e:  # a cache: its loss costs a longer replay
            log.warn("table {table}: its snapshot does not load ({error}); replaying "
                     "every command", table=table_id, error=repr(e))
            continue
        start[table_id] = seq
    unreadable: set[int] = set()
    for table_id, seq, at, blob in rows.commands:
        if only is None or table_id in tables:
            next_seq[table_id] = seq + 1
        if table_id in unreadable or table_id not in tables \
                or seq < start.get(table_id, 0):
            continue
        try:
            tables[table_id].commands.append((at, from_record(msgpack.unpackb(blob))))
        except (ValueError, TypeError, msgpack.UnpackException) as e:
            log.error("table {table}: stored command {seq} is unreadable ({error}); "
                      "the table is not rebuilt", table=table_id, seq=seq, error=str(e))
            unreadable.add(table_id)
    sessions = [SavedSession(*row) for row in rows.sessions]
    last_table = max([rows.counters.get("table", 0), *tables])
    last_player = max([rows.counters.get("player", 0),
                       *(s.player_id for s in sessions)])
    # Older servers kept whether a table is rated beside its setup, not in it.
    for table_id in rows.rated_tables:
        if table_id in tables:
            tables[table_id].setup.setdefault("rated", True)
    return Saved([t for t in tables.values() if t.id not in unreadable], sessions,
                 last_table, last_player, sorted(unreadable),
                 dict(rows.session_accounts))


class StoreJournal:
    """The tables' `Journal` (`pisyedili.server.table.journal`), in a store of its own
    (the `Archive`'s store is another, on the store's thread: a SQLite file takes both
    connections).

    A SQLite file's journal commits on the reactor's thread: its commits do not fsync
    (WAL, `synchronous = NORMAL`), so one costs tens of microseconds and the reactor
    does not wait on the disk; one per reactor turn. A database server's (`threaded`,
    PostgreSQL) commits on a thread of its own, since each is a round trip: one at a
    time, in order, and what waits for one is sent when it lands; rows written
    meanwhile go in the next.
    """

    @classmethod
    def open(cls, where: str | os.PathLike[str], clock: Clock) -> StoreJournal:
        """The journal in the store at `where` (`open_store`), on a connection of its own
        (committing on a thread for a database server, when `clock` is a reactor)."""
        return cls(open_store(where), clock,
                   threaded=is_url(where) and hasattr(clock, "callFromThread"))

    def __init__(self, store: Store, clock: Clock, threaded: bool = False) -> None:
        self.store = store
        self.path = store.path
        self._clock = clock
        self._ops: list[JournalOp] = []
        self._outbox: list[tuple[Callable[..., object], tuple[Any, ...]]] = []
        self._flush_call: Delayed | None = None
        self._draining = False
        self._seq: dict[int, int] = {}  # next command number, by table
        self._broken = False
        self._behind: list[JournalOp] | None = None
        """Rows a failed commit did not write, and those since, to write once the store
        takes them again; None while the journal keeps up."""
        self._catch_up_call: Delayed | None = None
        self._catching_up: tuple[list[JournalOp], _Commit] | None = None
        self._closed = False
        self._holders: dict[int, int] | None = None  # with a fence: table -> its count
        self._on_fenced: Callable[[set[int]], Collection[object]] | None = None
        self.commits = 0
        self._inflight: _Commit | None = None
        self._pool: ThreadPool | None = None
        self._reactor: Any = clock  # a reactor when `threaded`: it takes the results
        if threaded:  # started at the first commit: twistd may fork before the reactor runs
            self._pool = serial_pool("pisyedili-journal", minthreads=1)

    @property
    def keeping_up(self) -> bool:
        """Whether the store took the last commit: False while rows a commit could not
        write are kept for the catch-up, and for good once the journal gave up."""
        return self._behind is None and not self._broken

    @property
    def holding(self) -> bool:
        """Whether every send waits until the store takes the rows a failed commit left:
        a shared journal's (`fence`) while it is behind, and for good once it gave up.
        Requests are refused meanwhile (`server/net/dispatch.py`)."""
        return self._holders is not None and (self._behind is not None or self._broken)

    @property
    def backlog_rows(self) -> int:
        """Rows written but not committed yet: those waiting for the next commit, the
        commit in flight's, and those a failed commit left for the catch-up."""
        inflight = self._inflight
        return len(self._ops) + len(self._behind or ()) + \
            (len(inflight.ops) if inflight is not None else 0)

    # -- reading back -------------------------------------------------------------------

    def load(self) -> Saved:
        """The open tables with their commands, the sessions, and the last ids used."""
        return read_saved(self.store.read_journal(), self._seq)

    def go_on(self, table_id: int, next_seq: int, holder: int | None = None) -> None:
        """A table another process kept in this shared journal is this one's now: its
        commands are numbered on from `next_seq`, as its holder number `holder`
        (`Store.hold_table`), under a fence."""
        self._seq[table_id] = next_seq
        if self._holders is not None and holder is not None:
            self._holders[table_id] = holder

    def fence(self, on_fenced: Callable[[set[int]], Collection[object]]) -> None:
        """Write each table's rows only while this process is still its holder: the
        processes of a cluster share this journal, and one taken for dead (paused, or
        cut off for longer than its lease) may wake to find its tables taken over.
        Such a table's rows are not written, `on_fenced(tables)` lets the tables go,
        and what waited on those rows is never sent to the objects it returns (the
        connections of their members), but their hang-ups (`last_word`): nothing
        acknowledges a move that was not kept."""
        self._holders = {}
        self._on_fenced = on_fenced

    # -- writing ------------------------------------------------------------------------

    def after_commit(self, fn: Callable[..., object], *args: Any) -> None:
        if self._broken and self._holders is not None:
            return  # what it tells of is never written: it is never told
        if self._ops or self._draining or self._inflight is not None or self.holding:
            self._outbox.append((fn, args))
        else:
            fn(*args)

    def table_opened(self, table_id: int, at: float, setup: Setup) -> None:
        self._seq[table_id] = 0
        if self._holders is not None:
            self._holders[table_id] = 0
        self._write("table_opened", table_id, at, setup)
        self._write("counter", "table", table_id)

    def command(self, table_id: int, at: float, command: Command) -> None:
        seq = self._seq.get(table_id, 0)
        self._seq[table_id] = seq + 1
        self._write("command", table_id, seq, at, msgpack.packb(to_record(command)))

    def snapshot(self, core: TableCore) -> None:
        self._write("snapshot", core.id, self._seq.get(core.id, 0), core_code(),
                    pickle.dumps(core, pickle.HIGHEST_PROTOCOL))

    def table_closed(self, table_id: int) -> None:
        self._seq.pop(table_id, None)
        self._write("table_closed", table_id)

    def session_opened(self, player_id: int, token: bytes, name: str, address: str,
                       at: float) -> None:
        self._write("session_opened", player_id, token, name, address, at)
        self._write("counter", "player", player_id)

    def session_moved(self, player_id: int, token: bytes, name: str, address: str,
                      at: float) -> None:
        self._write("session_moved", player_id, token, name, address, at)

    def session_forgotten(self, player_id: int) -> None:
        self._write("session_forgotten", player_id)

    def session_changed(self, player_id: int, token: bytes, name: str,
                        account: int | None) -> None:
        self._write("session_changed", player_id, token, name)
        self._write("session_account", player_id, account)

    def _write(self, kind: str, *values: Any) -> None:
        if self._broken or self._closed:
            return  # closed: the goodbyes' disconnections; a restart marks everyone away
        self._ops.append((kind, values))
        if self._flush_call is None:
            self._flush_call = self._clock.callLater(0, self.flush)

    def flush(self) -> None:
        """Commit what waits, in one transaction, then send what waited on it."""
        if self._flush_call is not None and self._flush_call.active():
            self._flush_call.cancel()
        self._flush_call = None
        if self._inflight is not None:
            return  # flushed again when the commit in flight lands
        ops, self._ops = self._ops, []
        if self._behind is not None:  # kept for the catch-up
            self._keep(ops)
            if not self.holding:  # what waited goes now
                self._drain()
            return
        if ops and self._pool is not None:
            self._send_off(ops)
            return
        if ops:
            self._commit(ops)
        if not self.holding:
            self._drain()

    def _commit(self, ops: list[JournalOp]) -> None:
        started = time.perf_counter()
        try:
            fenced = self.store.write_journal(ops, self._holding(ops))
        except StoreError as e:
            self._fell_behind(e, ops)
            return
        metrics.JOURNAL_COMMIT.observe(time.perf_counter() - started)
        self.commits += 1
        self._written(ops, fenced, self._outbox)

    def _holding(self, ops: list[JournalOp]) -> dict[int, int] | None:
        """The holder numbers of the tables `ops` write, under a fence."""
        holders = self._holders
        if holders is None:
            return None
        return {values[0]: holders[values[0]] for kind, values in ops
                if kind in TABLE_OPS and values[0] in holders}

    def _written(self, ops: list[JournalOp], fenced: set[int],
                 *waiting: list[tuple[Callable[..., object], tuple[Any, ...]]]) -> None:
        """After a commit: forget the holders of tables it closed; and tables it found
        fenced are let go, with what waited for their members."""
        if self._holders is None:
            return
        for kind, values in ops:
            if kind == "table_closed":
                self._holders.pop(values[0], None)
        if not fenced:
            return
        for table_id in fenced:
            self._holders[table_id] = -1  # no holder's number: anything later is fenced too
            self._seq.pop(table_id, None)
        log.critical("tables {tables} are held by another process now (this one was taken "
                     "for dead: paused, or cut off from the cluster for longer than its "
                     "lease): it lets them go, and their members reconnect to them",
                     tables=sorted(fenced))
        assert self._on_fenced is not None
        silenced = {id(target) for target in self._on_fenced(fenced)}
        for items in waiting:
            items[:] = [(fn, args) for fn, args in items
                        if id(getattr(fn, "__self__", None)) not in silenced
                        or is_last_word(fn)]

    def _fell_behind(self, error: Exception, ops: list[JournalOp]) -> None:
        """A full disk, a lost database: the rows not written are kept, with every row
        after them, to be written in order once the store takes them (`_catch_up`).
        A server's own journal sends what waited for them, and play goes on from memory:
        a crash before the catch-up loses it (a restart would find the tables as they
        were). A shared journal holds it, and all that follows (`holding`)."""
        if self._behind is None:
            if self._holders is not None:
                log.critical("the journal could not be written ({error}): nothing is "
                             "sent until {path} takes what waits for it (tried every "
                             "{seconds} s), and requests are refused meanwhile "
                             "(cluster_unavailable)", error=str(error), path=self.path,
                             seconds=HELD_CATCH_UP_SECONDS)
            else:
                log.critical("the journal could not be written ({error}): play goes on, "
                             "and what it should hold is kept here, to be written once "
                             "{path} takes it again (tried every {seconds} s); a crash "
                             "before then loses it", error=str(error), path=self.path,
                             seconds=CATCH_UP_SECONDS)
            self._behind = []
        self._behind[:0] = ops
        self._keep([])
        self._next_catch_up()

    def _keep(self, ops: list[JournalOp]) -> None:
        """Rows for the catch-up; past `BEHIND_LIMIT`, the journal gives up."""
        assert self._behind is not None
        self._behind.extend(ops)
        if len(self._behind) > BEHIND_LIMIT:
            self._behind = None
            self._broken = True
            if self._holders is not None:
                self._outbox.clear()  # held for rows that will never be written
            if self._catch_up_call is not None and self._catch_up_call.active():
                self._catch_up_call.cancel()
            log.critical("the journal fell more than {limit} rows behind and gives up: "
                         "live tables and sessions will NOT survive a restart from now "
                         "on; fix {path} and restart the server", limit=BEHIND_LIMIT,
                         path=self.path)

    def _next_catch_up(self) -> None:
        if self._behind is None or self._closed or self._catching_up is not None:
            return
        if self._catch_up_call is None or not self._catch_up_call.active():
            seconds = CATCH_UP_SECONDS if self._holders is None else HELD_CATCH_UP_SECONDS
            self._catch_up_call = self._clock.callLater(seconds, self._catch_up)

    def _catch_up(self) -> None:
        """Write what is kept, in one transaction (on the journal's thread for a
        database server), and keep up again once all of it is. What a shared journal
        held waits for it; nothing else does."""
        self._catch_up_call = None
        if self._behind is None or self._closed or self._catching_up is not None:
            return
        self._keep(self._ops)
        self._ops = []
        held = self.holding
        if not held:
            self._drain()
        if self._behind is None:
            return
        attempt = list(self._behind)
        waiting: list[tuple[Callable[..., object], tuple[Any, ...]]] = []
        if held:
            waiting, self._outbox = self._outbox, []
        commit = _Commit(attempt, waiting, self._holding(attempt), again=True)
        self._catching_up = (attempt, commit)
        if self._pool is None:
            self._write_commit(commit)
            self._caught_up(attempt, commit)
            return
        landing = self._on_thread(commit)
        landing.addCallback(lambda _: self._caught_up(attempt, commit))
        landing.addErrback(lambda f: log.failure("the journal's catch-up failed", f))

    def _on_thread(self, commit: _Commit) -> Deferred[None]:
        """`_write_commit` on the journal's thread: fires on the reactor once done."""
        assert self._pool is not None
        if not self._pool.started:
            self._pool.start()
        return deferToThreadPool(self._reactor, self._pool, self._write_commit, commit)

    def _write_commit(self, commit: _Commit) -> None:
        """Write `commit`, keeping its error: whatever it was, the commit lands (and
        nothing that waited on it is sent as if it were written)."""
        started = time.perf_counter()
        try:
            commit.fenced = self.store.write_journal(commit.ops, commit.holders,
                                                     again=commit.again)
        except Exception as e:  # whatever it was, the rows stay kept
            commit.error = e
            return
        metrics.JOURNAL_COMMIT.observe(time.perf_counter() - started)

    def _caught_up(self, attempt: list[JournalOp], commit: _Commit) -> None:
        if self._catching_up is None or self._catching_up[1] is not commit:
            return  # `close` saw it land first
        self._catching_up = None
        if self._behind is None:
            return  # it gave up meanwhile
        if commit.error is not None:
            self._outbox[:0] = commit.waiting  # held still, before what came meanwhile
            self._next_catch_up()
            return
        del self._behind[:len(attempt)]
        self.commits += 1
        self._written(attempt, commit.fenced, commit.waiting, self._outbox)
        self._drain(commit.waiting)  # what it told of is written
        if self._behind or self._ops:  # rows came while it was written
            self._catch_up()
            return
        self._behind = None
        log.info("the journal is written again: the {count} rows kept meanwhile are in "
                 "{path}", count=len(attempt), path=self.path)
        self._drain()  # what came meanwhile waited for those rows alone

    def _send_off(self, ops: list[JournalOp]) -> None:
        """Commit `ops` on the journal's thread; what waits for them goes with them."""
        commit = _Commit(ops, self._outbox, self._holding(ops))
        self._outbox = []
        self._inflight = commit
        landing = self._on_thread(commit)
        landing.addCallback(lambda _: self._landed(commit))
        landing.addErrback(lambda f: log.failure("the journal's commit failed", f))

    def _landed(self, commit: _Commit) -> None:
        """A commit is done: send what waited for it, then commit what came meanwhile
        (what was held back meanwhile waits for that), or send that too."""
        if self._inflight is not commit:
            return  # `close` saw it land first
        self._inflight = None
        if commit.error is not None:
            self._fell_behind(commit.error, commit.ops)
        else:
            self.commits += 1
            self._written(commit.ops, commit.fenced, commit.waiting, self._outbox)
        if self.holding:  # its rows went to the catch-up, and what waited with them
            if not self._broken:
                self._outbox[:0] = commit.waiting
        else:
            self._drain(commit.waiting)  # what is held back meanwhile queues after the rest
        if self._ops:
            self.flush()
        elif not self.holding:
            self._drain()

    def _drain(self, items: list[tuple[Callable[..., object], tuple[Any, ...]]] | None = None
               ) -> None:
        """Send what waited (`items`, or the outbox) in order, and what it holds back."""
        items = self._outbox if items is None else items
        self._draining = True
        try:
            i = 0
            while i < len(items):
                fn, args = items[i]
                i += 1
                try:
                    fn(*args)
                except Exception:
                    log.failure("sending after a commit failed")
            items.clear()
        finally:
            self._draining = False

    def close(self) -> None:
        """Commit what waits and close the store (the server is stopping)."""
        if self._closed:
            return
        if self._pool is not None:
            pool, self._pool = self._pool, None
            if pool.started:
                pool.stop()  # the commit in flight, if any, is done once its thread is joined
            if self._inflight is not None:
                self._landed(self._inflight)
            if self._catching_up is not None:
                self._caught_up(*self._catching_up)
        self.flush()
        if self._catch_up_call is not None and self._catch_up_call.active():
            self._catch_up_call.cancel()
        if self._behind:  # a last try: the server stops
            commit = _Commit(list(self._behind), [], self._holding(self._behind),
                             again=True)
            self._write_commit(commit)
            if commit.error is not None:
                log.critical("the journal could not write the {count} rows it kept "
                             "({error}): live tables and sessions will NOT survive this "
                             "restart", count=len(commit.ops), error=str(commit.error))
                self._outbox.clear()  # held: what it tells of was not written
            else:
                self._behind = None
                self._drain()
        self._closed = True
        self.store.close()
