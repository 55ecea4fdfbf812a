"""The store's interface: everything the server keeps, behind one `Store` protocol.

Every caller outside `server/store/` goes through `Store` (on the store's thread, by
way of `Archive`) and never sees a connection, a cursor or a line of SQL, so a second
backend (PostgreSQL) is one more class that implements this protocol and runs the
shared test module (tests/server/test_store_interface.py). A backend is synchronous:
`Archive` keeps it off the reactor. Values go in and come out as plain Python (JSON
kinds for matches, bytes for hashes and blobs); failures are `StoreError`s.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any, NamedTuple, Protocol
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from pisyedili.server.table.effects import MatchOver

DAY = 86400.0
"""Seconds in a day: how retention (`--keep-days`) and pruning count."""


SERVER_SCHEMES = ("postgresql://", "postgres://")
"""How a `--db` naming a PostgreSQL database starts (libpq's connection URIs)."""


def is_url(where: str | os.PathLike[str]) -> bool:
    """Whether `where` names a database server (PostgreSQL) rather than a SQLite file:
    no file, no lock, no folder to make."""
    return isinstance(where, str) and where.startswith(SERVER_SCHEMES)


def public(where: str | os.PathLike[str]) -> str:
    """`where` as logs and messages may show it: a URL without its password."""
    where = os.fspath(where)
    if not is_url(where):
        return where
    parts = urlsplit(where)
    netloc = parts.netloc
    if parts.password is not None:
        user, _, host = netloc.rpartition("@")
        netloc = f"{user.partition(':')[0]}@{host}"
    query = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True)
             if k != "password"]
    return urlunsplit(parts._replace(netloc=netloc, query=urlencode(query)))


def pg_dump_command(url: str, dest: str) -> str:
    """The shell line that backs the PostgreSQL database at `url` up to the file `dest`
    (its password, if any, is left to PGPASSWORD or ~/.pgpass). pg_dump creates the
    file by the umask, 0644 as a rule, yet it holds password and token hashes: the line
    runs it under umask 077 (in a subshell, so the caller's shell keeps its own), and
    the dump is 0600, as the server's own backups are."""
    dump = shlex.join(["pg_dump", "--format=custom", f"--file={dest}", public(url)])
    return f"(umask 077 && exec {dump})"


class StoreError(Exception):
    """The store could not be read or written (a full disk, a vanished file, a lost
    server): whatever the backend's own exception was, it is the cause of this one."""


class Unreachable(StoreError):
    """The store is out of reach: its server stopped, restarting or cut off, a connection
    lost. An outage, which the caller says as one (no traceback) and outlives; any other
    `StoreError` (a missing table, a full file's refusal) is a defect, said with its
    traceback."""


class Conflict(StoreError):
    """A write would break one of the store's uniqueness rules (a name key or a login
    token held already): the caller's request, not the store, is at fault."""


class AccountRow(NamedTuple):
    id: int
    name: str
    operator: bool
    bot: bool = False
    """A bot's account (`register.bot`): shown as a bot wherever it plays."""


class SessionRow(NamedTuple):
    """A session as the journal keeps it, and the account it is logged in to."""

    player_id: int
    name: str
    address: str
    account: int | None


class SanctionRow(NamedTuple):
    """A ban or mute as `moderation.Sanction` is built from it."""

    kind: str
    account: int | None
    player_id: int | None
    network: str | None
    reason: str
    by: str
    expires_at: float | None


class LogEntry(NamedTuple):
    at: float
    operator: str
    action: str
    target: str
    detail: str


class LadderRow(NamedTuple):
    subject: str
    mu: float
    sigma: float
    ordinal: float
    matches: int
    wins: int
    name: str | None
    """The account's name for an `a:<id>` subject (None if it has none, and for bots)."""
    bot: bool = False
    """The `a:<id>` subject is a bot's account (`register.bot`)."""


class RatingRow(NamedTuple):
    """One rule set's rating of a subject, and how many subjects rank above it."""

    rules: str
    mu: float
    sigma: float
    ordinal: float
    matches: int
    wins: int
    above: int


class Viewer(NamedTuple):
    """Who asks to see kept matches: a session (its player id) and the account it is
    logged in to (None: a guest). A private match is shown to the sessions that held
    its seats and to the accounts seated in it, never by name: a name a guest used is
    free for the next guest once the first one's session is gone."""

    player_id: int
    account: int | None = None


class RatingPoint(NamedTuple):
    """A subject's rating in one rule set after one of its rated matches."""

    matches: int
    """How many rated matches it had played by then (this one included)."""
    at: float
    mu: float
    sigma: float


class AccountMatch(NamedTuple):
    """A kept match an account sat in, as its profile lists it."""

    id: int
    seat: int
    rated: bool
    rules: str
    finished_at: float
    players: list[dict[str, Any]]
    totals: list[int]
    winners: list[int]


JournalOp = tuple[str, tuple[Any, ...]]
"""One write of the journal: its kind and its values, as `JOURNAL_OPS` lists them."""

JOURNAL_OPS = {
    "table_opened": "table_id, opened_at, setup (a JSON dict)",
    "table_closed": "table_id (its commands, snapshot and flags go with it)",
    "command": "table_id, seq, at, command (bytes)",
    "snapshot": "table_id, seq, code, core (bytes): replaces the table's last one",
    "counter": "name, value: the last id given out of a kind ('table', 'player')",
    "session_opened": "player_id, token_hash, name, address, opened_at",
    "session_moved": "player_id, token_hash, name, address, opened_at: a session another "
                     "process held, written by its new home over the row it may have left",
    "session_forgotten": "player_id",
    "session_changed": "player_id, token_hash, name",
    "session_account": "player_id, account (None: logged out)",
}
"""What `Store.write_journal` takes, by kind; the journal (journal.py) writes these only."""

TABLE_OPS = frozenset({"table_opened", "table_closed", "command", "snapshot"})
"""The kinds of op that are about one table, its id first."""


@dataclass
class JournalRows:
    """The journal as it is kept: what `journal.StoreJournal.load` rebuilds from."""

    tables: list[tuple[int, float, dict[str, Any]]] = field(default_factory=list)
    """Open tables in id order: id, opened_at, setup."""
    snapshots: list[tuple[int, int, str, bytes]] = field(default_factory=list)
    """table_id, seq, code, core."""
    commands: list[tuple[int, int, float, bytes]] = field(default_factory=list)
    """In (table_id, seq) order: table_id, seq, at, command."""
    sessions: list[tuple[int, bytes, str, str]] = field(default_factory=list)
    """In player id order: player_id, token_hash, name, address."""
    counters: dict[str, int] = field(default_factory=dict)
    session_accounts: dict[int, int] = field(default_factory=dict)
    rated_tables: list[int] = field(default_factory=list)
    """Tables older servers flagged rated beside their setup, not in it."""


class Store(Protocol):
    """Everything the server keeps. Calls are synchronous and each is atomic; a caller
    that needs several to commit together wraps them in `transaction()`."""

    path: str
    """Where the store is, for messages (a file, or a server's address without secrets)."""

    # -- the store itself ----------------------------------------------------------------

    def transaction(self) -> AbstractContextManager[None]:
        """Every call inside commits together at the end of the block, or none does (the
        block raised). Blocks nest: an inner one commits with the outer, and one that
        raised undoes its own part only (the outer may catch that and go on)."""
        ...

    def migrate(self) -> int:
        """Bring the schema to `schema.SCHEMA_VERSION` (done when the store opens); the
        version it was at. A store newer than this code raises RuntimeError."""
        ...

    def schema_version(self) -> int: ...

    def backup(self, path: str | os.PathLike[str]) -> None:
        """A consistent copy of the whole store at `path`, taken while it runs (a file
        for SQLite; for PostgreSQL an empty database's URL)."""
        ...

    def close(self) -> None: ...

    # -- finished matches --------------------------------------------------------------

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

    def history_page(self, of: str, name: str | None, viewer: Viewer, offset: int,
                     limit: int) -> tuple[list[dict[str, Any]], int]:
        """One page of a list of matches, newest first, each with `private` and its
        number of `deals`; and how many matches the whole list holds. `of` is "mine"
        (`viewer` played it: its session held a seat, or its account was seated),
        "player" (a seat named `name` did; a private match only when `viewer` played it
        too) or "recent" (every public match). Names are matched exactly, as they were
        kept."""
        ...

    def visible_deal(self, match_id: int, deal_no: int,
                     viewer: Viewer) -> dict[str, Any] | None:
        """A match `viewer` may see, as `history_page` lists it, with its deal `deal_no`
        (`deal`: deal_no, result, record; None past its last deal); None if there is no
        such match for `viewer`."""
        ...

    def deal_results(self, match_id: int) -> list[dict[str, Any]]:
        """Every deal's `result` of finished match `match_id`, in deal order (empty for
        no such match): its score sheet's source. Whoever calls it checked with
        `visible_deal` that the viewer may see the match."""
        ...

    # -- the journal (what a restart carries on with) ----------------------------------

    def write_journal(self, ops: Sequence[JournalOp],
                      holders: Mapping[int, int] | None = None, *,
                      again: bool = False) -> set[int]:
        """Apply `ops` (`JOURNAL_OPS`) in order, in one transaction. With `holders`
        (table id -> the holder count the writer has, `hold_table`), the ops of a table
        whose count in the store differs, or that is no longer open, are left out: the
        ids of those tables (fenced: another process holds them now).

        `again`: `ops` may be written already, by a write that failed without saying
        whether it landed (a connection lost as the database committed); a row of
        theirs that is there already is left as it is, where a first write would
        raise `Conflict`."""
        ...

    def hold_table(self, table_id: int) -> int | None:
        """Take the open table `table_id` over: its holder count, one more than its
        last holder's, whose writes for it `write_journal` refuses from now on; None
        if it is not open."""
        ...

    def read_journal(self) -> JournalRows: ...

    def journal_counters(self) -> dict[str, int]:
        """The journal's `counter`s: the highest id of each kind any writer gave out."""
        ...

    def id_floors(self) -> dict[str, int]:
        """The highest id of each kind (`table`, `player`) anywhere in the store: the
        journal's counters, and the ids of its rows (open tables, sessions, kept
        matches and their seats, sanctions). A cluster hands out no id at or below."""
        ...

    def saved_session(self, token_hash: bytes) -> SessionRow | None:
        """One session of the journal by its token's hash: with a journal the processes
        of a cluster share, one whose process is gone is rebuilt on another from it."""
        ...

    def table_open(self, table_id: int) -> bool:
        """Whether the journal holds table `table_id` open: with a journal the
        processes of a cluster share, one whose process is gone is taken over from it."""
        ...

    def account_sessions(self, account: int) -> list[tuple[int, bytes]]:
        """The player id and token hash of each of the journal's sessions logged in to
        `account`, newest first (more than one: those of a process that is gone)."""
        ...

    # -- accounts ------------------------------------------------------------------------

    def load_accounts(self) -> tuple[list[AccountRow], dict[str, int]]:
        """Every account in id order, and the name keys stored, each with its account."""
        ...

    def create_account(self, name: str, keys: Sequence[str], password_hash: str,
                       now: float, operator: bool = False, bot: bool = False) -> int:
        """A new account holding the name keys `keys`; its id. `Conflict` if one of them
        is held already. `bot`: a bot's account, for good."""
        ...

    def find_account(self, keys: Sequence[str]) -> int | None:
        """The account holding the first of `keys` that one holds."""
        ...

    def account_row(self, keys: Sequence[str]) -> AccountRow | None:
        """`find_account`'s account as a row: a process of a cluster that has not
        heard of an account another one registered reads it here."""
        ...

    def password_of(self, account: int) -> str | None: ...

    def set_password(self, account: int, password_hash: str) -> None: ...

    def set_operator(self, account: int, operator: bool) -> None: ...

    def operators(self) -> list[str]:
        """The names of the accounts flagged operator, sorted."""
        ...

    def issue_login(self, account: int, token_hash: bytes, now: float) -> None:
        """Keep a new login token's hash; the account logged in at `now`."""
        ...

    def login_account(self, token_hash: bytes, now: float) -> int | None:
        """The account a login token is for (used at `now`), or None."""
        ...

    def revoke_logins(self, account: int, token_hash: bytes | None) -> None:
        """Revoke one of the account's login tokens, or (None) all of them."""
        ...

    # -- ratings -------------------------------------------------------------------------

    def note_match_accounts(self, match_id: int, seats: Sequence[tuple[int, int]],
                            rated: bool) -> None:
        """Which account held which seat of a kept match: (seat, account) pairs."""
        ...

    def ratings(self, rules: str, subjects: Sequence[str]) -> dict[str, tuple[float, float]]:
        """The (mu, sigma) of those of `subjects` rated under `rules`."""
        ...

    def save_rating(self, rules: str, subject: str, mu: float, sigma: float,
                    ordinal: float, won: bool, now: float) -> None:
        """A subject's new rating after one more match (won or not), and that point of
        its history (`rating_history`)."""
        ...

    def ladder(self, rules: str, limit: int, settled: float,
               everyone: bool = False) -> list[LadderRow]:
        """The best `limit` subjects under `rules`, in the ladder's order: those whose
        sigma is `settled` or less by mu, best first, then (`everyone`) the others by
        mu; ties by subject."""
        ...

    def ratings_of(self, subject: str, settled: float) -> list[RatingRow]:
        """A subject's ratings, by rule set, each with how many subjects the ladder
        (`ladder`, `everyone`) puts ahead of it."""
        ...

    def rating_history(self, subject: str, rules: str, limit: int) -> list[RatingPoint]:
        """The latest `limit` points of a subject's rating history in `rules`, oldest
        first."""
        ...

    def account_matches(self, account: int, viewer: Viewer) -> list[AccountMatch]:
        """Every kept match the account sat in that `viewer` may see (a private one
        only when `viewer` played it too), newest first."""
        ...

    # -- moderation ----------------------------------------------------------------------

    def sanctions_in_force(self, now: float) -> list[SanctionRow]:
        """The bans and mutes neither lifted nor expired at `now`, oldest first."""
        ...

    def add_sanction(self, sanction: SanctionRow, now: float) -> None: ...

    def lift_sanctions(self, kind: str, account: int | None, player_id: int | None,
                       network: str | None, now: float) -> None:
        """Lift every sanction of `kind` in force on exactly that target."""
        ...

    def log_action(self, at: float, operator: str, action: str, target: str,
                   detail: str) -> None:
        """One line of the moderation log."""
        ...

    def moderation_log(self) -> list[LogEntry]:
        """The moderation log, oldest first."""
        ...
