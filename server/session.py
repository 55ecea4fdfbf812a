"""Players as the server knows them, across connections (issue 4: reconnection).

A `Session` is the `Participant` the tables see. Its connection can drop and come
back (the client says `hello` with the resume token from `welcome`) without the
table noticing more than `disconnected` / `reconnected`. The token is a bearer
secret: it comes from `secrets`, is sent once (in `welcome`, to its owner), and is
kept out of every repr and log line.
"""

from __future__ import annotations

import itertools
import secrets
from typing import TYPE_CHECKING, Any, Protocol

from twisted.logger import Logger

from pisyedili.protocol.limits import MAX_NAME
from pisyedili.server.clock import Clock, Delayed
from pisyedili.server.participant import Message

if TYPE_CHECKING:
    from pisyedili.server.table import Table

log = Logger()

class Connection(Protocol):
    """What a session needs from the network layer (net.py implements it)."""

    def send_message(self, msg: Message) -> None: ...

    def replaced(self) -> None:
        """Another connection resumed this session: tell the peer why, then close."""
        ...

class Session:
    """One player: a stable id, a name, a resume token and at most one table."""

    def __init__(self, player_id: str, name: str, token: str) -> None:
        self._player_id = player_id
        self._name = name
        self._token = token
        self.connection: Connection | None = None
        self.table: Table | None = None
        self.request_id: int | None = None
        """The `id` of the request being handled; a `table` snapshot sent while it is
        set answers that request and carries it (create_table, join_table)."""
        self.expiry: Delayed | None = None

    @property
    def player_id(self) -> str:
        return self._player_id

    @property
    def name(self) -> str:
        return self._name

    @property
    def token(self) -> str:
        return self._token

    @property
    def connected(self) -> bool:
        return self.connection is not None

    def send(self, msg: Message) -> None:
        if self.connection is None:
            return
        if self.request_id is not None and msg.get("type") == "table" and "id" not in msg:
            msg = {**msg, "id": self.request_id}
        self.connection.send_message(msg)

    def __repr__(self) -> str:  # never the token
        return f"<Session {self._player_id} {self._name!r} connected={self.connected}>"

def holds_seat(table: Table, session: Session) -> bool:
    """True if `session` sits in a seat of `table` (as opposed to watching)."""
    you: dict[str, Any] = table.snapshot_for(session).get("you", {})
    return you.get("seat") is not None

class Sessions:
    """The registry of sessions, with the grace period of dropped connections.

    When a connection drops, the session's table is told (`disconnected`: its own
    grace period and bots are the table's business) and the session stays resumable.
    After `grace_seconds` a session that holds no seat at a table in play is
    forgotten (it leaves its table); one that does is kept, and checked again every
    grace period, so a player can reclaim a seat a bot is holding (issue 4).
    """

    def __init__(self, clock: Clock, grace_seconds: float) -> None:
        self._clock = clock
        self._grace = grace_seconds
        self._by_token: dict[str, Session] = {}
        self._ids = itertools.count(1)

    def __len__(self) -> int:
        return len(self._by_token)

    def open(self, name: str, connection: Connection) -> Session:
        """A new player for a connection that said `hello` without a valid token."""
        token = secrets.token_urlsafe(32)
        session = Session(str(next(self._ids)), self._unique(name), token)
        session.connection = connection
        self._by_token[token] = session
        log.info("session {player} opened for {name!r}", player=session.player_id, name=name)
        return session

    def _unique(self, name: str) -> str:
        """`name`, or `name 2`, `name 3`...: no two sessions share a name (case aside),
        so nobody can pass for another player in chat or at a table. `welcome` tells
        the client the name it got."""
        taken = {s.name.casefold() for s in self._by_token.values()}
        if name.casefold() not in taken:
            return name
        for n in itertools.count(2):
            suffix = f" {n}"
            candidate = name[:MAX_NAME - len(suffix)].rstrip() + suffix
            if candidate.casefold() not in taken:
                return candidate
        raise AssertionError("unreachable")

    def find(self, token: str) -> Session | None:
        return self._by_token.get(token)

    def resume(self, token: str, connection: Connection) -> Session | None:
        """Attach `connection` to the session of `token`; None if the token is unknown.

        A connection still attached to that session is sent `replaced` and
        closed: the newest connection wins (the old one is usually a dead socket the
        server has not noticed yet).
        """
        session = self._by_token.get(token)
        if session is None:
            return None
        old = session.connection
        if session.expiry is not None and session.expiry.active():
            session.expiry.cancel()
        session.expiry = None
        session.connection = connection
        if old is not None:
            log.info("session {player} replaced by a new connection", player=session.player_id)
            old.replaced()
        else:
            log.info("session {player} resumed", player=session.player_id)
        return session

    def restore_table(self, session: Session, was_connected: bool) -> None:
        """After `resume`: give the table back to the player (a fresh full snapshot)."""
        table = session.table
        if table is None:
            return
        if was_connected:
            # The table never saw a drop: just bring the new connection up to date.
            session.send(table.snapshot_for(session))
        else:
            table.reconnected(session)

    def lost(self, session: Session, connection: Connection) -> None:
        """The connection of `session` dropped; a replaced connection is ignored."""
        if session.connection is not connection:
            return
        session.connection = None
        session.request_id = None
        log.info("session {player} disconnected", player=session.player_id)
        if session.table is not None:
            session.table.disconnected(session)
        self._arm_expiry(session)

    def _arm_expiry(self, session: Session) -> None:
        session.expiry = self._clock.callLater(self._grace, self._expire, session)

    def _expire(self, session: Session) -> None:
        session.expiry = None
        if session.connected:
            return
        table = session.table
        if table is not None and table.phase == "playing" and holds_seat(table, session):
            self._arm_expiry(session)
            return
        self.forget(session)

    def forget(self, session: Session) -> None:
        """Drop a disconnected session for good: it leaves its table, its token dies."""
        if session.table is not None:
            table, session.table = session.table, None
            table.leave(session)
        self._by_token.pop(session.token, None)
        log.info("session {player} expired", player=session.player_id)

    def each(self) -> list[Session]:
        return list(self._by_token.values())
