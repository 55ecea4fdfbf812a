"""The request table: which handler a message type goes to, and what every request
gets on its way there.

Every request gets exactly one reply (a `Replier` carries its `id`), sent before
anything the request causes: table requests become table commands whose `Reply` effect
comes first. A request whose feature (the schema's `MessageSpec.feature`) the
connection did not agree on is refused here, once for every feature, with
`feature_not_negotiated`. A handler's `ProtocolError` is its refusal; any other
exception is logged with its traceback and answered `internal_error`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from twisted.logger import Logger

from pisyedili.protocol.errors import ProtocolError
from pisyedili.protocol.messages import make_error
from pisyedili.protocol.schema import MESSAGES, Direction
from pisyedili.server.cluster import unavailable
from pisyedili.server.net.handlers import (
    REQUEST_FAILED,
    Handler,
    accounts,
    chat,
    history,
    invites,
    lobby,
    moderation,
    ratings,
    table,
    table_of,
)
from pisyedili.server.table import commands as cmd
from pisyedili.server.table.effects import Message

if TYPE_CHECKING:
    from pisyedili.server.net.connection import Connection
    from pisyedili.server.people.session import Session

log = Logger()


HANDLERS: dict[str, Handler] = {
    **lobby.HANDLERS, **table.HANDLERS, **chat.HANDLERS, **history.HANDLERS,
    **accounts.HANDLERS, **ratings.HANDLERS, **moderation.HANDLERS, **invites.HANDLERS,
}
"""Per request type, its handler."""

FEATURE_OF: dict[str, str] = {
    msg_type: spec.feature for (direction, msg_type), spec in MESSAGES.items()
    if direction is Direction.TO_SERVER and spec.feature is not None}
"""Per request type of an optional feature, that feature, as the schema says."""

TABLE_REQUESTS = table.TABLE_REQUESTS


class Replier:
    """The reply to one request (a `ReplyTo`): sent with the request's `id`, an `error`
    as `Connection.send_error` sends it (a closing code closes). `sent` says whether it
    went, so a failure after the reply is logged, not answered a second time."""

    __slots__ = ("_conn", "_rid", "kind", "sent")

    def __init__(self, conn: Connection, rid: int | None, kind: str) -> None:
        self._conn = conn
        self._rid = rid
        self.kind = kind
        self.sent = False

    def __call__(self, answer: Message) -> None:
        """Send `answer` as this request's reply."""
        self.sent = True
        rid = self._rid
        if answer.get("type") == "error":
            self._conn.send_error(answer["code"], answer["message"], rid,
                                  **{k: v for k, v in answer.items()
                                     if k not in ("type", "code", "message", "id")})
        else:
            self._conn.send_message({**answer, "id": rid} if rid is not None else answer)


def require_feature(conn: Connection, kind: str) -> None:
    """Refuse a request whose feature the connection did not agree on."""
    feature = FEATURE_OF.get(kind)
    if feature is not None and feature not in conn.features:
        raise ProtocolError("feature_not_negotiated",
                            f"say features: [{feature!r}] in hello to use this",
                            feature=feature)


def handle(conn: Connection, kind: str, msg: Message, rid: int | None) -> None:
    """Hand one valid request of a welcomed connection to its handler here, or to the
    process that holds its table (`Relay.takes`), and reply."""
    session = conn.session
    assert session is not None
    relay = conn.server.relay

    def elsewhere() -> bool:
        require_feature(conn, kind)
        return relay is not None and relay.takes(conn, session, kind, msg, rid)

    _handle(conn, session, kind, msg, rid, elsewhere)


def handle_here(conn: Connection, kind: str, msg: Message, rid: int | None) -> None:
    """A request for a table this process holds, from a player connected to another
    process, which checked it as `handle` does (its feature too) and sent it here
    (`Relay`): to its handler, and reply. It never goes back to the relay."""
    session = conn.session
    assert session is not None
    _handle(conn, session, kind, msg, rid, lambda: False)


def _refuse_held(conn: Connection, kind: str, rid: int | None) -> None:
    """While the journal holds every send back (its shared store out of reach), a
    request does nothing and is answered at once, ahead of what waits: a `ping` with
    its `pong`, any other with `cluster_unavailable`. So no player waits in silence
    for a store that may not come back soon, and nothing is done that a reply would
    acknowledge before the store has it."""
    if kind == "pong":
        return
    if kind == "ping":
        conn.send_now({"type": "pong"} if rid is None else {"type": "pong", "id": rid})
        return
    refusal = unavailable("this request")
    conn.send_now(make_error(refusal.code, refusal.message, rid, **refusal.extra))


def _handle(conn: Connection, session: Session, kind: str, msg: Message, rid: int | None,
            elsewhere: Callable[[], bool]) -> None:
    """`msg` to its handler unless it is refused or went `elsewhere`; the reply, then
    the table told that the player is there."""
    handler = HANDLERS.get(kind)
    if handler is None:
        conn.send_error("unknown_type", f"no request of type {kind!r}", rid)
        return
    if conn.server.journal.holding:
        _refuse_held(conn, kind, rid)
        return
    reply = Replier(conn, rid, kind)
    at = table_of(session)
    seen = at is not None and kind not in TABLE_REQUESTS \
        and MESSAGES[(Direction.TO_SERVER, kind)].presence
    try:
        if elsewhere():
            return  # its table is elsewhere: the reply comes from there
        answer = handler(conn, session, msg, reply)
    except ProtocolError as e:  # TableError included
        answer = None
        conn.send_error(e.code, e.message, rid, **e.extra)
    except Exception:
        log.failure("request {type} from {player} failed", type=kind,
                    player=session.player_id)
        if not reply.sent:
            conn.send_error("internal_error", REQUEST_FAILED, rid)
        return
    if answer is not None:
        reply(answer)
    if seen and at is not None and not at.closed:
        # After the reply, so a seat taken back is told after it; a refused request
        # shows the player is there all the same.
        at.handle(cmd.Seen(session.player_id))
    elif at is None and conn.server.relay is not None \
            and MESSAGES[(Direction.TO_SERVER, kind)].presence:
        conn.server.relay.seen(session)  # at a table elsewhere: `Seen` there
