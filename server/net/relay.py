"""Tables of other processes: a player connected here plays at a table held there.

A table lives in one process, its owner. A player connected to another process (the
player's home) reaches it through the cluster's messages (`Cluster.send`), never a
broker of ours:

- at home, a request for a table elsewhere (a `join_table` naming it, or any table
  request while the player sits there) goes to the owner as it came, already checked
  (schema, feature, rate); the home reads nothing more from that connection until the
  owner's reply is back, so replies keep the order of the requests;
- at the owner, the player is a visitor: a `Session` whose peer is a `RelayedConnection`,
  so the same handlers and the same table serve it, and each frame the table sends it
  (the reply first, then updates, each after the owner's journal committed what it
  tells of) goes home as the encoded body the player's connection writes as it is;
- the home tells the owner when the connection drops or comes back; the owner tells
  the home when the player is at the table and when the table let the player go.

So every message keeps the shape and the order the protocol gives it: the owner's
frames for one player go out on one link, in order, and are written unchanged.

On one store for every process (`shared_store`: a PostgreSQL `--db`), account ids are
the same everywhere: a visitor carries the account it is logged in to, a session that
moves carries it along, and a registration is told to every process. A token whose
session's process is gone (killed) still resumes: the process the client reached
waits for that process's lease to run out, takes its tables over (or lets another
take them), then hands the session over from wherever it was rebuilt, or rebuilds it
here from the journal when it was at none of the gone process's tables (a table of a
live process that seats it as a visitor is told its new home, `homeless`).

A process told to stop (SIGTERM) hands every session it homes to a live process
before it lets its tables go (`hand_all`): a player at a table of a live process to
that process, the others (in the lobby, or at a table of the stopping process, whose
taker then calls them home) to the live processes in turn. Each is taken in away, as
after a drop, and resumes by token through any process; a resume that reaches the old
home meanwhile is sent on to the new one. A word about a session handed on (a
takeover calling its member home, a resume) that comes to its old home is sent on.
"""

from __future__ import annotations

import math
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from twisted.internet.defer import Deferred, succeed
from twisted.internet.interfaces import IReactorTime
from twisted.internet.task import deferLater
from twisted.logger import Logger
from twisted.python.failure import Failure

from pisyedili.protocol.codec import decode
from pisyedili.protocol.errors import ProtocolError
from pisyedili.protocol.limits import SERVER_FRAME_LIMITS
from pisyedili.server import metrics
from pisyedili.server.clock import Clock, Delayed
from pisyedili.server.cluster import Cluster, unavailable
from pisyedili.server.cluster.ownership import hand_targets
from pisyedili.server.interproc.messages import Refused
from pisyedili.server.interproc.messages import decode as decode_message
from pisyedili.server.net import dispatch
from pisyedili.server.net.connection import Connection
from pisyedili.server.net.handlers import table_of
from pisyedili.server.net.handlers.moderation import (
    announce_here,
    closed_elsewhere,
    enforce_ban,
    found_here,
    kicked_elsewhere,
    tell_muted,
)
from pisyedili.server.people.accounts import Accounts
from pisyedili.server.people.moderation import Gathered, Sanction
from pisyedili.server.people.session import Session, Sessions
from pisyedili.server.store.base import SessionRow, StoreError
from pisyedili.server.store.journal import SavedSession, token_hash
from pisyedili.server.table import commands as cmd
from pisyedili.server.table.runner import TableRunner

if TYPE_CHECKING:
    from pisyedili.server.net.tcp import ServerFactory

log = Logger()

OWNER_SILENT = "the server that holds this table did not answer"
OWNER_GONE = "the server that held this table went away as it handled this request"
OWNER_DEPARTED = "the server that held this table went away; it is being taken over"

ASK_SECONDS = 3.0
"""How long an act asked of every live process (`Relay.ask_all`) waits for their
answers: one paused or stalled answers late or never, and the act is answered with
what came, naming the processes that were silent."""

HAND_SECONDS = 5.0
"""How long a stopping process waits for the live processes to say they hold the
sessions it handed them (each answers once its journal committed the session), before
it stops anyway: a session nobody took is left to the journal, as after a kill."""

SANCTIONS_RETRY_SECONDS = 2.0
"""How soon the sanctions are read again when the shared store could not be reached
as the cluster came back: a ban made meanwhile is in force here once it answers."""

SETTLE_SECONDS = 5.0
"""How long past twice a lease a resume waits for its gone process's tables to be
taken over before it gives up (`bad_token`)."""


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

    def __init__(self, server: ServerFactory, relay: Relay, home: str, player_id: str,
                 features: frozenset[str]) -> None:
        super().__init__(server)
        self.transport = _Nowhere()
        self.features = features
        self.address = f"relayed from {home}"
        self._relay = relay
        self._home = home
        self._player = player_id

    def _write_body(self, body: bytes) -> None:
        self._relay.cluster.send(self._home, {"k": "out", "p": self._player, "b": body})

    def _end(self, code: str | None) -> None:
        self._relay.cluster.send(self._home, {"k": "close", "p": self._player})


@dataclass
class _Visitor:
    session: Session
    conn: RelayedConnection
    home: str


@dataclass
class _Asked:
    """An act asked of every live process: who has yet to answer, and what came."""

    waiting: set[str]
    answers: list[dict[str, Any]]
    done: Deferred[Gathered]
    timer: Delayed


@dataclass
class _Waiting:
    rid: int
    owner: str
    done: Deferred[None]
    timer: Delayed


class Relay:
    """Both sides of playing at a table of another process (module docstring)."""

    def __init__(self, cluster: Cluster, sessions: Sessions, clock: Clock,
                 server: ServerFactory | None = None, *, shared_store: bool = False) -> None:
        """The relay of `server`, which makes it as it is made (`ServerFactory`'s
        `relay`): it hears the cluster from then on, and is the other processes' side of
        the server's sessions, accounts and moderation (`_serve`)."""
        self.cluster = cluster
        self.shared_store = shared_store
        self._sessions = sessions
        self._clock = clock
        self._server = server
        self._at: dict[str, tuple[int, str]] = {}  # home: player -> (table, owner)
        self._waiting: dict[str, _Waiting] = {}  # home: player -> the reply awaited
        self._visitors: dict[str, _Visitor] = {}  # owner: player -> its visit
        self._handing: dict[str, tuple[Deferred[dict[str, Any]], Delayed, str]] = {}
        """New home: player -> the old home's answer to a hand-over awaited, and that
        home."""
        self._handed_to: dict[str, str] = {}
        """Old home: player -> the process its session went to, for a lease: a word about
        it that comes here late (a takeover calling it home, a resume) is sent on."""
        self._stopping = False
        """This process stops: it hands its sessions on (`hand_all`) and takes none."""
        self._handing_out: dict[str, tuple[str, dict[str, Any]]] = {}
        """Stopping: player -> the process its session was handed to, not answered yet,
        and what it was told."""
        self._out_done: Deferred[None] | None = None
        self._restoring: dict[str, list[dict[str, Any]]] = {}
        """Owner: player -> the hand-overs asked of it while a takeover here restores its
        session, answered once it is placed (`restored`)."""
        self._taken: dict[str, TableRunner] = {}
        """Owner: player -> a table taken over here, until the player's home says back."""
        self._untold: dict[str, str] = {}
        """Owner: player -> the home of a visitor let go while the cluster was out of
        reach (its word to the home went nowhere), told once it is back."""
        self._departed: set[str] = set()
        """Processes taken for gone: a request to a table one of them held is refused at
        once, not sent where nobody reads it, until the table's new holder says where
        it is (or the process itself, woken after a pause, answers a join)."""
        self._asked: dict[int, _Asked] = {}  # an act asked of every process, by round
        self._rounds = 0
        self.gone_hooks: list[Callable[[str], None]] = []
        """Told, after this relay, that a process is gone (`service/takeover.py`)."""
        self.settled: Callable[[], Deferred[None]] | None = None
        """A sweep for tables nobody holds, fired once done (`service/takeover.py`)."""
        self._handlers = self._handling()
        self._acts = self._acting()
        self._refusals: set[tuple[object, object]] = set()
        """The kinds and versions of the messages refused here, each said once."""
        self._sanctions_retry: Delayed | None = None  # the next read of them, if one failed
        self._sanctions_failing = False  # the last read of them failed (said once)
        if server is not None:
            self._serve(server)

    def _serve(self, server: ServerFactory) -> None:
        """Hear the cluster's messages, and stand for the other processes where the
        server's parts, made before it, meet them."""
        self._sessions.elsewhere = self
        self.cluster.listen(self._lobby_delta, self.received, self._gone)
        self.cluster.watch_link(self._link_lost, self._link_back)
        if server.accounts is not None and self.shared_store:
            server.accounts.on_registered.append(
                lambda a: self.cluster.tell_all({"k": "account", "a": a.id, "name": a.name,
                                                 "op": a.operator, "bot": a.bot}))
            server.accounts.elsewhere = lambda account, caller: Deferred.fromCoroutine(
                self._account_elsewhere(account, caller))
        if server.moderation is not None and self.shared_store:
            server.moderation.tell = lambda m: self.ask_all({"k": "sanction", **m})

    # -- acts asked of every process (the operators') --------------------------------------

    def ask_all(self, message: dict[str, Any]) -> Deferred[Gathered]:
        """Ask every other live process to act on `message` (`_act` there) and say
        what it did: their answers, once all came or `ASK_SECONDS` passed (then the
        silent ones are named). While the cluster is out of reach nobody is asked."""
        if not self.cluster.reachable:
            return succeed(Gathered(reached=False))
        live = self.cluster.live_processes()
        asked = live.addCallback(self._ask_each, message)
        asked.addErrback(lambda _: Gathered(reached=False))  # (lost as it asked)
        return asked

    def _ask_each(self, processes: list[str], message: dict[str, Any]
                  ) -> Deferred[Gathered]:
        if not processes:
            return succeed(Gathered())
        self._rounds += 1
        number = self._rounds
        timer = self._clock.callLater(ASK_SECONDS, self._asked_over, number)
        asked = self._asked[number] = _Asked(set(processes), [], Deferred(), timer)
        for process in processes:
            self.cluster.send(process, {"k": "ask", "r": number,
                                        "from": self.cluster.process, "m": message})
        return asked.done

    def _answered(self, message: dict[str, Any]) -> None:
        asked = self._asked.get(message["r"])
        if asked is None or message["from"] not in asked.waiting:
            return  # (late: its round was answered without it)
        asked.waiting.discard(message["from"])
        asked.answers.append(message["a"])
        if not asked.waiting:
            self._asked_over(message["r"])

    def _asked_over(self, number: int) -> None:
        asked = self._asked.pop(number, None)
        if asked is None:
            return
        if asked.timer.active():
            asked.timer.cancel()
        if asked.waiting:
            log.warn("cluster: processes {silent} did not answer an operator's act within "
                     "{seconds:g} s", silent=sorted(asked.waiting), seconds=ASK_SECONDS)
        asked.done.callback(Gathered(tuple(asked.answers), tuple(sorted(asked.waiting))))

    def _ask(self, message: dict[str, Any]) -> None:
        """Another process asks this one to act: it does, and says what it did."""
        answer = self._act(message["m"])
        self.cluster.send(message["from"], {"k": "answer", "r": message["r"],
                                            "from": self.cluster.process, "a": answer})

    def _act(self, act: dict[str, Any]) -> dict[str, Any]:
        """What an act asked of this process does here, in counts."""
        server = self._server
        if server is None:
            return {}
        return self._acts[act["k"]](server, act)

    def _acting(self) -> dict[str, Callable[[ServerFactory, dict[str, Any]], dict[str, Any]]]:
        """Each act's doing here, by kind (`interproc.messages.ACTS`)."""
        return {
            "sanction": lambda _, act: {"closed": self._sanction(act)},
            "find": lambda server, act: found_here(server, str(act["name"])),
            "kick": kicked_elsewhere,
            "announce": lambda server, act: {"told": announce_here(server, act["m"])},
            "close_table": closed_elsewhere,
            "homeless": lambda _, act: self._seats(str(act["p"])),
        }

    def _link_lost(self) -> None:
        """The cluster's messages stopped: the visitors here are away, as after any
        drop (their homes cannot reach their tables now), and a reply awaited from
        another process will not come: its request is refused now, not a lease later
        (a snapshot after the return would otherwise find it still unanswered)."""
        for player_id in list(self._visitors):
            self._command({"p": player_id, "c": "gone"})
        refusal = unavailable("a table held elsewhere")
        for player_id in list(self._waiting):
            self._refuse_waiting(player_id, lambda rid: refusal.to_message(rid))

    def _link_back(self) -> None:
        """They flow again: each side says so for the players between them (whichever
        side came back last is heard), and every such player gets a fresh snapshot. A
        visitor let go meanwhile has its home told it is at no table (which the home
        also hears in answer to its `back`, if it came back last)."""
        for player_id, visit in list(self._visitors.items()):
            if visit.session.table is not None:
                self._at_here(visit.home, player_id, visit.session.table)
        for player_id, home in self._untold.items():
            self._at_no_table(home, player_id, released=True)
        self._untold.clear()
        for player_id in list(self._at):
            session = self._sessions.by_id(player_id)
            if session is not None and session.connected:
                self._tell_owner(session, "back")
        self._reload_sanctions()

    def _reload_sanctions(self) -> None:
        """The sanctions read from the shared store again: one put in force while the
        cluster was out of reach was told to nobody, but kept there. A store out of
        reach too is an outage, not a fault: said once, and read again every
        `SANCTIONS_RETRY_SECONDS` until it answers (or the cluster goes again: its
        return reads them then)."""
        self._sanctions_retry = None
        moderation = self._server.moderation if self._server is not None else None
        if moderation is None or not self.shared_store or self._stopping \
                or not self.cluster.reachable:
            return
        reloaded = moderation.reload()
        reloaded.addCallback(self._enforce_all)
        reloaded.addErrback(self._sanctions_unread)

    def _enforce_all(self, sanctions: list[Sanction]) -> None:
        if self._sanctions_failing:
            log.info("the sanctions are read from the store again: {count} new in force "
                     "here", count=len(sanctions))
            self._sanctions_failing = False
        for sanction in sanctions:
            self._enforce(sanction)

    def _sanctions_unread(self, failure: Failure) -> None:
        if not isinstance(failure.value, StoreError):
            log.failure("reading the sanctions again failed", failure)
            return
        if not self._sanctions_failing:
            log.warn("the sanctions could not be read from the store again ({why}): a ban "
                     "or mute made while the cluster was out of reach is not in force here "
                     "yet; reading them again every {seconds:g} s until the store answers",
                     why=failure.getErrorMessage(), seconds=SANCTIONS_RETRY_SECONDS)
            self._sanctions_failing = True
        if self._sanctions_retry is None or not self._sanctions_retry.active():
            self._sanctions_retry = self._clock.callLater(SANCTIONS_RETRY_SECONDS,
                                                          self._reload_sanctions)

    def _enforce(self, sanction: Sanction) -> int:
        """A sanction put in force by another process: a ban closes what it covers
        here (how many connections it closed); a mute is told to whom it covers."""
        if sanction.kind == "ban" and self._server is not None:
            return enforce_ban(self._server, sanction)
        if sanction.kind == "mute" and self._server is not None:
            tell_muted(self._server, sanction)
        return 0

    def _sanction(self, message: dict[str, Any]) -> int:
        """A sanction put in force or lifted by another process: the connections it
        closed here."""
        moderation = self._server.moderation if self._server is not None else None
        if moderation is not None and self.shared_store:
            sanction = moderation.heard(message)
            if sanction is not None:
                return self._enforce(sanction)
        return 0

    # -- accounts, on one shared store ---------------------------------------------------

    @property
    def accounts(self) -> Accounts | None:
        return self._server.accounts if self._server is not None else None

    def _account(self, session: Session) -> dict[str, Any]:
        """The account fields of a message about `session` (none for a guest, or when
        each process has a store, and so account ids, of its own)."""
        if not self.shared_store or session.account is None:
            return {}
        accounts = self.accounts
        operator = accounts is not None and accounts.is_operator(session.account)
        bot = accounts is not None and accounts.is_bot(session.account)
        return {"a": session.account, "op": operator, "bot": bot}

    def _account_of(self, message: dict[str, Any]) -> int | None:
        """The account a message says its player is logged in to, known here from now
        on (its name is the player's, as registered)."""
        account, accounts = message.get("a"), self.accounts
        if not self.shared_store or not isinstance(account, int) or accounts is None:
            return None
        accounts.learn(account, message["name"], bool(message.get("op", False)),
                       bool(message.get("bot", False)))
        return account

    def _gone(self, process: str) -> None:
        """A process died: its players here lost their connection, as far as their
        tables can tell (each table's grace runs for them as for any drop). A request
        it was handling is answered now, before its table's snapshot after a takeover
        (a client holding back moves until its request is answered would otherwise
        sit out the rest of a lease with the moves before it)."""
        for player_id, visit in list(self._visitors.items()):
            if visit.home == process:
                self._command({"p": player_id, "c": "gone"})
        self._departed.add(process)
        for player_id, waiting in list(self._waiting.items()):
            if waiting.owner == process:
                self._refuse_waiting(player_id, self._owner_away(OWNER_GONE).to_message)
        for player_id, (_, _, home) in list(self._handing.items()):
            if home == process:  # its answer will never come: the resume goes on now
                self._handed({"p": player_id, "ok": False, "silent": True})
        for player_id, (target, _) in list(self._handing_out.items()):
            if target == process:
                self._adopted({"p": player_id, "from": process, "ok": False})
        for hook in self.gone_hooks:
            hook(process)

    # -- a table taken over --------------------------------------------------------------

    def is_visitor(self, player_id: str) -> bool:
        return player_id in self._visitors

    @property
    def visiting(self) -> int:
        """Players of other processes at this process's tables (`/metrics`)."""
        return len(self._visitors)

    def settle(self, player_id: str) -> None:
        """A player here sits at a table this process took over: it is no longer at a
        table elsewhere."""
        self._at.pop(player_id, None)

    def restoring(self, player_id: str) -> None:
        """A takeover here holds `player_id`'s session in the cluster and places it
        next: a hand-over asked of it meanwhile waits for that."""
        self._restoring.setdefault(player_id, [])

    def restored(self, players: list[str]) -> None:
        """Those players are placed (or their takeover failed): the hand-overs asked of
        them meanwhile are answered now."""
        for player_id in players:
            for message in self._restoring.pop(player_id, []):
                self._hand(message)

    def call_home(self, home: str, player_id: str, table: TableRunner) -> None:
        """A member of a table taken over here is connected to `home`: it is told the
        table's new owner, and says `back` once its player is there."""
        self._taken[player_id] = table
        self._at_here(home, player_id, table)

    def _at_here(self, home: str, player_id: str, table: TableRunner) -> None:
        """Tell `home` its player sits at `table` here: the home says `back` (and the
        player gets a snapshot) once its connection is there."""
        self.cluster.send(home, {"k": "at", "p": player_id, "t": table.id,
                                 "owner": self.cluster.process, "back": True})

    def _at_no_table(self, home: str, player_id: str, released: bool = False) -> None:
        """Tell `home` its player sits at no table here (any more); `released`: not of
        its own doing (its seat was let go while its home could not be told), so the
        home tells its player (`table_lost`)."""
        self.cluster.send(home, {"k": "at", "p": player_id, "t": None,
                                 **({"lost": "seat_released"} if released else {})})

    def _lobby_delta(self, delta: dict[str, Any]) -> None:
        """Another process's table changed: its row to this lobby's subscribers; a
        table gone (closed, or its process with it) holds none of the players here."""
        assert self._server is not None
        gone = delta.pop("gone", False)
        self._server.lobby.remote_delta(delta)
        if gone and self.gone_hooks:
            return  # its process is gone, its table to be taken over: the seats wait
        if delta["op"] == "remove" and "table" in delta:
            lost = {"lost": "server_gone"} if gone else {}
            for player_id, (table_id, _) in list(self._at.items()):
                if table_id == delta["table"]:
                    self._moved({"p": player_id, "t": None, **lost})

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
                conn.wait_for(self._forward_at(conn, session, at[1], kind, msg, rid))
                return True
            if kind in ("create_table", "join_table", "play_now"):
                raise ProtocolError("already_at_table", "leave your table before "
                                    + ("joining another" if kind == "join_table"
                                       else "opening another"))
            if kind in dispatch.TABLE_REQUESTS and not (
                    kind == "chat" and msg.get("scope") == "lobby"):
                conn.wait_for(self._forward_at(conn, session, at[1], kind, msg, rid))
                return True
            return False
        if kind != "join_table" or conn.server.lobby.holds(msg.get("table"), msg.get("code")):
            return False
        if table_of(session) is not None:
            raise ProtocolError("already_at_table", "leave your table before joining another")
        conn.answer_later(Deferred.fromCoroutine(self._join_elsewhere(conn, session, msg, rid)),
                          dispatch.Replier(conn, rid, kind))
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
        self.cluster.send(owner, {
            "k": "req", "from": self.cluster.process, "p": session.player_id,
            "name": session.name, **self._account(session),
            "features": sorted(conn.features), "type": kind, "msg": msg, "rid": rid})
        done: Deferred[None] = Deferred()
        if rid is None:  # no reply to wait for
            done.callback(None)
            return done
        # An owner silent for a lease is gone: its reply is waited for that long.
        timer = self._clock.callLater(self.cluster.lease, self._silent, session.player_id)
        self._waiting[session.player_id] = _Waiting(rid, owner, done, timer)
        return done

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

    # -- a session that resumes on another process ---------------------------------------

    def resume(self, conn: Connection, token: str) -> Deferred[Session | None]:
        """A token no session here holds: the session another process holds for it
        moves here (None: no process holds one)."""
        return Deferred.fromCoroutine(self._resume(conn, token))

    async def _resume(self, conn: Connection, token: str) -> Session | None:
        """The old home hands the session over (its seat stays, as a visitor's, at
        its own table), and says which table the player is at, so the welcome names it
        and `rejoin` reaches that table's owner as after any resume.

        On a shared store, a home that is gone is waited for (bounded: twice a lease,
        and `SETTLE_SECONDS`): once its lease ran out, the tables nobody holds are
        taken over (`settled`), after which the session is wherever its table went,
        or, if it was at none, rebuilt here from the journal: at once if its record in
        the cluster named a process that is gone when the client came; with no such
        record, once no live process holds it (`_ask_live`).

        A session held here meanwhile (its table taken over here) resumes at once, and
        an old home that handed the session on names the process to ask next."""
        hashed = token_hash(token)
        give_up = self._clock.seconds() + 2 * self.cluster.lease + SETTLE_SECONDS
        swept = False
        record: dict[str, str] | None = None  # the first the cluster had
        sent_on: str | None = None  # where an old home said it handed the session
        while not conn.closing and self._clock.seconds() < give_up:
            if self._sessions.find(token) is not None:  # its table was taken over here
                return self._sessions.resume(token, conn)
            found = await self.cluster.find_session(hashed)
            record = record or found
            holder = sent_on or (
                None if found is None else await self.cluster.session_holder(hashed))
            sent_on = None
            if found is not None and holder not in (None, self.cluster.process):
                assert holder is not None
                player_id = str(found["player"])  # (Redis hands a number back as one)
                handed = await self._ask_hand(holder, player_id, hashed, conn.features)
                if handed["ok"]:
                    return self._arrived(conn, token, player_id, handed)
                if handed.get("to"):  # handed on as its home stopped: asked there next
                    sent_on = str(handed["to"])
                    continue
                if not handed.get("silent"):
                    return None  # its home holds no such session
                continue  # its home died as it was asked: its lease runs out meanwhile
            if self._sessions.find(token) is not None:  # its table was taken over here
                return self._sessions.resume(token, conn)
            if not self.shared_store or self.settled is None or self._server is None \
                    or self._server.archive is None:
                return None
            row = await self._server.archive.use(lambda store: store.saved_session(hashed))
            if row is None:
                return None  # forgotten, or never a session
            if not swept:  # its home is gone: its tables go to the live processes first
                swept = True
                await self.settled()
                continue
            if record is None or record.get("process") == self.cluster.process:
                asked = await self._ask_live(str(row.player_id), hashed, conn.features)
                if asked is None:
                    continue  # one was silent (paused, its lease alive yet): again
                if asked["ok"]:
                    return self._arrived(conn, token, str(row.player_id), asked)
                if asked.get("to"):
                    sent_on = str(asked["to"])
                    continue
            if await self.cluster.take_session(hashed, str(row.player_id), row.name):
                return await self._rebuilt(conn, token, hashed, row)
            # Another process took it: it is asked next time round.
            await deferLater(cast(IReactorTime, self._clock), 0.1)
        return None

    async def _ask_live(self, player_id: str, hashed: bytes, features: frozenset[str]
                        ) -> dict[str, Any] | None:
        """A session the journal keeps that no record in the cluster names a live home
        for: its record ran out with its home's lease (paused, or cut off from Redis,
        for longer than a lease), or its live home let it run out (away at a table
        that keeps the seat longer than the grace). Each live process is asked to hand
        it over, in turn: the first answer that hands it (`ok`) or names where it went
        (`to`); one that says no live process holds it (then it is rebuilt here); or
        None when one was silent (asked again: its lease runs out meanwhile)."""
        silent = False
        for process in await self.cluster.live_processes():
            handed = await self._ask_hand(process, player_id, hashed, features)
            if handed["ok"] or handed.get("to"):
                return handed
            silent = silent or bool(handed.get("silent"))
        return None if silent else {"ok": False}

    def _arrived(self, conn: Connection, token: str, player_id: str,
                 handed: dict[str, Any]) -> Session:
        """The session another process handed over, held here from now on."""
        session = self._sessions.adopt(player_id, handed["name"], token, conn, conn.address)
        account = self._account_of(handed)
        if account is not None:  # the journal's row says so too
            session.account = account
            self._sessions.rename(session, session.name, exact=True)
        table_id, owner = handed["t"], str(handed.get("owner"))
        if table_id is not None and owner == self.cluster.process:
            visit = self._visitors.pop(player_id, None)  # back at a table of this process
            if visit is not None:
                session.table = visit.session.table
        elif table_id is not None:
            self._at[player_id] = (int(table_id), owner)
        if conn.closing:
            self._sessions.lost(session, conn)
        return session

    async def _rebuilt(self, conn: Connection, token: str, hashed: bytes,
                       row: SessionRow) -> Session | None:
        """A session at no table, of a process that is gone, as the journal kept it:
        its player id, name and account (`take_session` made it this process's)."""
        accounts, account = self.accounts, None
        if row.account is not None and accounts is not None:
            known = accounts.accounts.get(row.account) or await accounts.lookup(row.name)
            account = known.id if known is not None and known.id == row.account else None
        player_id = str(row.player_id)
        at = None if player_id in self._visitors else await self._seated_elsewhere(player_id)
        if self._sessions.find(token) is not None:  # rebuilt here meanwhile
            return self._sessions.resume(token, conn)
        session = self._sessions.restore_one(
            SavedSession(row.player_id, hashed, row.name, row.address))
        session.account = account
        visit = self._visitors.pop(session.player_id, None)
        if visit is not None:  # it sits at a table here: a player of this process now
            session.table = visit.session.table
        elif at is not None:  # its welcome names it, and `rejoin` says `back` there
            self._at[player_id] = at
        log.info("session {player} of a process that is gone rebuilt here",
                 player=session.player_id)
        resumed = self._sessions.resume(token, conn)
        if resumed is not None and conn.closing:
            self._sessions.lost(resumed, conn)
        return resumed

    async def _seated_elsewhere(self, player_id: str) -> tuple[int, str] | None:
        """The table (and its process) where a session rebuilt here sits as a visitor
        from its old home, asked of every live process (`homeless`) before its welcome,
        which names it: a welcome without `table` says the player is at none. Out of
        reach, each is told instead, and the one that seats it calls it home."""
        message = {"k": "homeless", "p": player_id, "from": self.cluster.process}
        gathered = await self.ask_all(message)
        if not gathered.reached:
            self.cluster.tell_all(message)
        for answer in gathered.answers:
            if isinstance(answer.get("t"), int) and isinstance(answer.get("owner"), str):
                return answer["t"], answer["owner"]
        return None

    async def _account_elsewhere(self, account: int, caller: Session) -> Session | None:
        """A login here into an account whose session another live process holds:
        that session moves here (as a resume would move it), for the caller's
        connection to take over (`Accounts.login`): one account, one session."""
        peer = caller.peer
        if self._server is None or self._server.archive is None \
                or not isinstance(peer, Connection):
            return None
        found = await self._server.archive.use(lambda store: store.account_sessions(account))
        for player, hashed in found:  # (one of a process that is gone is held by none)
            holder = await self.cluster.session_holder(hashed)
            if holder is None or holder == self.cluster.process or peer.closing:
                continue
            handed = await self._ask_hand(holder, str(player), hashed, peer.features)
            if not handed["ok"]:
                return None  # (a refused hand-over leaves the session where it was)
            # Its token is replaced by the take-over: this one is never sent anywhere.
            return self._arrived(peer, secrets.token_urlsafe(32), str(player), handed)
        return None

    def _ask_hand(self, home: str, player_id: str, hashed: bytes,
                  features: frozenset[str]) -> Deferred[dict[str, Any]]:
        """Ask the session's home to let it go: its answer (`ok`), or, if it is silent
        for a lease (gone), one that says `silent`."""
        self._handed({"p": player_id, "ok": False})  # an earlier ask is superseded
        done: Deferred[dict[str, Any]] = Deferred()
        timer = self._clock.callLater(self.cluster.lease, self._handed,
                                      {"p": player_id, "ok": False, "silent": True})
        self._handing[player_id] = (done, timer, home)
        self.cluster.watch(home)  # its death, seen early, ends the wait (`_gone`)
        self.cluster.send(home, {"k": "hand", "from": self.cluster.process, "p": player_id,
                                 "h": hashed, "features": sorted(features)})
        return done

    def _handed(self, message: dict[str, Any]) -> None:
        waiting = self._handing.pop(message["p"], None)
        if waiting is None:
            return
        done, timer, _ = waiting
        if timer.active():
            timer.cancel()
        done.callback(message)

    def _hand(self, message: dict[str, Any]) -> None:
        """At the old home: the session goes to the process its player resumed on; a
        seat at a table here stays, the player a visitor from there."""
        assert self._server is not None
        player_id, home = message["p"], message["from"]
        session = self._sessions.by_id(player_id)
        if session is None and player_id in self._restoring:
            self._restoring[player_id].append(message)  # answered once it is placed
            return
        if session is None and player_id in self._handed_to:
            # Handed on already (as this process stops, or to a resume): told once that
            # hand-over is written, so the process named has it before it is asked.
            self._sessions.once_written(self.cluster.send, home, {
                "k": "handed", "p": player_id, "ok": False,
                "to": self._handed_to[player_id]})
            return
        if session is None or player_id in self._visitors \
                or session.hashed_token != message["h"]:
            self.cluster.send(home, {"k": "handed", "p": player_id, "ok": False})
            return
        self._sent_on(player_id, home)
        table, at, old = session.table, self._at.pop(player_id, None), session.peer
        self._server.lobby.unsubscribe(session)
        self._sessions.hand_over(session)
        if old is not None:
            old.replaced()
        reply: dict[str, Any] = {"k": "handed", "p": player_id, "ok": True,
                                 "name": session.name, "t": None, **self._account(session)}
        if table is not None:
            visit = self._visit({"p": player_id, "from": home, "name": session.name,
                                 **self._account(session),
                                 "features": message["features"]})
            visit.session.table = table
            reply.update(t=table.id, owner=self.cluster.process)
        elif at is not None:
            reply.update(t=at[0], owner=at[1])
        self._sessions.once_written(self.cluster.send, home, reply)

    def _sent_on(self, player_id: str, to: str) -> None:
        """`player_id`'s session went to `to`: for a lease, a word about it that comes
        here is sent on there."""
        self._handed_to[player_id] = to
        self._clock.callLater(self.cluster.lease, self._forget_sent, player_id, to)

    def _forget_sent(self, player_id: str, to: str) -> None:
        if self._handed_to.get(player_id) == to:
            del self._handed_to[player_id]

    # -- a process that stops -----------------------------------------------------------

    def hand_all(self) -> Deferred[None]:
        """This process stops: every session it homes goes to a live process (module
        docstring). Fires once each was taken, or `HAND_SECONDS` passed; at once with
        the cluster out of reach, or no other process alive (the journal keeps them)."""
        self._stopping = True
        if not self.cluster.reachable or not self._sessions.each():
            return succeed(None)
        live = self.cluster.live_processes()
        handed = live.addCallback(self._hand_each)
        handed.addErrback(lambda f: log.warn(
            "stopping: the sessions could not be handed to another process: {error}",
            error=f.getErrorMessage()))
        return handed

    def _hand_each(self, live: list[str]) -> Deferred[None]:
        sessions = self._sessions.each()
        for session in sessions:  # their connections are closing: away from now on
            if session.peer is not None:
                self._sessions.lost(session, session.peer)
        tables: dict[str, str | None] = {}
        for session in sessions:
            at = self._at.get(session.player_id)
            tables[session.player_id] = at[1] if at is not None else None
        targets = hand_targets(tables, live)
        if not targets:
            return succeed(None)
        self._out_done = Deferred()
        timer = self._clock.callLater(HAND_SECONDS, self._out_over)
        for session in sessions:
            self._push(session, targets[session.player_id])
        log.info("stopping: handing {count} sessions to processes {processes}",
                 count=len(targets), processes=sorted(set(targets.values())))
        done = self._out_done
        done.addBoth(lambda result: timer.cancel() if timer.active() else None)
        return done

    def _push(self, session: Session, target: str) -> None:
        """One session handed to `target`: told it once its forgetting here is written
        (a shared journal then holds one row of it, the new home's)."""
        player_id, table = session.player_id, session.table
        at = self._at.pop(player_id, None)
        message: dict[str, Any] = {
            "k": "adopt", "from": self.cluster.process, "p": player_id,
            "h": session.hashed_token, "name": session.name, "address": session.address,
            "t": None, **self._account(session)}
        if table is not None and self.shared_store:  # its taker calls it home
            message.update(t=table.id, owner=self.cluster.process)
        elif at is not None:
            message.update(t=at[0], owner=at[1])
        self._sessions.hand_over(session)
        self._sent_on(player_id, target)
        self._handing_out[player_id] = (target, message)
        self._sessions.once_written(self.cluster.send, target, message)

    def _adopted(self, message: dict[str, Any]) -> None:
        """A process answered a session handed to it: held there, or refused (it stops
        too): then the session goes to none (the journal no longer has it here)."""
        player_id = message["p"]
        handing = self._handing_out.get(player_id)
        if handing is None or handing[0] != message["from"]:
            return
        del self._handing_out[player_id]
        if not message["ok"]:
            log.warn("stopping: process {process} did not take session {player}",
                     process=message["from"], player=player_id)
        if not self._handing_out:
            self._out_over()

    def _out_over(self) -> None:
        done, self._out_done = self._out_done, None
        if self._handing_out:
            log.warn("stopping: {count} sessions handed on were not taken in "
                     "{seconds:g} s", count=len(self._handing_out), seconds=HAND_SECONDS,
                     players=sorted(self._handing_out))
        if done is not None:
            done.callback(None)

    def _adopt(self, message: dict[str, Any]) -> None:
        """A session of a process that stops, held here from now on, away: at its table
        here (a visitor from there until now), at a table elsewhere, or in the lobby."""
        player_id, home = message["p"], message["from"]
        answer = {"k": "adopted", "p": player_id, "from": self.cluster.process}
        known = self._sessions.by_id(player_id)
        if self._stopping or (known is not None and player_id not in self._visitors):
            self.cluster.send(home, {**answer, "ok": False})
            return
        session = self._sessions.take_in(player_id, message["name"], message["h"],
                                         message["address"])
        account = self._account_of(message)
        if account is not None:  # the journal's row says so too
            session.account = account
            self._sessions.rename(session, session.name, exact=True)
        visit = self._visitors.pop(player_id, None)
        taken = self._taken.pop(player_id, None)
        if visit is not None:  # at a table of this process: its member now
            session.table = visit.session.table
        elif taken is not None:  # at a table taken over here
            session.table = taken
        elif message["t"] is not None and message["owner"] != self.cluster.process:
            self._at[player_id] = (int(message["t"]), str(message["owner"]))
        self._sessions.went_away(session)
        self._sessions.once_written(self.cluster.send, home, {**answer, "ok": True})

    # -- at the owner -------------------------------------------------------------------

    def _request(self, message: dict[str, Any]) -> None:
        assert self._server is not None
        visit = self._visit(message)
        before = visit.session.table
        dispatch.handle_here(visit.conn, message["type"], message["msg"], message["rid"])
        table = visit.session.table
        if table is not None and table is not before:
            self.cluster.send(visit.home, {"k": "at", "p": visit.session.player_id,
                                           "t": table.id, "owner": self.cluster.process})
        elif table is None:
            self._drop(visit.session.player_id)

    def _visit(self, message: dict[str, Any]) -> _Visitor:
        """The visitor a message speaks for, made on its first request."""
        assert self._server is not None
        player_id, home = message["p"], message["from"]
        features = frozenset(message["features"])
        visit = self._visitors.get(player_id)
        if visit is None:
            session = self._sessions.visit(player_id, message["name"])
            conn = RelayedConnection(self._server, self, home, player_id, features)
            visit = self._visitors[player_id] = _Visitor(session, conn, home)
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
        if visit is None:
            # Let go meanwhile, its home not told (the link was down); but a process
            # that stops lets its tables go whole, and their takers call members home.
            if message["c"] == "back" and not self._stopping:
                self._at_no_table(message["from"], message["p"], released=True)
            return
        session, table = visit.session, visit.session.table
        what = message["c"]
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

    def _homeless(self, message: dict[str, Any]) -> None:
        """A visitor's session, its home gone, was rebuilt on another process: that
        is its home now, told of its table here (it says `back` as after a takeover)."""
        visit = self._visitors.get(message["p"])
        table = visit.session.table if visit is not None else None
        if table is not None and not table.closed:
            self._at_here(message["from"], message["p"], table)

    def _seats(self, player_id: str) -> dict[str, Any]:
        """Asked by the process a visitor's session was rebuilt on (`homeless`): the
        table here that seats it, if any. That process is its home from its `back`."""
        visit = self._visitors.get(player_id)
        table = visit.session.table if visit is not None else None
        if table is None or table.closed:
            return {}
        return {"t": table.id, "owner": self.cluster.process}

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

    # -- both ----------------------------------------------------------------------------

    def received(self, message: dict[str, Any]) -> None:
        """One message from another process (`Cluster.listen`): handled by its kind's
        handler (`_handlers`), once it fits its schema (`interproc.messages`)."""
        metrics.RELAYED.inc()
        try:
            kind = decode_message(message)["k"]
        except Refused as refused:
            self._refused(refused)
            return
        self._handlers[kind](message)

    def _refused(self, refused: Refused) -> None:
        """A message this process does not read, from a process of another version
        (or a broken one): dropped, and said once for each kind and version, since a
        process of another version sends many."""
        said = (refused.kind, refused.version)
        if said in self._refusals:
            return
        self._refusals.add(said)
        log.error("cluster: a message refused, {reason}: every process of a cluster must "
                  "read the others' messages (to upgrade, see the rolling upgrade in the "
                  "operating guide)", reason=refused.reason)

    def _handling(self) -> dict[str, Callable[[dict[str, Any]], object]]:
        """Each kind's handler here (`interproc.messages.KINDS`)."""
        def at_server(act: Callable[[ServerFactory, dict[str, Any]], object]
                      ) -> Callable[[dict[str, Any]], object]:
            return lambda message: None if self._server is None \
                else act(self._server, message)

        return {
            "req": self._request,
            "cmd": self._command,
            "out": lambda m: self._out(m["p"], m["b"]),
            "at": self._moved,
            "hand": self._hand,
            "handed": self._handed,
            "adopt": self._adopt,  # a session of a process that stops
            "adopted": self._adopted,
            "account": self._account_of,  # registered through another process
            "sanction": self._sanction,  # a ban or mute in force, or lifted, elsewhere
            # a kick made through another process, or a ban's table
            "kick": at_server(kicked_elsewhere),
            # an operator's, made through another process
            "announce": at_server(lambda server, m: announce_here(server, m["m"])),
            "close_table": at_server(closed_elsewhere),  # by an operator elsewhere
            "homeless": self._homeless,
            "ask": self._ask,  # an operator's act, made through another process
            "answer": self._answered,  # what another process did of one made here
            "close": self._closed,
            "find": lambda m: None,  # (asked only: `_acts`)
        }

    def _closed(self, message: dict[str, Any]) -> None:
        peer = self._peer(message["p"])
        if peer is not None:
            peer.close("internal_error", "the table's server closed this link")

    def _peer(self, player_id: str) -> Connection | None:
        session = self._sessions.by_id(player_id)
        peer = session.peer if session is not None else None
        return peer if isinstance(peer, Connection) else None

    def _out(self, player_id: str, body: bytes) -> None:
        """A frame the owner sent this player: written as it came."""
        peer = self._peer(player_id)
        if peer is not None:
            peer.send_body(body)
        waiting = self._waiting.get(player_id)
        if waiting is not None and decode(body, SERVER_FRAME_LIMITS).get("id") == waiting.rid:
            del self._waiting[player_id]
            if waiting.timer.active():
                waiting.timer.cancel()
            waiting.done.callback(None)

    def _moved(self, message: dict[str, Any]) -> None:
        """The table a player here sits at is elsewhere now (`t`, its `owner`), or
        there is none: with `lost`, the player did not leave it, and is told so."""
        player_id = message["p"]
        session = self._sessions.by_id(player_id)
        if session is None and player_id in self._handed_to:
            self.cluster.send(self._handed_to[player_id], message)  # its home now
            return
        if message["t"] is not None:
            self._at[player_id] = (message["t"], message["owner"])
            self._departed.discard(message["owner"])  # (a process woken, after a pause)
            if message.get("back") and session is not None and session.connected:
                self._tell_owner(session, "back")  # its table was taken over there
            return
        at = self._at.pop(player_id, None)
        if session is None:
            return
        if not session.connected:
            self._sessions.forget(session)
        elif at is not None and "lost" in message:  # not its own doing: it is told
            session.send({"type": "table_lost", "table": at[0], "cause": message["lost"]})


def _features(session: Session) -> frozenset[str]:
    peer = session.peer
    return peer.features if isinstance(peer, Connection) else frozenset()
