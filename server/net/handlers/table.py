"""Requests to the player's table: each becomes one table command, whose `Reply`
effect is the request's reply."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from pisyedili.server.net.handlers import Handler, require_table
from pisyedili.server.net.handlers.accounts import is_bot
from pisyedili.server.people.session import Session
from pisyedili.server.table import commands as cmd
from pisyedili.server.table.effects import Message
from pisyedili.server.table.runner import TableRunner

if TYPE_CHECKING:
    from pisyedili.server.net.connection import Connection
    from pisyedili.server.net.dispatch import Replier


def _table_command(build: Callable[[Session, Message, TableRunner], cmd.Command]) -> Handler:
    """A handler that hands the request to the player's table as one command."""

    def handler(conn: Connection, s: Session, msg: Message,
                reply: Replier) -> Message | None:
        table = require_table(s)
        table.handle(build(s, msg, table), reply)
        return None

    return handler


def _sit(conn: Connection, s: Session, msg: Message, reply: Replier) -> Message | None:
    """`sit`, with what the core checks a seat's taker by: registered, and a bot's."""
    require_table(s).handle(cmd.Sit(s.player_id, msg["seat"], registered=s.account is not None,
                                    bot=is_bot(conn, s)), reply)
    return None


HANDLERS: dict[str, Handler] = {
    "resync": _table_command(lambda s, m, t: cmd.Resync(s.player_id)),
    "leave_table": _table_command(lambda s, m, t: cmd.Leave(s.player_id)),
    "sit": _sit,
    "stand": _table_command(lambda s, m, t: cmd.Stand(s.player_id)),
    "add_bot": _table_command(lambda s, m, t: cmd.AddBot(
        s.player_id, m["seat"], m.get("level", "medium"), t.new_seed())),
    "remove_bot": _table_command(lambda s, m, t: cmd.RemoveBot(s.player_id, m["seat"])),
    "ready": _table_command(lambda s, m, t: cmd.Ready(s.player_id, bool(m["ready"]))),
    "start": _table_command(lambda s, m, t: cmd.Start(s.player_id, t.new_seed())),
    "move": _table_command(lambda s, m, t: cmd.Play(s.player_id, m["move"])),
    "rematch": _table_command(lambda s, m, t: cmd.Rematch(s.player_id, bool(m["agree"]),
                                                          t.new_seed())),
}

TABLE_REQUESTS = frozenset({*HANDLERS, "chat"})
"""Requests whose table command counts presence itself (the core's one path for it);
other requests that show presence (the schema's `presence`) are told as `Seen`. Not
`create_table` or `join_table`: from a player at a table, the first never reaches it
and the second only asks for a snapshot."""
