"""A restarted server picks up where the last one stopped: tables, seats, sessions.

The journal (`journal.py`) holds every open table's setup and commands and every
session's token hash. Here they are read back into the lobby and the session registry
before the server listens: each table is replayed into a fresh core, its members'
sessions are tied to it again, and `Restored` tells it that nobody is connected now,
so each absent player gets the grace period (and then the stand-in bot) as after any
dropped connection, while the turn, bot and deal timers run on from their deadlines,
moved on by the outage: a turn has the time it had left at the table's last command.
A player who reconnects with their token takes their seat back and gets a snapshot.
"""

from __future__ import annotations

from twisted.logger import Logger

from pisyedili.server.people.session import Sessions
from pisyedili.server.store.journal import Saved
from pisyedili.server.table.commands import Restored
from pisyedili.server.table.lobby import Lobby

log = Logger()


def restore(saved: Saved, lobby: Lobby, sessions: Sessions) -> int:
    """Rebuild what `saved` holds; the number of tables rebuilt."""
    sessions.restore(saved.sessions, saved.last_player)
    for player_id, account in saved.session_accounts.items():
        logged_in = sessions.by_id(str(player_id))
        if logged_in is not None:
            logged_in.account = account
    lobby.continue_ids(saved.last_table)
    rebuilt = []
    for table in saved.tables:
        try:
            rebuilt.append(lobby.rebuild(table))
        except Exception:
            log.failure("table {table} could not be rebuilt; it is gone", table=table.id)
    for runner in rebuilt:
        for member in runner.core.members():
            session = sessions.by_id(member)
            if session is not None:
                session.table = runner
    for runner in rebuilt:
        runner.handle(Restored())
    sessions.expire_idle()
    log.info("restored {tables} open tables and {sessions} sessions",
             tables=len(lobby.tables()), sessions=len(sessions))
    return len(rebuilt)
