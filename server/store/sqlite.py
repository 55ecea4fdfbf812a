"""Where finished matches are kept: an embedded SQLite file, behind a `Store` seam.

`Store` is the whole interface the server needs, so another backend (PostgreSQL) can
sit behind it. `SqliteStore` is synchronous and uses only the standard library; the
server reaches it through `Archive`, which runs every call on one dedicated thread so
a write never stalls the reactor and the connection is only ever used by one thread
at a time.

The schema is versioned with `PRAGMA user_version`: `MIGRATIONS[i]` takes a database
from version i to i + 1, each in its own transaction, applied in order at open. Only
append to the list; never edit a migration that has shipped.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol, TypeVar

from twisted.internet.defer import Deferred, fail, succeed
from twisted.internet.threads import deferToThreadPool
from twisted.logger import Logger

from pisyedili.server.store.files import private_database, private_dir
from pisyedili.server.table.effects import MatchOver
from pisyedili.server.worker import serial_pool

log = Logger()
T = TypeVar("T")

MEMORY = ":memory:"
DAY = 86400.0


class Store(Protocol):
    """Finished matches, kept and listed. Matches come back as plain dicts (JSON kinds)."""

    def record_match(self, match: MatchOver) -> int:
        """Store one finished match and its deals (all or nothing); its new id."""
        ...

    def recent_matches(self, limit: int = 20) -> list[dict[str, Any]]:
        """The last `limit` matches to finish, newest first, without their deals."""
        ...

    def matches_of(self, name: str, limit: int = 20) -> list[dict[str, Any]]:
        """The last `limit` matches a seat named `name` played, newest first."""
        ...

    def match(self, match_id: int) -> dict[str, Any] | None:
        """One match with its deals (`deals`: deal_no, result, record), or None."""
        ...

    def prune(self, keep_days: float, now: float | None = None) -> int:
        """Forget matches that finished more than `keep_days` ago; how many went."""
        ...

    def backup(self, path: str | os.PathLike[str]) -> None:
        """A consistent copy of the whole store at `path`, taken while it runs."""
        ...

    def close(self) -> None: ...

    def history_page(self, of: str, name: str | None, viewer: str, offset: int,
                     limit: int) -> tuple[list[dict[str, Any]], int]:
        """One page of a list of matches, newest first, each with `private` and its
        number of `deals`; and how many matches the whole list holds (see SqliteStore)."""
        ...

    def visible_deal(self, match_id: int, deal_no: int,
                     viewer: str) -> dict[str, Any] | None:
        """A match `viewer` may see, as `history_page` lists it, with its deal `deal_no`
        (`deal`: deal_no, result, record; None past its last deal); None if there is no
        such match for `viewer`."""
        ...


# -- schema ------------------------------------------------------------------------------

Migration = Callable[[sqlite3.Connection], None]

V1 = """
CREATE TABLE matches (
    id INTEGER PRIMARY KEY,
    table_id INTEGER NOT NULL,
    rules TEXT NOT NULL,
    options TEXT NOT NULL,
    players TEXT NOT NULL,
    started_at REAL NOT NULL,
    finished_at REAL NOT NULL,
    totals TEXT NOT NULL,
    winners TEXT NOT NULL
);
CREATE INDEX matches_finished_at ON matches (finished_at);
CREATE TABLE deals (
    match_id INTEGER NOT NULL REFERENCES matches (id) ON DELETE CASCADE,
    deal_no INTEGER NOT NULL,
    result TEXT NOT NULL,
    record TEXT NOT NULL,
    PRIMARY KEY (match_id, deal_no)
);
"""
"""Version 1: matches (JSON columns hold wire forms) and their deals. Deals keep a
rowid: their records run to kilobytes, and WITHOUT ROWID tables store rows that
large poorly (overflow pages in the key's B-tree)."""


def _v2_players(conn: sqlite3.Connection) -> None:
    """Version 2: one row per seat, so `matches_of` is an index look-up, not a scan of
    every match's players JSON; existing matches are filled in from that JSON."""
    _run(conn, """
        CREATE TABLE match_players (
            match_id INTEGER NOT NULL REFERENCES matches (id) ON DELETE CASCADE,
            seat INTEGER NOT NULL,
            name TEXT NOT NULL,
            kind TEXT NOT NULL,
            level TEXT,
            PRIMARY KEY (match_id, seat)
        ) WITHOUT ROWID;
        CREATE INDEX match_players_name ON match_players (name, match_id);
    """)
    rows = conn.execute("SELECT id, players FROM matches").fetchall()
    conn.executemany("INSERT INTO match_players VALUES (?, ?, ?, ?, ?)",
                     [row for match_id, players in rows
                      for row in _player_rows(match_id, json.loads(players))])


def _v1(conn: sqlite3.Connection) -> None:
    _run(conn, V1)


def _run(conn: sqlite3.Connection, script: str) -> None:
    """Statement by statement: `executescript` would commit the migration's transaction."""
    for statement in script.split(";"):
        if statement.strip():
            conn.execute(statement)


def _v3_private(conn: sqlite3.Connection) -> None:
    """Version 3: whether a match was played at a private table, so that lists and
    replays show it to its players only. Matches kept before this version are marked
    private: whether their table was is not known, and private is the side that shows
    nobody what they should not see."""
    _run(conn, """
        ALTER TABLE matches ADD COLUMN private INTEGER NOT NULL DEFAULT 1;
        CREATE INDEX matches_public ON matches (private, finished_at)
    """)


V4 = """
CREATE TABLE live_tables (
    id INTEGER PRIMARY KEY,
    opened_at REAL NOT NULL,
    setup TEXT NOT NULL
);
CREATE TABLE table_commands (
    table_id INTEGER NOT NULL REFERENCES live_tables (id) ON DELETE CASCADE,
    seq INTEGER NOT NULL,
    at REAL NOT NULL,
    command BLOB NOT NULL,
    PRIMARY KEY (table_id, seq)
) WITHOUT ROWID;
CREATE TABLE table_snapshots (
    table_id INTEGER PRIMARY KEY REFERENCES live_tables (id) ON DELETE CASCADE,
    seq INTEGER NOT NULL,
    code TEXT NOT NULL,
    core BLOB NOT NULL
);
CREATE TABLE sessions (
    player_id INTEGER PRIMARY KEY,
    token_hash BLOB NOT NULL UNIQUE,
    name TEXT NOT NULL,
    address TEXT NOT NULL,
    opened_at REAL NOT NULL
);
CREATE TABLE counters (
    name TEXT PRIMARY KEY,
    value INTEGER NOT NULL
) WITHOUT ROWID;
"""
"""Version 4: what a restart needs to carry on. The tables still open (`setup`: how
to build each one's core, JSON) and every command each was given, in order (msgpack:
`commands.to_record`); for each, the core as it was at its latest deal's start
(`table_snapshots`: the commands before `seq` are in it), so a restart need not replay
a long history; the sessions, by the hash of their resume token only; and the last
ids given out, so a restart never hands out an id again."""


def _v4_live(conn: sqlite3.Connection) -> None:
    _run(conn, V4)


V5 = """
CREATE TABLE accounts (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    password TEXT NOT NULL,
    operator INTEGER NOT NULL DEFAULT 0,
    created_at REAL NOT NULL,
    last_login REAL
);
CREATE TABLE account_keys (
    key TEXT PRIMARY KEY,
    account INTEGER NOT NULL REFERENCES accounts (id) ON DELETE CASCADE
) WITHOUT ROWID;
CREATE INDEX account_keys_account ON account_keys (account);
CREATE TABLE login_tokens (
    token_hash BLOB PRIMARY KEY,
    account INTEGER NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    created_at REAL NOT NULL,
    last_used REAL NOT NULL
) WITHOUT ROWID;
CREATE INDEX login_tokens_account ON login_tokens (account);
CREATE TABLE session_accounts (
    player_id INTEGER PRIMARY KEY REFERENCES sessions (player_id) ON DELETE CASCADE,
    account INTEGER NOT NULL
);
CREATE TABLE live_table_flags (
    table_id INTEGER PRIMARY KEY REFERENCES live_tables (id) ON DELETE CASCADE,
    rated INTEGER NOT NULL
);
CREATE TABLE match_accounts (
    match_id INTEGER NOT NULL REFERENCES matches (id) ON DELETE CASCADE,
    seat INTEGER NOT NULL,
    account INTEGER NOT NULL,
    rated INTEGER NOT NULL,
    PRIMARY KEY (match_id, seat)
) WITHOUT ROWID;
CREATE INDEX match_accounts_account ON match_accounts (account, match_id);
CREATE TABLE ratings (
    rules TEXT NOT NULL,
    subject TEXT NOT NULL,
    mu REAL NOT NULL,
    sigma REAL NOT NULL,
    ordinal REAL NOT NULL,
    matches INTEGER NOT NULL,
    wins INTEGER NOT NULL,
    updated_at REAL NOT NULL,
    PRIMARY KEY (rules, subject)
) WITHOUT ROWID;
CREATE INDEX ratings_ladder ON ratings (rules, ordinal);
CREATE TABLE sanctions (
    id INTEGER PRIMARY KEY,
    kind TEXT NOT NULL,
    account INTEGER REFERENCES accounts (id) ON DELETE CASCADE,
    player_id INTEGER,
    network TEXT,
    reason TEXT NOT NULL,
    by_name TEXT NOT NULL,
    created_at REAL NOT NULL,
    expires_at REAL,
    lifted_at REAL
);
CREATE TABLE moderation_log (
    id INTEGER PRIMARY KEY,
    at REAL NOT NULL,
    operator TEXT NOT NULL,
    action TEXT NOT NULL,
    target TEXT NOT NULL,
    detail TEXT NOT NULL
);
"""
"""Version 5: accounts and what hangs on them. An account's name and its look-alike
keys (`names.keys`, each held by one account only); its password as an argon2id hash
string; the hashes of the login tokens clients remember (never a token itself); which
journalled session is logged in to which account, and which open table is rated (both
go with their session or table); the accounts seated in each kept match; a rating per
rule set and subject (`a:<account id>` or `bot:<level>`, OpenSkill mu and sigma, and
the ladder's sort key); bans and mutes (`sanctions`: of an account, a guest session or
an address range, until `expires_at` or lifted); and every operator action."""


def _v5_accounts(conn: sqlite3.Connection) -> None:
    _run(conn, V5)


MIGRATIONS: Sequence[Migration] = (_v1, _v2_players, _v3_private, _v4_live, _v5_accounts)
SCHEMA_VERSION = len(MIGRATIONS)


def _player_rows(match_id: int, players: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    return [(match_id, p["seat"], p["name"], p["kind"], p.get("level")) for p in players]


def migrate(conn: sqlite3.Connection) -> int:
    """Bring the schema to `SCHEMA_VERSION`, one transaction per step; the old version.

    A database newer than this code is refused: running old code on it could lose data.
    """
    old = int(conn.execute("PRAGMA user_version").fetchone()[0])
    if old > SCHEMA_VERSION:
        raise RuntimeError(f"the database is at schema version {old}; this server knows "
                           f"{SCHEMA_VERSION} at most: upgrade the server")
    for version in range(old, SCHEMA_VERSION):
        conn.execute("BEGIN IMMEDIATE")
        try:
            MIGRATIONS[version](conn)
            conn.execute(f"PRAGMA user_version = {version + 1}")
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        log.info("store: schema migrated to version {version}", version=version + 1)
    return old


# -- SQLite -------------------------------------------------------------------------------

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


class SqliteStore:
    """The store in one SQLite file (or `:memory:`), WAL-journalled.

    WAL lets a backup or an operator's `sqlite3` read while the server writes;
    `synchronous = NORMAL` is WAL's safe setting (a power cut may lose the last
    commit, never corrupt the file) and keeps a commit to one write of the log.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = str(path)
        if self.path != MEMORY:
            private_dir(Path(self.path).parent)
        self._conn = connect(self.path)
        try:
            self.journal_mode = str(self._conn.execute("PRAGMA journal_mode = WAL")
                                    .fetchone()[0])
            self._conn.execute("PRAGMA synchronous = NORMAL")
            migrate(self._conn)
        except BaseException:
            self._conn.close()
            raise

    def record_match(self, match: MatchOver) -> int:
        conn = self._conn
        conn.execute("BEGIN IMMEDIATE")
        try:
            cur = conn.execute(
                "INSERT INTO matches (table_id, rules, options, players, started_at, "
                "finished_at, totals, winners, private) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (match.table_id, match.rules, _json(match.options), _json(match.players),
                 match.started_at, match.finished_at, _json(match.totals),
                 _json(match.winners), int(match.private)))
            match_id = cur.lastrowid
            assert match_id is not None
            conn.executemany("INSERT INTO match_players VALUES (?, ?, ?, ?, ?)",
                             _player_rows(match_id, match.players))
            conn.executemany("INSERT INTO deals VALUES (?, ?, ?, ?)",
                             [(match_id, d["deal_no"], _json(d["result"]),
                               _json(d["record"])) for d in match.deals])
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        return match_id

    def recent_matches(self, limit: int = 20) -> list[dict[str, Any]]:
        rows = self._conn.execute(f"SELECT {_COLUMNS} FROM matches "
                                  "ORDER BY finished_at DESC, id DESC LIMIT ?", (limit,))
        return [_match_row(row) for row in rows]

    def matches_of(self, name: str, limit: int = 20) -> list[dict[str, Any]]:
        rows = self._conn.execute(
            f"SELECT {_COLUMNS} FROM matches WHERE id IN "
            "(SELECT match_id FROM match_players WHERE name = ?) "
            "ORDER BY finished_at DESC, id DESC LIMIT ?", (name, limit))
        return [_match_row(row) for row in rows]

    def match(self, match_id: int) -> dict[str, Any] | None:
        row = self._conn.execute(f"SELECT {_COLUMNS} FROM matches WHERE id = ?",
                                 (match_id,)).fetchone()
        if row is None:
            return None
        found = _match_row(row)
        found["deals"] = [
            {"deal_no": n, "result": json.loads(result), "record": json.loads(record)}
            for n, result, record in self._conn.execute(
                "SELECT deal_no, result, record FROM deals WHERE match_id = ? "
                "ORDER BY deal_no", (match_id,))]
        return found

    def prune(self, keep_days: float, now: float | None = None) -> int:
        cutoff = (time.time() if now is None else now) - keep_days * DAY
        cur = self._conn.execute("DELETE FROM matches WHERE finished_at < ?", (cutoff,))
        return cur.rowcount  # deals and players go with them (ON DELETE CASCADE)

    def backup(self, path: str | os.PathLike[str]) -> None:
        _backup(self._conn, path)

    @property
    def connection(self) -> sqlite3.Connection:
        """The connection, for the SQLite-only parts (accounts, ratings, moderation)
        that run on the store's thread through `Archive.call`."""
        return self._conn

    def close(self) -> None:
        self._conn.close()

    # -- lists and replays of finished matches (the `history` feature) --------------

    def history_page(self, of: str, name: str | None, viewer: str, offset: int,
                     limit: int) -> tuple[list[dict[str, Any]], int]:
        """`of` is "mine" (a human seat named `viewer` played it), "player" (a seat named
        `name` did; a private match only when `viewer` played it too) or "recent" (every
        public match). Names are matched exactly, as they were kept."""
        args: tuple[str, ...]
        if of == "mine":
            where, args = f"id IN ({_HUMAN_SEAT})", (viewer,)
        elif of == "player":
            where = f"id IN (SELECT match_id FROM match_players WHERE name = ?) AND {_VISIBLE}"
            args = (name or "", viewer)
        elif of == "recent":
            where, args = "private = 0", ()
        else:
            raise ValueError(f"no list of matches called {of!r}")
        (total,) = self._conn.execute(f"SELECT COUNT(*) FROM matches WHERE {where}",
                                      args).fetchone()
        rows = self._conn.execute(
            f"SELECT {_SUMMARY_COLUMNS} FROM matches WHERE {where} "
            "ORDER BY finished_at DESC, id DESC LIMIT ? OFFSET ?", (*args, limit, offset))
        return [_summary_row(row) for row in rows], int(total)

    def visible_deal(self, match_id: int, deal_no: int,
                     viewer: str) -> dict[str, Any] | None:
        row = self._conn.execute(
            f"SELECT {_SUMMARY_COLUMNS} FROM matches WHERE id = ? AND {_VISIBLE}",
            (match_id, viewer)).fetchone()
        if row is None:
            return None
        found = _summary_row(row)
        deal = self._conn.execute(
            "SELECT result, record FROM deals WHERE match_id = ? AND deal_no = ?",
            (match_id, deal_no)).fetchone()
        found["deal"] = None if deal is None else {
            "deal_no": deal_no, "result": json.loads(deal[0]), "record": json.loads(deal[1])}
        return found


_HUMAN_SEAT = "SELECT match_id FROM match_players WHERE name = ? AND kind = 'human'"
_VISIBLE = f"(private = 0 OR id IN ({_HUMAN_SEAT}))"
"""A match someone (the query's next argument) may see: a public one, or one they played."""


_COLUMNS = "id, table_id, rules, options, players, started_at, finished_at, totals, winners"


def _match_row(row: tuple[Any, ...]) -> dict[str, Any]:
    match_id, table_id, rules, options, players, started, finished, totals, winners = row
    return {"id": match_id, "table_id": table_id, "rules": rules,
            "options": json.loads(options), "players": json.loads(players),
            "started_at": started, "finished_at": finished,
            "totals": json.loads(totals), "winners": json.loads(winners)}


_SUMMARY_COLUMNS = (
    "id, table_id, rules, options, players, started_at, finished_at, totals, winners, "
    "private, (SELECT COUNT(*) FROM deals WHERE deals.match_id = matches.id)")


def _summary_row(row: tuple[Any, ...]) -> dict[str, Any]:
    *match, private, deals = row
    return {**_match_row(tuple(match)), "private": bool(private), "deals": int(deals)}


def _json(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _backup(conn: sqlite3.Connection, path: str | os.PathLike[str]) -> None:
    """SQLite's online backup: a consistent snapshot even while the server writes. The
    copy is as private as the original (0600)."""
    dest = connect(path)
    try:
        conn.backup(dest)
    finally:
        dest.close()


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


# -- the Twisted side ---------------------------------------------------------------------

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
        # A write cut short by a dying server is rolled back by SQLite, and `close`
        # drains them anyway.
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

    def record(self, match: MatchOver) -> Deferred[Any]:
        """Hand a finished match to the store; a failure is logged (play goes on)."""
        if self._closed or not self._pool.started:
            log.warn("store not open: match at table {table} not kept", table=match.table_id)
            return Deferred()
        # Read on the thread: the store is opened there, before anything queued after.
        d = self.call(lambda: self.store.record_match(match))
        d.addCallbacks(
            lambda match_id: log.info("store: match {id} kept (table {table})",
                                      id=match_id, table=match.table_id),
            lambda f: log.failure("store: match at table {table} not kept", f,
                                  table=match.table_id))
        return d

    def prune(self, keep_days: float) -> Deferred[Any]:
        d = self.call(lambda: self.store.prune(keep_days))
        d.addCallbacks(
            lambda n: log.info("store: {n} matches older than {days} days forgotten",
                               n=n, days=keep_days) if n else None,
            lambda f: log.failure("store: pruning failed", f))
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
        closing.addErrback(lambda f: log.failure("store: close failed", f))

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
        return self.call(lambda: fn(self.store))
