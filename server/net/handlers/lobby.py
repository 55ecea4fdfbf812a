"""Requests outside any table: the heartbeat, the lobby's list, opening and joining."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pisyedili.protocol.errors import ProtocolError
from pisyedili.server.net.handlers import OK, Handler, table_of
from pisyedili.server.people.session import Session
from pisyedili.server.table import commands as cmd
from pisyedili.server.table.effects import Message

if TYPE_CHECKING:
    from pisyedili.server.net.connection import Connection
    from pisyedili.server.net.dispatch import Replier


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
    table = conn.server.lobby.create(s, msg["rules"], msg["seats"], msg.get("options"),
                                     msg.get("name"), bool(msg.get("private", False)),
                                     address=conn.address,
                                     rated=bool(msg.get("rated", False)))
    s.table = table
    table.handle(cmd.Join(s.player_id, s.name, registered=s.account is not None),
                 reply)  # the snapshot is the reply
    return None


def _join_table(conn: Connection, s: Session, msg: Message,
                reply: Replier) -> Message | None:
    table = conn.server.lobby.find(msg.get("table"), msg.get("code"))
    current = table_of(s)
    if current is not None and current is not table:
        raise ProtocolError("already_at_table", "leave your table before joining another")
    table.handle(cmd.Join(s.player_id, s.name, bool(msg.get("spectate", False)),
                          registered=s.account is not None), reply)
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
}
