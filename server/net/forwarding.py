"""A player's requests to a table of another process (`relay.py`), both ways:

- at home, a request for a table elsewhere (a `join_table` naming it, or any table
  request while the player sits there) goes to the owner as it came, already checked
  (schema, feature, rate); the home handles nothing more from that connection until
  the owner's reply is back (but its pings), so replies keep the order of the
  requests. The owner may hold that reply long (its journal waits for the store): it
  says so (`held`), and the home waits on while it lives;
- at the owner, the player is a visitor: a `Session` whose peer is a `RelayedConnection`,
  so the same handlers and the same table serve it, and each frame the table sends it
  (the reply first, then updates, each after the owner's journal committed what it
  tells of) goes home as the encoded body the player's connection writes as it is;
- the home tells the owner when the connection drops or comes back; the owner tells
  the home when the player is at the table and when the table let the player go.

So every message keeps the shape and the order the protocol gives it: the owner's
frames for one player go out on one link, in order, and are written unchanged.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from twisted.internet.defer import Deferred
from twisted.internet.interfaces import IReactorTime
from twisted.logger import Logger

from pisyedili.protocol.codec import decode
from pisyedili.protocol.errors import ProtocolError
from pisyedili.protocol.limits import SERVER_FRAME_LIMITS
from pisyedili.server.clock import Delayed
from pisyedili.server.cluster import unavailable, until_sure
from pisyedili.server.net import dispatch
from pisyedili.server.net.connection import Connection
from pisyedili.server.net.handlers import table_of
from pisyedili.server.net.relay_state import RelayState
from pisyedili.server.people.session import Session
from pisyedili.server.store.base import StoreError
from pisyedili.server.table import commands as cmd
from pisyedili.server.table.runner import TableRunner

if TYPE_CHECKING:
    from pisyedili.server.net.tcp import ServerFactory

log = Logger()

OWNER_SILENT = "the server that holds this table did not answer"
OWNER_GONE = "the server that held this table went away as it handled this request"
OWNER_DEPARTED = "the server that held this table went away; it is being taken over"

HELD_EVERY = 1 / 3
"""How often, in leases, the owner of a table tells a visitor's home that it still
holds the reply to its request (`held`): the home waits a lease from the last word,
so two may go astray before it gives up on a live owner."""


class _Nowhere:
    """The transport of a relayed connection: its bytes go home through the cluster."""

    bufferSize = 65536

    def loseConnection(self) -> None:
        pass

    def abortConnection(self) -> None:
        pass


class RelayedConnection(Connection):
    """A visitor's connection at the owner: what it writes goes to the player's home."""

    FRAME_OVERHEAD = 4
    TRANSPORT = "relayed"

    def __init__(self, server: ServerFactory, relay: Forwarding, home: str, player_id: str,
                 features: frozenset[str]) -> None:
        super().__init__(server)
        self.transport = _Nowhere()
        self.features = features
        self.address = f"relayed from {home}"
        self._relay = relay
        self.home = home
        self._player = player_id

    def _write_body(self, body: bytes) -> None:
        self._relay.cluster.send(self.home, {"k": "out", "p": self._player, "b": body,
                                             **self._relay.replied(self._player, body)})

    def _end(self, code: str | None) -> None:
        self._relay.cluster.send(self.home, {"k": "close", "p": self._player})


@dataclass
class Visitor:
    """At the owner: a player of another process at a table here, its connection
    here and its home."""

    session: Session
    conn: RelayedConnection
    home: str


@dataclass
class Waiting:
    """At home: the reply a request to a table elsewhere waits for, until the owner
    is taken for silent (`timer`: a lease from the request or the owner's last
    `held`)."""

    rid: int
    n: int  # this process's number for it (`Req.n`), which its reply carries back
    owner: str
    done: Deferred[None]
    timer: Delayed
    held: bool = False  # the owner said it holds the reply


@dataclass(eq=False)
class Reply:
    """At the owner: a visitor's request whose reply is not written yet, and the
    timer that tells its home so (`held`) every `HELD_EVERY` of a lease meanwhile."""

    conn: RelayedConnection  # where the reply goes
    rid: int
    n: int | None
    timer: Delayed | None = None


class Forwarding(RelayState):
    """Requests to a table of another process, at the player's home and at the
    table's owner (module docstring)."""

    # -- at home ----------------------------------------------------------------------

    def table_id(self, session: Session) -> int | None:
        """The id of the table elsewhere `session` is at, if any."""
        at = self._at.get(session.player_id)
        return at[0] if at is not None else None

    def takes(self, conn: Connection, session: Session, kind: str, msg: dict[str, Any],
              rid: int | None) -> bool:
        """Whether this request is for a table elsewhere (then it went there). Only a
        player's home asks: a visitor's request, at the owner, goes to its handler
        (`dispatch.handle_here`)."""
        at = self._at.get(session.player_id)
        if at is not None:
            if kind == "join_table" and msg.get("table") == at[0] and not msg.get("code"):
                conn.wait_for(self._forward_at(conn, session, at[1], kind, msg, rid),
                              reads_on=True)
                return True
            if kind in ("create_table", "join_table", "play_now"):
                raise ProtocolError("already_at_table", "leave your table before "
                                    + ("joining another" if kind == "join_table"
                                       else "opening another"))
            if kind in dispatch.TABLE_REQUESTS and not (
                    kind == "chat" and msg.get("scope") == "lobby"):
                conn.wait_for(self._forward_at(conn, session, at[1], kind, msg, rid),
                              reads_on=True)
                return True
            return False
        if kind != "join_table" or conn.server.lobby.holds(msg.get("table"), msg.get("code")):
            return False
        if table_of(session) is not None:
            raise ProtocolError("already_at_table", "leave your table before joining another")
        conn.answer_later(Deferred.fromCoroutine(self._join_elsewhere(conn, session, msg, rid)),
                          dispatch.Replier(conn, rid, kind), reads_on=True)
        return True

    async def _join_elsewhere(self, conn: Connection, session: Session,
                              msg: dict[str, Any], rid: int | None) -> dict[str, Any] | None:
        """A `join_table` that names no table here: the table's process, found in the
        cluster (the lobby's rows may not have heard of a new table yet), answers it."""
        code = msg.get("code")
        if isinstance(code, str) and code:
            table_id = await self.cluster.code_table(code.strip().upper())
            refusal = "no table has that invite code"
        else:
            table_id, refusal = msg["table"], f"there is no table {msg['table']}"
        owner = None if table_id is None else \
            self.cluster.owner_of(table_id) or await self.cluster.locate(table_id)
        if owner is None and table_id is not None and await self._taken_over(table_id):
            owner = self.cluster.owner_of(table_id) or await self.cluster.locate(table_id)
            if owner is None:
                raise self._owner_away(OWNER_DEPARTED)
        if owner is None or owner == self.cluster.process:
            raise ProtocolError("no_such_table", refusal)
        if owner in self._departed:  # nobody reads there: refused as `_forward_at` does
            raise self._owner_away(OWNER_DEPARTED)
        if not conn.closing:
            await self._forward(conn, session, owner, "join_table", msg, rid)
        return None

    async def _taken_over(self, table_id: int) -> bool:
        """A table no process holds in the cluster that the shared journal holds open:
        its process is gone, and a sweep (waited for here) takes it over. True when
        the journal holds it, or cannot be read (it may): nothing says there is none."""
        server = self._server
        if not self.shared_store or self.settled is None or server is None \
                or server.archive is None:
            return False
        try:
            if not await server.archive.use(lambda store: store.table_open(table_id)):
                return False
        except StoreError as error:
            log.warn("whether table {table} is open could not be read: {error}",
                     table=table_id, error=str(error))
            return True
        await self.settled()
        return True

    def _forward_at(self, conn: Connection, session: Session, owner: str, kind: str,
                    msg: dict[str, Any], rid: int | None) -> Deferred[None]:
        """`_forward` to the table the player is at; refused at once while its process
        is gone and no other has said it holds the table now."""
        if owner in self._departed:
            raise self._owner_away(OWNER_DEPARTED)
        return self._forward(conn, session, owner, kind, msg, rid)

    def _forward(self, conn: Connection, session: Session, owner: str, kind: str,
                 msg: dict[str, Any], rid: int | None) -> Deferred[None]:
        """Send the request to its table's owner: fires once its reply is here (which
        the caller's connection waits for: nothing it sends next overtakes it)."""
        if not self.cluster.reachable:
            raise unavailable("a table held elsewhere")
        if self.cluster.lease_in_doubt:
            return Deferred.fromCoroutine(
                self._forward_when_sure(conn, session, owner, kind, msg, rid))
        return self._send_request(conn, session, owner, kind, msg, rid)

    async def _forward_when_sure(self, conn: Connection, session: Session, owner: str,
                                 kind: str, msg: dict[str, Any], rid: int | None) -> None:
        """`_forward` once this process knows again what it homes (its lease renewed, or
        its keys checked). In doubt, it may have been taken for dead and the session
        taken over: a request its connection held meanwhile (read as it woke from a
        pause) must not reach the table after the player resumed elsewhere and played
        on from there. One whose session went meanwhile is dropped: its player was hung
        up on here, and plays on from its new home."""
        await until_sure(self.cluster, cast(IReactorTime, self._clock))  # else refused below
        if conn.closing or self._sessions.by_id(session.player_id) is not session:
            return
        if self.cluster.lease_in_doubt or not self.cluster.reachable:
            if rid is not None:
                session.send(unavailable("a table held elsewhere").to_message(rid))
            return
        await self._send_request(conn, session, owner, kind, msg, rid)

    def _send_request(self, conn: Connection, session: Session, owner: str, kind: str,
                      msg: dict[str, Any], rid: int | None) -> Deferred[None]:
        self._requests += 1
        self.cluster.send(owner, {
            "k": "req", "from": self.cluster.process, "p": session.player_id,
            "name": session.name, **self._account(session),
            "features": sorted(conn.features), "type": kind, "msg": msg, "rid": rid,
            "n": self._requests})
        done: Deferred[None] = Deferred()
        if rid is None:  # no reply to wait for
            done.callback(None)
            return done
        # An owner silent for a lease is gone: its reply is waited for a lease from the
        # request, or from its last word that it holds it (`_held`: its journal waits
        # for the store), while it lives (`_gone` answers for one that died).
        timer = self._clock.callLater(self.cluster.lease, self._silent, session.player_id)
        self._waiting[session.player_id] = Waiting(rid, self._requests, owner, done, timer)
        return done

    def _held(self, message: dict[str, Any]) -> None:
        """The owner holds the reply awaited (`_still_held` there): wait a lease more."""
        waiting = self._waiting.get(message["p"])
        if waiting is None or waiting.owner != message["from"] \
                or message.get("n", waiting.n) != waiting.n or message["rid"] != waiting.rid:
            return  # (late: that request was answered)
        if not waiting.held:
            waiting.held = True
            log.info("the owner of player {player}'s table holds the reply to its request; "
                     "waiting for it", player=message["p"])
        waiting.timer.reset(self.cluster.lease)

    def _silent(self, player_id: str) -> None:
        if player_id in self._waiting:
            log.warn("no reply from the owner of player {player}'s table", player=player_id)
            self._refuse_waiting(player_id, self._owner_away(OWNER_SILENT).to_message)

    def _owner_away(self, why: str) -> ProtocolError:
        """The refusal of a request for a table whose process went away (or is
        silent): the cluster's own code, with the time its takeover takes (a lease)
        to wait; a fresh snapshot of the table follows once it is taken over."""
        return ProtocolError("cluster_unavailable", why,
                             retry_after=max(1, math.ceil(self.cluster.lease)))

    def _refuse_waiting(self, player_id: str,
                        refusal: Callable[[int | None], dict[str, Any]]) -> None:
        """The reply the player's request waits for will not come: it gets `refusal`
        instead, and its connection reads on."""
        waiting = self._waiting.pop(player_id, None)
        if waiting is None:
            return
        if waiting.timer.active():
            waiting.timer.cancel()
        session = self._sessions.by_id(player_id)
        if session is not None:
            session.send(refusal(waiting.rid))
        waiting.done.callback(None)

    def seen(self, session: Session) -> None:
        """A request answered here showed the player is there: its table elsewhere
        hears it as `Seen`, as a table here would."""
        self._tell_owner(session, "seen")

    def disconnected(self, session: Session) -> bool:
        """`Sessions.lost` for a player at a table elsewhere: the owner's grace runs."""
        return self._tell_owner(session, "gone")

    def reconnected(self, session: Session) -> bool:
        return self._tell_owner(session, "back")

    def forgotten(self, session: Session) -> bool:
        return self._tell_owner(session, "leave")

    def _tell_owner(self, session: Session, what: str) -> bool:
        at = self._at.get(session.player_id)
        if at is None:
            return False
        if what == "leave":
            del self._at[session.player_id]
        self.cluster.send(at[1], {"k": "cmd", "from": self.cluster.process,
                                  "p": session.player_id, "c": what, "name": session.name,
                                  **self._account(session),
                                  "features": sorted(_features(session))})
        return True

    # -- at the owner -------------------------------------------------------------------

    def _request(self, message: dict[str, Any]) -> None:
        assert self._server is not None
        if self._sessions.homed_here(message["p"]):
            # A former home's word, sent before it learnt the session moved here (or
            # after it woke): a stand-in made for it would take the session's place.
            return
        visit = self._visit(message)
        before = visit.session.table
        player_id, rid = visit.session.player_id, message["rid"]
        reply = None if rid is None else Reply(visit.conn, rid, message.get("n"))
        if reply is not None:
            self._replies.setdefault(player_id, []).append(reply)
        dispatch.handle_here(visit.conn, message["type"], message["msg"], rid)
        if reply is not None and reply in self._replies.get(player_id, ()):  # not written
            reply.timer = self._clock.callLater(self.cluster.lease * HELD_EVERY,
                                                self._still_held, player_id, reply)
        table = visit.session.table
        if table is not None and table is not before:
            self.cluster.send(visit.home, {"k": "at", "p": visit.session.player_id,
                                           "t": table.id, "owner": self.cluster.process})
        elif table is None:
            self._drop(visit.session.player_id)

    def replied(self, player_id: str, body: bytes) -> dict[str, Any]:
        """A frame for visitor `player_id` is written: if it is the reply its home
        waits for, it is no longer held, and it carries the request's number home
        (what the `out` adds)."""
        replies = self._replies.get(player_id)
        if not replies:
            return {}
        rid = decode(body, SERVER_FRAME_LIMITS).get("id")
        # Replies go in the order of their requests, but a refusal while the journal
        # holds every send overtakes those that wait on it: matched by id.
        reply = next((reply for reply in replies if reply.rid == rid), None)
        if reply is None:
            return {}
        self._forget_reply(player_id, reply)
        return {} if reply.n is None else {"n": reply.n}

    def _still_held(self, player_id: str, reply: Reply) -> None:
        """The reply to a visitor's request is not written yet (it waits for the
        journal, say): its home is told this process holds it, and keeps waiting. A
        reply whose connection closed is never written: its home was told (`close`)."""
        if reply.conn.closing:
            self._forget_reply(player_id, reply)
            return
        self.cluster.send(reply.conn.home, {
            "k": "held", "p": player_id, "rid": reply.rid, "from": self.cluster.process,
            **({} if reply.n is None else {"n": reply.n})})
        reply.timer = self._clock.callLater(self.cluster.lease * HELD_EVERY,
                                            self._still_held, player_id, reply)

    def _forget_reply(self, player_id: str, reply: Reply) -> None:
        replies = self._replies.get(player_id, [])
        if reply in replies:
            replies.remove(reply)
        if not replies:
            self._replies.pop(player_id, None)
        if reply.timer is not None and reply.timer.active():
            reply.timer.cancel()

    def _visit(self, message: dict[str, Any]) -> Visitor:
        """The visitor a message speaks for, made on its first request."""
        assert self._server is not None
        player_id, home = message["p"], message["from"]
        features = frozenset(message["features"])
        visit = self._visitors.get(player_id)
        if visit is None:
            session = self._sessions.visit(player_id, message["name"])
            conn = RelayedConnection(self._server, self, home, player_id, features)
            visit = self._visitors[player_id] = Visitor(session, conn, home)
            self.cluster.watch(home)
        elif visit.conn.closing or visit.conn.features != features or visit.home != home:
            if visit.home != home:  # its session resumed there
                self.cluster.watch(home)
            visit.conn = RelayedConnection(self._server, self, home, player_id, features)
            visit.home = home
        # An account id is its home store's: unless the processes share one, a visitor
        # plays as a guest here (a rated table seats it as it seats any guest).
        visit.session.account = self._account_of(message)
        visit.conn.session = visit.session
        if visit.session.peer is None or visit.session.peer is not visit.conn:
            visit.session.peer = visit.conn
        return visit

    def _command(self, message: dict[str, Any]) -> None:
        visit = self._visitors.get(message["p"])
        taken = self._taken.pop(message["p"], None) if message["c"] == "back" else None
        if visit is None and taken is not None:
            visit = self._visit(message)  # a member of a table taken over, from its home
            visit.session.table = taken
        if visit is None and message["p"] in self._placing:
            self._restoring[message["p"]].append(message)  # heard once it is placed
            return
        if visit is None:
            # Let go meanwhile, its home not told (the link was down); but a process
            # that stops lets its tables go whole, and their takers call members home.
            if message["c"] == "back" and not self._stopping:
                self._at_no_table(message["from"], message["p"], released=True)
            return
        session, table = visit.session, visit.session.table
        what = message["c"]
        if what != "back" and message.get("from", visit.home) != visit.home:
            return  # a former home's word: a paused one, woken, of a session it lost
        if what == "gone":
            session.peer = None
            if table is not None:
                table.handle(cmd.Disconnected(session.player_id))
        elif what == "seen":
            if table is not None:
                table.handle(cmd.Seen(session.player_id))
        elif what == "back":
            visit = self._visit({**message, "name": session.name})
            if table is not None:
                table.handle(cmd.Reconnected(session.player_id))
        elif what == "leave":
            session.peer = None
            if table is not None:
                table.handle(cmd.Leave(session.player_id))
            self._drop(session.player_id)

    def _seated_here(self, player_id: str) -> TableRunner | None:
        """The open table here that seats `player_id`, a player of another process: as
        a visitor, as a member of a table taken over here whose home has not said
        `back` yet, or of one a takeover here is placing it at."""
        visit = self._visitors.get(player_id)
        table = visit.session.table if visit is not None \
            else self._taken.get(player_id) or self._placing.get(player_id)
        return table if table is not None and not table.closed else None

    def _own_seat(self, player_id: str) -> TableRunner | None:
        """`player_id`'s session is this process's own from now on: the table here
        that seated it as another process's player (`_seated_here`), if any, is its
        own table now; so is one a takeover here is placing it at (which finds it
        here once it places its members)."""
        visit = self._visitors.pop(player_id, None)
        taken = self._taken.pop(player_id, None)
        table = visit.session.table if visit is not None else taken
        return table or self._placing.get(player_id)

    def _homeless(self, message: dict[str, Any]) -> None:
        """A visitor's session, its home gone, was rebuilt on another process: that
        is its home now, told of its table here (it says `back` as after a takeover)."""
        table = self._seated_here(message["p"])
        if table is not None:
            self._at_here(message["from"], message["p"], table)

    def _seats(self, message: dict[str, Any]) -> dict[str, Any]:
        """Asked by the process a visitor's session was rebuilt on (`homeless`): the
        table here that seats it, if any (that process is its home from its `back`);
        or, while a takeover here has members still to place, that it may (`taking`:
        asked again once they are placed)."""
        player_id = str(message["p"])
        table = self._seated_here(player_id)
        if table is not None:
            return {"t": table.id, "owner": self.cluster.process}
        return {"taking": True} if self.taking() else {}

    def left_table(self, table: TableRunner, player_id: str) -> None:
        """The lobby's `on_left` (through `Sessions.left_table`): the registry lets the
        player go, and a visitor's home is told it is at no table now."""
        visit = self._visitors.get(player_id)
        self._sessions.release(table, player_id)
        if visit is not None and visit.session.table is None:
            if not self.cluster.reachable:  # the word would go nowhere: told on return
                self._untold[player_id] = visit.home
            self._at_no_table(visit.home, player_id)
            self._drop(player_id)

    def let_go(self, player_id: str) -> Connection | None:
        """A visitor at a table this process let go (another holds it now): dropped
        without a word to its home, which the new holder tells; its connection here."""
        self._taken.pop(player_id, None)
        for reply in list(self._replies.get(player_id, ())):
            self._forget_reply(player_id, reply)  # never written: its holder tells home
        visit = self._visitors.get(player_id)
        if visit is None:
            return None
        self._drop(player_id)
        return visit.conn

    def _drop(self, player_id: str) -> None:
        visit = self._visitors.pop(player_id, None)
        if visit is not None:
            visit.session.table = None
            self._sessions.forget(visit.session)


def _features(session: Session) -> frozenset[str]:
    peer = session.peer
    return peer.features if isinstance(peer, Connection) else frozenset()
