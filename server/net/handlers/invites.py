"""Invitations (feature `invites`): `invite` a connected player to your waiting table,
`answer_invite` one you were sent. The open invitations and their limits are
`people/invitations.py`'s; this module checks who may be invited where.

Invitations do not cross the processes of a cluster: a player connected to another
process, or a table another process holds, is refused with `player_elsewhere`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from twisted.internet.defer import Deferred

from pisyedili.protocol.errors import ProtocolError
from pisyedili.server.net.handlers import OK, Handler, table_of
from pisyedili.server.net.handlers.lobby import seat_ready
from pisyedili.server.people import names
from pisyedili.server.people.session import Session
from pisyedili.server.table.core import BOT_REFUSED, TableError, TablePhase
from pisyedili.server.table.effects import Message
from pisyedili.server.table.runner import TableRunner

if TYPE_CHECKING:
    from pisyedili.server.net.connection import Connection
    from pisyedili.server.net.dispatch import Replier

ACROSS = "invitations do not cross the server processes of a cluster"


def _elsewhere(conn: Connection, s: Session) -> bool:
    """Whether the player is at a table another process holds."""
    relay = conn.server.relay
    return relay is not None and relay.table_id(s) is not None


def _invite(conn: Connection, s: Session, msg: Message, reply: Replier) -> Message | None:
    table = table_of(s)
    if table is None:
        if _elsewhere(conn, s):
            raise ProtocolError("player_elsewhere", f"your table is on another server "
                                f"process: {ACROSS}")
        raise ProtocolError("not_at_table", "you are not at a table")
    core = table.core
    if core.phase != TablePhase.WAITING:
        raise TableError("game_in_progress", "your table is not waiting for players: "
                         "invite before its match starts")
    if not core.open_seats():
        raise TableError("table_full", "your table has no open seat")
    name = msg["name"]
    invitee = conn.server.sessions.named(name)
    if invitee is s:
        raise ProtocolError("invite_self", "you cannot invite yourself")
    if invitee is None or not invitee.connected:
        if conn.server.cluster.shared:
            conn.answer_later(Deferred.fromCoroutine(_nobody_here(conn, name)), reply)
            return None
        raise ProtocolError("no_such_player", f"nobody called {name} is connected")
    _check_invitee(conn, invitee, table)
    conn.server.invitations.send(s, invitee, table, conn.server.lobby.summary(table))
    return OK


async def _nobody_here(conn: Connection, name: str) -> Message | None:
    """In a cluster, a name nobody here holds: refused either way, but saying whether
    it is connected to another process."""
    if await conn.server.cluster.name_holder(names.keys(name)) is not None:
        raise ProtocolError("player_elsewhere", f"{name} is connected to another server "
                            f"process: {ACROSS}")
    raise ProtocolError("no_such_player", f"nobody called {name} is connected")


def _check_invitee(conn: Connection, invitee: Session, table: TableRunner) -> None:
    """Whether `invitee` could take a seat at `table` at all."""
    features: frozenset[str] = getattr(invitee.peer, "features", frozenset())
    if "invites" not in features:
        raise ProtocolError("not_invitable", f"{invitee.name}'s client takes no invitations")
    if table_of(invitee) is not None or _elsewhere(conn, invitee):
        raise ProtocolError("player_busy", f"{invitee.name} is at a table already")
    core = table.core
    if core.rated and invitee.account is None:
        raise TableError("account_required", f"{invitee.name} is not logged in, and your "
                         "table is rated: it seats registered players only")
    accounts = conn.server.accounts
    if not core.bot_accounts and accounts is not None and accounts.is_bot(invitee.account):
        raise TableError("bot_account_refused", BOT_REFUSED)


def _answer_invite(conn: Connection, s: Session, msg: Message,
                   reply: Replier) -> Message | None:
    invitations = conn.server.invitations
    if not msg["accept"]:
        invitations.answered(invitations.take(s, msg["invite"]), "declined")
        return OK
    invitations.held(s, msg["invite"])
    if table_of(s) is not None or _elsewhere(conn, s):  # the invitation stays open
        raise ProtocolError("already_at_table", "leave your table before accepting")
    invite = invitations.take(s, msg["invite"])
    invitations.answered(invite, "accepted")
    seat_ready(conn, s, invite.table, reply)
    return None


HANDLERS: dict[str, Handler] = {
    "invite": _invite,
    "answer_invite": _answer_invite,
}
