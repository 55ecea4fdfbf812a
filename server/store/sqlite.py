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
import itertools
import json
import os
import sqlite3
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, ParamSpec, TypeVar

from twisted.logger import Logger

from pisyedili.server.store.base import (
    DAY,
    AccountMatch,
    AccountRow,
    Conflict,
    JournalOp,
    JournalRows,
    LadderRow,
    LogEntry,
    RatingRow,
    SanctionRow,
    StoreError,
)
from pisyedili.server.store.files import private_database, private_dir
from pisyedili.server.store.schema import SCHEMA_VERSION, SQLITE, VERSIONS, Version, player_rows
from pisyedili.server.table.effects import MatchOver

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
    if old > SCHEMA_VERSION:
        raise RuntimeError(f"the database is at schema version {old}; this server knows "
                           f"{SCHEMA_VERSION} at most: upgrade the server")
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


@contextmanager
def _savepoint(conn: sqlite3.Connection, name: str) -> Iterator[None]:
    """A transaction inside the one open: released into it, or rolled back to its start."""
    conn.execute(f"SAVEPOINT {name}")
    try:
        yield
    except BaseException:
        conn.execute(f"ROLLBACK TO {name}")
        conn.execute(f"RELEASE {name}")
        raise
    conn.execute(f"RELEASE {name}")


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


# -- the journal's rows --------------------------------------------------------------------

def _journal_row(kind: str, values: tuple[Any, ...]) -> tuple[str, tuple[Any, ...]]:
    """One `JournalOp` as the statement that writes it and its parameters."""
    if kind == "table_opened":
        table_id, at, setup = values
        return ("INSERT INTO live_tables VALUES (?, ?, ?)",
                (table_id, at, json.dumps(setup, separators=(",", ":"))))
    if kind == "session_changed":
        player_id, token, name = values
        return ("UPDATE sessions SET token_hash = ?, name = ? WHERE player_id = ?",
                (token, name, player_id))
    if kind == "session_account":
        player_id, account = values
        if account is None:
            return "DELETE FROM session_accounts WHERE player_id = ?", (player_id,)
        return "INSERT OR REPLACE INTO session_accounts VALUES (?, ?)", values
    return _JOURNAL_SQL[kind], values


_JOURNAL_SQL = {
    "table_closed": "DELETE FROM live_tables WHERE id = ?",
    "command": "INSERT INTO table_commands VALUES (?, ?, ?, ?)",
    "snapshot": "INSERT OR REPLACE INTO table_snapshots VALUES (?, ?, ?, ?)",
    "counter": "INSERT OR REPLACE INTO counters VALUES (?, ?)",
    "session_opened": "INSERT INTO sessions VALUES (?, ?, ?, ?, ?)",
    "session_forgotten": "DELETE FROM sessions WHERE player_id = ?",
}


# -- the store -------------------------------------------------------------------------------

class SqliteStore:
    """The store in one SQLite file (or `:memory:`), WAL-journalled.

    WAL lets a backup, the journal's own connection or an operator's `sqlite3` read
    while the server writes; `synchronous = NORMAL` is WAL's safe setting (a power
    cut may lose the last commit, never corrupt the file) and keeps a commit to one
    write of the log, so it costs tens of microseconds.
    """

    @_guarded
    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = os.fspath(path)
        if self.path != MEMORY:
            private_dir(Path(self.path).parent)
        self._conn = connect(self.path)
        self._depth = 0  # transactions open, nested
        try:
            self.journal_mode = str(self._conn.execute("PRAGMA journal_mode = WAL")
                                    .fetchone()[0])
            self._conn.execute("PRAGMA synchronous = NORMAL")
            _migrate(self._conn)
        except BaseException:
            self._conn.close()
            raise

    # -- the store itself ----------------------------------------------------------------

    @contextmanager
    def transaction(self) -> Iterator[None]:
        depth = self._depth
        self._depth += 1
        try:
            with _translated():
                if depth == 0:
                    with _transaction(self._conn):
                        yield
                else:  # inside another: a savepoint, so a failed block undoes its own part
                    with _savepoint(self._conn, f"s{depth}"):
                        yield
        finally:
            self._depth = depth

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

    # -- finished matches --------------------------------------------------------------

    @_guarded
    def record_match(self, match: MatchOver) -> int:
        conn = self._conn
        with self.transaction():
            cur = conn.execute(
                "INSERT INTO matches (table_id, rules, options, players, started_at, "
                "finished_at, totals, winners, private) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (match.table_id, match.rules, _json(match.options), _json(match.players),
                 match.started_at, match.finished_at, _json(match.totals),
                 _json(match.winners), int(match.private)))
            match_id = cur.lastrowid
            assert match_id is not None
            conn.executemany("INSERT INTO match_players VALUES (?, ?, ?, ?, ?)",
                             player_rows(match_id, match.players))
            conn.executemany("INSERT INTO deals VALUES (?, ?, ?, ?)",
                             [(match_id, d["deal_no"], _json(d["result"]),
                               _json(d["record"])) for d in match.deals])
        return match_id

    @_guarded
    def recent_matches(self, limit: int = 20) -> list[dict[str, Any]]:
        rows = self._conn.execute(f"SELECT {_COLUMNS} FROM matches "
                                  "ORDER BY finished_at DESC, id DESC LIMIT ?", (limit,))
        return [_match_row(row) for row in rows]

    @_guarded
    def matches_of(self, name: str, limit: int = 20) -> list[dict[str, Any]]:
        rows = self._conn.execute(
            f"SELECT {_COLUMNS} FROM matches WHERE id IN "
            "(SELECT match_id FROM match_players WHERE name = ?) "
            "ORDER BY finished_at DESC, id DESC LIMIT ?", (name, limit))
        return [_match_row(row) for row in rows]

    @_guarded
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

    @_guarded
    def prune(self, keep_days: float, now: float | None = None) -> int:
        cutoff = (time.time() if now is None else now) - keep_days * DAY
        cur = self._conn.execute("DELETE FROM matches WHERE finished_at < ?", (cutoff,))
        return cur.rowcount  # deals and players go with them (ON DELETE CASCADE)

    @_guarded
    def history_page(self, of: str, name: str | None, viewer: str, offset: int,
                     limit: int) -> tuple[list[dict[str, Any]], int]:
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

    @_guarded
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

    # -- the journal -------------------------------------------------------------------

    @_guarded
    def write_journal(self, ops: Sequence[JournalOp]) -> None:
        rows = [_journal_row(kind, values) for kind, values in ops]
        with self.transaction():  # runs of one statement (mostly commands) in one call each
            for sql, run in itertools.groupby(rows, key=lambda row: row[0]):
                self._conn.executemany(sql, [params for _, params in run])

    @_guarded
    def read_journal(self) -> JournalRows:
        conn = self._conn
        return JournalRows(
            tables=[(table_id, opened_at, json.loads(setup)) for table_id, opened_at, setup
                    in conn.execute("SELECT id, opened_at, setup FROM live_tables "
                                    "ORDER BY id")],
            snapshots=conn.execute("SELECT table_id, seq, code, core FROM table_snapshots")
            .fetchall(),
            commands=conn.execute("SELECT table_id, seq, at, command FROM table_commands "
                                  "ORDER BY table_id, seq").fetchall(),
            sessions=conn.execute("SELECT player_id, token_hash, name, address FROM "
                                  "sessions ORDER BY player_id").fetchall(),
            counters=dict(conn.execute("SELECT name, value FROM counters").fetchall()),
            session_accounts=dict(conn.execute("SELECT player_id, account FROM "
                                               "session_accounts").fetchall()),
            rated_tables=[table_id for (table_id,) in conn.execute(
                "SELECT table_id FROM live_table_flags WHERE rated")])

    # -- accounts ------------------------------------------------------------------------

    @_guarded
    def load_accounts(self) -> tuple[list[AccountRow], dict[str, int]]:
        accounts = [AccountRow(i, name, bool(op)) for i, name, op in self._conn.execute(
            "SELECT id, name, operator FROM accounts ORDER BY id")]
        keys = dict(self._conn.execute("SELECT key, account FROM account_keys").fetchall())
        return accounts, keys

    @_guarded
    def create_account(self, name: str, keys: Sequence[str], password_hash: str,
                       now: float, operator: bool = False) -> int:
        with self.transaction():
            cur = self._conn.execute(
                "INSERT INTO accounts (name, password, created_at, last_login, operator) "
                "VALUES (?, ?, ?, ?, ?)", (name, password_hash, now, now, int(operator)))
            account = cur.lastrowid
            assert account is not None
            self._conn.executemany("INSERT INTO account_keys VALUES (?, ?)",
                                   [(key, account) for key in keys])
        return account

    @_guarded
    def find_account(self, keys: Sequence[str]) -> int | None:
        for key in keys:
            row = self._conn.execute("SELECT account FROM account_keys WHERE key = ?",
                                     (key,)).fetchone()
            if row is not None:
                return int(row[0])
        return None

    @_guarded
    def password_of(self, account: int) -> str | None:
        row = self._conn.execute("SELECT password FROM accounts WHERE id = ?",
                                 (account,)).fetchone()
        return None if row is None else str(row[0])

    @_guarded
    def set_password(self, account: int, password_hash: str) -> None:
        self._conn.execute("UPDATE accounts SET password = ? WHERE id = ?",
                           (password_hash, account))

    @_guarded
    def set_operator(self, account: int, operator: bool) -> None:
        self._conn.execute("UPDATE accounts SET operator = ? WHERE id = ?",
                           (int(operator), account))

    @_guarded
    def operators(self) -> list[str]:
        return [row[0] for row in self._conn.execute(
            "SELECT name FROM accounts WHERE operator ORDER BY name")]

    @_guarded
    def issue_login(self, account: int, token_hash: bytes, now: float) -> None:
        with self.transaction():
            self._conn.execute("INSERT INTO login_tokens VALUES (?, ?, ?, ?)",
                               (token_hash, account, now, now))
            self._conn.execute("UPDATE accounts SET last_login = ? WHERE id = ?",
                               (now, account))

    @_guarded
    def login_account(self, token_hash: bytes, now: float) -> int | None:
        row = self._conn.execute("SELECT account FROM login_tokens WHERE token_hash = ?",
                                 (token_hash,)).fetchone()
        if row is None:
            return None
        with self.transaction():
            self._conn.execute("UPDATE login_tokens SET last_used = ? WHERE token_hash = ?",
                               (now, token_hash))
            self._conn.execute("UPDATE accounts SET last_login = ? WHERE id = ?",
                               (now, row[0]))
        return int(row[0])

    @_guarded
    def revoke_logins(self, account: int, token_hash: bytes | None) -> None:
        if token_hash is None:
            self._conn.execute("DELETE FROM login_tokens WHERE account = ?", (account,))
        else:
            self._conn.execute("DELETE FROM login_tokens WHERE account = ? AND "
                               "token_hash = ?", (account, token_hash))

    # -- ratings -------------------------------------------------------------------------

    @_guarded
    def note_match_accounts(self, match_id: int, seats: Sequence[tuple[int, int]],
                            rated: bool) -> None:
        self._conn.executemany("INSERT INTO match_accounts VALUES (?, ?, ?, ?)",
                               [(match_id, seat, account, int(rated))
                                for seat, account in seats])

    @_guarded
    def ratings(self, rules: str, subjects: Sequence[str]) -> dict[str, tuple[float, float]]:
        if not subjects:
            return {}
        return {subject: (mu, sigma) for subject, mu, sigma in self._conn.execute(
            "SELECT subject, mu, sigma FROM ratings WHERE rules = ? AND subject IN "
            f"({','.join('?' * len(subjects))})", (rules, *subjects))}

    @_guarded
    def save_rating(self, rules: str, subject: str, mu: float, sigma: float,
                    ordinal: float, won: bool, now: float) -> None:
        self._conn.execute(
            "INSERT INTO ratings VALUES (?, ?, ?, ?, ?, 1, ?, ?) "
            "ON CONFLICT (rules, subject) DO UPDATE SET mu = excluded.mu, "
            "sigma = excluded.sigma, ordinal = excluded.ordinal, matches = matches + 1, "
            "wins = wins + excluded.wins, updated_at = excluded.updated_at",
            (rules, subject, mu, sigma, ordinal, int(won), now))

    @_guarded
    def ladder(self, rules: str, limit: int) -> list[LadderRow]:
        return [LadderRow(*row) for row in self._conn.execute(
            "SELECT r.subject, r.mu, r.sigma, r.ordinal, r.matches, r.wins, a.name "
            "FROM ratings r LEFT JOIN accounts a ON r.subject = 'a:' || a.id "
            "WHERE r.rules = ? ORDER BY r.ordinal DESC, r.subject LIMIT ?", (rules, limit))]

    @_guarded
    def ratings_of(self, subject: str) -> list[RatingRow]:
        return [RatingRow(*row) for row in self._conn.execute(
            "SELECT rules, mu, sigma, ordinal, matches, wins, (SELECT count(*) FROM "
            "ratings o WHERE o.rules = r.rules AND o.ordinal > r.ordinal) "
            "FROM ratings r WHERE subject = ? ORDER BY rules", (subject,))]

    @_guarded
    def account_matches(self, account: int) -> list[AccountMatch]:
        return [AccountMatch(match_id, seat, bool(rated), rules, finished,
                             json.loads(players), json.loads(totals), json.loads(winners))
                for match_id, seat, rated, rules, finished, players, totals, winners
                in self._conn.execute(
                    "SELECT m.id, ma.seat, ma.rated, m.rules, m.finished_at, m.players, "
                    "m.totals, m.winners FROM match_accounts ma JOIN matches m ON "
                    "m.id = ma.match_id WHERE ma.account = ? "
                    "ORDER BY m.finished_at DESC, m.id DESC", (account,))]

    # -- moderation ----------------------------------------------------------------------

    @_guarded
    def sanctions_in_force(self, now: float) -> list[SanctionRow]:
        return [SanctionRow(*row) for row in self._conn.execute(
            "SELECT kind, account, player_id, network, reason, by_name, expires_at "
            "FROM sanctions WHERE lifted_at IS NULL AND (expires_at IS NULL OR "
            "expires_at > ?) ORDER BY id", (now,))]

    @_guarded
    def add_sanction(self, sanction: SanctionRow, now: float) -> None:
        s = sanction
        self._conn.execute(
            "INSERT INTO sanctions (kind, account, player_id, network, reason, by_name, "
            "created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (s.kind, s.account, s.player_id, s.network, s.reason, s.by, now, s.expires_at))

    @_guarded
    def lift_sanctions(self, kind: str, account: int | None, player_id: int | None,
                       network: str | None, now: float) -> None:
        self._conn.execute(
            "UPDATE sanctions SET lifted_at = ? WHERE lifted_at IS NULL AND kind = ? "
            "AND account IS ? AND player_id IS ? AND network IS ?",
            (now, kind, account, player_id, network))

    @_guarded
    def log_action(self, at: float, operator: str, action: str, target: str,
                   detail: str) -> None:
        self._conn.execute("INSERT INTO moderation_log (at, operator, action, target, "
                           "detail) VALUES (?, ?, ?, ?, ?)",
                           (at, operator, action, target, detail))

    @_guarded
    def moderation_log(self) -> list[LogEntry]:
        return [LogEntry(*row) for row in self._conn.execute(
            "SELECT at, operator, action, target, detail FROM moderation_log ORDER BY id")]


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
