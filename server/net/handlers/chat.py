"""`chat`: a line to the lobby or to the player's table, unless the player is muted."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pisyedili.server.net.handlers import OK, Handler, require_table, table_of
from pisyedili.server.people.session import Session
from pisyedili.server.table import commands as cmd
from pisyedili.server.table.effects import Message

if TYPE_CHECKING:
    from pisyedili.server.net.connection import Connection
    from pisyedili.server.net.dispatch import Replier


def _chat(conn: Connection, s: Session, msg: Message, reply: Replier) -> Message | None:
    scope = msg.get("scope")
    table = table_of(s)
    if scope is None:
        scope = "lobby" if table is None else "table"
    text = msg["text"].strip()
    muted = conn.server.moderation and conn.server.moderation.muted(s)
    if muted:
        raise muted
    if scope == "lobby":
        reply(OK)  # first: the line itself and a seat taken back come after it
        conn.server.lobby.chat(s, text)
        if table is not None:
            table.handle(cmd.Seen(s.player_id))
        return None
    require_table(s).handle(cmd.Chat(s.player_id, text), reply)
    return None


HANDLERS: dict[str, Handler] = {"chat": _chat}
