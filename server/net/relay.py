"""Tables of other processes: a player connected here plays at a table held there.

A table lives in one process, its owner. A player connected to another process (the
player's home) reaches it through the cluster's messages (`Cluster.send`), never a
broker of ours.

The relay is built in layers, each a module: `relay_state.py` (what it holds),
`forwarding.py` (a player's requests to a table elsewhere, at home and at the
owner), `handover.py` (a session that moves: a resume, a login elsewhere, a
process that stops); here, the handlers of the cluster's messages, the operators'
acts, the link lost and back, and the sanctions.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from twisted.internet.defer import Deferred
from twisted.logger import Logger
from twisted.python.failure import Failure

from pisyedili.protocol.codec import decode
from pisyedili.protocol.errors import ProtocolError
from pisyedili.protocol.limits import SERVER_FRAME_LIMITS
from pisyedili.server import metrics
from pisyedili.server.clock import Clock
from pisyedili.server.cluster import Cluster, unavailable
from pisyedili.server.cluster.holdings import Hold
from pisyedili.server.interproc.messages import Refused
from pisyedili.server.interproc.messages import decode as decode_message
from pisyedili.server.net.connection import Connection
from pisyedili.server.net.forwarding import OWNER_GONE
from pisyedili.server.net.handlers.moderation import (
    announce_here,
    closed_elsewhere,
    enforce_ban,
    found_here,
    kicked_elsewhere,
    tell_muted,
)
from pisyedili.server.net.handover import Handover
from pisyedili.server.net.sweeps import Sweeping
from pisyedili.server.people.accounts import Account
from pisyedili.server.people.moderation import Gathered, Sanction
from pisyedili.server.people.session import Session, Sessions
from pisyedili.server.store.base import Unreachable
from pisyedili.server.table.runner import TableRunner

if TYPE_CHECKING:
    from pisyedili.server.net.tcp import ServerFactory

log = Logger()

SANCTIONS_RETRY_SECONDS = 2.0
"""How soon the sanctions are read again when the shared store could not be reached
as the cluster came back: a ban made meanwhile is in force here once it answers."""


class Relay(Handover):
    """Both sides of playing at a table of another process (module docstring)."""

    def __init__(self, cluster: Cluster, sessions: Sessions, clock: Clock,
                 server: ServerFactory | None = None, *, shared_store: bool = False,
                 sweeps: Sweeping | None = None) -> None:
        """The relay of `server`, which makes it as it is made (`ServerFactory`'s
        `relay`): it hears the cluster from then on, and is the other processes' side of
        the server's sessions, accounts and moderation (`people.processes`, which it
        joins where the server is assembled). `sweeps`: the takeover it tells of a
        process gone, and waits on (`service/takeover.py`)."""
        super().__init__(cluster, sessions, clock, server, shared_store=shared_store,
                         sweeps=sweeps)
        self._handlers = self._handling()
        self._acts = self._acting()
        if server is not None:
            self._serve(server)

    def _serve(self, server: ServerFactory) -> None:
        """Hear the cluster's messages."""
        self.cluster.listen(self._lobby_delta, self.received, self._gone)
        self.cluster.watch_link(self._link_lost, self._link_back)
        self.cluster.watch_sessions(self._disowned)
        self.cluster.watch_holdings(self._carry_out)

    # -- for the accounts and the moderation, on one shared store (`people.processes`) ---

    def account_registered(self, account: Account) -> None:
        self.cluster.tell_all({"k": "account", "a": account.id, "name": account.name,
                               "op": account.operator, "bot": account.bot})

    def account_session(self, account: int, caller: Session) -> Deferred[Session | None]:
        return Deferred.fromCoroutine(self._account_elsewhere(account, caller))

    def tell_sanction(self, message: dict[str, Any]) -> Deferred[Gathered]:
        return self.ask_all({"k": "sanction", **message})

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
            "homeless": lambda _, act: self._seats(act),
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
        side came back last is heard), and every such player gets a fresh snapshot;
        at home, from the table's holder as Redis says (`_held_at`). A visitor let go
        meanwhile has its home told it is at no table (which the home also hears in
        answer to its `back`, if it came back last)."""
        for player_id, visit in list(self._visitors.items()):
            if visit.session.table is not None:
                self._at_here(visit.home, player_id, visit.session.table)
        for player_id, home in self._untold.items():
            self._at_no_table(home, player_id, released=True)
        self._untold.clear()
        for player_id, at in list(self._at.items()):
            found = self.cluster.locate(at[0])
            found.addCallback(self._held_at, player_id, at)
            found.addErrback(self._holder_unread, player_id, at)
        self._reload_sanctions()

    def _held_at(self, owner: str | None, player_id: str, at: tuple[int, str]) -> None:
        """Where the table `player_id` sits at elsewhere is held, as Redis says once the
        links are back: its new holder's word (`at`) went to nobody while they were
        down, so after a takeover meanwhile the player's `back` and requests would go
        to a process that no longer holds the table, its snapshot never coming. The
        player's `back` goes to the holder (to the one last heard of while none
        holds it: a takeover under way tells where it is once done)."""
        if self._at.get(player_id) != at:
            return  # (a word came meanwhile, and was heeded)
        if owner is not None and owner not in (at[1], self.cluster.process):
            log.info("player {player}'s table {table} is held by process {owner}, not by "
                     "process {was} as this process last heard: its requests go there",
                     player=player_id, table=at[0], owner=owner, was=at[1])
            self._moved({"p": player_id, "t": at[0], "owner": owner, "back": True})
            return
        session = self._sessions.by_id(player_id)
        if session is not None and session.connected:
            self._tell_owner(session, "back")

    def _holder_unread(self, failure: Failure, player_id: str, at: tuple[int, str]) -> None:
        """Redis went again before it said: the player's `back` goes where it was
        last heard to be (its return reads it again)."""
        if not isinstance(failure.value, ProtocolError):
            log.failure("reading where player {player}'s table is held failed", failure,
                        player=player_id)
        self._held_at(None, player_id, at)

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
        if not isinstance(failure.value, Unreachable):
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
        for player_id, replies in list(self._replies.items()):
            for reply in replies:
                if reply.conn.home == process:  # nobody waits for it there
                    self._forget_reply(player_id, reply)
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

    def restoring(self, player_id: str, table: TableRunner) -> None:
        """A takeover here places `player_id` at `table` next (its session held or
        restored here, or called home where it lives): a hand-over asked of it
        meanwhile, and its home's word, wait for that; asked where it sits
        (`homeless`), `table` is the answer."""
        self._restoring.setdefault(player_id, [])
        self._placing[player_id] = table

    def restored(self, players: list[str]) -> None:
        """Those players are placed (or their takeover failed): what was asked or said
        of them meanwhile is handled now, in the order it came."""
        for player_id in players:
            self._placing.pop(player_id, None)
            for message in self._restoring.pop(player_id, []):
                if message["k"] == "cmd":
                    self._command(message)
                else:
                    self._hand(message)

    def call_home(self, home: str, player_id: str, table: TableRunner) -> None:
        """A member of a table taken over here is connected to `home`: it is told the
        table's new owner, and says `back` once its player is there."""
        self._taken[player_id] = table
        self._at_here(home, player_id, table)

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
            "out": lambda m: self._out(m["p"], m["b"], m.get("n")),
            "held": self._held,  # the owner holds the reply awaited
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

    def _out(self, player_id: str, body: bytes, n: int | None = None) -> None:
        """A frame the owner sent this player: written as it came, unless it is the
        reply (`n`) to a request answered here already (its owner silent for a lease,
        the link lost): every request gets exactly one reply."""
        waiting = self._waiting.get(player_id)
        if n is not None and (waiting is None or waiting.n != n):
            log.info("a late reply to player {player}'s request dropped: it was answered "
                     "already", player=player_id)
            return
        peer = self._peer(player_id)
        if peer is not None:
            peer.send_body(body)
        if waiting is not None and (
                waiting.n == n if n is not None
                else decode(body, SERVER_FRAME_LIMITS).get("id") == waiting.rid):
            del self._waiting[player_id]
            if waiting.timer.active():
                waiting.timer.cancel()
            waiting.done.callback(None)

    def _holds_seat(self, session: Session | None, message: dict[str, Any]) -> bool:
        """Whether `session` sits at the table `message` places elsewhere, and this
        process writes that table now, sure of its lease: a process woken past its
        lease, back in touch with the cluster before the journal's fence made it let
        its copy go, says its visitors sit there (`_link_back`). Its word must not send
        the player's requests to that copy. In doubt, this process may be the stale
        one: the word is taken."""
        table = session.table if session is not None else None
        if table is None or table.closed or table.id != message["t"] \
                or message["owner"] == self.cluster.process or self.cluster.lease_in_doubt:
            return False
        held = self.cluster.holdings.table(table.id)  # (not one Redis says is another's)
        return held is not None and held.state is Hold.HELD

    def _moved(self, message: dict[str, Any]) -> None:
        """The table a player here sits at is elsewhere now (`t`, its `owner`), or
        there is none: with `lost`, the player did not leave it, and is told so."""
        player_id = message["p"]
        session = self._sessions.by_id(player_id)
        handed_to = self.cluster.holdings.handed_to(player_id)
        if session is None and handed_to is not None:
            self.cluster.send(handed_to, message)  # its home now
            return
        if message["t"] is not None and self._holds_seat(session, message):
            log.info("player {player} sits at table {table}, which this process holds: "
                     "process {process}'s word that it holds it is stale (it was taken "
                     "for dead, and has not let its copy go yet)", player=player_id,
                     table=message["t"], process=message["owner"])
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
