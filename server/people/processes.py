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

from pisyedili.server.joined_later import JoinedLater
from pisyedili.server.people.accounts import Account, AccountsElsewhere
from pisyedili.server.people.moderation import Gathered, SanctionsElsewhere
from pisyedili.server.people.session import Elsewhere, Session

if TYPE_CHECKING:
    from pisyedili.server.table.runner import TableRunner


class Relaying(Elsewhere, AccountsElsewhere, SanctionsElsewhere, Protocol):
    """What the relay does for the sessions, accounts and moderation here."""


class OtherProcesses(JoinedLater[Relaying]):
    """Stands for the relay until it is made, and passes everything on to it then."""

    def __init__(self) -> None:
        super().__init__("the relay")

    # -- the sessions' (`session.Elsewhere`) ---------------------------------------------

    def disconnected(self, session: Session) -> bool:
        return self.joined.disconnected(session)

    def reconnected(self, session: Session) -> bool:
        return self.joined.reconnected(session)

    def forgotten(self, session: Session) -> bool:
        return self.joined.forgotten(session)

    def table_id(self, session: Session) -> int | None:
        return self.joined.table_id(session)

    def left_table(self, table: TableRunner, player_id: str) -> None:
        self.joined.left_table(table, player_id)

    # -- the accounts' and the moderation's ----------------------------------------------

    def account_registered(self, account: Account) -> None:
        self.joined.account_registered(account)

    def account_session(self, account: int, caller: Session) -> Deferred[Session | None]:
        return self.joined.account_session(account, caller)

    def tell_sanction(self, message: dict[str, Any]) -> Deferred[Gathered]:
        return self.joined.tell_sanction(message)
