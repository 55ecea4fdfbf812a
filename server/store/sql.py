"""What the SQL backends share: every `Store` method, written once in SQL both speak.

`SqlStore` holds the queries and the transactions; a backend (sqlite.py,
postgres.py) subclasses it with its driver: how a statement runs (`_run`,
`_run_many`, `_insert`, with `?` placeholders), how its errors become
`StoreError`s (`_errors`), how a transaction begins, and the schema's version and
backups, which each database keeps its own way. The SQL here is the common part of
SQLite's and PostgreSQL's: upserts are `ON CONFLICT ... DO UPDATE`, flags are
compared with `<> 0`, and a NULL-safe comparison is the backend's `SAME`.
"""

from __future__ import annotations

import functools
import itertools
import json
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from typing import Any, Concatenate, ParamSpec, Protocol, TypeVar

from pisyedili.server.store.base import (
    DAY,
    TABLE_OPS,
    AccountMatch,
    AccountRow,
    JournalOp,
    JournalRows,
    LadderRow,
    LogEntry,
    RatingPoint,
    RatingRow,
    SanctionRow,
    SessionRow,
    Viewer,
)
from pisyedili.server.store.schema import seat_rows
from pisyedili.server.table.effects import MatchOver

P = ParamSpec("P")
R = TypeVar("R")
S = TypeVar("S", bound="SqlStore")


class Rows(Protocol):
    """What a statement leaves to read (a DB-API cursor)."""

    @property
    def rowcount(self) -> int: ...

    def fetchone(self) -> Any: ...

    def fetchall(self) -> list[Any]: ...

    def __iter__(self) -> Iterator[Any]: ...


def guarded(fn: Callable[Concatenate[S, P], R]) -> Callable[Concatenate[S, P], R]:
    """`fn` raising `StoreError`s where the backend's driver raised its own."""
    @functools.wraps(fn)
    def wrapper(store: S, /, *args: P.args, **kwargs: P.kwargs) -> R:
        with store._errors():
            return fn(store, *args, **kwargs)
    return wrapper


ID_HOLDERS = {
    "table": ("SELECT MAX(id) FROM live_tables", "SELECT MAX(table_id) FROM matches"),
    "player": ("SELECT MAX(player_id) FROM sessions",
               "SELECT MAX(player_id) FROM match_players",
               "SELECT MAX(player_id) FROM sanctions"),
}
"""Where ids given out are kept besides the `counters`: a session's row, a kept match
and its seats, a guest's sanction. A database whose counters lag its rows (kept by a
server older than its journal) still tells the ids it holds."""


# -- the journal's rows --------------------------------------------------------------------

def journal_row(kind: str, values: tuple[Any, ...],
                again: bool = False) -> tuple[str, tuple[Any, ...]]:
    """One `JournalOp` as the statement that writes it and its parameters; `again`
    (`Store.write_journal`), one that gives the same rows whether or not the write it
    repeats landed."""
    if kind == "table_opened":
        table_id, at, setup = values
        return ("INSERT INTO live_tables (id, opened_at, setup) VALUES (?, ?, ?)"
                + (_KEEP if again else ""),
                (table_id, at, json.dumps(setup, separators=(",", ":"))))
    if kind == "session_changed":
        player_id, token, name = values
        return ("UPDATE sessions SET token_hash = ?, name = ? WHERE player_id = ?",
                (token, name, player_id))
    if kind == "session_account" and values[1] is None:
        return "DELETE FROM session_accounts WHERE player_id = ?", (values[0],)
    if again and kind in _GUARDED:  # the table's or session's id again, for the guard
        return _GUARDED[kind], (*values, values[0])
    if again and kind == "session_opened":
        return _JOURNAL_SQL[kind] + _KEEP, values
    return _JOURNAL_SQL[kind], values


_JOURNAL_SQL = {
    "table_closed": "DELETE FROM live_tables WHERE id = ?",
    "command": "INSERT INTO table_commands VALUES (?, ?, ?, ?)",
    "snapshot": "INSERT INTO table_snapshots VALUES (?, ?, ?, ?) ON CONFLICT (table_id) "
                "DO UPDATE SET seq = excluded.seq, code = excluded.code, core = excluded.core",
    # The highest of any writer's: the processes of a cluster share one journal.
    "counter": "INSERT INTO counters VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET value = "
               "CASE WHEN excluded.value > counters.value THEN excluded.value "
               "ELSE counters.value END",
    "session_opened": "INSERT INTO sessions VALUES (?, ?, ?, ?, ?)",
    # Its old home leaves the row while its lease is in doubt (another process may
    # have rebuilt the session from it): the same player's, taken over here.
    "session_moved": "INSERT INTO sessions VALUES (?, ?, ?, ?, ?) ON CONFLICT (player_id) "
                     "DO UPDATE SET token_hash = excluded.token_hash, name = excluded.name, "
                     "address = excluded.address",
    "session_forgotten": "DELETE FROM sessions WHERE player_id = ?",
    "session_account": "INSERT INTO session_accounts VALUES (?, ?) ON CONFLICT (player_id) "
                       "DO UPDATE SET account = excluded.account",
}

_KEEP = " ON CONFLICT DO NOTHING"
"""`again`: a row that is there already stays."""

_GUARDED = {
    # `again`: a row whose table or session is gone is not written either. The write
    # that landed closed or forgot it later on (the foreign key would refuse the row),
    # and so does the rest of this one.
    "command": "INSERT INTO table_commands SELECT ?, ?, ?, ? WHERE EXISTS "
               "(SELECT 1 FROM live_tables WHERE id = ?)" + _KEEP,
    "snapshot": "INSERT INTO table_snapshots SELECT ?, ?, ?, ? WHERE EXISTS "
                "(SELECT 1 FROM live_tables WHERE id = ?) ON CONFLICT (table_id) "
                "DO UPDATE SET seq = excluded.seq, code = excluded.code, core = excluded.core",
    "session_account": "INSERT INTO session_accounts SELECT ?, ? WHERE EXISTS "
                       "(SELECT 1 FROM sessions WHERE player_id = ?) ON CONFLICT (player_id) "
                       "DO UPDATE SET account = excluded.account",
}
"""The other kinds' statements (an upsert, an UPDATE, a DELETE) give the same rows
run twice."""


# -- the store -------------------------------------------------------------------------------

class SqlStore:
    """Every `Store` method in SQL; a backend supplies the driver (the methods below
    that raise NotImplementedError) and its own version, backup and close."""

    BEGIN = "BEGIN"
    """How the outermost transaction starts."""
    SAME = "IS NOT DISTINCT FROM"
    """A comparison that takes NULL as equal to NULL."""
    SHARE = " FOR SHARE"
    """What locks the rows a SELECT read until the commit (writers queue behind it)."""

    path: str
    _depth: int = 0
    """Transactions open, nested."""

    # -- the driver ----------------------------------------------------------------------

    def _errors(self) -> AbstractContextManager[None]:
        """The driver's errors, raised again as `StoreError`s (`Conflict` for uniqueness)."""
        raise NotImplementedError

    def _run(self, sql: str, params: Sequence[Any] = ()) -> Rows:
        raise NotImplementedError

    def _run_many(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        raise NotImplementedError

    def _insert(self, sql: str, params: Sequence[Any]) -> int:
        """Run an INSERT into a table with a `{serial}` id; the new row's id."""
        raise NotImplementedError

    def _in_transaction(self) -> bool:
        raise NotImplementedError

    # -- the store itself ----------------------------------------------------------------

    @contextmanager
    def transaction(self) -> Iterator[None]:
        depth = self._depth
        self._depth += 1
        try:
            with self._errors():
                if depth == 0:
                    with self._outermost():
                        yield
                else:  # inside another: a savepoint, so a failed block undoes its own part
                    with self._savepoint(f"s{depth}"):
                        yield
        finally:
            self._depth = depth

    @contextmanager
    def _outermost(self) -> Iterator[None]:
        """BEGIN, then COMMIT, or ROLLBACK if the block or the commit failed."""
        self._run(self.BEGIN)
        try:
            yield
            self._run("COMMIT")
        except BaseException:
            if self._in_transaction():
                self._run("ROLLBACK")
            raise

    @contextmanager
    def _savepoint(self, name: str) -> Iterator[None]:
        """A transaction inside the one open: released into it, or rolled back to its start."""
        self._run(f"SAVEPOINT {name}")
        try:
            yield
        except BaseException:
            self._run(f"ROLLBACK TO SAVEPOINT {name}")
            self._run(f"RELEASE SAVEPOINT {name}")
            raise
        self._run(f"RELEASE SAVEPOINT {name}")

    # -- finished matches --------------------------------------------------------------

    @guarded
    def record_match(self, match: MatchOver) -> int:
        with self.transaction():
            match_id = self._insert(
                "INSERT INTO matches (table_id, rules, options, players, started_at, "
                "finished_at, totals, winners, private) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (match.table_id, match.rules, _json(match.options), _json(match.players),
                 match.started_at, match.finished_at, _json(match.totals),
                 _json(match.winners), int(match.private)))
            self._run_many("INSERT INTO match_players (match_id, seat, name, kind, level, "
                           "player_id) VALUES (?, ?, ?, ?, ?, ?)",
                           seat_rows(match_id, match.players))
            self._run_many("INSERT INTO deals VALUES (?, ?, ?, ?)",
                             [(match_id, d["deal_no"], _json(d["result"]),
                               _json(d["record"])) for d in match.deals])
        return match_id

    @guarded
    def recent_matches(self, limit: int = 20) -> list[dict[str, Any]]:
        rows = self._run(f"SELECT {_COLUMNS} FROM matches "
                                  "ORDER BY finished_at DESC, id DESC LIMIT ?", (limit,))
        return [_match_row(row) for row in rows]

    @guarded
    def matches_of(self, name: str, limit: int = 20) -> list[dict[str, Any]]:
        rows = self._run(
            f"SELECT {_COLUMNS} FROM matches WHERE id IN "
            "(SELECT match_id FROM match_players WHERE name = ?) "
            "ORDER BY finished_at DESC, id DESC LIMIT ?", (name, limit))
        return [_match_row(row) for row in rows]

    @guarded
    def match(self, match_id: int) -> dict[str, Any] | None:
        row = self._run(f"SELECT {_COLUMNS} FROM matches WHERE id = ?",
                                 (match_id,)).fetchone()
        if row is None:
            return None
        found = _match_row(row)
        found["deals"] = [
            {"deal_no": n, "result": json.loads(result), "record": json.loads(record)}
            for n, result, record in self._run(
                "SELECT deal_no, result, record FROM deals WHERE match_id = ? "
                "ORDER BY deal_no", (match_id,))]
        return found

    @guarded
    def prune(self, keep_days: float, now: float | None = None) -> int:
        cutoff = (time.time() if now is None else now) - keep_days * DAY
        cur = self._run("DELETE FROM matches WHERE finished_at < ?", (cutoff,))
        return cur.rowcount  # deals and players go with them (ON DELETE CASCADE)

    @guarded
    def history_page(self, of: str, name: str | None, viewer: Viewer, offset: int,
                     limit: int) -> tuple[list[dict[str, Any]], int]:
        args: tuple[Any, ...]
        if of == "mine":
            where, args = _played("id"), _seen_by(viewer)
        elif of == "player":
            where = f"id IN (SELECT match_id FROM match_players WHERE name = ?) AND " \
                    f"{_visible('id')}"
            args = (name or "", *_seen_by(viewer))
        elif of == "recent":
            where, args = "private = 0", ()
        else:
            raise ValueError(f"no list of matches called {of!r}")
        (total,) = self._run(f"SELECT COUNT(*) FROM matches WHERE {where}",
                                      args).fetchone()
        rows = self._run(
            f"SELECT {_SUMMARY_COLUMNS} FROM matches WHERE {where} "
            "ORDER BY finished_at DESC, id DESC LIMIT ? OFFSET ?", (*args, limit, offset))
        return [_summary_row(row) for row in rows], int(total)

    @guarded
    def visible_deal(self, match_id: int, deal_no: int,
                     viewer: Viewer) -> dict[str, Any] | None:
        row = self._run(
            f"SELECT {_SUMMARY_COLUMNS} FROM matches WHERE id = ? AND {_visible('id')}",
            (match_id, *_seen_by(viewer))).fetchone()
        if row is None:
            return None
        found = _summary_row(row)
        deal = self._run(
            "SELECT result, record FROM deals WHERE match_id = ? AND deal_no = ?",
            (match_id, deal_no)).fetchone()
        found["deal"] = None if deal is None else {
            "deal_no": deal_no, "result": json.loads(deal[0]), "record": json.loads(deal[1])}
        return found

    @guarded
    def deal_results(self, match_id: int) -> list[dict[str, Any]]:
        rows = self._run("SELECT result FROM deals WHERE match_id = ? ORDER BY deal_no",
                         (match_id,))
        return [json.loads(row[0]) for row in rows]

    # -- the journal -------------------------------------------------------------------

    @guarded
    def write_journal(self, ops: Sequence[JournalOp],
                      holders: Mapping[int, int] | None = None, *,
                      again: bool = False) -> set[int]:
        with self.transaction():  # runs of one statement (mostly commands) in one call each
            fenced = self._fenced(ops, holders) if holders else set()
            if fenced:
                ops = [(kind, values) for kind, values in ops
                       if kind not in TABLE_OPS or values[0] not in fenced]
            rows = [journal_row(kind, values, again) for kind, values in ops]
            for sql, run in itertools.groupby(rows, key=lambda row: row[0]):
                self._run_many(sql, [params for _, params in run])
        return fenced

    def _fenced(self, ops: Sequence[JournalOp], holders: Mapping[int, int]) -> set[int]:
        """The tables of `ops` whose holder is not the one `holders` gives: each row
        checked is locked until the commit (`SHARE`), so a takeover's `hold_table`
        waits for this write to land, or this write sees its count."""
        opened = {values[0] for kind, values in ops if kind == "table_opened"}
        check = sorted({values[0] for kind, values in ops if kind in TABLE_OPS
                        and values[0] in holders} - opened)
        if not check:
            return set()
        found = dict(self._run(
            f"SELECT id, holder FROM live_tables WHERE id IN ({', '.join('?' * len(check))})"
            f"{self.SHARE}", check).fetchall())
        return {table_id for table_id in check if found.get(table_id) != holders[table_id]}

    @guarded
    def hold_table(self, table_id: int) -> int | None:
        with self.transaction():
            self._run("UPDATE live_tables SET holder = holder + 1 WHERE id = ?", (table_id,))
            row = self._run("SELECT holder FROM live_tables WHERE id = ?",
                            (table_id,)).fetchone()
        return None if row is None else int(row[0])

    @guarded
    def read_journal(self) -> JournalRows:
        run = self._run
        return JournalRows(
            tables=[(table_id, opened_at, json.loads(setup)) for table_id, opened_at, setup
                    in run("SELECT id, opened_at, setup FROM live_tables "
                                    "ORDER BY id")],
            snapshots=run("SELECT table_id, seq, code, core FROM table_snapshots")
            .fetchall(),
            commands=run("SELECT table_id, seq, at, command FROM table_commands "
                                  "ORDER BY table_id, seq").fetchall(),
            sessions=run("SELECT player_id, token_hash, name, address FROM "
                                  "sessions ORDER BY player_id").fetchall(),
            counters=dict(run("SELECT name, value FROM counters").fetchall()),
            session_accounts=dict(run("SELECT player_id, account FROM "
                                               "session_accounts").fetchall()),
            rated_tables=[table_id for (table_id,) in run(
                "SELECT table_id FROM live_table_flags WHERE rated <> 0")])

    @guarded
    def saved_session(self, token_hash: bytes) -> SessionRow | None:
        row = self._run(
            "SELECT s.player_id, s.name, s.address, a.account FROM sessions s "
            "LEFT JOIN session_accounts a ON a.player_id = s.player_id "
            "WHERE s.token_hash = ?", (token_hash,)).fetchone()
        if row is None:
            return None
        return SessionRow(int(row[0]), str(row[1]), str(row[2]),
                          None if row[3] is None else int(row[3]))

    @guarded
    def table_open(self, table_id: int) -> bool:
        return self._run("SELECT 1 FROM live_tables WHERE id = ?",
                         (table_id,)).fetchone() is not None

    @guarded
    def journal_counters(self) -> dict[str, int]:
        return {str(name): int(value) for name, value in
                self._run("SELECT name, value FROM counters").fetchall()}

    @guarded
    def id_floors(self) -> dict[str, int]:
        floors = self.journal_counters()
        for kind, queries in ID_HOLDERS.items():
            for query in queries:
                found = self._run(query).fetchone()
                if found is not None and found[0] is not None:
                    floors[kind] = max(floors.get(kind, 0), int(found[0]))
        return floors

    @guarded
    def account_sessions(self, account: int) -> list[tuple[int, bytes]]:
        return [(int(player), bytes(hashed)) for player, hashed in self._run(
            "SELECT s.player_id, s.token_hash FROM sessions s JOIN session_accounts a "
            "ON a.player_id = s.player_id WHERE a.account = ? "
            "ORDER BY s.player_id DESC", (account,))]

    # -- accounts ------------------------------------------------------------------------

    @guarded
    def load_accounts(self) -> tuple[list[AccountRow], dict[str, int]]:
        accounts = [AccountRow(i, name, bool(op), bool(bot)) for i, name, op, bot in self._run(
            "SELECT id, name, operator, bot FROM accounts ORDER BY id")]
        keys = dict(self._run("SELECT key, account FROM account_keys").fetchall())
        return accounts, keys

    @guarded
    def create_account(self, name: str, keys: Sequence[str], password_hash: str,
                       now: float, operator: bool = False, bot: bool = False) -> int:
        with self.transaction():
            account = self._insert(
                "INSERT INTO accounts (name, password, created_at, last_login, operator, bot) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (name, password_hash, now, now, int(operator), int(bot)))
            self._run_many("INSERT INTO account_keys VALUES (?, ?)",
                                   [(key, account) for key in keys])
        return account

    @guarded
    def find_account(self, keys: Sequence[str]) -> int | None:
        for key in keys:
            row = self._run("SELECT account FROM account_keys WHERE key = ?",
                                     (key,)).fetchone()
            if row is not None:
                return int(row[0])
        return None

    @guarded
    def account_row(self, keys: Sequence[str]) -> AccountRow | None:
        account = self.find_account(keys)
        if account is None:
            return None
        row = self._run("SELECT name, operator, bot FROM accounts WHERE id = ?",
                        (account,)).fetchone()
        return None if row is None else AccountRow(account, str(row[0]), bool(row[1]),
                                                   bool(row[2]))

    @guarded
    def password_of(self, account: int) -> str | None:
        row = self._run("SELECT password FROM accounts WHERE id = ?",
                                 (account,)).fetchone()
        return None if row is None else str(row[0])

    @guarded
    def set_password(self, account: int, password_hash: str) -> None:
        self._run("UPDATE accounts SET password = ? WHERE id = ?",
                           (password_hash, account))

    @guarded
    def set_operator(self, account: int, operator: bool) -> None:
        self._run("UPDATE accounts SET operator = ? WHERE id = ?",
                           (int(operator), account))

    @guarded
    def operators(self) -> list[str]:
        return [row[0] for row in self._run(
            "SELECT name FROM accounts WHERE operator <> 0 ORDER BY name")]

    @guarded
    def issue_login(self, account: int, token_hash: bytes, now: float) -> None:
        with self.transaction():
            self._run("INSERT INTO login_tokens VALUES (?, ?, ?, ?)",
                               (token_hash, account, now, now))
            self._run("UPDATE accounts SET last_login = ? WHERE id = ?",
                               (now, account))

    @guarded
    def login_account(self, token_hash: bytes, now: float) -> int | None:
        row = self._run("SELECT account FROM login_tokens WHERE token_hash = ?",
                                 (token_hash,)).fetchone()
        if row is None:
            return None
        with self.transaction():
            self._run("UPDATE login_tokens SET last_used = ? WHERE token_hash = ?",
                               (now, token_hash))
            self._run("UPDATE accounts SET last_login = ? WHERE id = ?",
                               (now, row[0]))
        return int(row[0])

    @guarded
    def revoke_logins(self, account: int, token_hash: bytes | None) -> None:
        if token_hash is None:
            self._run("DELETE FROM login_tokens WHERE account = ?", (account,))
        else:
            self._run("DELETE FROM login_tokens WHERE account = ? AND "
                               "token_hash = ?", (account, token_hash))

    # -- ratings -------------------------------------------------------------------------

    @guarded
    def note_match_accounts(self, match_id: int, seats: Sequence[tuple[int, int]],
                            rated: bool) -> None:
        self._run_many("INSERT INTO match_accounts VALUES (?, ?, ?, ?)",
                               [(match_id, seat, account, int(rated))
                                for seat, account in seats])

    @guarded
    def ratings(self, rules: str, subjects: Sequence[str]) -> dict[str, tuple[float, float]]:
        if not subjects:
            return {}
        return {subject: (mu, sigma) for subject, mu, sigma in self._run(
            "SELECT subject, mu, sigma FROM ratings WHERE rules = ? AND subject IN "
            f"({','.join('?' * len(subjects))})", (rules, *subjects))}

    @guarded
    def save_rating(self, rules: str, subject: str, mu: float, sigma: float,
                    ordinal: float, won: bool, now: float) -> None:
        with self.transaction():
            self._run(
                "INSERT INTO ratings VALUES (?, ?, ?, ?, ?, 1, ?, ?) "
                "ON CONFLICT (rules, subject) DO UPDATE SET mu = excluded.mu, "
                "sigma = excluded.sigma, ordinal = excluded.ordinal, "
                "matches = ratings.matches + 1, wins = ratings.wins + excluded.wins, "
                "updated_at = excluded.updated_at",
                (rules, subject, mu, sigma, ordinal, int(won), now))
            # A point left over from ratings an operator deleted by hand gives way.
            self._run(
                "INSERT INTO rating_history SELECT rules, subject, matches, updated_at, mu, "
                "sigma FROM ratings WHERE rules = ? AND subject = ? "
                "ON CONFLICT (subject, rules, matches) DO UPDATE SET at = excluded.at, "
                "mu = excluded.mu, sigma = excluded.sigma", (rules, subject))

    @guarded
    def ladder(self, rules: str, limit: int, settled: float,
               everyone: bool = False) -> list[LadderRow]:
        return [LadderRow(subject, mu, sigma, ordinal, matches, wins, name, bool(bot))
                for subject, mu, sigma, ordinal, matches, wins, name, bot in self._run(
            "SELECT r.subject, r.mu, r.sigma, r.ordinal, r.matches, r.wins, a.name, "
            "COALESCE(a.bot, 0) <> 0 FROM ratings r "
            "LEFT JOIN accounts a ON r.subject = 'a:' || a.id "
            f"WHERE r.rules = ?{'' if everyone else ' AND r.sigma <= ?'} "
            f"ORDER BY {_UNSETTLED} r.mu DESC, r.subject LIMIT ?",
            (rules, *(() if everyone else (settled,)), settled, limit))]

    @guarded
    def ratings_of(self, subject: str, settled: float) -> list[RatingRow]:
        # Ahead: unsettled behind settled, then a higher mu, then (ties) the subject.
        return [RatingRow(*row) for row in self._run(
            "SELECT rules, mu, sigma, ordinal, matches, wins, (SELECT count(*) FROM "
            "ratings o WHERE o.rules = r.rules AND ("
            "CASE WHEN o.sigma <= ? THEN 0 ELSE 1 END < CASE WHEN r.sigma <= ? THEN 0 "
            "ELSE 1 END OR (CASE WHEN o.sigma <= ? THEN 0 ELSE 1 END = CASE WHEN "
            "r.sigma <= ? THEN 0 ELSE 1 END AND (o.mu > r.mu OR (o.mu = r.mu AND "
            "o.subject < r.subject))))) "
            "FROM ratings r WHERE subject = ? ORDER BY rules",
            (settled, settled, settled, settled, subject))]

    @guarded
    def rating_history(self, subject: str, rules: str, limit: int) -> list[RatingPoint]:
        return [RatingPoint(*row) for row in reversed(self._run(
            "SELECT matches, at, mu, sigma FROM rating_history WHERE subject = ? AND "
            "rules = ? ORDER BY matches DESC LIMIT ?", (subject, rules, limit)).fetchall())]

    @guarded
    def account_matches(self, account: int, viewer: Viewer) -> list[AccountMatch]:
        return [AccountMatch(match_id, seat, bool(rated), rules, finished,
                             json.loads(players), json.loads(totals), json.loads(winners))
                for match_id, seat, rated, rules, finished, players, totals, winners
                in self._run(
                    "SELECT m.id, ma.seat, ma.rated, m.rules, m.finished_at, m.players, "
                    "m.totals, m.winners FROM match_accounts ma JOIN matches m ON "
                    f"m.id = ma.match_id WHERE ma.account = ? AND {_visible('m.id')} "
                    "ORDER BY m.finished_at DESC, m.id DESC",
                    (account, *_seen_by(viewer)))]

    # -- moderation ----------------------------------------------------------------------

    @guarded
    def sanctions_in_force(self, now: float) -> list[SanctionRow]:
        return [SanctionRow(*row) for row in self._run(
            "SELECT kind, account, player_id, network, reason, by_name, expires_at "
            "FROM sanctions WHERE lifted_at IS NULL AND (expires_at IS NULL OR "
            "expires_at > ?) ORDER BY id", (now,))]

    @guarded
    def add_sanction(self, sanction: SanctionRow, now: float) -> None:
        s = sanction
        self._run(
            "INSERT INTO sanctions (kind, account, player_id, network, reason, by_name, "
            "created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (s.kind, s.account, s.player_id, s.network, s.reason, s.by, now, s.expires_at))

    @guarded
    def lift_sanctions(self, kind: str, account: int | None, player_id: int | None,
                       network: str | None, now: float) -> None:
        self._run(
            "UPDATE sanctions SET lifted_at = ? WHERE lifted_at IS NULL AND kind = ? "
            f"AND account {self.SAME} ? AND player_id {self.SAME} ? AND network {self.SAME} ?",
            (now, kind, account, player_id, network))

    @guarded
    def log_action(self, at: float, operator: str, action: str, target: str,
                   detail: str) -> None:
        self._run("INSERT INTO moderation_log (at, operator, action, target, "
                           "detail) VALUES (?, ?, ?, ?, ?)",
                           (at, operator, action, target, detail))

    @guarded
    def moderation_log(self) -> list[LogEntry]:
        return [LogEntry(*row) for row in self._run(
            "SELECT at, operator, action, target, detail FROM moderation_log ORDER BY id")]


_UNSETTLED = "CASE WHEN r.sigma <= ? THEN 0 ELSE 1 END,"
"""The ladder's first sort key: the settled ratings (sigma at most the query's
argument) ahead of the provisional ones."""


def _played(match_id: str) -> str:
    """The condition that `viewer` (the query's next two arguments, `_seen_by`) played
    the match whose id is the column `match_id`: its session held a seat, or its account
    was seated. Never by name: a guest's name is the next guest's once the session is
    gone. A guest's account argument is NULL, which no row equals."""
    return (f"({match_id} IN (SELECT match_id FROM match_players WHERE player_id = ?) OR "
            f"{match_id} IN (SELECT match_id FROM match_accounts WHERE account = ?))")


def _visible(match_id: str) -> str:
    """The condition that `viewer` may see the match: a public one, or one they played."""
    return f"(private = 0 OR {_played(match_id)})"


def _seen_by(viewer: Viewer) -> tuple[int, int | None]:
    """The arguments `_played` and `_visible` take, in their order."""
    return viewer.player_id, viewer.account


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
