"""Players as the server knows them, across connections.

A `Session` is one player: an id that is the player's member id at tables, a name, and
a resume token. Its connection can drop and come back (the client says `hello` with the
token from `welcome`) without its table noticing more than `Disconnected` /
`Reconnected`. The token is a bearer secret: it comes from `secrets`, is sent once (in
`welcome`, to its owner), and is kept out of every repr and log line; the registry
finds sessions by its hash, which is all the journal stores, so a restarted server
knows a token only when its owner presents it again.

How long an absent player keeps a place is the table's business (its grace timer); a
session that is at no table is forgotten one grace period after its connection dropped.
"""

from __future__ import annotations

import itertools
import secrets
import unicodedata
from collections import Counter
from collections.abc import Callable, Container, Iterator
from functools import partial
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

from twisted.logger import Logger

from pisyedili.protocol.limits import MAX_NAME
from pisyedili.server.clock import Clock, Delayed
from pisyedili.server.cluster import LOCAL, Cluster
from pisyedili.server.cluster.holdings import SessionForgotten, SessionOpened
from pisyedili.server.people import names
from pisyedili.server.store.journal import SavedSession, token_hash
from pisyedili.server.table.commands import Disconnected, Leave, Reconnected
from pisyedili.server.table.effects import Message
from pisyedili.server.table.journal import NO_JOURNAL, Journal

if TYPE_CHECKING:
    from pisyedili.server.table.runner import TableRunner

log = Logger()


class Peer(Protocol):
    """What a session needs from its network connection (`Connection` implements it)."""

    def send_message(self, msg: Message) -> None: ...

    def replaced(self) -> None:
        """Another connection resumed this session: tell the peer why, then close."""
        ...


class Elsewhere(Protocol):
    """Where a player at a table of another process is followed (`net/relay.py`):
    each answers whether the session was at such a table (then it was told there)."""

    def disconnected(self, session: Session) -> bool: ...

    def reconnected(self, session: Session) -> bool: ...

    def forgotten(self, session: Session) -> bool: ...

    def table_id(self, session: Session) -> int | None: ...

    def left_table(self, table: TableRunner, player_id: str) -> None:
        """A table here let `player_id` go: the registry lets it go (`release`), and a
        visitor's home is told."""


class Session:
    """One player: a stable id, a name, a resume token and at most one table."""

    # One per player: no per-instance dict.
    __slots__ = ("_address", "_hashed", "_name", "_player_id", "_token", "account", "expiry",
                 "peer", "table")

    def __init__(self, player_id: str, name: str, token: str | None, address: str = "?",
                 *, hashed: bytes | None = None) -> None:
        self._player_id = player_id
        self._name = name
        self._token = token
        self._hashed = hashed if hashed is not None else token_hash(token or "")
        self._address = address
        self.peer: Peer | None = None
        self.table: TableRunner | None = None
        self.expiry: Delayed | None = None
        self.account: int | None = None  # logged in to (`accounts.py`); None: a guest

    @property
    def player_id(self) -> str:
        return self._player_id

    @property
    def name(self) -> str:
        return self._name

    @property
    def token(self) -> str:
        """The resume token, once its owner presented it (or it was just made); a
        session restored from the journal knows only its hash until then."""
        if self._token is None:
            raise LookupError("this session's token has not been presented since the restart")
        return self._token

    @property
    def hashed_token(self) -> bytes:
        return self._hashed

    def presented(self, token: str) -> None:
        """Its owner resumed with `token` (which matched): the welcome repeats it."""
        self._token = token

    @property
    def address(self) -> str:
        """The address key of the connection that opened the session; it counts there
        against `max_sessions_per_address` until forgotten, wherever it resumes from."""
        return self._address

    @property
    def connected(self) -> bool:
        return self.peer is not None

    def send(self, msg: Message) -> None:
        """Queue one server→client message; dropped while disconnected."""
        if self.peer is not None:
            self.peer.send_message(msg)

    def __repr__(self) -> str:  # never the token
        return f"<Session {self._player_id} {self._name!r} connected={self.connected}>"


class _Claim(NamedTuple):
    """The name keys a session holds, and for a suffixed name what it was suffixed for."""

    keys: tuple[str, ...]
    taken: str | None  # the key that was already held, when a suffix was needed
    suffix: int


def _suffixed(name: str, n: int) -> str:
    """`name n`, cut to fit `MAX_NAME`; the cut keeps a letter with its marks."""
    tail = f" {n}"
    cut = MAX_NAME - len(tail)
    while 0 < cut < len(name) and unicodedata.category(name[cut]).startswith("M"):
        cut -= 1
    return name[:cut].rstrip() + tail


class Sessions:
    """The registry of sessions: by token (to resume), by id (to deliver) and by name
    key (`names.keys`), so a new name is checked without looking at every session."""

    def __init__(self, clock: Clock, grace_seconds: float,
                 journal: Journal = NO_JOURNAL, cluster: Cluster = LOCAL, *,
                 elsewhere: Elsewhere | None = None,
                 reserved: Container[str] = frozenset()) -> None:
        self._clock = clock
        self._cluster = cluster
        self._grace = grace_seconds
        self._journal = journal
        self._by_token: dict[bytes, Session] = {}  # by the token's hash
        self._by_id: dict[str, Session] = {}
        self._by_key: dict[str, Session] = {}
        self._claims: dict[str, _Claim] = {}  # by player id
        self._next_suffix: dict[str, int] = {}  # by held key: the first suffix to try
        self._per_address: Counter[str] = Counter()  # live sessions by opening address
        self._ids = itertools.count(1)
        self.elsewhere = elsewhere
        """In a cluster: the tables of other processes this registry's players are at."""
        self.reserved = reserved
        """Name keys no guest may take: the registered accounts' (`Accounts.keys`, which
        grows as names are registered)."""

    def __len__(self) -> int:
        return len(self._by_token)

    def opened_from(self, address: str) -> int:
        """Live sessions opened from `address`, for the per-address session cap."""
        return self._per_address[address]

    def open(self, name: str, peer: Peer, address: str = "?", *,
             player_id: str | None = None) -> Session:
        """A new player for a connection that said `hello` without a valid token;
        `name` is one `names.accept` let through, `address` the connection's key.
        In a cluster the id and the name come claimed already (`hello.py`)."""
        token = secrets.token_urlsafe(32)
        unique, claim = self._unique(name)
        session = Session(player_id or str(next(self._ids)), unique, token, address)
        session.peer = peer
        self._add(session, claim)
        self._live(session)
        self._journal.session_opened(int(session.player_id), session.hashed_token,
                                     session.name, address, self._clock.seconds())
        return session

    def _add(self, session: Session, claim: _Claim) -> None:
        """A session homed here from now on: in a cluster, its process's `holdings`
        know it (what a hand-over of it is decided by)."""
        if self._cluster.shared:
            self._cluster.holdings.handle(SessionOpened(session.player_id))
        self._per_address[session.address] += 1
        self._by_token[session.hashed_token] = session
        self._by_id[session.player_id] = session
        for key in claim.keys:
            self._by_key[key] = session
        self._claims[session.player_id] = claim

    def adopt(self, player_id: str, name: str, token: str, peer: Peer,
              address: str = "?") -> Session:
        """A session of another process whose player resumed here with its token: the
        same id, name and token, held here from now on (`relay.py` moved it)."""
        session = Session(player_id, name, token, address)
        session.peer = peer
        self._add(session, _Claim(names.keys(name), None, 0))
        self._live(session)
        self._journal.session_moved(int(player_id), session.hashed_token, name, address,
                                    self._clock.seconds())
        return session

    def once_written(self, fn: Callable[..., object], *args: Any) -> None:
        """Call `fn(*args)` once what the registry wrote is committed: a session handed
        over must be gone from a shared journal before its new home writes it there."""
        self._journal.after_commit(fn, *args)

    def hand_over(self, session: Session, keep_row: bool = False) -> None:
        """Its player resumed on another process, which holds the session now: it goes
        from here without touching the cluster's keys (they are the new home's) nor
        its table (the caller keeps the seat, for a visitor). `keep_row`: nor the
        shared journal's row (its table was taken over with it, by a process that
        restored the session from that row; or its new home writes it over as it
        takes it in, and until then it is the journal's)."""
        if session.expiry is not None and session.expiry.active():
            session.expiry.cancel()
        session.expiry = None
        session.peer = None
        session.table = None
        self._unlist(session, write=not keep_row)
        claim = self._claims.pop(session.player_id, None)
        self._cluster.session_moved(session.hashed_token, claim.keys if claim else ())
        for key in claim.keys if claim else ():
            self._by_key.pop(key, None)
        self._by_id.pop(session.player_id, None)
        log.info("session {player} is held by another process now", player=session.player_id)

    def take_in(self, player_id: str, name: str, hashed: bytes, address: str) -> Session:
        """A session a stopping process handed here, its connection gone with that
        process: the same id, name and token (known by its hash until its owner
        presents it again), held here from now on. The caller places it at its table,
        then says it is away (`went_away`)."""
        session = Session(player_id, name, None, address, hashed=hashed)
        self._add(session, _Claim(names.keys(name), None, 0))
        self._live(session)
        self._journal.session_moved(int(player_id), hashed, name, address,
                                    self._clock.seconds())
        return session

    def went_away(self, session: Session) -> None:
        """A session with no connection, placed where it sits: away in the cluster for a
        grace period, as after a drop, and forgotten then if it sits at no table."""
        claim = self._claims.get(session.player_id)
        self._cluster.session_away(session.hashed_token, claim.keys if claim else (),
                                   self._grace)
        elsewhere = self.elsewhere.table_id(session) if self.elsewhere is not None else None
        if session.table is None and elsewhere is None:
            self._arm_expiry(session)

    def visit(self, player_id: str, name: str) -> Session:
        """A player of another process at one of this process's tables: known by id
        only (its token, name claim and grace live at its home)."""
        session = Session(player_id, name, None, "elsewhere")
        self._by_id[player_id] = session
        return session

    def restore(self, saved: list[SavedSession], last_id: int) -> None:
        """The sessions a restarted server read back, with no connection yet; new ids
        start after `last_id`. Each keeps the name it had (names were unique then)."""
        for row in saved:
            self.restore_one(row)
        self._ids = itertools.count(last_id + 1)

    def restore_one(self, row: SavedSession) -> Session:
        """One session read back, with no connection yet: at a restart, or with a
        table of a shared journal whose process is gone (`service/takeover.py`)."""
        session = Session(str(row.player_id), row.name, None, row.address,
                          hashed=row.token)
        self._add(session, _Claim(names.keys(row.name), None, 0))
        self._live(session)  # in a cluster its name is held there again
        return session

    def expire_idle(self) -> None:
        """After a restart: a session at no table is forgotten one grace period on,
        as if its connection had just dropped."""
        for session in self.each():
            if session.peer is None and session.table is None and session.expiry is None:
                self._arm_expiry(session)

    def _unique(self, name: str) -> tuple[str, _Claim]:
        """`name`, or `name 2`, `name 3`...: no two sessions' names look alike (case
        and confusable letters aside: `names.keys`), so nobody can pass for another
        player in chat or at a table. `welcome` tells the client the name it got.

        Suffixes are counted on from where the last one for the same held name stopped
        (lowered again when one is freed), so a crowd of "Ali"s does not make each
        newcomer try every number already given out.
        """
        wanted = names.keys(name)
        taken = self._held(wanted)
        if taken is None:
            return name, _Claim(wanted, None, 0)
        n = self._next_suffix.get(taken, 2)
        while True:
            candidate = _suffixed(name, n)
            candidate_keys = names.keys(candidate)
            if self._held(candidate_keys) is None:
                self._next_suffix[taken] = n + 1
                return candidate, _Claim(candidate_keys, taken, n)
            n += 1

    def candidates(self, name: str) -> Iterator[tuple[str, tuple[str, ...]]]:
        """`name`, then `name 2`, `name 3`...: each with its keys, those no session
        here holds; a cluster claims the first that no other process holds either."""
        n = 1
        while True:
            candidate = name if n == 1 else _suffixed(name, n)
            keys = names.keys(candidate)
            if self._held(keys) is None:
                yield candidate, keys
            n += 1

    def _live(self, session: Session) -> None:
        """Tell the cluster the session is connected here, under the name it holds."""
        claim = self._claims.get(session.player_id)
        self._cluster.session_live(session.hashed_token, session.player_id, session.name,
                                   claim.keys if claim is not None else ())

    def _held(self, keys: tuple[str, ...]) -> str | None:
        """The first of `keys` some session holds."""
        return next((key for key in keys if key in self._by_key or key in self.reserved),
                    None)

    def rename(self, session: Session, name: str, *, exact: bool = False) -> None:
        """Give `session` another name: `exact` takes `name` as it is (an account's own
        name, whose keys only its session may hold), else the first free one as in
        `open`. The journal keeps the name and the account it is logged in to."""
        self._release(session)
        if exact:  # no other session holds them: a guest may not, and the account's
            claim = _Claim(names.keys(name), None, 0)  # other session is taken over
        else:
            name, claim = self._unique(name)
        session._name = name
        for key in claim.keys:
            self._by_key[key] = session
        self._claims[session.player_id] = claim
        self._live(session)
        self._journal.session_changed(int(session.player_id), session.hashed_token, name,
                                      session.account)

    def take_over(self, session: Session, peer: Peer) -> None:
        """Attach `peer` to `session` (an account's session, found by its login) with a
        fresh resume token: the token of a restored session is not known, and the old
        connection, if any, is told `replaced`. The caller then calls `rejoin`."""
        del self._by_token[session.hashed_token]
        self._cluster.session_gone(session.hashed_token, session.player_id, ())
        token = secrets.token_urlsafe(32)
        session._token, session._hashed = token, token_hash(token)
        self._by_token[session.hashed_token] = session
        if session.expiry is not None and session.expiry.active():
            session.expiry.cancel()
        session.expiry = None
        old, session.peer = session.peer, peer
        if old is not None and old is not peer:
            old.replaced()
        self._live(session)
        self._journal.session_changed(int(session.player_id), session.hashed_token,
                                      session.name, session.account)
        log.info("session {player} taken over by a login", player=session.player_id)

    def _release(self, session: Session) -> None:
        claim = self._claims.pop(session.player_id, None)
        if claim is None:
            return
        self._cluster.release_name(session.player_id, claim.keys)
        for key in claim.keys:
            self._by_key.pop(key, None)
            self._next_suffix.pop(key, None)  # the name is free: its suffixes start over
        if claim.taken is not None and claim.taken in self._next_suffix:
            self._next_suffix[claim.taken] = min(self._next_suffix[claim.taken], claim.suffix)

    def find(self, token: str) -> Session | None:
        return self._by_token.get(token_hash(token))

    def by_id(self, player_id: str) -> Session | None:
        return self._by_id.get(player_id)

    def homed_here(self, player_id: str) -> bool:
        """Whether `player_id`'s session is this process's own (its token held here),
        not a stand-in for a player of another process (`visit`)."""
        session = self._by_id.get(player_id)
        return session is not None and self._by_token.get(session.hashed_token) is session

    def named(self, name: str) -> Session | None:
        """The session here whose name looks like `name` (`names.keys`), if any."""
        return next((self._by_key[key] for key in names.keys(name) if key in self._by_key),
                    None)

    def deliver(self, player_id: str, msg: Message) -> None:
        """Send to a member of a table (tables know members by id only)."""
        session = self._by_id.get(player_id)
        if session is not None and session.peer is not None:  # `Session.send`, inline
            session.peer.send_message(msg)

    def resume(self, token: str, peer: Peer) -> Session | None:
        """Attach `peer` to the session of `token`; None if the token is unknown.

        A connection still attached to that session is sent `replaced` and closed: the
        newest connection wins (the old one is usually a dead socket the server has not
        noticed yet). The caller sends `welcome`, then calls `rejoin`.
        """
        session = self._by_token.get(token_hash(token))
        if session is None:
            return None
        session.presented(token)
        old = session.peer
        if session.expiry is not None and session.expiry.active():
            session.expiry.cancel()
        session.expiry = None
        session.peer = peer
        self._live(session)
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
        elif self.elsewhere is not None:
            self.elsewhere.reconnected(session)

    def lost(self, session: Session, peer: Peer) -> None:
        """The connection of `session` dropped; a replaced connection is ignored."""
        if session.peer is not peer:
            return
        session.peer = None
        claim = self._claims.get(session.player_id)
        self._cluster.session_away(session.hashed_token, claim.keys if claim else (),
                                   self._grace)
        log.info("session {player} disconnected", player=session.player_id)
        if session.table is not None:
            session.table.handle(Disconnected(session.player_id))
        elif self.elsewhere is None or not self.elsewhere.disconnected(session):
            self._arm_expiry(session)

    def left_table(self, table: TableRunner, player_id: str) -> None:
        """The lobby's `on_left`: in a cluster the relay's, which also tells a visitor's
        home; else `release`."""
        if self.elsewhere is not None:
            self.elsewhere.left_table(table, player_id)
        else:
            self.release(table, player_id)

    def release(self, table: TableRunner, player_id: str) -> None:
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
        elif self.elsewhere is not None:
            self.elsewhere.forgotten(session)
        if session.expiry is not None and session.expiry.active():
            session.expiry.cancel()
        session.expiry = None
        if self._unlist(session, write=False):  # once only
            # Its journal row goes only if no other process homes the session now: a
            # copy here may be stale (rebuilt for a client that hung up as the process
            # taking its table over restored it), and that process needs the row.
            self._cluster.session_gone(session.hashed_token, session.player_id, (),
                                       forgotten=partial(self._forget_row, session.player_id))
        self._by_id.pop(session.player_id, None)
        self._release(session)
        log.info("session {player} expired", player=session.player_id)

    def _unlist(self, session: Session, write: bool = True) -> bool:
        """Its token no longer resumes it here, nor does it count for its address (nor
        is it in the journal, if `write`); False if that was done already."""
        if self._by_token.pop(session.hashed_token, None) is None:
            return False
        if self._cluster.shared:  # (one handed on is the new home's already there)
            self._cluster.holdings.handle(SessionForgotten(session.player_id))
        self._per_address[session.address] -= 1
        if not self._per_address[session.address]:
            del self._per_address[session.address]
        if write:
            self._forget_row(session.player_id)
        return True

    def _forget_row(self, player_id: str) -> None:
        """The journal's row of a session forgotten here goes, unless this process's
        lease is in doubt: another process may have restored the session from its row
        and hold it now."""
        if not self._cluster.lease_in_doubt:
            self._journal.session_forgotten(int(player_id))
        else:
            log.info("session {player} expired while this process's lease is in doubt: "
                     "its row stays in the journal", player=player_id)

    def each(self) -> list[Session]:
        return list(self._by_token.values())
