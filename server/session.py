"""Players as the server knows them, across connections.

A `Session` is one player: an id that is the player's member id at tables, a name, and
a resume token. Its connection can drop and come back (the client says `hello` with the
token from `welcome`) without its table noticing more than `Disconnected` /
`Reconnected`. The token is a bearer secret: it comes from `secrets`, is sent once (in
`welcome`, to its owner), and is kept out of every repr and log line.

How long an absent player keeps a place is the table's business (its grace timer); a
session that is at no table is forgotten one grace period after its connection dropped.
"""

from __future__ import annotations

import itertools
import secrets
from typing import TYPE_CHECKING, Protocol

from twisted.logger import Logger

from pisyedili.protocol.limits import MAX_NAME
from pisyedili.server.clock import Clock, Delayed
from pisyedili.server.commands import Disconnected, Leave, Reconnected
from pisyedili.server.effects import Message

if TYPE_CHECKING:
    from pisyedili.server.table_runner import TableRunner

log = Logger()


class Peer(Protocol):
    """What a session needs from its network connection (net.py implements it)."""

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
        self.peer: Peer | None = None
        self.table: TableRunner | None = None
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
        return self.peer is not None

    def send(self, msg: Message) -> None:
        """Queue one server→client message; dropped while disconnected."""
        if self.peer is not None:
            self.peer.send_message(msg)

    def __repr__(self) -> str:  # never the token
        return f"<Session {self._player_id} {self._name!r} connected={self.connected}>"


class Sessions:
    """The registry of sessions: by token (to resume) and by id (to deliver)."""

    def __init__(self, clock: Clock, grace_seconds: float) -> None:
        self._clock = clock
        self._grace = grace_seconds
        self._by_token: dict[str, Session] = {}
        self._by_id: dict[str, Session] = {}
        self._ids = itertools.count(1)

    def __len__(self) -> int:
        return len(self._by_token)

    def open(self, name: str, peer: Peer) -> Session:
        """A new player for a connection that said `hello` without a valid token."""
        token = secrets.token_urlsafe(32)
        session = Session(str(next(self._ids)), self._unique(name), token)
        session.peer = peer
        self._by_token[token] = session
        self._by_id[session.player_id] = session
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

    def by_id(self, player_id: str) -> Session | None:
        return self._by_id.get(player_id)

    def deliver(self, player_id: str, msg: Message) -> None:
        """Send to a member of a table (tables know members by id only)."""
        session = self._by_id.get(player_id)
        if session is not None:
            session.send(msg)

    def resume(self, token: str, peer: Peer) -> Session | None:
        """Attach `peer` to the session of `token`; None if the token is unknown.

        A connection still attached to that session is sent `replaced` and closed: the
        newest connection wins (the old one is usually a dead socket the server has not
        noticed yet). The caller sends `welcome`, then calls `rejoin`.
        """
        session = self._by_token.get(token)
        if session is None:
            return None
        old = session.peer
        if session.expiry is not None and session.expiry.active():
            session.expiry.cancel()
        session.expiry = None
        session.peer = peer
        if old is not None:
            log.info("session {player} replaced by a new connection", player=session.player_id)
            old.replaced()
        else:
            log.info("session {player} resumed", player=session.player_id)
        return session

    def rejoin(self, session: Session) -> None:
        """After a resumed `welcome`: the table hands the seat back, with a snapshot."""
        if session.table is not None:
            session.table.handle(Reconnected(session.player_id))

    def lost(self, session: Session, peer: Peer) -> None:
        """The connection of `session` dropped; a replaced connection is ignored."""
        if session.peer is not peer:
            return
        session.peer = None
        log.info("session {player} disconnected", player=session.player_id)
        if session.table is not None:
            session.table.handle(Disconnected(session.player_id))
        else:
            self._arm_expiry(session)

    def left_table(self, table: TableRunner, player_id: str) -> None:
        """A table let `player_id` go; one that is away already used its grace there."""
        session = self._by_id.get(player_id)
        if session is None or session.table is not table:
            return
        session.table = None
        if not session.connected:
            self.forget(session)

    def _arm_expiry(self, session: Session) -> None:
        session.expiry = self._clock.callLater(self._grace, self._expire, session)

    def _expire(self, session: Session) -> None:
        session.expiry = None
        if not session.connected and session.table is None:
            self.forget(session)

    def forget(self, session: Session) -> None:
        """Drop a session for good: it leaves its table, its token dies."""
        if session.table is not None:
            table, session.table = session.table, None
            table.handle(Leave(session.player_id))
        if session.expiry is not None and session.expiry.active():
            session.expiry.cancel()
        session.expiry = None
        self._by_token.pop(session.token, None)
        self._by_id.pop(session.player_id, None)
        log.info("session {player} expired", player=session.player_id)

    def each(self) -> list[Session]:
        return list(self._by_token.values())
