"""`history` and `replay`: finished matches, read from the store off the reactor."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pisyedili.protocol.errors import ProtocolError
from pisyedili.protocol.shapes import HISTORY_PAGE
from pisyedili.server.net.handlers import Handler, answer_from_store
from pisyedili.server.people.session import Session
from pisyedili.server.store import Viewer, history
from pisyedili.server.table.effects import Message

if TYPE_CHECKING:
    from pisyedili.server.net.connection import Connection
    from pisyedili.server.net.dispatch import Replier


def viewer_of(s: Session) -> Viewer:
    """Who `s` is to the kept matches: its session and account, not its name (`replay`
    and `export` are refused a private match the same way `history` hides it)."""
    return Viewer(int(s.player_id), s.account)


def _history(conn: Connection, s: Session, msg: Message,
             reply: Replier) -> Message | None:
    of, name = msg["of"], msg.get("name")
    if of == "player":
        if name is None:
            raise ProtocolError("missing_field", "of: player needs the player's name",
                                field="name")
        name = history.lookup_name(name)
    elif of == "mine":
        name = s.name
    offset, limit = msg.get("offset", 0), min(msg.get("limit", HISTORY_PAGE), HISTORY_PAGE)
    viewer = viewer_of(s)
    answer_from_store(conn, reply, lambda store: history.history_page(
        store, of, name, viewer, offset, limit))
    return None


def _replay(conn: Connection, s: Session, msg: Message,
            reply: Replier) -> Message | None:
    match_id, deal_no, start = msg["match"], msg.get("deal", 1), msg.get("from", 0)
    viewer = viewer_of(s)
    steps = bool(msg.get("steps", False))
    answer_from_store(conn, reply, lambda store: history.replay_page(
        store, match_id, deal_no, start, viewer, steps))
    return None


HANDLERS: dict[str, Handler] = {"history": _history, "replay": _replay}
