"""The other processes of a cluster, as the sessions, accounts and moderation here
reach them.

Each tells the other processes of what happens here, and asks them, through the
relay (`net/relay.py`): a player at a table elsewhere, a login into an account whose
session is elsewhere, a registration, a sanction. The relay is made from them, so
none of them can be given it: each is given an `OtherProcesses` as it is made, and
the relay joins it once it is made itself (`service/assembly.py`, the one place this
cycle is broken).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from twisted.internet.defer import Deferred

from pisyedili.server.people.accounts import Account, AccountsElsewhere
from pisyedili.server.people.moderation import Gathered, SanctionsElsewhere
from pisyedili.server.people.session import Elsewhere, Session

if TYPE_CHECKING:
    from pisyedili.server.table.runner import TableRunner


class Relaying(Elsewhere, AccountsElsewhere, SanctionsElsewhere, Protocol):
    """What the relay does for the sessions, accounts and moderation here."""


class OtherProcesses:
    """Stands for the relay until it is made, and passes everything on to it then.

    Nothing here is asked before the relay joins: the server listens, and hears the
    cluster, only once the whole graph is made."""

    def __init__(self) -> None:
        self._relay: Relaying | None = None

    def join(self, relay: Relaying) -> None:
        """The relay, made from the parts this was given to: it answers from now on."""
        if self._relay is not None:
            raise RuntimeError("the relay joined twice")
        self._relay = relay

    @property
    def _joined(self) -> Relaying:
        if self._relay is None:
            raise RuntimeError("asked of the other processes before the relay joined "
                               "(`service/assembly.py` joins it as it makes the server)")
        return self._relay

    # -- the sessions' (`session.Elsewhere`) ---------------------------------------------

    def disconnected(self, session: Session) -> bool:
        return self._joined.disconnected(session)

    def reconnected(self, session: Session) -> bool:
        return self._joined.reconnected(session)

    def forgotten(self, session: Session) -> bool:
        return self._joined.forgotten(session)

    def table_id(self, session: Session) -> int | None:
        return self._joined.table_id(session)

    def left_table(self, table: TableRunner, player_id: str) -> None:
        self._joined.left_table(table, player_id)

    # -- the accounts' and the moderation's ----------------------------------------------

    def account_registered(self, account: Account) -> None:
        self._joined.account_registered(account)

    def account_session(self, account: int, caller: Session) -> Deferred[Session | None]:
        return self._joined.account_session(account, caller)

    def tell_sanction(self, message: dict[str, Any]) -> Deferred[Gathered]:
        return self._joined.tell_sanction(message)
