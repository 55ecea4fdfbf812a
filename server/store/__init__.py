"""The store: everything the server keeps, behind one interface.

Callers outside this package import from here only: `Store` (the interface, base.py),
`Archive` (which runs it on the store's thread), `open_store` (which picks the
backend), the `StoreError`s, and the rows the interface hands out. The backends
(sqlite.py, postgres.py, and the SQL they share in sql.py), the schema they share
(schema.py), the journal a restart reads (journal.py), the finished matches' lists and
replays (history.py) and the private files (files.py) sit behind it. Adding a
backend: docs/architecture.md, "The store".
"""

from __future__ import annotations

import os

from pisyedili.server.store.archive import Archive
from pisyedili.server.store.base import (
    DAY,
    AccountMatch,
    AccountRow,
    Conflict,
    JournalOp,
    JournalRows,
    LadderRow,
    LogEntry,
    RatingPoint,
    RatingRow,
    SanctionRow,
    Store,
    StoreError,
    Viewer,
    is_url,
    pg_dump_command,
    public,
)
from pisyedili.server.store.sqlite import MEMORY, SqliteStore, backup_file, default_path

__all__ = [
    "DAY", "MEMORY", "AccountMatch", "AccountRow", "Archive", "Conflict", "JournalOp",
    "JournalRows", "LadderRow", "LogEntry", "RatingPoint", "RatingRow", "SanctionRow", "Store",
    "StoreError", "Viewer", "backup_file", "default_path", "id_floors", "is_url", "open_store",
    "pg_dump_command", "public",
]


def open_store(where: str | os.PathLike[str]) -> Store:
    """The store at `where`, opened and migrated: a PostgreSQL database (a
    `postgresql://` URL, `is_url`), a SQLite file, or `:memory:` (a store that keeps
    nothing past the process). The one place a backend is chosen."""
    if is_url(where):
        try:  # an optional dependency: imported only by a server that uses it
            from pisyedili.server.store.postgres import PostgresStore
        except ImportError as e:
            raise StoreError("a PostgreSQL store needs psycopg: install "
                             "pisyedili[postgres]") from e
        return PostgresStore(os.fspath(where))
    return SqliteStore(where)


def id_floors(where: str | os.PathLike[str]) -> dict[str, int]:
    """The highest id of each kind the store at `where` holds (`Store.id_floors`), on a
    connection of its own: a thread may call it while the server's own connections
    are in use."""
    store = open_store(where)
    try:
        return store.id_floors()
    finally:
        store.close()
