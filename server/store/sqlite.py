"""The SQLite backend of `Store`: everything the server keeps, in one file.

Synchronous, and the standard library only; the server reaches it through `Archive`
(archive.py), which runs every call on one dedicated thread, and the journal through
a second `SqliteStore` of its own on the reactor's thread (journal.py). The schema
is `schema.VERSIONS` in SQLite's dialect; the version a file is at is its
`PRAGMA user_version`. Every `sqlite3.Error` leaves a method as a `StoreError`
(`Conflict` for a broken uniqueness rule), so callers never see SQLite.
"""

from __future__ import annotations

import functools
import os
import sqlite3
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any, ParamSpec, TypeVar

from twisted.logger import Logger

from pisyedili.server.store.base import (
    Conflict,
    StoreError,
)
from pisyedili.server.store.files import private_database, private_dir
from pisyedili.server.store.schema import (
    SCHEMA_VERSION,
    SQLITE,
    VERSIONS,
    Version,
    refuse_newer,
)
from pisyedili.server.store.sql import SqlStore

log = Logger()
P = ParamSpec("P")
R = TypeVar("R")

MEMORY = ":memory:"
"""A store that keeps nothing past the process (`--db :memory:`, tests)."""


# -- errors --------------------------------------------------------------------------------

@contextmanager
def _translated() -> Iterator[None]:
    try:
        yield
    except sqlite3.IntegrityError as e:
        raise Conflict(str(e)) from e
    except sqlite3.Error as e:
        raise StoreError(str(e)) from e


def _guarded(fn: Callable[P, R]) -> Callable[P, R]:
    """`fn` raising `StoreError`s where SQLite raised its own."""
    @functools.wraps(fn)
    def guarded(*args: P.args, **kwargs: P.kwargs) -> R:
        with _translated():
            return fn(*args, **kwargs)
    return guarded


# -- the schema, in SQLite ---------------------------------------------------------------

class _Executor:
    """A data step's view of the connection (schema.Executor)."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        return self._conn.execute(sql, params).fetchall()

    def run_many(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        self._conn.executemany(sql, rows)


def _step(version: Version) -> Callable[[sqlite3.Connection], None]:
    def step(conn: sqlite3.Connection) -> None:
        # Statement by statement: `executescript` would commit the migration's transaction.
        for statement in SQLITE.statements(version.ddl):
            conn.execute(statement)
        if version.fill is not None:
            version.fill(_Executor(conn))
    return step


MIGRATIONS: Sequence[Callable[[sqlite3.Connection], None]] = tuple(
    _step(version) for version in VERSIONS)
"""`MIGRATIONS[i]` takes a file from version i to i + 1 (`schema.VERSIONS[i]`)."""


def _migrate(conn: sqlite3.Connection) -> int:
    """Bring the schema to `SCHEMA_VERSION`, one transaction per step; the old version.

    A database newer than this code is refused: running old code on it could lose data.
    """
    old = int(conn.execute("PRAGMA user_version").fetchone()[0])
    refuse_newer(old)
    for version in range(old, SCHEMA_VERSION):
        with _transaction(conn):
            MIGRATIONS[version](conn)
            conn.execute(f"PRAGMA user_version = {version + 1}")
        log.info("store: schema migrated to version {version}", version=version + 1)
    return old


@contextmanager
def _transaction(conn: sqlite3.Connection) -> Iterator[None]:
    """BEGIN IMMEDIATE (the write lock at once: no deadlock upgrading a read), then
    COMMIT, or ROLLBACK if the block or the commit failed."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise


def connect(path: str | os.PathLike[str]) -> sqlite3.Connection:
    # The file holds password and token hashes and live decks: it is made (or made
    # again) 0600 before SQLite opens it, and SQLite gives its -wal and -shm that mode.
    if os.fspath(path) != MEMORY:
        private_database(path)
    # Autocommit (isolation_level None): transactions are explicit, so a migration's
    # DDL and a match's rows commit exactly where this module says. Not bound to the
    # opening thread: `Archive` hands the connection to its one worker thread.
    conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    conn.execute("PRAGMA foreign_keys = ON")
    conn.execute("PRAGMA busy_timeout = 5000")  # a `backup` from another process
    return conn


# -- the store -------------------------------------------------------------------------------

class SqliteStore(SqlStore):
    """The store in one SQLite file (or `:memory:`), WAL-journalled.

    WAL lets a backup, the journal's own connection or an operator's `sqlite3` read
    while the server writes; `synchronous = NORMAL` is WAL's safe setting (a power
    cut may lose the last commit, never corrupt the file) and keeps a commit to one
    write of the log, so it costs tens of microseconds.
    """

    BEGIN = "BEGIN IMMEDIATE"
    """The write lock at once: no deadlock upgrading a read."""
    SAME = "IS"
    SHARE = ""  # one writer at a time: the whole file is locked from `BEGIN IMMEDIATE`

    @_guarded
    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = os.fspath(path)
        if self.path != MEMORY:
            private_dir(Path(self.path).parent)
        self._conn = connect(self.path)
        try:
            self.journal_mode = str(self._conn.execute("PRAGMA journal_mode = WAL")
                                    .fetchone()[0])
            self._conn.execute("PRAGMA synchronous = NORMAL")
            _migrate(self._conn)
        except BaseException:
            self._conn.close()
            raise

    # -- the driver ----------------------------------------------------------------------

    def _errors(self) -> AbstractContextManager[None]:
        return _translated()

    def _run(self, sql: str, params: Sequence[Any] = ()) -> sqlite3.Cursor:
        return self._conn.execute(sql, params)

    def _run_many(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        self._conn.executemany(sql, rows)

    def _insert(self, sql: str, params: Sequence[Any]) -> int:
        row_id = self._conn.execute(sql, params).lastrowid
        assert row_id is not None
        return row_id

    def _in_transaction(self) -> bool:
        return self._conn.in_transaction

    # -- the store itself ----------------------------------------------------------------

    @_guarded
    def migrate(self) -> int:
        return _migrate(self._conn)

    @_guarded
    def schema_version(self) -> int:
        return int(self._conn.execute("PRAGMA user_version").fetchone()[0])

    @_guarded
    def backup(self, path: str | os.PathLike[str]) -> None:
        _backup(self._conn, path)

    def close(self) -> None:
        self._conn.close()


def _backup(conn: sqlite3.Connection, path: str | os.PathLike[str]) -> None:
    """SQLite's online backup: a consistent snapshot even while the server writes. The
    copy is as private as the original (0600)."""
    dest = connect(path)
    try:
        conn.backup(dest)
    finally:
        dest.close()


@_guarded
def backup_file(source: str | os.PathLike[str], dest: str | os.PathLike[str]) -> None:
    """Copy the store at `source` to `dest` from outside the server (which may run).

    Opens no schema of its own (no migration): a backup copies what is there.
    """
    if not Path(source).is_file():
        raise FileNotFoundError(f"no database at {source}")
    conn = connect(source)
    try:
        _backup(conn, dest)
    finally:
        conn.close()


def default_path() -> Path:
    """The per-user data directory (platformdirs), e.g. ~/.local/share/pisyedili/."""
    from platformdirs import user_data_dir

    return Path(user_data_dir("pisyedili")) / "pisyedili.sqlite3"
