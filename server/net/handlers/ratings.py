"""`leaderboard` and `profile`: ratings read from the store off the reactor."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pisyedili.protocol.errors import ProtocolError
from pisyedili.server.net.handlers import Handler, answer_from_store
from pisyedili.server.net.handlers.history import viewer_of
from pisyedili.server.people import ratings
from pisyedili.server.people.session import Session
from pisyedili.server.table.effects import Message

if TYPE_CHECKING:
    from pisyedili.server.net.connection import Connection
    from pisyedili.server.net.dispatch import Replier


def _ratings(conn: Connection) -> ratings.Ratings:
    kept = conn.server.ratings
    if kept is None:
        raise ProtocolError("accounts_unavailable", "this server keeps no ratings")
    return kept


def _leaderboard(conn: Connection, s: Session, msg: Message,
                 reply: Replier) -> Message | None:
    _ratings(conn)
    rules = msg.get("rules", ratings.DEFAULT_RULES)
    limit = msg.get("limit", 20)
    everyone = msg.get("provisional", False)
    answer_from_store(conn, reply, lambda store: ratings.leaderboard_page(
        store, rules, limit, everyone))
    return None


def _profile(conn: Connection, s: Session, msg: Message,
             reply: Replier) -> Message | None:
    account = _ratings(conn).account(msg["name"])
    if account is None:
        raise ProtocolError("no_such_player", f"no account is named {msg['name']!r}")
    account_id, name, viewer, bot = account.id, account.name, viewer_of(s), account.bot
    answer_from_store(conn, reply, lambda store: ratings.profile_page(
        store, account_id, name, viewer, bot))
    return None


HANDLERS: dict[str, Handler] = {"leaderboard": _leaderboard, "profile": _profile}
