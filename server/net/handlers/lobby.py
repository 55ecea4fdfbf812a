"""Requests outside any table: the heartbeat, the lobby's list, opening and joining."""

from __future__ import annotations

import secrets
from typing import TYPE_CHECKING

from twisted.internet.defer import Deferred

from pisyedili.protocol.errors import ProtocolError
from pisyedili.protocol.schema import DEFAULT_BOTS_AFTER
from pisyedili.protocol.shapes import SEAT_RANGE
from pisyedili.server.net.handlers import OK, Handler, table_of
from pisyedili.server.net.handlers.accounts import is_bot
from pisyedili.server.people.session import Session
from pisyedili.server.table import commands as cmd
from pisyedili.server.table.core import GUEST_REFUSED, TableError, invite_code
from pisyedili.server.table.effects import Message
from pisyedili.server.table.pairing import QuickSetup, Wish
from pisyedili.server.table.runner import TableRunner

if TYPE_CHECKING:
    from pisyedili.server.net.connection import Connection
    from pisyedili.server.net.dispatch import Replier

_CODES = secrets.SystemRandom()
"""Invite codes of tables opened in a cluster: drawn before the table exists."""


def _ping(conn: Connection, s: Session, msg: Message, reply: Replier) -> Message | None:
    return {"type": "pong"}


def _pong(conn: Connection, s: Session, msg: Message, reply: Replier) -> Message | None:
    return None


def _lobby_subscribe(conn: Connection, s: Session, msg: Message,
                     reply: Replier) -> Message | None:
    page = {key: msg[key] for key in ("offset", "limit") if key in msg}  # else the first
    return conn.server.lobby.subscribe(s, **page)


def _lobby_unsubscribe(conn: Connection, s: Session, msg: Message,
                       reply: Replier) -> Message | None:
    conn.server.lobby.unsubscribe(s)
    return OK


def _create_table(conn: Connection, s: Session, msg: Message,
                  reply: Replier) -> Message | None:
    if table_of(s) is not None:
        raise ProtocolError("already_at_table", "leave your table before opening another")
    if conn.server.cluster.shared:
        conn.answer_later(Deferred.fromCoroutine(_create_claimed(conn, s, msg, reply)), reply)
        return None
    return _open(conn, s, msg, reply)


QUICK_SEATS = 4
"""The seats of a table `play_now` opens when no seat count is asked for: both rule
sets seat four."""


def _play_now(conn: Connection, s: Session, msg: Message, reply: Replier) -> Message | None:
    """Seat the player at the best waiting table (`pairing.py`), else open a quick one."""
    if table_of(s) is not None:
        raise ProtocolError("already_at_table", "leave your table before playing at another")
    rules = msg.get("rules", "classic")
    seats = msg.get("seats")
    low, high = SEAT_RANGE[rules]
    if seats is not None and not low <= seats <= high:
        raise TableError("bad_options", f"{rules} tables have {low} to {high} seats",
                         field="seats")
    rated = bool(msg.get("rated", False))
    if rated and s.account is None:
        raise TableError("account_required", GUEST_REFUSED)
    bot = is_bot(conn, s)
    table = conn.server.lobby.pairing.best(Wish(rules, seats, rated, bot))
    if table is not None:
        seat_ready(conn, s, table, reply)
        return None
    wait = msg.get("bots_after", DEFAULT_BOTS_AFTER)
    opening: Message = {"rules": rules, "seats": QUICK_SEATS if seats is None else seats,
                        "rated": rated}
    quick = QuickSetup(float(wait) if wait else None, msg.get("level", "medium"))
    if conn.server.cluster.shared:
        conn.answer_later(Deferred.fromCoroutine(
            _create_claimed(conn, s, opening, reply, quick)), reply)
        return None
    return _open(conn, s, opening, reply, quick=quick)


def seat_ready(conn: Connection, s: Session, table: TableRunner, reply: Replier) -> None:
    """Join `table` (its snapshot is the reply) ready to play: who comes through
    `play_now` or an invitation asked to play, and a quick table starts once all are."""
    table.handle(cmd.Join(s.player_id, s.name, registered=s.account is not None,
                          address=s.address, bot=is_bot(conn, s)), reply)
    if table.core.is_member(s.player_id):
        s.table = table
    if table.core.seat_of(s.player_id) is not None:
        table.handle(cmd.Ready(s.player_id, True))


async def _create_claimed(conn: Connection, s: Session, msg: Message,
                          reply: Replier, quick: QuickSetup | None = None) -> Message | None:
    """In a cluster: the table's id, and a private table's code, claimed first, and
    the table in the cluster's map before the host hears of it."""
    cluster = conn.server.cluster
    table_id = await cluster.next_id("table")
    code = None
    if _private(msg):
        while code is None or not await cluster.claim_code(code, table_id):
            code = invite_code(_CODES)
    await cluster.own(table_id)
    if conn.closing:
        cluster.table_closed(table_id, code)
        return None
    return _open(conn, s, msg, reply, table_id=table_id, code=code, quick=quick)


def _private(msg: Message) -> bool:
    """A stacked deck's table is private whatever `private` says: only those given
    its code come to a table whose host knows every card."""
    return bool(msg.get("private", False)) or "deck" in msg


def _open(conn: Connection, s: Session, msg: Message, reply: Replier,
          table_id: int | None = None, code: str | None = None,
          quick: QuickSetup | None = None) -> Message | None:
    table = conn.server.lobby.create(s, msg["rules"], msg["seats"], msg.get("options"),
                                     msg.get("name"), _private(msg),
                                     address=conn.address,
                                     rated=bool(msg.get("rated", False)),
                                     table_id=table_id, code=code, deck=msg.get("deck"),
                                     bot_accounts=bool(msg.get("bot_accounts", True)),
                                     host_bot=is_bot(conn, s), quick=quick)
    s.table = table
    table.handle(cmd.Join(s.player_id, s.name, registered=s.account is not None,
                          address=s.address, bot=is_bot(conn, s)),
                 reply)  # the snapshot is the reply
    return None


def _join_table(conn: Connection, s: Session, msg: Message,
                reply: Replier) -> Message | None:
    table = conn.server.lobby.find(msg.get("table"), msg.get("code"))
    current = table_of(s)
    if current is not None and current is not table:
        raise ProtocolError("already_at_table", "leave your table before joining another")
    table.handle(cmd.Join(s.player_id, s.name, bool(msg.get("spectate", False)),
                          registered=s.account is not None, address=s.address,
                          bot=is_bot(conn, s)), reply)
    if table.core.is_member(s.player_id):
        s.table = table
    return None


HANDLERS: dict[str, Handler] = {
    "ping": _ping,
    "pong": _pong,
    "lobby_subscribe": _lobby_subscribe,
    "lobby_unsubscribe": _lobby_unsubscribe,
    "create_table": _create_table,
    "join_table": _join_table,
    "play_now": _play_now,
}
