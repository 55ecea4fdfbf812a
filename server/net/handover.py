"""A session that moves to another process (`relay.py`): a resume, a login, a stop.

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

Who homes a session is decided by the process's `holdings` (`cluster/holdings.py`):
this module feeds it what happened (a resume here, a home's answer, Redis's, a hand
asked of this process, a drain, an adoption) and carries out what it says to do
(ask a home, take a session in Redis, welcome, hand over, send on, refuse).
"""

from __future__ import annotations

import secrets
from typing import Any, cast

from twisted.internet.defer import Deferred, succeed
from twisted.internet.interfaces import IReactorTime
from twisted.internet.task import deferLater
from twisted.logger import Logger

from pisyedili.server.cluster import unavailable
from pisyedili.server.cluster.holdings import (
    AcceptAdopt,
    AdoptAsked,
    AskHand,
    DrainStarted,
    Effect,
    Event,
    HandAnswered,
    HandAsked,
    HandForgotten,
    HandOver,
    HandSession,
    RebuiltElsewhere,
    RefuseHand,
    ResumeArrived,
    SendOn,
    SessionTaken,
    TakeSession,
    Welcome,
    YieldSession,
)
from pisyedili.server.net.connection import Connection
from pisyedili.server.net.forwarding import Forwarding
from pisyedili.server.people.session import Session
from pisyedili.server.store.base import SessionRow
from pisyedili.server.store.journal import SavedSession, token_hash
from pisyedili.server.table import commands as cmd

log = Logger()

HAND_SECONDS = 5.0
"""How long a stopping process waits for the live processes to say they hold the
sessions it handed them (each answers once its journal committed the session), before
it stops anyway: a session nobody took is left to the journal, as after a kill."""

ASK_AGAIN_SECONDS = 0.2
"""How soon the live processes are asked again which table seats a session rebuilt
here when one of them is placing the members of tables it took over (`taking`)."""

SETTLE_SECONDS = 5.0
"""How long past twice a lease a resume waits for its gone process's tables to be
taken over before it gives up: `cluster_unavailable` (to try again) while the shared
journal keeps the session, else `bad_token`."""


class Handover(Forwarding):
    """Sessions handed from one process to another (module docstring)."""

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
        an old home that handed the session on names the process to ask next. A live
        home that holds no such session while the journal keeps it is asked again
        until its record runs out."""
        hashed = token_hash(token)
        give_up = self._clock.seconds() + 2 * self.cluster.lease + SETTLE_SECONDS
        swept = False
        record: dict[str, str] | None = None  # the first the cluster had
        while not conn.closing and self._clock.seconds() < give_up:
            if self._sessions.find(token) is not None:  # its table was taken over here
                return self._sessions.resume(token, conn)
            found = await self.cluster.find_session(hashed)
            record = record or found
            holder = None if found is None else await self.cluster.session_holder(hashed)
            if found is not None and holder not in (None, self.cluster.process):
                assert holder is not None
                player_id = str(found["player"])  # (Redis hands a number back as one)
                if self._sessions.homed_here(player_id):  # come here meanwhile (adopted),
                    return self._sessions.resume(token, conn)  # or under another token
                handed = await self._handed_here(ResumeArrived(player_id, holder), hashed,
                                                 conn.features)
                if handed is not None and handed["ok"]:
                    return self._arrived(conn, token, player_id, handed)
                if handed is not None and not handed.get("silent"):
                    if not await self._journal_keeps(hashed):
                        return None  # its home holds no such session
                    # Its record names a live process that let it go, with nobody taking
                    # it (a woken one letting its tables go, whose taker called it home
                    # there): asked again until that record runs out, then each live
                    # process is asked (`_ask_live`) before it is rebuilt here.
                    record = None
                    await deferLater(cast(IReactorTime, self._clock), self.cluster.lease / 3)
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
            player_id = str(row.player_id)
            if self._sessions.homed_here(player_id):  # come here meanwhile (adopted),
                return self._sessions.resume(token, conn)  # or under another token
            if record is None or record.get("process") == self.cluster.process:
                asked = await self._ask_live(player_id, hashed, conn.features)
                if asked is None:
                    continue  # one was silent (paused, its lease alive yet): again
                if asked["ok"]:
                    return self._arrived(conn, token, player_id, asked)
            if await self._taken_here(player_id, hashed, row.name):
                return await self._rebuilt(conn, token, hashed, row)
            # Another process took it: it is asked next time round.
            await deferLater(cast(IReactorTime, self._clock), 0.1)
        if not conn.closing and await self._journal_keeps(hashed):
            # Not placed within the wait (a record naming a live process that lets it
            # be lasts its grace; faults one after another), yet not lost: the client
            # tries again, rather than give up a session the journal keeps.
            raise unavailable("this resume")
        return None

    def _decide(self, event: Event) -> list[Effect]:
        """What this process's `holdings` make of `event` (module docstring)."""
        return self.cluster.holdings.handle(event)

    async def _handed_here(self, arrived: ResumeArrived, hashed: bytes,
                           features: frozenset[str]) -> dict[str, Any] | None:
        """A resume here of a session homed elsewhere, as `holdings` decide it: each
        home they name is asked to hand it over in turn (`AskHand`: the one Redis named,
        then the one an old home says it went to) until one does (`Welcome`: its
        answer, `ok`) or the resume is refused (the last answer, not `ok`; `silent` if
        that home said nothing for a lease). None: decided otherwise meanwhile (the
        session came here another way, or a later resume of it asks in its place):
        looked at again."""
        effects = self._decide(arrived)
        answer: dict[str, Any] | None = None
        while effects:
            effect = effects[0]
            if isinstance(effect, AskHand):
                answer = await self._ask_hand(effect.home, effect.player, hashed, features)
                if answer.get("superseded"):
                    return None
                to = answer.get("to")
                effects = self._decide(HandAnswered(effect.player, bool(answer["ok"]),
                                                    str(to) if to else None))
            elif isinstance(effect, Welcome):
                return answer  # (None if homed here already: its own token resumes it)
            else:  # `RefuseResume`
                return {**(answer or {}), "ok": False}
        return None

    async def _taken_here(self, player_id: str, hashed: bytes, name: str) -> bool:
        """A session whose home is gone, taken in Redis for this process if `holdings`
        say so (`TakeSession`), and welcomed here if it was won (`Welcome`)."""
        effects = self._decide(ResumeArrived(player_id, None, gone=True))
        if not any(isinstance(effect, TakeSession) for effect in effects):
            return False
        won = False
        try:
            won = await self.cluster.take_session(hashed, player_id, name)
        finally:  # (one that failed is not won)
            effects = self._decide(SessionTaken(player_id, won))
        return any(isinstance(effect, Welcome) for effect in effects)

    async def _journal_keeps(self, hashed: bytes) -> bool:
        """Whether the shared journal keeps the session of token hash `hashed`."""
        server = self._server
        if not self.shared_store or self.settled is None or server is None \
                or server.archive is None:
            return False
        row = await server.archive.use(lambda store: store.saved_session(hashed))
        return row is not None

    async def _ask_live(self, player_id: str, hashed: bytes, features: frozenset[str]
                        ) -> dict[str, Any] | None:
        """A session the journal keeps that no record in the cluster names a live home
        for: its record ran out with its home's lease (paused, or cut off from Redis,
        for longer than a lease), or its live home let it run out (away at a table
        that keeps the seat longer than the grace). Each live process is asked to hand
        it over, in turn (and where one says it went): the first answer that hands it
        (`ok`); one that says no live process holds it (then it is rebuilt here); or
        None when one was silent (asked again: its lease runs out meanwhile)."""
        silent = False
        for process in await self.cluster.live_processes():
            handed = await self._handed_here(ResumeArrived(player_id, process), hashed,
                                             features)
            if handed is None:
                return None
            if handed["ok"]:
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
            session.table = self._own_seat(player_id)  # back at a table of this process
        elif table_id is not None:
            self._at[player_id] = (int(table_id), owner)
        if conn.closing:
            self._sessions.lost(session, conn)
        return session

    async def _rebuilt(self, conn: Connection, token: str, hashed: bytes,
                       row: SessionRow) -> Session | None:
        """A session of a process that is gone, as the journal kept it: its player
        id, name and account (`take_session` made it this process's); welcomed at
        the table that seats it, once its home's tables are taken over."""
        accounts, account = self.accounts, None
        if row.account is not None and accounts is not None:
            known = accounts.accounts.get(row.account) or await accounts.lookup(row.name)
            account = known.id if known is not None and known.id == row.account else None
        player_id = str(row.player_id)
        if self.settled is not None:
            # Its home's tables may not be taken over yet (the sweep before the take
            # claimed none: its home was still listed alive, or that sweep was cut
            # short), or a sweep here claimed them and is still placing their members.
            # Once a sweep that starts now ends, every table this process took seats
            # its members (the session restored at its table here, found below), and
            # a table another process took is held there (`_seated_elsewhere`).
            await self.settled()
        if self._sessions.find(token) is not None:  # rebuilt here meanwhile
            return self._sessions.resume(token, conn)
        at = None if self._seated_here(player_id) is not None \
            else await self._seated_elsewhere(player_id)
        if self._sessions.find(token) is not None:  # rebuilt here meanwhile
            return self._sessions.resume(token, conn)
        session = self._sessions.restore_one(
            SavedSession(row.player_id, hashed, row.name, row.address))
        session.account = account
        table = self._own_seat(player_id)
        if table is not None:  # it sits at a table here: a player of this process now
            session.table = table
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
        from its old home, or as a member of a table taken over, asked of every live
        process (`homeless`) before its welcome, which names it: a welcome without
        `table` says the player is at none. A process placing the members of tables it
        took over may seat it once it placed them (`taking`): asked again, for up to a
        lease. Out of reach, each is told instead, and the one that seats it calls it
        home."""
        message = {"k": "homeless", "p": player_id, "from": self.cluster.process}
        until = self._clock.seconds() + self.cluster.lease
        said = False
        while True:
            gathered = await self.ask_all(message)
            if not gathered.reached:
                self.cluster.tell_all(message)
            for answer in gathered.answers:
                if isinstance(answer.get("t"), int) and isinstance(answer.get("owner"), str):
                    return answer["t"], answer["owner"]
            if not any(answer.get("taking") for answer in gathered.answers) \
                    or self._clock.seconds() >= until:
                return None
            if not said:
                said = True
                log.info("session {player} rebuilt here waits for its welcome: another "
                         "process is placing the members of tables it took over, and may "
                         "seat it", player=player_id)
            await deferLater(cast(IReactorTime, self._clock), ASK_AGAIN_SECONDS)

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
            handed = await self._handed_here(ResumeArrived(str(player), holder), hashed,
                                             peer.features)
            if handed is None or not handed["ok"]:
                return None  # (a refused hand-over leaves the session where it was)
            # Its token is replaced by the take-over: this one is never sent anywhere.
            return self._arrived(peer, secrets.token_urlsafe(32), str(player), handed)
        return None

    def _ask_hand(self, home: str, player_id: str, hashed: bytes,
                  features: frozenset[str]) -> Deferred[dict[str, Any]]:
        """Ask the session's home to let it go: its answer (`ok`), or, if it is silent
        for a lease (gone), one that says `silent`; an earlier ask of it from here
        (another resume of the same token) is answered `superseded`."""
        self._handed({"p": player_id, "ok": False, "superseded": True})
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
        """At the old home: the process its player resumed on asks for the session;
        `holdings` decide (`HandAsked`: after the keys are checked, while the lease is
        in doubt) and `_carry_out` answers."""
        player_id, home = message["p"], message["from"]
        session = self._sessions.by_id(player_id)
        if player_id in self._restoring:
            # A takeover here is placing it at its table: answered once it is placed,
            # so the answer names that table (and the seat stays, a visitor's).
            log.info("session {player}, asked for by process {process}, is handed over "
                     "once the takeover here placed it at its table", player=player_id,
                     process=home)
            self._restoring[player_id].append(message)
            return
        if session is not None and player_id not in self._visitors \
                and session.hashed_token != message["h"]:
            # Its token is not the one asked about (a login gave it a new one): the
            # session of that token is nowhere.
            self.cluster.send(home, {"k": "handed", "p": player_id, "ok": False})
            return
        self._hand_asks[player_id, home] = message
        for effect in self._decide(HandAsked(player_id, home)):
            self._carry_out(effect)

    def _carry_out(self, effect: Effect) -> None:
        """An answer `holdings` gave to a hand asked of this process (`_hand`), at once
        or once its keys were checked (`Cluster.watch_holdings`)."""
        if isinstance(effect, HandOver):
            message = self._hand_asks.pop((effect.player, effect.to), None)
            if message is not None:
                self._hand_over(message)
        elif isinstance(effect, SendOn):
            # Handed on already (as this process stops, or to a resume): told once that
            # hand-over is written, so the process named has it before it is asked.
            self._hand_asks.pop((effect.player, effect.by), None)
            self._sessions.once_written(self.cluster.send, effect.by, {
                "k": "handed", "p": effect.player, "ok": False, "to": effect.to})
        elif isinstance(effect, RefuseHand):
            self._hand_asks.pop((effect.player, effect.by), None)
            self.cluster.send(effect.by, {"k": "handed", "p": effect.player, "ok": False})

    def _hand_over(self, message: dict[str, Any]) -> None:
        """`HandOver`: the session goes to the process its player resumed on; a seat
        at a table here stays, the player a visitor from there. Asked again by that
        process (its answer lost, or late), the same answer is told again."""
        assert self._server is not None
        player_id, home = message["p"], message["from"]
        session = self._sessions.by_id(player_id)
        if session is None or player_id in self._visitors:
            again = self._hand_answers.get(player_id)
            self._sessions.once_written(self.cluster.send, home, again or {
                "k": "handed", "p": player_id, "ok": False, "to": home})
            return
        self._sent_on(player_id, home)
        table, at, old = session.table, self._at.pop(player_id, None), session.peer
        self._server.lobby.unsubscribe(session)
        # A shared journal keeps its row until the new home writes it as its own: the
        # answer may never reach it (it dies, or misses it), and its token then
        # rebuilds the session from that row anywhere.
        self._sessions.hand_over(session, keep_row=self.shared_store)
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
        self._hand_answers[player_id] = reply
        self._sessions.once_written(self.cluster.send, home, reply)

    def _disowned(self, player_id: str, hashed: bytes, holder: str) -> None:
        """`holder` took the session over while this process was taken for dead (its
        token resumed there): it is that one's, so it goes from here, its connection
        hung up on to resume there. A seat at a table here stays, away until `holder`,
        told the table, says its player is `back` (a visitor from there from then on)."""
        session = self._sessions.by_id(player_id)
        if self._server is None or session is None or player_id in self._visitors \
                or session.hashed_token != hashed:
            return
        table, peer = session.table, session.peer
        self._at.pop(player_id, None)
        self._server.lobby.unsubscribe(session)
        self._sessions.hand_over(session, keep_row=True)  # (the row is `holder`'s now)
        if table is not None and not table.closed:
            table.handle(cmd.Disconnected(player_id))
            self._taken[player_id] = table
            self._at_here(holder, player_id, table)
        if isinstance(peer, Connection):
            peer.close("shutting_down", "another server of the cluster holds your session "
                       "now: connect again to go on there")

    def _homeless(self, message: dict[str, Any]) -> None:
        self._rebuilt_there(message)
        super()._homeless(message)

    def _seats(self, message: dict[str, Any]) -> dict[str, Any]:
        self._rebuilt_there(message)
        return super()._seats(message)

    def _rebuilt_there(self, message: dict[str, Any]) -> None:
        """`homeless`: its sender took the session of `p` in the cluster and rebuilt it
        from the journal. `holdings` decide (`RebuiltElsewhere`): a copy homed here
        (restored by a takeover here while no live process held it, its record then
        written over by a woken process that died next) is the sender's
        (`YieldSession`), as after `_disowned`: its seat here stays, and is the answer,
        until the sender says its player is `back`."""
        for effect in self._decide(RebuiltElsewhere(str(message["p"]), str(message["from"]))):
            if isinstance(effect, YieldSession):
                session = self._sessions.by_id(effect.player)
                if session is not None:
                    self._disowned(effect.player, session.hashed_token, effect.to)

    def _sent_on(self, player_id: str, to: str) -> None:
        """`player_id`'s session went to `to`: for a lease, a word about it that comes
        here is sent on there (`holdings.handed_to`)."""
        self._hand_answers.pop(player_id, None)
        self._clock.callLater(self.cluster.lease, self._forget_sent, player_id, to)

    def _forget_sent(self, player_id: str, to: str) -> None:
        self._decide(HandForgotten(player_id, to))
        if self.cluster.holdings.handed_to(player_id) is None:
            self._hand_answers.pop(player_id, None)

    # -- a process that stops -----------------------------------------------------------

    def hand_all(self) -> Deferred[None]:
        """This process stops: every session it homes goes to a live process (module
        docstring). Fires once each was taken, or `HAND_SECONDS` passed; at once with
        the cluster out of reach, or no other process alive (the journal keeps them)."""
        self._stopping = True
        self._decide(DrainStarted((), {}))  # no session comes in from now on
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
        targets = {effect.player: effect.to
                   for effect in self._decide(DrainStarted(tuple(live), tables))
                   if isinstance(effect, HandSession)}
        if not targets:
            return succeed(None)
        self._out_done = Deferred()
        timer = self._clock.callLater(HAND_SECONDS, self._out_over)
        for session in sessions:
            if session.player_id in targets:
                self._push(session, targets[session.player_id])
        log.info("stopping: handing {count} sessions to processes {processes}",
                 count=len(targets), processes=sorted(set(targets.values())))
        done = self._out_done
        done.addBoth(lambda result: timer.cancel() if timer.active() else None)
        return done

    def _push(self, session: Session, target: str) -> None:
        """One session handed to `target`, told once what was written here is
        committed. A shared journal keeps its row until `target` writes it as its own
        (`take_in`): should `target` die before it reads the hand-over, the session is
        the journal's, as after a kill, and its token rebuilds it on any process."""
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
        self._sessions.hand_over(session, keep_row=self.shared_store)
        self._sent_on(player_id, target)
        self._handing_out[player_id] = (target, message)
        self._sessions.once_written(self.cluster.send, target, message)

    def _adopted(self, message: dict[str, Any]) -> None:
        """A process answered a session handed to it: held there, or refused (it stops
        too, or died): then a shared journal's row of it is left for a resume."""
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
        """A session of a process that stops, held here from now on if `holdings` take
        it in (`AcceptAdopt`; not as this process stops too, nor one homed here), away:
        at its table here (a visitor from there until now), at a table elsewhere, or in
        the lobby."""
        player_id, home = message["p"], message["from"]
        answer = {"k": "adopted", "p": player_id, "from": self.cluster.process}
        if not any(isinstance(effect, AcceptAdopt)
                   for effect in self._decide(AdoptAsked(player_id, home))):
            self.cluster.send(home, {**answer, "ok": False})  # (`RefuseAdopt`)
            return
        session = self._sessions.take_in(player_id, message["name"], message["h"],
                                         message["address"])
        account = self._account_of(message)
        if account is not None:  # the journal's row says so too
            session.account = account
            self._sessions.rename(session, session.name, exact=True)
        table = self._own_seat(player_id)
        if table is not None:  # at a table of this process (or one taken over here)
            session.table = table
        elif message["t"] is not None and message["owner"] != self.cluster.process:
            self._at[player_id] = (int(message["t"]), str(message["owner"]))
        self._sessions.went_away(session)
        self._sessions.once_written(self.cluster.send, home, {**answer, "ok": True})
