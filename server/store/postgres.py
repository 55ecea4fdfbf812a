"""The PostgreSQL backend of `Store`: everything the server keeps, in one database.

psycopg 3, synchronous, like the SQLite backend: `Archive` runs it on the store's
thread, so the reactor never waits on the network. The queries are `sql.SqlStore`'s
(`?` placeholders, turned into psycopg's `%s` here); the schema is `schema.VERSIONS`
in PostgreSQL's dialect, and the version a database is at is the one row of
`store_schema`. Migrations take an advisory lock, so two processes opening one
database at once migrate it once. Every `psycopg.Error` leaves a method as a
`StoreError` (`Conflict` for a broken integrity rule).

A connection that broke (the database restarted, the network went) is opened again
at the next call outside a transaction: the call that found it broken fails, the
ones after it work again once PostgreSQL is back.
"""

from __future__ import annotations

import functools
import itertools
import os
import re
import select
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from typing import Any

import psycopg
from psycopg import pq
from twisted.logger import Logger

from pisyedili.server.store.base import (
    Conflict,
    JournalOp,
    StoreError,
    Unreachable,
    is_url,
    pg_dump_command,
    public,
)
from pisyedili.server.store.schema import POSTGRES, SCHEMA_VERSION, VERSIONS, refuse_newer
from pisyedili.server.store.sql import SqlStore, guarded, journal_row

log = Logger()

CONNECT_SECONDS = 10
"""How long opening a connection may take before it fails."""
MIGRATION_LOCK = 0x50_59_37  # "PY7"
"""The advisory lock a migration holds: one process migrates, the others wait and see."""

TABLES = (
    "matches", "deals", "match_players", "live_tables", "table_commands",
    "table_snapshots", "sessions", "counters", "accounts", "account_keys",
    "login_tokens", "session_accounts", "live_table_flags", "match_accounts", "ratings",
    "sanctions", "moderation_log", "rating_history",
)
"""Every table of the schema, each after those it references: the order a backup
copies them in (tests/server/test_store_postgres.py checks it against the database)."""
SERIALS = ("matches", "accounts", "sanctions", "moderation_log")
"""The tables with a `{serial}` id, whose sequence a backup carries on from."""


def host_of(url: str) -> str:
    """The server a URL points at, as a message names it."""
    try:
        info = psycopg.conninfo.conninfo_to_dict(url)
    except psycopg.ProgrammingError:
        return public(url)
    host = str(info.get("host") or "localhost")
    return f"{host}:{info['port']}" if info.get("port") else host


def reason(error: BaseException) -> str:
    """libpq's message on one line (it spreads hints over several)."""
    return " ".join(str(error).split())


@contextmanager
def _translated() -> Iterator[None]:
    try:
        yield
    except psycopg.IntegrityError as e:
        raise Conflict(reason(e)) from e
    except (psycopg.OperationalError, psycopg.InterfaceError) as e:  # the link, the server
        raise Unreachable(reason(e)) from e
    except psycopg.Error as e:
        raise StoreError(reason(e)) from e


@functools.lru_cache(maxsize=512)
def _placeholders(sql: str) -> str:
    """The `?` placeholders the shared SQL uses as psycopg's `%s` (no query of ours
    holds a literal `?` or `%`)."""
    return sql.replace("?", "%s")


MULTI_ROWS = 1000
"""Rows one statement of the journal's holds at most (PostgreSQL takes 65,535
parameters); a longer write is a transaction, its runs of rows by COPY."""

PREPARED_ROWS = 32
"""A journal statement of up to this many rows is prepared: past it, a statement per
number of rows would crowd the cache of prepared statements (`PREPARED_MAX`) out."""

PREPARED_MAX = 256
"""Prepared statements a connection keeps. The journal's shapes up to `PREPARED_ROWS`
rows (commands alone, or with one snapshot or two) come to about a hundred, psycopg's
default (a busy 50-table bench kept 93): past it, each new shape would cost an old one
a `DEALLOCATE` round trip."""

_INSERT = re.compile(r"INSERT INTO (\w+) VALUES (\((?:\?, )*\?\))(.*)")
"""An INSERT of one row of values: its table, its row, and what follows (ON CONFLICT)."""


@functools.lru_cache(maxsize=64)
def _insert_of(sql: str) -> tuple[str, int, str] | None:
    """`sql` as the INSERT of one row: its table, the values of its row, and what
    follows them (ON CONFLICT); None for any other statement."""
    insert = _INSERT.fullmatch(sql)
    return None if insert is None else (insert[1], insert[2].count("?"), insert[3])


def _plain_table(sql: str) -> str | None:
    """The table `sql` inserts whole rows into with no ON CONFLICT, where one COPY or
    one multi-row INSERT can write a run of them; None for any other statement."""
    insert = _insert_of(sql)
    return insert[0] if insert is not None and not insert[2] else None

_COMMAND = journal_row("command", (0, 0, 0.0, b""))[0]
_SNAPSHOT = journal_row("snapshot", (0, 0, "", b""))[0]


@dataclass
class _Statement:
    """A journal write as one statement: its SQL (PostgreSQL's own `$n` placeholders),
    values and rows, and the tables whose holder it checks (it returns those held)."""

    sql: str
    values: list[Any]
    rows: int
    checked: list[int] = field(default_factory=list)


def _one_statement(ops: Sequence[JournalOp],
                   holders: Mapping[int, int] | None) -> _Statement | None:
    """`ops` as one statement, where one statement writes them as the statements in
    order would: a run of one kind of plain rows, or commands with snapshots; None for
    any other write.

    A snapshot replaces its table's last, so only a table's last one in `ops` is
    written (an upsert may not touch one row twice), by the statement a data-modifying
    `WITH` of the commands' INSERT precedes: the two write different tables. Under a
    fence (`holders`), the rows of the tables `holders` names are written only where
    their holder is still the one it gives (`_fenced`)."""
    kind, first = ops[0]
    sql, params = journal_row(kind, first)
    if not holders and _plain_table(sql) and all(other == kind for other, _ in ops):
        values = [*params]
        for _, row in ops[1:]:
            values.extend(journal_row(kind, row)[1])
        return _Statement(_rows_of(sql, len(ops)), values, len(ops))
    commands: list[tuple[Any, ...]] = []
    snapshots: dict[int, tuple[Any, ...]] = {}
    for kind, row in ops:
        if kind == "command":
            commands.append(journal_row(kind, row)[1])
        elif kind == "snapshot":
            snapshots[row[0]] = journal_row(kind, row)[1]
        else:
            return None
    rows = len(commands) + len(snapshots)
    values = [*itertools.chain(*commands), *itertools.chain(*snapshots.values())]
    checked = sorted({row[0] for row in [*commands, *snapshots.values()]}
                     & set(holders or ()))
    if checked:
        assert holders is not None
        return _Statement(_fenced(len(commands), len(snapshots)),
                          [checked, [holders[table] for table in checked], *values],
                          rows, checked)
    return _Statement(_with_snapshots(len(commands), len(snapshots)), values, rows)


@functools.lru_cache(maxsize=128)
def _with_snapshots(commands: int, snapshots: int) -> str:
    """Commands, then snapshots, as one statement."""
    if not snapshots:
        return _rows_of(_COMMAND, commands)
    statement = _rows_of(_SNAPSHOT, snapshots, after=commands * _parts(_COMMAND)[1])
    if not commands:
        return statement
    return f"WITH commands AS ({_rows_of(_COMMAND, commands)}) {statement}"


@functools.lru_cache(maxsize=128)
def _fenced(commands: int, snapshots: int) -> str:
    """Commands and snapshots under a fence, as one statement, after two arrays: the
    tables checked and the holder each should have. It locks the rows of the tables
    whose holder is still that one (`FOR SHARE`, as `SqlStore._fenced` does in a
    transaction: a takeover's `hold_table` waits for the statement, or the statement
    sees its count), writes the rows of those tables and of tables not checked, and
    returns the ids of the tables held."""
    parts = ["WITH held AS MATERIALIZED (SELECT live_tables.id FROM live_tables JOIN "
             "unnest($1::integer[], $2::integer[]) AS claim (id, holder) "
             "ON live_tables.id = claim.id AND live_tables.holder = claim.holder "
             "FOR SHARE OF live_tables)"]
    after = 2
    for name, sql, rows in (("commands", _COMMAND, commands),
                            ("snapshots", _SNAPSHOT, snapshots)):
        if not rows:
            continue
        table, width, rest = _parts(sql)
        listed = _values(width, rows, after)
        after += width * rows
        # (a VALUES list's columns are column1, column2...: the table's id is first)
        parts.append(f"{name} AS (INSERT INTO {table} SELECT * FROM (VALUES {listed}) "
                     f"AS given WHERE given.column1 IN (SELECT id FROM held) "
                     f"OR given.column1 <> ALL($1::integer[]){rest})")
    return ", ".join(parts) + " SELECT id FROM held"


@functools.lru_cache(maxsize=256)
def _rows_of(sql: str, rows: int, after: int = 0) -> str:
    """`sql`, the INSERT of one row, as that of `rows` rows, its placeholders numbered
    on from `after`."""
    table, width, rest = _parts(sql)
    return f"INSERT INTO {table} VALUES {_values(width, rows, after)}{rest}"


def _parts(sql: str) -> tuple[str, int, str]:
    """`_insert_of(sql)`, which is an INSERT of one row."""
    insert = _insert_of(sql)
    assert insert is not None, f"not the INSERT of one row: {sql}"
    return insert


def _values(width: int, rows: int, after: int) -> str:
    """`($1, $2), ($3, $4)`: `rows` rows of `width` placeholders, from `after` + 1."""
    numbers = iter(range(after + 1, after + width * rows + 1))
    return ", ".join("(" + ", ".join(f"${next(numbers)}" for _ in range(width)) + ")"
                     for _ in range(rows))


def _dropped(conn: psycopg.Connection[Any]) -> bool:
    """Whether PostgreSQL closed `conn`, idle between statements: what it sent is read
    without waiting (a notice is kept for psycopg; an end leaves the link bad). A
    socket that reads empty stays readable: the loop ends on the error that raises."""
    pgconn = conn.pgconn
    try:
        for _ in range(4):  # a closing error, then the end of the stream: two reads
            readable, _, _ = select.select([pgconn.socket], [], [], 0)
            if not readable:
                break
            pgconn.consume_input()
    except (OSError, ValueError, psycopg.OperationalError):
        return True
    return pgconn.status != pq.ConnStatus.OK


class PostgresStore(SqlStore):
    """The store in one PostgreSQL database, named by a libpq URL."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.path = public(url)
        self._closed = False
        self._conn = self._connect()
        try:
            with _translated():
                self.migrate()
        except BaseException:
            self._conn.close()
            raise

    def _connect(self) -> psycopg.Connection[Any]:
        """A new connection, in autocommit (transactions are explicit, as in SQLite)."""
        try:
            conn = psycopg.connect(self.url, autocommit=True,
                                   connect_timeout=CONNECT_SECONDS,
                                   application_name="pisyedili-server")
            conn.prepared_max = PREPARED_MAX
            return conn
        except psycopg.Error as e:
            raise Unreachable(f"cannot reach PostgreSQL at {host_of(self.url)}: "
                             f"{reason(e)}") from e

    def _connection(self, sql: str) -> psycopg.Connection[Any]:
        """The connection, opened again if it broke and `sql` starts no statement of an
        open transaction (one that breaks inside a transaction fails it: it is lost).

        psycopg finds a connection broken only when a statement fails on it, so one
        that PostgreSQL closed while it sat idle (a restart) would fail the first
        statement after PostgreSQL is back: a finished match (not kept), or the
        journal's commit (kept, and tried again later). Between statements the server
        has nothing to say but a closing error, so a connection with input waiting is
        read first, and opened again if that was its end."""
        outside = self._depth == 0 or sql == self.BEGIN
        if outside and not self._closed and not self._conn.broken and _dropped(self._conn):
            self._conn.close()
        if (self._conn.broken or self._conn.closed) and not self._closed and outside:
            log.warn("store: the connection to {host} was lost; connecting again",
                     host=host_of(self.url))
            self._conn.close()
            self._conn = self._connect()
            log.info("store: connected to {host} again", host=host_of(self.url))
        return self._conn

    # -- the driver ----------------------------------------------------------------------

    def _errors(self) -> AbstractContextManager[None]:
        return _translated()

    def _run(self, sql: str, params: Sequence[Any] = (),
             prepare: bool | None = None) -> psycopg.Cursor[Any]:
        return self._connection(sql).execute(_placeholders(sql), params or None,
                                             prepare=prepare)

    def _run_many(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        """Rows of a plain INSERT go by COPY: psycopg's `executemany` spends Python
        time on each row's statement, holding the GIL the reactor needs (the journal's
        runs of commands cost the server a quarter more CPU a move that way)."""
        rows = list(rows)
        with self._connection(sql).cursor() as cur:
            table = _plain_table(sql)
            if table is None or len(rows) < 2:
                cur.executemany(_placeholders(sql), rows)
                return
            with cur.copy(f"COPY {table} FROM STDIN") as copy:
                for row in rows:
                    copy.write_row(row)

    @guarded
    def write_journal(self, ops: Sequence[JournalOp],
                      holders: Mapping[int, int] | None = None, *,
                      again: bool = False) -> set[int]:
        """A write of a busy server's commands, alone or with deals' snapshots (all but
        a few of its writes), goes as one statement (`_one_statement`) with no BEGIN
        and COMMIT around it: a statement is a transaction of its own, and the round
        trips and psycopg's Python time for the statements around it are most of a
        commit's, on the thread whose GIL the reactor needs. It goes by a `RawCursor`
        (PostgreSQL's own `$n` placeholders): psycopg parses a query of its `%s` anew
        at every run once it has more than 50 values, and a write of 20 commands has
        more (docs/bench.md, "The store", has the cost). Under a fence (`holders`, a
        cluster's), such a write checks its tables' holders in the same statement. Any
        other write is a transaction."""
        if not again and self._depth == 0 and 0 < len(ops) <= MULTI_ROWS:
            statement = _one_statement(ops, holders)
            if statement is not None:
                with psycopg.RawCursor(self._connection(statement.sql)) as cursor:
                    cursor.execute(statement.sql, statement.values,
                                   prepare=statement.rows <= PREPARED_ROWS)
                    held = {row[0] for row in cursor} if statement.checked else set()
                return set(statement.checked) - held
        return super().write_journal(ops, holders, again=again)

    def _insert(self, sql: str, params: Sequence[Any]) -> int:
        row = self._run(f"{sql} RETURNING id", params).fetchone()
        assert row is not None
        return int(row[0])

    def _in_transaction(self) -> bool:
        return (not self._conn.broken
                and self._conn.info.transaction_status != pq.TransactionStatus.IDLE)

    # -- a data step's view (schema.Executor) ----------------------------------------------

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        return self._run(sql, params).fetchall()

    def run_many(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        self._run_many(sql, rows)

    # -- the store itself ----------------------------------------------------------------

    @guarded
    def migrate(self) -> int:
        with self.transaction():
            self._run(f"SELECT pg_advisory_xact_lock({MIGRATION_LOCK})")
            self._run("CREATE TABLE IF NOT EXISTS store_schema (version INTEGER NOT NULL)")
            self._run("INSERT INTO store_schema SELECT 0 WHERE NOT EXISTS "
                      "(SELECT 1 FROM store_schema)")
        old = self.schema_version()
        refuse_newer(old)
        for version in range(old, SCHEMA_VERSION):
            with self.transaction():
                self._run(f"SELECT pg_advisory_xact_lock({MIGRATION_LOCK})")
                if self.schema_version() > version:
                    continue  # another process migrated it meanwhile
                step = VERSIONS[version]
                for statement in POSTGRES.statements(step.ddl):
                    self._run(statement)
                if step.fill is not None:
                    step.fill(self)
                self._run("UPDATE store_schema SET version = ?", (version + 1,))
            log.info("store: schema migrated to version {version}", version=version + 1)
        return old

    @guarded
    def schema_version(self) -> int:
        row = self._run("SELECT version FROM store_schema").fetchone()
        return 0 if row is None else int(row[0])

    @guarded
    def backup(self, path: str | os.PathLike[str]) -> None:
        """Copy everything into the empty PostgreSQL database `path` (a URL), table by
        table with COPY, from one snapshot: consistent while the server writes."""
        dest = os.fspath(path)
        if not is_url(dest):
            raise StoreError(f"a PostgreSQL store is backed up into another PostgreSQL "
                             f"database (a postgresql:// URL), or with pg_dump: "
                             f"{pg_dump_command(self.url, dest)}")
        copy = PostgresStore(dest)
        try:
            with copy.transaction():
                if copy.query("SELECT 1 FROM accounts UNION ALL SELECT 1 FROM matches "
                              "LIMIT 1"):
                    raise StoreError(f"{copy.path} is not empty: back up into a new database")
                with self._snapshot():
                    for table in TABLES:
                        self._copy_table(table, copy)
                for table in SERIALS:
                    copy._run(f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), "
                              f"COALESCE(MAX(id), 0) + 1, false) FROM {table}")
        finally:
            copy.close()

    @contextmanager
    def _snapshot(self) -> Iterator[None]:
        """A read-only transaction that sees one moment of the database throughout."""
        self._run("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
        try:
            yield
        finally:
            self._run("ROLLBACK")

    def _copy_table(self, table: str, copy: PostgresStore) -> None:
        with self._conn.cursor() as out, copy._conn.cursor() as into, \
                out.copy(f"COPY {table} TO STDOUT (FORMAT BINARY)") as source, \
                into.copy(f"COPY {table} FROM STDIN (FORMAT BINARY)") as sink:
            for chunk in source:
                sink.write(chunk)

    def close(self) -> None:
        self._closed = True
        self._conn.close()
